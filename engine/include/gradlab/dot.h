// The backward graph of a tensor, described: torchviz-style DOT with stable
// node ids, and the lessons' indented walk over grad_fn.
#pragma once
#include <map>
#include <string>

#include "gradlab/tensor.h"

namespace gradlab {

// These two are the engine's tools and tests', not the course's: hidden from
// the library student programs load, so no exercise that asks for a walk of
// the graph can look one up (a red team called walk_graph through dlsym).
#pragma GCC visibility push(hidden)
// torchviz's make_dot conventions: leaves light blue with their name and
// shape, ops grey, the root dark green. `names` names tensors (params).
std::string to_dot(const Tensor& root, const std::map<std::string, Tensor>& names = {});
// The lessons' walk_graph: one line per node, indented by depth.
std::string walk_graph(const Tensor& root);
#pragma GCC visibility pop
// What std::cout << t prints (Python's repr).
std::string python_repr(const Tensor& t);

}  // namespace gradlab

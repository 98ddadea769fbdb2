// Graph descriptions: torchviz-style DOT and the lessons' walk_graph.
// Both walk iteratively and number nodes in first-visit order, so the same
// graph always gives the same text.
#include <sstream>
#include <unordered_map>

#include "gradlab/autograd.h"
#include "gradlab/dot.h"
#include "gradlab/dot_style.h"

namespace gradlab {

using namespace dot_style;

std::string to_dot(const Tensor& root, const std::map<std::string, Tensor>& names) {
  std::unordered_map<const TensorImpl*, std::string> name_of;
  for (const auto& [k, v] : names)
    if (v.defined()) name_of[v.unsafeGetTensorImpl()] = k;
  auto var_label = [&](const Tensor& t) {
    auto it = name_of.find(t.unsafeGetTensorImpl());
    return (it == name_of.end() ? std::string() : it->second) + "\n " + shape_text(t.sizes());
  };

  std::ostringstream os;
  os << "digraph {\n"
     << kGraphAttributes << kNodeAttributes;
  std::unordered_map<const autograd::Node*, int> id;
  int next = 0;
  os << "\tn" << next++ << " [label=\"" << quoted(var_label(root)) << "\" fillcolor=" << kRootFill << "]\n";
  std::vector<std::string> edges;
  if (root.defined() && root.grad_fn()) {
    std::vector<const autograd::Node*> stack{root.grad_fn().get()};
    id[root.grad_fn().get()] = next++;
    auto declare = [&](const autograd::Node* n) {
      if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n)) {
        os << "\tn" << id[n] << " [label=\"" << quoted(var_label(acc->variable)) << "\" fillcolor=" << kLeafFill << "]\n";
      } else {
        os << "\tn" << id[n] << " [label=\"" << quoted(short_name(n->name())) << "\"]\n";
      }
    };
    declare(root.grad_fn().get());
    edges.push_back("\tn1 -> n0\n");
    while (!stack.empty()) {
      const autograd::Node* n = stack.back();
      stack.pop_back();
      const auto& nexts = n->untaped_next_edges();
      // Visit children in order: push them reversed.
      std::vector<const autograd::Node*> fresh;
      for (const auto& e : nexts) {
        if (!e.function) continue;
        const autograd::Node* c = e.function.get();
        if (!id.count(c)) {
          id[c] = next++;
          declare(c);
          fresh.push_back(c);
        }
        edges.push_back("\tn" + std::to_string(id[c]) + " -> n" + std::to_string(id[n]) + "\n");
      }
      for (auto it = fresh.rbegin(); it != fresh.rend(); ++it) stack.push_back(*it);
    }
  }
  for (const auto& e : edges) os << e;
  os << "}\n";
  return os.str();
}

std::string walk_graph(const Tensor& root) {
  std::ostringstream os;
  if (!root.defined() || !root.grad_fn()) return "";
  std::vector<std::pair<const autograd::Node*, int>> stack{{root.grad_fn().get(), 0}};
  while (!stack.empty()) {
    auto [n, depth] = stack.back();
    stack.pop_back();
    os << depth << ' ' << std::string(static_cast<size_t>(depth), ' ') << ' ' << n->name() << '\n';
    const auto& nexts = n->untaped_next_edges();
    for (auto it = nexts.rbegin(); it != nexts.rend(); ++it)
      if (it->function) stack.emplace_back(it->function.get(), depth + 1);
  }
  return os.str();
}

}  // namespace gradlab

// How a backward reached one tensor from its root (the replay's Route): what
// a gradient check compares with the reference's, so that a stand-in built to
// give the same gradient is told from the loss. replayer.cpp records it for
// every gradient a backward writes.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

namespace grader::replay {

// The route from `root` down to `target` (its grad_fn, or the AccumulateGrad
// of a leaf): "" when the graph does not reach it, "?" when it is too large
// or deep to follow.
std::string route_to(const torch::Tensor& target, const std::shared_ptr<gradlab::autograd::Node>& root);

}  // namespace grader::replay

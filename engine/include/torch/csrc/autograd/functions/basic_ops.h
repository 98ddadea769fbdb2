// LibTorch's UndefinedGrad, by the path its own tests include: it passes its
// inputs through (as copies) under a backward that sends no gradient on, so
// that a test can feed undefined gradients into any backward above it.
#pragma once
#include <torch/torch.h>

namespace torch::autograd {

struct UndefinedGradBackward : Node {
  UndefinedGradBackward() = default;
  explicit UndefinedGradBackward(edge_list&& next) { set_next_edges(std::move(next)); }
  std::string node_name() const override { return "torch::autograd::UndefinedGradBackward"; }
  variable_list apply(variable_list&& grads) override { return variable_list(grads.size()); }
};

struct UndefinedGrad : Node {
  UndefinedGrad() { add_input_metadata_undefined(); }
  std::string node_name() const override { return "torch::autograd::UndefinedGrad"; }
  variable_list apply(variable_list&& inputs) override {
    bool any = false;
    for (const auto& v : inputs) any |= v.defined() && v.requires_grad();
    std::shared_ptr<UndefinedGradBackward> fn;
    if (any) {
      edge_list next;
      if (GradMode::is_enabled())
        for (const auto& v : inputs) next.push_back(v.defined() && v.requires_grad() ? impl::gradient_edge(v) : Edge());
      fn = std::make_shared<UndefinedGradBackward>(std::move(next));
    }
    variable_list out;
    for (const auto& v : inputs) {
      if (!v.defined()) {
        if (fn) fn->add_input_metadata_undefined();
        out.emplace_back();
        continue;
      }
      Tensor copy = v.detach().clone();
      if (fn) {
        const uint32_t nr = fn->add_input_metadata(copy);
        gradlab::autograd::impl::set_history(copy, fn, nr);
      }
      out.push_back(std::move(copy));
    }
    return out;
  }
};

}  // namespace torch::autograd

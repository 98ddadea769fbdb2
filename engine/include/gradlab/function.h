// Custom autograd functions, LibTorch style:
//   struct MyExp : torch::autograd::Function<MyExp> {
//     static Tensor forward(AutogradContext* ctx, Tensor x) { auto y = x.exp(); ctx->save_for_backward({y}); return y; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) { return {g[0] * ctx->get_saved_variables()[0]}; }
//   };
//   auto y = MyExp::apply(x);   // y.grad_fn()->name() == "torch::autograd::CppNode<MyExp>"
#pragma once
#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <variant>

#include "gradlab/autograd.h"
#include "gradlab/ops.h"

namespace gradlab::autograd {

// What ctx->saved_data holds: a number, a bool, a string or a tensor.
class IValue {
 public:
  IValue() = default;
  IValue(double v) : v_(v) {}  // NOLINT
  IValue(int v) : v_(static_cast<int64_t>(v)) {}  // NOLINT
  IValue(int64_t v) : v_(v) {}  // NOLINT
  IValue(bool v) : v_(v) {}  // NOLINT
  IValue(std::string v) : v_(std::move(v)) {}  // NOLINT
  IValue(const char* v) : v_(std::string(v)) {}  // NOLINT
  IValue(Tensor v) : v_(std::move(v)) {}  // NOLINT
  bool isDouble() const { return std::holds_alternative<double>(v_); }
  bool isInt() const { return std::holds_alternative<int64_t>(v_); }
  bool isTensor() const { return std::holds_alternative<Tensor>(v_); }
  double toDouble() const;
  int64_t toInt() const;
  bool toBool() const;
  const std::string& toStringRef() const;
  Tensor toTensor() const;

 private:
  std::variant<std::monostate, double, int64_t, bool, std::string, Tensor> v_;
};

class AutogradContext {
 public:
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  variable_list get_saved_variables() const;
  void mark_dirty(const variable_list&) {}
  void mark_non_differentiable(const variable_list& outputs) { non_differentiable_ = outputs; }
  void set_materialize_grads(bool v) { materialize_grads_ = v; }
  bool needs_input_grad(size_t i) const;
  std::unordered_map<std::string, IValue> saved_data;

  // Engine side (called by Function<T>::apply and CppNode).
  void commit_saved(const variable_list& outputs);
  void release() {
    for (auto& s : saved_) s.reset_data();
    released_ = true;
  }
  std::weak_ptr<Node> node_;
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;

 private:
  variable_list to_save_;
  variable_list non_differentiable_;
  std::vector<SavedVariable> saved_;
  bool released_ = false;
};

std::string demangle(const char* name);

template <class T>
class CppNode : public Node {
 public:
  std::string name() const override { return "torch::autograd::CppNode<" + demangle(typeid(T).name()) + ">"; }
  variable_list apply(variable_list&& grads) override {
    if (ctx_.materialize_grads_)
      for (size_t i = 0; i < grads.size(); ++i)
        if (!grads[i].defined() && i < num_inputs())
          grads[i] = zeros(input_metadata(i).shape, TensorOptions(input_metadata(i).dtype).device(input_metadata(i).device));
    variable_list outs = T::backward(&ctx_, std::move(grads));
    const size_t expected = is_variable_input_.size();
    if (outs.size() > expected) {
      bool all_undefined = true;
      for (size_t i = expected; i < outs.size(); ++i) all_undefined &= !outs[i].defined();
      if (all_undefined) outs.resize(expected);
    }
    if (outs.size() != expected)
      throw std::runtime_error(str_cat("function ", name(), " returned an incorrect number of gradients (expected ",
                                       expected, ", got ", outs.size(), ")"));
    variable_list result;
    for (size_t i = 0; i < outs.size(); ++i)
      if (is_variable_input_[i]) result.push_back(std::move(outs[i]));
    return result;
  }
  void release_variables() override { ctx_.release(); }
  bool has_saved_variables() const override { return true; }

  AutogradContext ctx_;
  std::vector<bool> is_variable_input_;
};

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = make_node<CppNode<T>>();
    node->ctx_.node_ = node;
    // One entry per forward argument; only tensors get an edge.
    bool any_requires_grad = false;
    auto visit = [&](const auto& a) {
      using A = std::decay_t<decltype(a)>;
      if constexpr (std::is_same_v<A, Tensor>) {
        node->is_variable_input_.push_back(true);
        const bool rg = a.defined() && a.requires_grad();
        any_requires_grad |= rg;
        node->ctx_.needs_input_grad_.push_back(rg);
        node->add_next_edge(rg ? impl::gradient_edge(a) : Edge());
      } else {
        node->is_variable_input_.push_back(false);
        node->ctx_.needs_input_grad_.push_back(false);
      }
    };
    (visit(args), ...);
    const bool record = any_requires_grad && GradMode::is_enabled();
    using Out = decltype(T::forward(&node->ctx_, std::forward<Args>(args)...));
    Out out = [&] {
      AutoGradMode guard(false);
      return T::forward(&node->ctx_, std::forward<Args>(args)...);
    }();
    variable_list outs;
    if constexpr (std::is_same_v<std::decay_t<Out>, Tensor>) {
      outs.push_back(out);
    } else {
      outs = out;
    }
    if (record) {
      for (size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i].defined()) continue;
        // The output is the function's own: a fresh header with this history.
        outs[i] = outs[i].tensor_data();
        node->add_input_metadata(outs[i]);
        impl::set_history(outs[i], node, static_cast<uint32_t>(i));
      }
      node->ctx_.commit_saved(outs);
    } else {
      node->ctx_.commit_saved({});
    }
    if constexpr (std::is_same_v<std::decay_t<Out>, Tensor>) {
      return outs[0];
    } else {
      return outs;
    }
  }
};

}  // namespace gradlab::autograd

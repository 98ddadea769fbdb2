// Custom autograd functions, LibTorch style:
//   struct MyExp : torch::autograd::Function<MyExp> {
//     static Tensor forward(AutogradContext* ctx, Tensor x) { auto y = x.exp(); ctx->save_for_backward({y}); return y; }
//     static variable_list backward(AutogradContext* ctx, variable_list g) { return {g[0] * ctx->get_saved_variables()[0]}; }
//   };
//   auto y = MyExp::apply(x);   // y.grad_fn()->name() == "torch::autograd::CppNode<MyExp>"
#pragma once
#include <cxxabi.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <variant>

#include "gradlab/autograd.h"
#include "gradlab/ops.h"

namespace gradlab::autograd {

// What ctx->saved_data holds: a number, a bool, a string or a tensor. Every
// member is the library's (function.cpp), so that the variant's machinery is
// instantiated there once, not in each file that includes torch.h.
class IValue {
 public:
  IValue();
  IValue(double v);  // NOLINT
  IValue(int v);  // NOLINT
  IValue(int64_t v);  // NOLINT
  IValue(bool v);  // NOLINT
  IValue(std::string v);  // NOLINT
  IValue(const char* v);  // NOLINT
  IValue(Tensor v);  // NOLINT
  IValue(const IValue&);
  IValue(IValue&&) noexcept;
  IValue& operator=(const IValue&);
  IValue& operator=(IValue&&) noexcept;
  ~IValue();
  bool isDouble() const;
  bool isInt() const;
  bool isTensor() const;
  double toDouble() const;
  int64_t toInt() const;
  bool toBool() const;
  const std::string& toStringRef() const;
  Tensor toTensor() const;

 private:
  std::variant<std::monostate, double, int64_t, bool, std::string, Tensor> v_;
};

using IndexRange = std::pair<size_t, size_t>;  // edges [first, second)

// Its constructor and destructor are the library's (function.cpp): written
// here they would make every file that includes torch.h instantiate the
// hash map and the variant, a tenth of a second of each student's compile.
class AutogradContext {
 public:
  AutogradContext();
  ~AutogradContext();
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;
  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  variable_list get_saved_variables() const;
  // Inputs the forward changed in place: their versions move on, and their
  // history becomes this function's (a leaf that requires grad is refused).
  void mark_dirty(const variable_list& inputs) { dirty_ = inputs; }
  // Outputs that are not differentiable: they come out not requiring grad,
  // and the backward gets zeros (or, without materialisation, nothing) for them.
  void mark_non_differentiable(const variable_list& outputs) { non_differentiable_ = outputs; }
  void set_materialize_grads(bool v) { materialize_grads_ = v; }
  // Whether the gradient of the i-th tensor input is wanted (edges count
  // tensors only, each element of a TensorList one).
  bool needs_input_grad(size_t i) const;
  // Whether any input in these [begin, end) ranges of edges needs its gradient.
  bool needs_input_grad(std::initializer_list<IndexRange> ranges) const {
    for (const IndexRange& r : ranges)
      for (size_t i = r.first; i < r.second; ++i)
        if (needs_input_grad(i)) return true;
    return false;
  }
  std::unordered_map<std::string, IValue> saved_data;

  // Engine side (called by Function<T>::apply and CppNode).
  void commit_saved(const variable_list& outputs);
  void release();
  std::weak_ptr<Node> node_;
  bool materialize_grads_ = true;
  variable_list dirty_;
  variable_list non_differentiable_;

 private:
  variable_list to_save_;
  std::vector<SavedVariable> saved_;
  bool released_ = false;
};

std::string demangle(const char* name);

// The backward of a custom function: the user's T::backward between
// LibTorch's checks of what goes in and comes out.
// Its special members and virtuals are defined in function.cpp, which makes
// that file the one home of its vtable (see AutogradContext).
class CppNodeBase : public Node {
 public:
  CppNodeBase();
  ~CppNodeBase() override;
  void release_variables() override;
  AutogradContext ctx_;
  // One entry per forward argument (per element of a TensorList argument):
  // whether it was a tensor, hence has an edge and a gradient.
  std::vector<bool> is_variable_input_;

 protected:
  // Undefined gradients become zeros of the output's shape, unless the
  // function turned that off.
  void materialize(variable_list& grads);
  // Trailing undefined extras are dropped; then the count must match the
  // forward's arguments, and non-tensor arguments get no gradient.
  variable_list check_and_select(variable_list&& outs) const;
};

template <class T>
class CppNode : public CppNodeBase {
 public:
  std::string node_name() const override { return "torch::autograd::CppNode<" + demangle(typeid(T).name()) + ">"; }
  variable_list apply(variable_list&& grads) override {
    materialize(grads);
    return check_and_select(T::backward(&ctx_, std::move(grads)));
  }
};

namespace detail {
// Sorts the forward's arguments as LibTorch does: a tensor or an optional
// tensor is one input (an empty optional an undefined one), a TensorList one
// input per element, anything else (a std::vector of tensors too) no input.
inline void collect_input(CppNodeBase& node, variable_list& inputs, const Tensor& t) {
  node.is_variable_input_.push_back(true);
  inputs.push_back(t);
}
inline void collect_input(CppNodeBase& node, variable_list& inputs, const std::optional<Tensor>& t) {
  collect_input(node, inputs, t.has_value() ? *t : Tensor());
}
inline void collect_input(CppNodeBase& node, variable_list& inputs, TensorList ts) {
  for (const Tensor& t : ts) collect_input(node, inputs, t);
}
template <class A>
void collect_input(CppNodeBase& node, variable_list&, const A&) {
  node.is_variable_input_.push_back(false);
}
// Edges to the inputs; whether a graph is to be recorded at all.
bool connect_inputs(CppNodeBase& node, const variable_list& inputs);
// LibTorch's _wrap_outputs: versions of dirty inputs, histories of the
// outputs (in place, as views of returned inputs, or rebased for dirty
// ones), non-differentiable outputs detached. `node` is null when nothing
// is recorded.
void wrap_outputs(const std::shared_ptr<CppNodeBase>& node, AutogradContext& ctx, const variable_list& inputs,
                  variable_list& outputs);
}  // namespace detail

template <class T>
struct Function {
  template <class... Args>
  static auto apply(Args&&... args) {
    auto node = make_node<CppNode<T>>();
    node->ctx_.node_ = node;
    variable_list inputs;
    (detail::collect_input(*node, inputs, args), ...);
    const bool record = detail::connect_inputs(*node, inputs);
    using Out = decltype(T::forward(&node->ctx_, std::forward<Args>(args)...));
    Out out = [&] {
      AutoGradMode guard(false);
      return T::forward(&node->ctx_, std::forward<Args>(args)...);
    }();
    variable_list outs;
    if constexpr (std::is_same_v<std::decay_t<Out>, Tensor>) {
      outs.push_back(std::move(out));
    } else {
      outs = std::move(out);
    }
    std::shared_ptr<CppNodeBase> recorded;
    if (record) recorded = node;
    detail::wrap_outputs(recorded, node->ctx_, inputs, outs);
    if constexpr (std::is_same_v<std::decay_t<Out>, Tensor>) {
      return outs[0];
    } else {
      return outs;
    }
  }
};

}  // namespace gradlab::autograd

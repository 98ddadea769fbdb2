// What every op file shares: the generic op node, and the three steps of an
// op (compute the result, record the backward beside it, return).
//
//   Tensor exp(const Tensor& x) {
//     Tensor out = unary_kernel(Unary::Exp, x);
//     if (auto fn = record("ExpBackward0", {&x}, [](OpNode& n, Grads& g) -> GradList {
//           return {g[0] * n.saved_at(0)};        // d/dx e^x = e^x
//         })) { fn->save(out, /*is_output=*/true); finish(fn, out); }
//     return out;
//   }
#pragma once
#include <initializer_list>
#include <vector>

#include "backend/backend.h"
#include "gradlab/autograd.h"
#include "gradlab/ops.h"

namespace gradlab {

using autograd::GradList;
using autograd::variable_list;
using Grads = GradList;

class OpNode : public autograd::Node {
 public:
  using BackwardFn = GradList (*)(OpNode& self, Grads& grads);
  OpNode(const char* name, BackwardFn fn) : name_(name), fn_(fn) {}
  std::string name() const override { return name_; }
  variable_list apply(variable_list&& grads) override {
    GradList in(std::make_move_iterator(grads.begin()), std::make_move_iterator(grads.end()));
    GradList r = fn_(*this, in);
    return variable_list(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  GradList apply_into(GradList& grads) override { return fn_(*this, grads); }
  void release_variables() override {
    for (auto& s : saved) s.reset_data();
    if (saved_fn) saved_fn->release_variables();
  }
  // The saved tensors' references to their nodes go to the engine's release
  // list before the members die (see Node::~Node).
  ~OpNode() override {
    for (auto& s : saved) s.steal_graph_refs();
  }

  void save(const Tensor& t, bool is_output = false) { saved.emplace_back(t, is_output); }
  Tensor saved_at(size_t i) { return saved[i].unpack_for(this); }

  SmallVector<autograd::SavedVariable, 2> saved;
  double scalar[2] = {0, 0};
  DimVector ints;       // dims, sizes: whatever the backward needs
  DimVector ints2;
  DimVector ints3;
  int64_t offset = 0;
  ScalarType dtype = ScalarType::Float;
  bool flag = false;
  std::shared_ptr<autograd::Node> saved_fn;  // CopySlices: the in-place op's node

 private:
  const char* name_;
  BackwardFn fn_;
};

// Makes `fn` the grad_fn of `out` (output number `nr`). A free function of
// the caller's shared_ptr: inside the node, shared_from_this() would cost a
// compare-and-swap loop on the reference count. Callers done with `fn` move
// it in, which hands their reference to the tensor instead of counting up and down.
inline void finish(std::shared_ptr<OpNode> fn, const Tensor& out, uint32_t nr = 0) {
  fn->add_input_metadata(out);
  autograd::impl::set_history(out, std::move(fn), nr);
}

// True when grad mode is on and one of the inputs requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(TensorList inputs);
// Creates the op's node with edges to the inputs (null edges for inputs that
// need no gradient), or returns null when no graph is to be built.
std::shared_ptr<OpNode> record(const char* name, std::initializer_list<const Tensor*> inputs,
                               OpNode::BackwardFn fn);
std::shared_ptr<OpNode> record(const char* name, TensorList inputs, OpNode::BackwardFn fn);

// --- shape helpers
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);
// Sums `g` down to `shape` (the reverse of broadcasting).
Tensor sum_to(const Tensor& g, IntArrayRef shape);

// --- kernels with allocation, no autograd
Tensor new_empty(IntArrayRef sizes, ScalarType dtype, Device device);
Tensor unary_kernel(backend::Unary op, const Tensor& x, double a = 0, double b = 0);
Tensor binary_kernel(backend::Binary op, const Tensor& a, const Tensor& b, ScalarType out_type, double alpha = 1);
Tensor scalar_like(Scalar s, const Tensor& like, ScalarType dtype);
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, Scalar b);
Tensor ones_like_nograd(const Tensor& t);

// --- in-place support
// Throws PyTorch's error for in-place on a leaf that requires grad (or a view of one).
void check_inplace(const Tensor& self);
void bump_version(const Tensor& self);
// After an in-place op computed `self`'s new value: records `fn` as its new history.
void finish_inplace(const Tensor& self, const std::shared_ptr<OpNode>& fn);

// Views: share storage and version counter, record the base.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset);

}  // namespace gradlab

// What every op file shares: the op node, and the three steps of an op
// (compute the result, record the backward beside it, return).
//
//   // d/dx e^x = e^x
//   GradList exp_bw(PlainOp& n, Grads& g) { return {g[0] * n.saved_at(0)}; }
//   Tensor exp(const Tensor& x) {
//     Tensor out = unary_kernel(Unary::Exp, x);
//     if (auto fn = record("ExpBackward0", {&x}, exp_bw)) {
//       fn->save(out, /*is_output=*/true);
//       finish(std::move(fn), out);
//     }
//     return out;
//   }
//
// An op with numbers of its own declares them as its state, and its backward
// takes the node of that state:
//
//   struct Exponent { double exponent; };
//   GradList pow_bw(Op<Exponent>& n, Grads& g) { ... n.exponent ... }
//   record("PowBackward0", {&x}, pow_bw, Exponent{e})
#pragma once
#include <initializer_list>
#include <vector>

#include "autograd/modes.h"
#include "backend/backend.h"
#include "gradlab/autograd.h"
#include "gradlab/ops.h"
#include "gradlab/tape.h"
#include "pooled.h"

namespace gradlab {

using autograd::GradList;
using autograd::variable_list;
using Grads = GradList;

// What every op's node has: its grad_fn name and the tensors it saved (with
// their versions). The numbers a backward needs are the op's own, typed
// state: see Op below.
namespace autograd {
// Counts a built-in op's node running its backward (gradlab/node_count.h).
void note_op_node_run();
// Keeps the storage of a saved tensor found changed (gradlab/failed_node.h).
void note_stale_storage(const void* storage);
}  // namespace autograd

class OpNode : public autograd::Node {
 public:
  explicit OpNode(const char* name) : name_(name) {}
  std::string node_name() const override { return name_; }
  variable_list apply(variable_list&& grads) override {
    GradList in(std::make_move_iterator(grads.begin()), std::make_move_iterator(grads.end()));
    GradList r = apply_into(in);
    return variable_list(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  void release_variables() override {
    for (auto& s : saved) s.reset_data();
  }
  // The saved tensors' references to their nodes go to the engine's release
  // list before the members die (see Node::~Node).
  ~OpNode() override {
    for (auto& s : saved) s.steal_graph_refs();
  }

  void save(const Tensor& t, bool is_output = false) { saved.emplace_back(t, is_output); }
  Tensor saved_at(size_t i) { return saved[i].unpack_for(this); }

  SmallVector<autograd::SavedVariable, 2> saved;

 private:
  const char* name_;
};

// The state of an op without numbers of its own.
struct NoState {};

// One op's node: OpNode plus the op's state, a plain struct whose fields the
// backward reads by name (n.alpha, n.sizes, n.lo). The backward is a plain
// function over this exact type, so a backward cannot read another op's
// fields, and a node carries only what its op needs. A state that holds
// something to free with the graph (CopySlices' node) says so with its own
// release_variables().
template <class State = NoState>
class Op final : public OpNode, public State {
 public:
  using Backward = GradList (*)(Op& self, Grads& grads);
  Op(const char* name, Backward fn, State state) : OpNode(name), State(std::move(state)), fn_(fn) {}
  GradList apply_into(GradList& grads) override {
    autograd::note_op_node_run();
    return fn_(*this, grads);
  }
  void release_variables() override {
    OpNode::release_variables();
    if constexpr (requires(State& s) { s.release_variables(); }) State::release_variables();
  }

 private:
  Backward fn_;
};
using PlainOp = Op<>;

// The shapes a backward restores (view, reshape, expand, squeeze): the input's.
struct InputSizes {
  DimVector sizes;
};
// Where a copy's source came from (copy_, to): its gradient goes back there.
struct Origin {
  ScalarType dtype;
  DeviceType device;
};

// Makes `fn` the grad_fn of `out` (output number `nr`). A free function of
// the caller's shared_ptr: inside the node, shared_from_this() would cost a
// compare-and-swap loop on the reference count. Callers done with `fn` move
// it in, which hands their reference to the tensor instead of counting up and down.
template <class State>
void finish(std::shared_ptr<Op<State>> fn, const Tensor& out, uint32_t nr = 0) {
  fn->add_input_metadata(out);
  autograd::impl::set_history(out, std::move(fn), nr);
}

// True when grad mode is on and one of the inputs requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(TensorList inputs);
// The edges from a new node to its inputs (null edges for inputs that need no gradient).
void connect(autograd::Node& node, std::initializer_list<const Tensor*> inputs);
void connect(autograd::Node& node, TensorList inputs);

// Creates the op's node with edges to the inputs, or returns null when no
// graph is to be built. The state's type comes from the backward's; `state`
// is the state itself, or a function that makes it, called only when a node
// is made (a state that copies shapes then costs nothing under no_grad).
template <class State, class Inputs, class Make>
std::shared_ptr<Op<State>> record_node(const char* name, const Inputs& inputs, GradList (*fn)(Op<State>&, Grads&),
                                       Make&& state) {
  if (!needs_grad(inputs)) return nullptr;
  std::shared_ptr<Op<State>> node;
  if constexpr (std::is_invocable_v<Make>)
    node = detail::make_pooled<Op<State>>(name, fn, std::forward<Make>(state)());
  else
    node = detail::make_pooled<Op<State>>(name, fn, State(std::forward<Make>(state)));
  connect(*node, inputs);
  return node;
}
template <class State, class Make = State>
std::shared_ptr<Op<State>> record(const char* name, std::initializer_list<const Tensor*> inputs,
                                  GradList (*fn)(Op<State>&, Grads&), Make&& state = State{}) {
  return record_node(name, inputs, fn, std::forward<Make>(state));
}
template <class State, class Make = State>
std::shared_ptr<Op<State>> record(const char* name, TensorList inputs, GradList (*fn)(Op<State>&, Grads&),
                                  Make&& state = State{}) {
  return record_node(name, inputs, fn, std::forward<Make>(state));
}
// The input's shape, for a backward that restores it (made when recorded).
inline auto sizes_of(const Tensor& t) {
  return [&t] { return InputSizes{DimVector(t.sizes())}; };
}

// --- shape helpers
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
bool is_expandable_to(IntArrayRef shape, IntArrayRef desired);
// A shape as [before dim, along dim, after dim], for loops along one dim of
// a contiguous tensor.
struct Split3 {
  int64_t pre = 1, n = 1, post = 1;
};
inline Split3 split3(IntArrayRef s, int64_t dim) {
  Split3 r;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
    (d < dim ? r.pre : d == dim ? r.n : r.post) *= s[static_cast<size_t>(d)];
  return r;
}
// Sums `g` down to `shape` (the reverse of broadcasting).
Tensor sum_to(const Tensor& g, IntArrayRef shape);

// --- kernels with allocation, no autograd
Tensor new_empty(IntArrayRef sizes, ScalarType dtype, Device device);
Tensor unary_kernel(backend::Unary op, const Tensor& x, double a = 0, double b = 0);
// An op's output laid out as LibTorch's TensorIterator lays it out for these
// inputs, and as empty_like(t) does (common.cpp).
Tensor empty_following(IntArrayRef shape, ScalarType dtype, Device device, std::initializer_list<const Tensor*> ins);
Tensor empty_preserving(const Tensor& t, ScalarType dtype, Device device);
Tensor binary_kernel(backend::Binary op, const Tensor& a, const Tensor& b, ScalarType out_type, double alpha = 1);
Tensor scalar_like(Scalar s, const Tensor& like, ScalarType dtype);
// A contiguous host copy (or the tensor itself), outside any graph: the ops
// computed element by element on the host read their operands through it.
Tensor on_host(const Tensor& t);
// For each element of `index` (host, contiguous, long, of the tensor's rank),
// the offset in a contiguous tensor of `sizes` that it picks along `dim`;
// an index out of range raises PyTorch's error (gather, scatter, scatter_add).
std::vector<int64_t> offsets_along(IntArrayRef sizes, const Tensor& index, int64_t dim);
// Weights are not differentiable: LibTorch refuses one that requires grad
// (while a graph is being recorded) rather than silently give it none.
inline void check_no_requires_grad(const Tensor& t, const char* arg, const char* op) {
  GRADLAB_CHECK(!t.defined() || !t.requires_grad() || !detail::grad_mode(), "The function '", op,
                "' is not differentiable with respect to argument '", arg,
                "'. This input cannot have requires_grad True.");
}
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, Scalar b);
// PyTorch's rule for writing a result of dtype `result` into an existing
// tensor of dtype `out` (in-place ops): never floating into integral, nothing
// but bool into bool.
// How the error names the output's type: as its dtype (Long), or, where
// LibTorch prints the tensor's TypeMeta (clamp's out), as its C++ type (long int).
enum class OutName { Dtype, CppType };
void check_can_cast(ScalarType result, ScalarType out, OutName name = OutName::Dtype);
Tensor ones_like_nograd(const Tensor& t);

// --- in-place support
// Throws PyTorch's error for in-place on a leaf that requires grad (or a view
// of one), and for writing an expanded tensor unless the op writes one value
// everywhere (fill_, zero_: Overlap::Allowed).
enum class Overlap : uint8_t { Refused, Allowed };
void check_inplace(const Tensor& self, Overlap overlap = Overlap::Refused);
void check_no_internal_overlap(const Tensor& self);
// PyTorch's refusal of an operand that reads part of the memory an op writes
// (t.mul_(t[1])): the same memory exactly (t.add_(t)) is allowed.
void check_no_partial_overlap(const Tensor& written, const Tensor& read);
void bump_version(const Tensor& self);
// After an in-place op computed `self`'s new value: records `fn` as its new history.
// Before an in-place op that records a node writes anything: LibTorch's
// check_inplace refuses a view it may not rebase (made under no_grad, one of
// several outputs) when any operand requires grad, not only the target.
void check_rebase(const Tensor& self, const std::shared_ptr<autograd::Node>& fn);
void finish_inplace(const Tensor& self, const std::shared_ptr<autograd::Node>& fn);
// Ends an op that wrote `out`, which is `self` itself when it ran in place:
// the version moves, and fn (if recorded) becomes the result's grad_fn.
template <class State>
void finish_written(std::shared_ptr<Op<State>> fn, const Tensor& self, const Tensor& out, bool inplace) {
  if (inplace) bump_version(self);
  if (!fn) return;
  if (inplace)
    finish_inplace(self, fn);
  else
    finish(std::move(fn), out);
}
// The part of it for a view whose metadata fn already has (custom Functions'
// mark_dirty): CopySlices on the base, AsStridedBackward0 on the view.
void rebase_view_history(const Tensor& self, const std::shared_ptr<autograd::Node>& fn);

// Whether a view's base is in a graph (requires grad or has a history): then
// the view is too, whatever mode it was made in.
inline bool base_in_graph(const TensorImpl* view) {
  const TensorImpl* b = view->base.get();
  return b && (b->requires_grad || b->grad_fn);
}
// A view's history is stale once its base (or a sibling view) changed in
// place after the view last took it (PyTorch's attr_version). Read lazily,
// as PyTorch does, wherever a view's grad_fn is read.
inline bool stale_view(const TensorImpl* impl) { return impl->is_view && impl->base && impl->version() != impl->attr_version; }
// Makes a stale view's history an AsStridedBackward0 of its base's, or throws
// PyTorch's error for views that may not follow their base (no_grad, split).
void refresh_view_history(const Tensor& view);

// Views: share storage and version counter, record the base.
Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset);

}  // namespace gradlab

// The backward graph, as PyTorch builds it: every differentiable op makes a
// Node whose edges point at the nodes that produced its inputs; a leaf that
// requires grad is reached through an AccumulateGrad node. Nodes keep the
// tensors their backward needs as SavedVariables, which remember the version
// they saw. The engine (engine.cpp), not the nodes, orders the work, sums the
// gradients flowing into a node and validates what each node returns.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gradlab/small_vector.h"
#include "gradlab/tensor.h"

namespace gradlab::autograd {

using variable_list = std::vector<Tensor>;
// The gradients a node returns to the engine: most nodes return one or two,
// kept inline so that running a node allocates nothing for its result.
using GradList = SmallVector<Tensor, 2>;
// LibTorch's edge_list is a std::vector; this one keeps two edges inline (an
// op has one or two inputs) and converts to a std::vector where one is asked for.
using edge_list = SmallVector<Edge, 2>;

struct Edge {
  Edge() = default;
  Edge(std::shared_ptr<Node> fn, uint32_t nr) : function(std::move(fn)), input_nr(nr) {}
  bool is_valid() const { return function != nullptr; }
  bool operator==(const Edge& o) const { return function == o.function && input_nr == o.input_nr; }
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
};

// Shape, dtype and device of one input of a node (= one output of the forward
// op): what a gradient flowing into that input must match.
struct InputMetadata {
  DimVector shape;
  ScalarType dtype = ScalarType::Float;
  Device device;
};

// One tensor's hooks on one grad_fn (PyTorch's cpp_hooks_list): the gradient
// flowing into that output of the node passes through the entries in the
// order they were registered, before the node runs. An entry keeps its
// position (register_hook's answer) when another is removed. retain_grad()
// is an entry too, so it stores what the hooks before it made.
struct TensorHooks {
  struct Entry {
    std::function<Tensor(const Tensor&)> fn;  // empty for retain_grad's entry and removed ones
    bool retains_grad = false;
  };
  TensorImpl* owner = nullptr;  // the tensor whose .grad retain_grad fills; cleared when it dies
  SmallVector<Entry, 1> entries;  // mostly one: a retain_grad, or one hook
  // Passes `grad` through the entries (may replace it).
  void run(Tensor& grad);
};

// Hooks on a node itself (LibTorch's FunctionPreHook / FunctionPostHook): a
// pre-hook sees (and may replace) the gradients flowing into the node, after
// the tensor hooks; a post-hook sees the gradients it produced and those it
// was given, and may replace the former.
struct FunctionPreHook {
  virtual ~FunctionPreHook() = default;
  virtual variable_list operator()(const variable_list& grads) = 0;
};
struct FunctionPostHook {
  virtual ~FunctionPostHook() = default;
  virtual variable_list operator()(const variable_list& outputs, const variable_list& inputs) = 0;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  explicit Node(uint64_t sequence_nr);
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // LibTorch's name. The program's own calls are taped (tape.h), as are its
  // reads of the edges below: a walk of the graph it prints is the program
  // reading that graph, and the grader can tell it from typed text.
  // Subclasses name themselves through node_name().
  std::string name() const;
  virtual variable_list apply(variable_list&& grads) = 0;
  // What the engine calls: apply() over inline lists (the gradients flowing
  // in, which it may consume; those flowing out are returned straight into
  // the engine's variable). The ops and AccumulateGrad override it to skip
  // the std::vectors; others keep this default.
  virtual GradList apply_into(GradList& grads);
  virtual void release_variables() {}
  bool is_accumulate_grad() const { return is_accumulate_grad_; }
  // Custom functions take undefined gradients (their context materialises
  // them or not); the ops' backwards never see one: a node whose gradients
  // are all undefined is skipped, as LibTorch's any_grad_defined does.
  bool takes_undefined_grads() const { return takes_undefined_grads_; }

  variable_list operator()(variable_list&& grads) { return apply(std::move(grads)); }
  const edge_list& next_edges() const;  // taped, as name()
  edge_list& mutable_next_edges() { return next_edges_; }
  const Edge& next_edge(size_t i) const;  // taped, as name()
  // The engine's own reads of the edges (a backward, a drawing): not the
  // program's, never taped.
  const edge_list& untaped_next_edges() const { return next_edges_; }
  uint32_t num_outputs() const { return static_cast<uint32_t>(next_edges_.size()); }
  uint32_t num_inputs() const { return static_cast<uint32_t>(input_metadata_.size()); }
  const InputMetadata& input_metadata(size_t i) const { return input_metadata_.at(i); }
  uint32_t add_input_metadata(const Tensor& t);
  uint32_t add_input_metadata_undefined();  // an output that is not a tensor
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  void set_next_edges(edge_list e) { next_edges_ = std::move(e); }
  uint64_t sequence_nr() const { return sequence_nr_; }
  void add_pre_hook(std::unique_ptr<FunctionPreHook>&& hook);
  // The key is what del_post_hook takes.
  uintptr_t add_post_hook(std::unique_ptr<FunctionPostHook>&& hook);
  bool del_post_hook(const uintptr_t& key);
  const std::vector<std::unique_ptr<FunctionPreHook>>& pre_hooks() const;
  const std::vector<std::unique_ptr<FunctionPostHook>>& post_hooks() const;
  bool has_node_hooks() const { return node_hooks_ != nullptr; }
  bool should_compute_output(size_t i) const {
    return i < next_edges_.size() && next_edges_[i].is_valid();
  }
  // The same, and the edge leads somewhere the running backward needs (with
  // autograd::grad or backward(inputs=), only paths to those inputs are).
  bool task_should_compute_output(size_t i) const;

  // The hooks (register_hook, retain_grad) of the tensors this node made, by
  // output number: the engine runs them on the gradient flowing in.
  SmallVector<std::pair<uint32_t, std::shared_ptr<TensorHooks>>, 1> tensor_hooks;

 protected:
  virtual std::string node_name() const = 0;
  edge_list next_edges_;
  SmallVector<InputMetadata, 1> input_metadata_;  // ops have one output, mostly
  uint64_t sequence_nr_;
  bool is_accumulate_grad_ = false;
  bool takes_undefined_grads_ = false;

 private:
  struct NodeHooks {
    std::vector<std::unique_ptr<FunctionPreHook>> pre;
    std::vector<std::unique_ptr<FunctionPostHook>> post;
  };
  NodeHooks& node_hooks();
  std::unique_ptr<NodeHooks> node_hooks_;  // almost every node has none: one pointer
};

// The sink of a leaf: adds the incoming gradient into variable.grad().
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor var);
  std::string node_name() const override { return "torch::autograd::AccumulateGrad"; }
  variable_list apply(variable_list&& grads) override;
  GradList apply_into(GradList& grads) override;
  Tensor variable;
  GRADLAB_POOLED

 private:
  void accumulate(Tensor& new_grad);
};

// A tensor a node keeps for its backward, with the version it had then.
class SavedVariable {
 public:
  SavedVariable() = default;
  SavedVariable(const Tensor& t, bool is_output);
  // Gives the tensor back, or throws PyTorch's error when it was freed by an
  // earlier backward or modified in place since it was saved.
  // A saved output comes back with its history (grad_fn = saved_for), as in LibTorch.
  Tensor unpack(const std::shared_ptr<Node>& saved_for = nullptr) const {
    return unpack_for(saved_for.get(), /*with_history=*/true);
  }
  // The same, for the node that saved it given as a plain pointer (what the
  // ops' backwards pass: no reference count to touch on the common path).
  // Their saved outputs get their history back only where it can be
  // recorded on (create_graph): otherwise nobody sees it.
  Tensor unpack_for(Node* saved_for, bool with_history = false) const;
  void reset_data();
  bool defined() const { return was_defined_; }
  // Hands the graph reference this saved tensor holds, if it is the only one
  // left, to defer_node_release, so that destroying a long chain stays iterative.
  void steal_graph_refs();

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool was_defined_ = false;
  bool is_output_ = false;
  bool is_leaf_ = false;
  bool requires_grad_ = false;
  bool released_ = false;
};

// Grad mode: thread-local, as in PyTorch.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};
// Inference mode: no graph, and tensors made inside are marked as inference tensors.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  static bool is_enabled();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

 private:
  bool prev_inference_;
  bool prev_grad_;
};
// Anomaly mode, global as in LibTorch: a failing backward names its node,
// and (unless check_nan is off) a NaN coming out of a backward is an error.
struct AnomalyMode {
  static bool is_enabled();
  static bool should_check_nan();
  static void set_enabled(bool enabled, bool check_nan = true);
};
class DetectAnomalyGuard {
 public:
  explicit DetectAnomalyGuard(bool check_nan = true);
  ~DetectAnomalyGuard();
  static bool is_enabled() { return AnomalyMode::is_enabled(); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
  bool prev_check_nan_;
};

// Makes a node and its shared_ptr's control block in one block from the
// pool. (Long chains are still freed iteratively: see Node::~Node.)
template <class T, class... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  return std::allocate_shared<T>(detail::PoolAllocator<T>(), std::forward<Args>(args)...);
}
// Destructors of nodes that keep other nodes alive through saved tensors
// hand those references over here, so that freeing a graph never recurses.
void defer_node_release(std::shared_ptr<Node>&& fn);

namespace impl {
// The edge a gradient for `t` must flow into: its grad_fn, or its leaf's AccumulateGrad.
Edge gradient_edge(const Tensor& t);
std::shared_ptr<Node> grad_accumulator(const Tensor& t);
// Frees an accumulator parked on a dying leaf (out of line: every tensor's
// destructor checks for one, and almost none has one).
void delete_parked_accumulator(Node* acc);
// Makes `fn` the grad_fn of `t` as output number `output_nr`. A template over
// the caller's shared_ptr to the node's own type (OpNode, CppNode<T>), so
// that storing it costs one reference count (none when it is moved in), not a
// converted shared_ptr<Node> temporary.
template <class P>
void set_history(const Tensor& t, P&& fn, uint32_t output_nr = 0) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  impl->grad_fn = std::forward<P>(fn);
  impl->output_nr = output_nr;
}
// After an in-place op: `t` now comes from `fn`. Hooks registered before stay
// with the old node (they see the old value's gradient); retain_grad moves on.
void rebase_history(const Tensor& t, const std::shared_ptr<Node>& fn);
// The same for an output whose metadata `fn` already has, as output `output_nr`.
void move_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);
// The list register_hook and retain_grad add to, made (and attached to the
// grad_fn of a non-leaf) on first use.
TensorHooks& hooks_of(const Tensor& t);
}  // namespace impl

// The engine entry points (torch::autograd::backward / grad).
void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const variable_list& inputs = {});
// backward over views of the lists (what Tensor::backward calls).
void backward_impl(TensorList tensors, TensorList grad_tensors, std::optional<bool> retain_graph, bool create_graph,
                   TensorList inputs);
variable_list grad(const variable_list& outputs, const variable_list& inputs,
                   const variable_list& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                   bool create_graph = false, bool allow_unused = false);

}  // namespace gradlab::autograd

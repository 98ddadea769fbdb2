// Nodes, AccumulateGrad, saved variables and the grad-mode switches.
#include <atomic>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "autograd/anomaly.h"

#include "gradlab/autograd.h"
#include "gradlab/node_count.h"
#include "gradlab/tape.h"
#include "ops/ops_internal.h"

namespace gradlab::detail {
__thread ModeFlags t_modes __attribute__((tls_model("initial-exec")));
}  // namespace gradlab::detail

namespace gradlab::autograd {

bool GradMode::is_enabled() { return ::gradlab::detail::grad_mode(); }
void GradMode::set_enabled(bool enabled) { ::gradlab::detail::t_modes.grad_disabled = !enabled; }
bool InferenceMode::is_enabled() { return ::gradlab::detail::inference_mode(); }

namespace {
thread_local uint64_t t_next_sequence_nr = 0;
bool g_anomaly = false;
bool g_anomaly_check_nan = true;
}  // namespace

// ------------------------------------------------------------ anomaly parents
namespace anomaly {
namespace {
thread_local Node* t_evaluating = nullptr;
std::mutex g_parents_mutex;
std::unordered_map<const Node*, std::shared_ptr<Node>> g_parents;
bool g_has_parents = false;  // read by every ~Node: the map is empty outside anomaly mode

void record_parent(const Node* child) {
  if (!t_evaluating) return;
  std::shared_ptr<Node> parent = t_evaluating->shared_from_this();
  std::lock_guard<std::mutex> lock(g_parents_mutex);
  g_parents[child] = std::move(parent);
  g_has_parents = true;
}
void forget(const Node* n) {
  std::shared_ptr<Node> dying;  // released after the lock: it may end another node
  {
    std::lock_guard<std::mutex> lock(g_parents_mutex);
    auto it = g_parents.find(n);
    if (it == g_parents.end()) return;
    dying = std::move(it->second);
    g_parents.erase(it);
    g_has_parents = !g_parents.empty();
  }
}
}  // namespace

EvaluatingScope::EvaluatingScope(Node* n) : prev(std::exchange(t_evaluating, n)) {}
EvaluatingScope::~EvaluatingScope() { t_evaluating = prev; }

std::shared_ptr<Node> parent_of(const Node* n) {
  std::lock_guard<std::mutex> lock(g_parents_mutex);
  auto it = g_parents.find(n);
  return it == g_parents.end() ? nullptr : it->second;
}
}  // namespace anomaly

namespace {
std::atomic<uint64_t> g_nodes_made{0};  // every thread's (sequence numbers are each thread's own)
std::atomic<uint64_t> g_op_nodes_run{0};
}  // namespace

uint64_t nodes_made() { return g_nodes_made.load(std::memory_order_relaxed); }
uint64_t op_nodes_run() { return g_op_nodes_run.load(std::memory_order_relaxed); }
void note_op_node_run() { g_op_nodes_run.fetch_add(1, std::memory_order_relaxed); }

std::string Node::name() const {
  if (tape::on()) tape::read_name(this);
  return node_name();
}

const edge_list& Node::next_edges() const {
  if (tape::on())
    for (size_t i = 0; i < next_edges_.size(); ++i)
      if (next_edges_[i].function) tape::read_edge(this, i, next_edges_[i].function.get());
  return next_edges_;
}

const Edge& Node::next_edge(size_t i) const {
  const Edge& e = next_edges_.at(i);
  if (tape::on() && e.function) tape::read_edge(this, i, e.function.get());
  return e;
}

Node::Node() : sequence_nr_(t_next_sequence_nr++) {
  g_nodes_made.fetch_add(1, std::memory_order_relaxed);
  if (g_anomaly) anomaly::record_parent(this);
}
Node::Node(uint64_t seq) : sequence_nr_(seq) { g_nodes_made.fetch_add(1, std::memory_order_relaxed); }

uint32_t Node::add_input_metadata(const Tensor& t) {
  const TensorImpl* impl = t.unsafeGetTensorImpl();
  InputMetadata& m = input_metadata_.emplace_back();
  m.shape = impl->sizes;
  m.dtype = impl->dtype;
  m.device = impl->device();
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

Node::NodeHooks& Node::node_hooks() {
  if (!node_hooks_) node_hooks_ = std::make_unique<NodeHooks>();
  return *node_hooks_;
}
void Node::add_pre_hook(std::unique_ptr<FunctionPreHook>&& hook) { node_hooks().pre.push_back(std::move(hook)); }
uintptr_t Node::add_post_hook(std::unique_ptr<FunctionPostHook>&& hook) {
  auto& post = node_hooks().post;
  post.push_back(std::move(hook));
  return reinterpret_cast<uintptr_t>(post.back().get());
}
bool Node::del_post_hook(const uintptr_t& key) {
  if (!node_hooks_) return false;
  auto& post = node_hooks_->post;
  for (auto it = post.begin(); it != post.end(); ++it)
    if (reinterpret_cast<uintptr_t>(it->get()) == key) {
      post.erase(it);
      return true;
    }
  return false;
}
namespace {
const std::vector<std::unique_ptr<FunctionPreHook>> kNoPreHooks;
const std::vector<std::unique_ptr<FunctionPostHook>> kNoPostHooks;
}  // namespace
const std::vector<std::unique_ptr<FunctionPreHook>>& Node::pre_hooks() const {
  return node_hooks_ ? node_hooks_->pre : kNoPreHooks;
}
const std::vector<std::unique_ptr<FunctionPostHook>>& Node::post_hooks() const {
  return node_hooks_ ? node_hooks_->post : kNoPostHooks;
}

uint32_t Node::add_input_metadata_undefined() {
  input_metadata_.emplace_back();
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

GradList Node::apply_into(GradList& grads) {
  variable_list r = apply(variable_list(std::make_move_iterator(grads.begin()), std::make_move_iterator(grads.end())));
  return GradList(std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
}

// Destroying the last reference to the head of a long chain would recurse
// once per node. Instead a dying node moves the references it is the last
// owner of (its edges, and through subclasses its saved tensors' nodes) onto
// a per-thread list; the outermost destructor on the thread empties the list,
// and the destructors that this runs only add to it.
namespace {
struct Reaper {
  std::vector<std::shared_ptr<Node>> pending;
  bool active = false;
};
thread_local Reaper t_reaper;
}  // namespace

void defer_node_release(std::shared_ptr<Node>&& fn) { t_reaper.pending.push_back(std::move(fn)); }

Node::~Node() {
  if (anomaly::g_has_parents) anomaly::forget(this);
  Reaper& r = t_reaper;
  for (auto& e : next_edges_)
    if (e.function && e.function.use_count() == 1) r.pending.push_back(std::move(e.function));
  if (r.active) return;
  r.active = true;
  while (!r.pending.empty()) {
    std::shared_ptr<Node> n = std::move(r.pending.back());
    r.pending.pop_back();
    n.reset();  // may run other nodes' destructors, which only add to the list
  }
  r.active = false;
}

// ------------------------------------------------------------ AccumulateGrad
AccumulateGrad::AccumulateGrad(Tensor var)
    : Node(std::numeric_limits<uint64_t>::max()), variable(std::move(var)) {
  is_accumulate_grad_ = true;
  add_input_metadata(variable);
}

variable_list AccumulateGrad::apply(variable_list&& grads) {
  accumulate(grads.at(0));
  return {};
}

GradList AccumulateGrad::apply_into(GradList& grads) {
  accumulate(grads.at(0));
  return {};
}

namespace {
// A first gradient that cannot be stolen is copied as LibTorch copies it
// (clone_obey_contract): a fresh tensor shaped like the variable, then copy_.
// So the copy's version is 1, and under create_graph its grad_fn is
// CopyBackwards, as students see in PyTorch. (LibTorch also gives it the
// variable's strides when those are dense but permuted; here it is contiguous.)
Tensor copy_for_grad(const Tensor& variable, const Tensor& new_grad) {
  Tensor fresh = empty_tensor(variable.sizes(), variable.scalar_type(), variable.device());
  fresh.copy_(new_grad);
  return fresh;
}
}  // namespace

void AccumulateGrad::accumulate(Tensor& new_grad) {
  if (!new_grad.defined()) return;
  Tensor& grad = variable.mutable_grad();
  if (::gradlab::detail::grad_mode()) {  // create_graph: the sum is recorded, out of place
    grad = grad.defined() ? grad + new_grad : copy_for_grad(variable, new_grad);
    return;
  }
  if (!grad.defined()) {
    // Steal the incoming buffer when nobody else holds it, as PyTorch does;
    // a view (mm's transposed gradient through t()) is stolen detached, as
    // LibTorch stores new_grad.detach(): no longer a view, same memory and version.
    const bool stealable = new_grad.use_count() == 1 && new_grad.is_contiguous() && !new_grad.requires_grad();
    grad = !stealable ? copy_for_grad(variable, new_grad) : new_grad.is_view() ? new_grad.detach() : new_grad;
    return;
  }
  // grad += new_grad in place. When the two agree in shape, dtype and device
  // (always, but for hand-set grads), straight to the kernel: what add_ does
  // after its checks, which cost more than a small sum.
  TensorImpl* g = grad.unsafeGetTensorImpl();
  const TensorImpl* n = new_grad.unsafeGetTensorImpl();
  if (g->dtype == n->dtype && !g->inference && g->device() == n->device() && g->sizes.ref().equals(n->sizes)) {
    backend::of(grad).binary(backend::Binary::Add, grad, grad, new_grad, 1);
    ++g->version();
  } else {
    grad.add_(new_grad);
  }
}

// ------------------------------------------------------------ tensor hooks
namespace {
std::string type_string(const Tensor& t) { return t.toString(); }

// LibTorch's check_variable_result: a hook may change the values only.
void check_hook_result(const Tensor& value, const Tensor& result, size_t index) {
  if (!value.defined()) throw std::runtime_error("can't replace a empty gradient with a non-empty value");
  if (value.scalar_type() != result.scalar_type() || value.device() != result.device())
    throw std::runtime_error(str_cat("hook '", index, "' has changed the type of value (was ", type_string(value),
                                     " got ", type_string(result), ")"));
  if (!value.sizes().equals(result.sizes()))
    throw std::runtime_error(str_cat("hook '", index, "' has changed the size of value"));
}
}  // namespace

void TensorHooks::run(Tensor& grad) {
  // By index, and on a copy of each function: a hook may add or remove hooks.
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].retains_grad) {
      if (!owner || !grad.defined()) continue;
      Tensor& g = reinterpret_cast<Tensor&>(owner->grad);
      g = g.defined() ? g + grad : grad.clone();
      continue;
    }
    if (!entries[i].fn) continue;
    auto fn = entries[i].fn;
    Tensor r = fn(grad);
    if (!r.defined()) continue;
    check_hook_result(grad, r, i);
    grad = std::move(r);
  }
}

// ------------------------------------------------------------ SavedVariable
SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->inference && !::gradlab::detail::inference_mode())
    throw Error(
        "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
        "tensor and use it in autograd.");
  was_defined_ = true;
  output_nr_ = impl->output_nr;
  requires_grad_ = t.requires_grad();
  saved_version_ = impl->version();
  // An op's output is never a leaf, even when saved before its history is set.
  is_leaf_ = !is_output && impl->grad_fn == nullptr;
  is_output_ = is_output;
  if (!is_output || is_leaf_) {
    data_ = t;
    return;
  }
  // An op's own output is kept as a bare header over its memory: the output
  // itself holds this node as its grad_fn, so keeping it would be a cycle.
  // unpack() gives it its history back from the node it is unpacked for.
  data_ = t.tensor_data();
}

Tensor SavedVariable::unpack_for(Node* saved_for, bool with_history) const {
  if (!was_defined_) return Tensor();
  if (released_ || !data_.defined()) throw Error(msg::kSecondBackward);
  const uint32_t current = data_.unsafeGetTensorImpl()->version();
  // The tensor's grad_fn as it reads now: a view whose base changed since
  // reads as an AsStridedBackward0 of it, as in PyTorch.
  Node* grad_fn = is_output_ && !is_leaf_ ? saved_for : data_.grad_fn().get();
  if (!is_leaf_ && !grad_fn) grad_fn = saved_for;
  if (current != saved_version_) {
    note_stale_storage(data_.unsafeGetTensorImpl()->storage.get());
    std::string m = str_cat("one of the variables needed for gradient computation has been modified by an "
                            "inplace operation: [",
                            data_.toString(), " ", data_.sizes(), "]");
    if (grad_fn) m += str_cat(", which is output ", output_nr_, " of ", grad_fn->name(), ",");
    m += str_cat(" is at version ", current, "; expected version ", saved_version_, " instead.");
    if (!DetectAnomalyGuard::is_enabled()) {
      m += str_cat(" ", msg::kAnomalyHint);
    } else {
      m += " Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
           "variable in question was changed in there or anywhere later. Good luck!";
    }
    throw Error(m);
  }
  if (is_output_ && !is_leaf_ && (with_history || ::gradlab::detail::grad_mode()) && grad_fn) {
    // Double backward needs the output with its history back.
    Tensor r = data_.tensor_data();
    impl::set_history(r, grad_fn->shared_from_this(), output_nr_);
    return r;
  }
  return data_;
}

void SavedVariable::reset_data() {
  if (!was_defined_) return;
  released_ = true;
  data_.reset();
}

void SavedVariable::steal_graph_refs() {
  if (!data_.defined() || data_.use_count() != 1) return;
  auto& fn = data_.unsafeGetTensorImpl()->grad_fn;
  if (fn && fn.use_count() == 1) defer_node_release(std::move(fn));
}

// ------------------------------------------------------------ modes

InferenceMode::InferenceMode(bool enabled)
    : prev_inference_(::gradlab::detail::t_modes.inference), prev_grad_(::gradlab::detail::grad_mode()) {
  ::gradlab::detail::t_modes.inference = enabled;
  if (enabled) GradMode::set_enabled(false);
}
InferenceMode::~InferenceMode() {
  ::gradlab::detail::t_modes.inference = prev_inference_;
  GradMode::set_enabled(prev_grad_);
}

bool AnomalyMode::is_enabled() { return g_anomaly; }
bool AnomalyMode::should_check_nan() { return g_anomaly_check_nan; }
void AnomalyMode::set_enabled(bool enabled, bool check_nan) {
  g_anomaly = enabled;
  g_anomaly_check_nan = check_nan;
}
DetectAnomalyGuard::DetectAnomalyGuard(bool check_nan) : prev_(g_anomaly), prev_check_nan_(g_anomaly_check_nan) {
  static bool warned = false;  // LibTorch's TORCH_WARN_ONCE: once a process
  warn_once(warned, {"operator()", "./torch/csrc/autograd/anomaly_mode.cpp", 26}, msg::kAnomalyWarn);
  AnomalyMode::set_enabled(true, check_nan);
}
DetectAnomalyGuard::~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_, prev_check_nan_); }

// ------------------------------------------------------------ impl
namespace impl {
namespace {
// What happens when the last reference to a leaf's accumulator goes (in
// practice: the last graph that reached the leaf died). The node lets go of
// the leaf, as PyTorch's would by dying, but stays parked on it, so that the
// next forward pass over the same parameters finds it instead of building a
// new one. From outside nothing differs: the leaf's weak reference expires
// and the next graph gets a fresh shared_ptr.
struct ParkAccumulator {
  void operator()(AccumulateGrad* acc) const noexcept {
    Tensor leaf = std::move(acc->variable);
    TensorImpl* impl = leaf.unsafeGetTensorImpl();
    const bool clean = acc->untaped_next_edges().empty() && acc->tensor_hooks.empty();
    if (impl && clean && !impl->parked_accumulator) {
      impl->parked_accumulator = acc;
    } else {
      delete acc;
    }
  }  // releasing `leaf` here may destroy it, and the parked node with it
};

// Whether a parked accumulator still describes its leaf (shape, dtype, device).
bool still_matches(const AccumulateGrad& acc, const TensorImpl& leaf) {
  const InputMetadata& m = acc.input_metadata(0);
  return m.shape.ref().equals(leaf.sizes) && m.dtype == leaf.dtype && m.device == leaf.device();
}
}  // namespace

void delete_parked_accumulator(Node* acc) { delete acc; }

std::shared_ptr<Node> grad_accumulator(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->grad_fn || !impl->requires_grad) return nullptr;
  if (auto acc = impl->grad_accumulator.lock()) return acc;
  // The accumulator refers to the leaf itself (not a copy), so .grad lands on it.
  if (!impl->had_accumulator) {
    // A leaf's first graph: one block for node and count, as for any node.
    // Most such leaves (a student's x, y, z) die with their graph.
    impl->had_accumulator = true;
    auto acc = detail::make_pooled<AccumulateGrad>(t);
    impl->grad_accumulator = acc;
    return acc;
  }
  auto* acc = static_cast<AccumulateGrad*>(std::exchange(impl->parked_accumulator, nullptr));
  if (acc && !still_matches(*acc, *impl)) {
    delete acc;
    acc = nullptr;
  }
  if (acc) {
    acc->variable = t;
  } else {
    acc = new AccumulateGrad(t);
  }
  std::shared_ptr<Node> sp(acc, ParkAccumulator{}, detail::InlinePoolAllocator<char>());
  impl->grad_accumulator = sp;
  return sp;
}

Edge gradient_edge(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (stale_view(impl)) refresh_view_history(t);
  if (impl->grad_fn) return Edge(impl->grad_fn, impl->output_nr);
  return Edge(grad_accumulator(t), 0);
}

TensorHooks& hooks_of(const Tensor& t) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (!impl->hooks) {
    // From the pool, like the nodes: retain_grad() is on the lessons' hot path.
    impl->hooks = detail::make_pooled<TensorHooks>();
    impl->hooks->owner = impl;
    // A leaf's accumulator reads the list off the leaf, graph after graph.
    if (impl->grad_fn) impl->grad_fn->tensor_hooks.emplace_back(impl->output_nr, impl->hooks);
  }
  return *impl->hooks;
}

void rebase_history(const Tensor& t, const std::shared_ptr<Node>& fn) {
  fn->add_input_metadata(t);
  move_history(t, fn, 0);
}

void move_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  TensorImpl* impl = t.unsafeGetTensorImpl();
  if (std::shared_ptr<TensorHooks> old = std::move(impl->hooks)) {
    // The old list stays on the old node, where its hooks still act on the
    // old value's gradient; only retain_grad's entry follows the tensor.
    old->owner = nullptr;
    for (auto& e : old->entries) e.retains_grad = false;
  }
  impl->grad_fn = fn;
  impl->output_nr = output_nr;
  impl->attr_version = impl->version();
  if (impl->retains_grad) hooks_of(t).entries.push_back({{}, true});
}
}  // namespace impl

}  // namespace gradlab::autograd

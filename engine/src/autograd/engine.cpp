// The backward engine. Iterative everywhere (a chain of a million nodes must
// not touch the call stack): dependencies are counted with an explicit DFS,
// then nodes run from a ready queue ordered like PyTorch's (highest sequence
// number first, AccumulateGrad before anything else). The engine sums the
// gradients flowing into each node, validates every node's outputs against
// the shapes recorded at forward time (reducing broadcast gradients), and
// frees saved tensors unless the graph is retained.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <utility>

#include "gradlab/autograd.h"
#include "gradlab/failed_node.h"
#include "autograd/anomaly.h"
#include "ops/ops_internal.h"

namespace gradlab::autograd {

namespace {

// A ready node: its sequence number (the heap's order) and its state's index.
struct NodeTask {
  uint64_t sequence_nr;
  uint32_t slot;
  bool operator<(const NodeTask& o) const { return sequence_nr < o.sequence_nr; }
};

constexpr uint32_t kNoState = UINT32_MAX;  // a null edge leads to no state

struct NodeState {
  Node* node = nullptr;
  int dependencies = 0;
  GradList inputs;  // the gradients flowing in, summed per input
  // The state index of each next edge's node, found once by the DFS so that
  // running the graph looks nothing up (kNoState for a null edge).
  SmallVector<uint32_t, 2> next;
  bool needed = true;   // with explicit inputs: lies on a path to one of them
  bool executed = false;
  uint32_t slot = 0;    // where the index points at this state (what clear() empties)
};

// The nodes of one backward pass and their states: an open-addressing index
// over a vector whose entries (and their buffers' capacity) are reused from
// pass to pass, so a small graph runs without allocating here. States are
// numbered in discovery order.
class NodeTable {
 public:
  void clear() {
    // Only the slots this pass used: the index may be large from an earlier
    // long chain, and a small graph must not pay for clearing all of it.
    for (size_t i = 0; i < size_; ++i) {
      states_[i].inputs.clear();
      states_[i].next.clear();
      index_[states_[i].slot] = kEmpty;
    }
    size_ = 0;
  }
  // The index of n's state, added when missing (second: whether it was
  // added). Adding may move the states: hold indices, not references.
  std::pair<uint32_t, bool> find_or_add(Node* n) {
    if ((size_ + 1) * 2 > index_.size()) grow();
    size_t h = slot_of(n);
    while (index_[h] != kEmpty) {
      if (states_[index_[h]].node == n) return {index_[h], false};
      h = (h + 1) & (index_.size() - 1);
    }
    const auto i = static_cast<uint32_t>(size_++);
    index_[h] = i;
    if (i == states_.size()) states_.emplace_back();
    NodeState& st = states_[i];
    st.slot = static_cast<uint32_t>(h);
    st.node = n;
    st.dependencies = 0;
    st.needed = true;
    st.executed = false;
    return {i, true};
  }
  NodeState& at(uint32_t i) { return states_[i]; }
  // The state of n, or null when n is not in this pass.
  const NodeState* find(const Node* n) const {
    if (index_.empty()) return nullptr;
    for (size_t h = slot_of(n); index_[h] != kEmpty; h = (h + 1) & (index_.size() - 1))
      if (states_[index_[h]].node == n) return &states_[index_[h]];
    return nullptr;
  }
  size_t size() const { return size_; }
  // Gives memory back after an unusually large graph.
  void trim(size_t keep) {
    if (states_.size() <= keep) return;
    std::vector<NodeState>().swap(states_);
    std::vector<uint32_t>().swap(index_);
    size_ = 0;
  }
  NodeState* begin() { return states_.data(); }
  NodeState* end() { return states_.data() + size_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  size_t slot_of(const Node* n) const {
    auto k = reinterpret_cast<uintptr_t>(n);
    k ^= k >> 17;
    k *= 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(k >> 20) & (index_.size() - 1);
  }
  void grow() {
    index_.assign(std::max<size_t>(16, index_.size() * 2), kEmpty);
    for (size_t i = 0; i < size_; ++i) {
      size_t h = slot_of(states_[i].node);
      while (index_[h] != kEmpty) h = (h + 1) & (index_.size() - 1);
      index_[h] = static_cast<uint32_t>(i);
      states_[i].slot = static_cast<uint32_t>(h);
    }
  }
  std::vector<NodeState> states_;
  std::vector<uint32_t> index_;
  size_t size_ = 0;
};

// Containers one backward pass needs, kept per thread and per nesting depth
// (a custom function may itself call backward) so that their capacity is reused.
struct Workspace {
  NodeTable state;
  std::vector<uint32_t> stack;
  std::vector<NodeTask> ready;
};
thread_local std::vector<std::unique_ptr<Workspace>> t_workspaces;
thread_local size_t t_depth = 0;
// The pass running on this thread, when it was given explicit inputs (what
// task_should_compute_output consults); null otherwise.
thread_local const NodeTable* t_task_needs = nullptr;

struct TaskNeedsScope {
  const NodeTable* prev;
  explicit TaskNeedsScope(const NodeTable* now) : prev(std::exchange(t_task_needs, now)) {}
  ~TaskNeedsScope() { t_task_needs = prev; }
  TaskNeedsScope(const TaskNeedsScope&) = delete;
  TaskNeedsScope& operator=(const TaskNeedsScope&) = delete;
};

struct WorkspaceLease {
  Workspace* ws;
  WorkspaceLease() {
    if (t_workspaces.size() <= t_depth) t_workspaces.push_back(std::make_unique<Workspace>());
    ws = t_workspaces[t_depth++].get();  // left empty by the previous lease
  }
  ~WorkspaceLease() {
    ws->state.clear();  // also drops gradients held for nodes that never ran (errors)
    ws->stack.clear();
    ws->ready.clear();
    // What stays allocated between passes: enough for a student's long
    // chain (a 10,000-step loop makes 20,000 nodes), so that running it again
    // neither grows the table from scratch nor faults in fresh pages; a
    // graph beyond that gives its memory back.
    constexpr size_t kKeep = size_t{1} << 16;
    static_assert(sizeof(NodeState) * kKeep <= (size_t{8} << 20), "the kept table stays within a few MiB");
    ws->state.trim(kKeep);
    if (ws->stack.capacity() > kKeep) std::vector<uint32_t>().swap(ws->stack);
    if (ws->ready.capacity() > kKeep) std::vector<NodeTask>().swap(ws->ready);
    --t_depth;
  }
};

// Where a gradient that is asked for (autograd::grad or backward(inputs=)) is read off.
struct Capture {
  Node* node;
  uint32_t input_nr;
  size_t slot;
};

std::string function_name(const Node& n) { return n.name(); }

// A gradient that does not match what its input expects: reduced to the
// input's shape when it broadcasts to it, converted to its dtype, or refused.
// Out of line: the gradients that arrive are almost always already right.
[[gnu::noinline]] void conform_gradient(const Node* fn, size_t i, Tensor& g, const InputMetadata& meta,
                                        bool is_root) {
  const std::string prefix = is_root || !fn ? std::string() : function_name(*fn) + ": ";
  if (!g.sizes().equals(meta.shape)) {
    if (!is_expandable_to(meta.shape, g.sizes()))
      throw Error(str_cat(prefix, "invalid gradient at index ", i, " - got ", g.sizes(),
                          " but expected shape compatible with ", IntArrayRef(meta.shape)));
    g = sum_to(g, meta.shape);
  }
  if (g.scalar_type() != meta.dtype) g = g.to(meta.dtype);
  if (g.device() != meta.device)
    throw Error(str_cat(prefix, "invalid gradient at index ", i, " - expected device ", meta.device, " but got ",
                        g.device()));
}

[[noreturn, gnu::noinline]] void throw_wrong_count(const Node* fn, size_t expected, size_t got) {
  const std::string who = fn ? function_name(*fn) : std::string("backward");
  throw std::runtime_error(str_cat("function ", who, " returned an incorrect number of gradients (expected ",
                                   expected, ", got ", got, ")"));
}

inline void validate_outputs(const Node* fn, const edge_list& edges, GradList& grads, bool is_root) {
  if (grads.size() != edges.size()) throw_wrong_count(fn, edges.size(), grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& e = edges[i];
    Tensor& g = grads[i];
    if (!e.function || !g.defined()) continue;
    const InputMetadata& meta = e.function->input_metadata(e.input_nr);
    const TensorImpl* gi = g.unsafeGetTensorImpl();
    if (!gi->sizes.ref().equals(meta.shape) || gi->dtype != meta.dtype || gi->device() != meta.device)
      conform_gradient(fn, i, g, meta, is_root);
  }
}

void accumulate(GradList& buf, uint32_t nr, Tensor&& g) {
  if (buf.size() == nr) {  // the usual case: the first gradient for the next input
    buf.push_back(std::move(g));
    return;
  }
  if (buf.size() < nr) buf.resize(nr + 1);
  Tensor& slot = buf[nr];
  if (!slot.defined()) {
    slot = std::move(g);
  } else {
    slot = slot + g;
  }
}

// The tensor hooks on the gradients flowing into `n`: those of the tensors it
// made, or for an accumulator those of its leaf.
void run_tensor_hooks(Node* n, GradList& inputs) {
  if (n->is_accumulate_grad()) {
    // As LibTorch's AccumulateGrad::callHooks: only a defined gradient, for
    // a leaf that still requires grad, passes through the leaf's hooks.
    const Tensor& leaf = static_cast<AccumulateGrad*>(n)->variable;
    if (leaf.defined() && leaf.unsafeGetTensorImpl()->hooks && inputs[0].defined() && leaf.requires_grad())
      leaf.unsafeGetTensorImpl()->hooks->run(inputs[0]);
    return;
  }
  // By index: a hook may register a hook on another output of this node,
  // which may move the vector (the lists themselves stay, the node owns them).
  for (size_t i = 0; i < n->tensor_hooks.size(); ++i) {
    const uint32_t nr = n->tensor_hooks[i].first;
    TensorHooks* hooks = n->tensor_hooks[i].second.get();
    if (nr < inputs.size()) hooks->run(inputs[nr]);
  }
}

// Anomaly mode: a NaN coming out of a backward is an error naming the node.
void check_for_nan(const Node* n, const GradList& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].defined() || !outs[i].is_floating_point()) continue;
    Tensor c = outs[i].detach().to(Device(DeviceType::CPU)).to(ScalarType::Double).contiguous();
    const double* p = c.data_ptr<double>();
    for (int64_t k = 0; k < c.numel(); ++k)
      if (std::isnan(p[k]))
        throw std::runtime_error(str_cat("Function '", n->name(), "' returned nan values in its ", i, "th output."));
  }
}

bool any_defined(const GradList& grads) {
  for (const Tensor& g : grads)
    if (g.defined()) return true;
  return false;
}

// What a failed backward leaves for a replay (gradlab/failed_node.h).
std::mutex g_failed_mutex;
std::weak_ptr<Node> g_failed;
std::atomic<const void*> g_stale_storage{nullptr};

void note_failed(Node* n) {
  std::lock_guard<std::mutex> lock(g_failed_mutex);
  g_failed = n->weak_from_this();
}

// Runs one node; its gradients are built straight into the caller's variable.
GradList apply_node(Node* n, GradList& in) {
  if (!n->takes_undefined_grads() && !n->is_accumulate_grad() && !any_defined(in))
    return GradList(n->num_outputs());  // nothing flows on: every output undefined
  if (!DetectAnomalyGuard::is_enabled()) {
    try {
      return n->apply_into(in);
    } catch (...) {
      note_failed(n);
      throw;
    }
  }
  try {
    anomaly::EvaluatingScope scope(n);  // nodes this backward builds get n as their parent
    GradList outs = n->apply_into(in);
    if (AnomalyMode::should_check_nan()) check_for_nan(n, outs);
    return outs;
  } catch (const std::exception&) {
    note_failed(n);
    warn({"print_stack", "./torch/csrc/autograd/anomaly_mode.cpp", 49},
         str_cat("Error detected in ", n->name(), ". Traceback of forward call that caused the error:\n"));
    // Up the chain of backwards that built this node (create_graph).
    for (auto p = anomaly::parent_of(n); p; p = anomaly::parent_of(p.get()))
      warn({"print_stack", "./torch/csrc/autograd/anomaly_mode.cpp", 66},
           str_cat("\n\nPrevious calculation was induced by ", p->name(),
                   ". Traceback of forward call that induced the previous calculation:\n"));
    throw;
  }
}

variable_list to_vector(const GradList& g) { return variable_list(g.begin(), g.end()); }

// A node with pre- or post-hooks of its own (rare: the lists are converted).
GradList apply_with_node_hooks(Node* n, GradList& in) {
  for (const auto& hook : n->pre_hooks()) {
    variable_list r = (*hook)(to_vector(in));
    in = GradList(r.begin(), r.end());
  }
  if (n->post_hooks().empty()) return apply_node(n, in);
  const variable_list inputs = to_vector(in);
  GradList outs = apply_node(n, in);
  for (const auto& hook : n->post_hooks()) {
    variable_list r = (*hook)(to_vector(outs), inputs);
    outs = GradList(r.begin(), r.end());
  }
  return outs;
}

variable_list run(TensorList roots, TensorList root_grads, bool keep_graph, bool create_graph, TensorList inputs,
                  bool accumulate_into_grad, bool allow_unused) {
  // 1. root edges and their gradients
  edge_list root_edges;
  GradList grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    if (!r.defined()) throw Error("cannot call get_autograd_meta() on undefined tensor");
    Edge e = impl::gradient_edge(r);
    if (!e.function) throw Error(str_cat("element ", i, " of tensors ", msg::kNoGradFn));
    root_edges.push_back(e);
    if (i < root_grads.size() && root_grads[i].defined()) {
      grads.push_back(root_grads[i]);
    } else {
      if (r.numel() != 1) throw Error(msg::kImplicitScalar);
      grads.push_back(ones_like_nograd(r));
    }
  }
  {
    AutoGradMode mode(create_graph);
    validate_outputs(nullptr, root_edges, grads, true);
  }

  // 2. dependencies (iterative DFS over the graph reachable from the roots)
  WorkspaceLease lease;
  NodeTable& state = lease.ws->state;
  SmallVector<uint32_t, 2> root_slots;
  {
    std::vector<uint32_t>& stack = lease.ws->stack;
    for (auto& e : root_edges) {
      auto [i, inserted] = state.find_or_add(e.function.get());
      root_slots.push_back(i);
      if (inserted) stack.push_back(i);
    }
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      for (const Edge& e : state.at(i).node->untaped_next_edges()) {
        uint32_t j = kNoState;
        if (e.function) {
          bool inserted = false;
          std::tie(j, inserted) = state.find_or_add(e.function.get());
          state.at(j).dependencies++;
          if (inserted) stack.push_back(j);
        }
        state.at(i).next.push_back(j);
      }
    }
  }

  // 3. explicit inputs: where to capture, and which nodes are needed at all
  std::vector<Capture> captures;
  variable_list captured(inputs.size());
  if (!inputs.empty()) {
    std::unordered_set<Node*> targets;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& in = inputs[i];
      if (!in.defined()) throw Error("One of the differentiated Tensors is undefined");
      if (!in.requires_grad()) throw Error("One of the differentiated Tensors does not require grad");
      Edge e = impl::gradient_edge(in);
      captures.push_back(Capture{e.function.get(), e.input_nr, i});
      targets.insert(e.function.get());
    }
    for (NodeState& st : state) st.needed = targets.count(st.node) > 0;
    // A node is needed when one of its edges leads to a needed node: iterate
    // to a fixed point over reverse discovery order (children first).
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = state.size(); i-- > 0;) {
        NodeState& st = state.at(static_cast<uint32_t>(i));
        if (st.needed) continue;
        for (uint32_t j : st.next)
          if (j != kNoState && state.at(j).needed) {
            st.needed = true;
            changed = true;
            break;
          }
      }
    }
  }

  // 4. execute. From here on no state is added, so references to states stay valid.
  // A binary heap over a reused vector: highest sequence number on top.
  std::vector<NodeTask>& heap = lease.ws->ready;
  auto push_ready = [&](uint32_t i) {
    NodeState& st = state.at(i);
    st.executed = true;  // queued
    heap.push_back(NodeTask{st.node->sequence_nr(), i});
    std::push_heap(heap.begin(), heap.end());
  };
  for (size_t i = 0; i < root_edges.size(); ++i)
    accumulate(state.at(root_slots[i]).inputs, root_edges[i].input_nr, std::move(grads[i]));
  for (uint32_t i : root_slots) {
    const NodeState& st = state.at(i);
    if (st.dependencies == 0 && !st.executed) push_ready(i);
  }

  AutoGradMode mode(create_graph);
  TaskNeedsScope needs_scope(inputs.empty() ? nullptr : &state);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    NodeState& st = state.at(heap.back().slot);
    heap.pop_back();
    Node* n = st.node;
    GradList& in = st.inputs;
    in.resize(n->num_inputs());
    // As in LibTorch 1.13, autograd::grad captures a gradient before the
    // node's hooks run (and they run only when the node does).
    bool is_target = false;
    for (const Capture& c : captures)
      if (c.node == n) {
        is_target = true;
        if (c.input_nr < in.size() && in[c.input_nr].defined()) {
          Tensor& dst = captured[c.slot];
          dst = dst.defined() ? dst + in[c.input_nr] : in[c.input_nr];
        }
      }
    const bool is_accumulator = n->is_accumulate_grad();
    bool should_run = st.needed;
    if (!inputs.empty()) {
      // With explicit inputs, only the asked-for leaves accumulate (backward)
      // and nothing accumulates for autograd::grad.
      if (is_accumulator) {
        should_run = accumulate_into_grad && st.needed;
      } else {
        // backward(inputs=) also runs a non-leaf input's own node, as
        // LibTorch does, so that the tensor's hooks (retain_grad's among
        // them) see its gradient.
        bool leads_on = accumulate_into_grad && is_target;
        for (uint32_t j : st.next)
          if (j != kNoState && state.at(j).needed) leads_on = true;
        should_run = leads_on;
      }
    }
    if (should_run && (is_accumulator || !n->tensor_hooks.empty())) run_tensor_hooks(n, in);
    GradList outs = !should_run ? GradList() : n->has_node_hooks() ? apply_with_node_hooks(n, in) : apply_node(n, in);
    if (should_run) {
      if (!is_accumulator) validate_outputs(n, n->untaped_next_edges(), outs, false);
      // Each node lets go of what it saved as soon as it has run, as
      // LibTorch's evaluate_function does: when a later node raises, the
      // graph above it is freed already, and a second backward says so
      // before it finds a saved tensor changed in place.
      if (!keep_graph) n->release_variables();
    }
    const edge_list& edges = n->untaped_next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const uint32_t j = st.next[i];
      if (j == kNoState) continue;
      NodeState& next = state.at(j);
      if (should_run && i < outs.size() && outs[i].defined())
        accumulate(next.inputs, edges[i].input_nr, std::move(outs[i]));
      if (--next.dependencies == 0 && !next.executed) push_ready(j);
    }
    in.clear();
  }
  for (size_t i = 0; i < captured.size(); ++i)
    if (!captured[i].defined() && !allow_unused && !accumulate_into_grad)
      throw Error(
          "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
          "if this is the desired behavior.");
  return captured;
}

// A custom function's backward may call backward, whose nodes may do it
// again, thousands deep. Every kReentrantPerThread levels the next pass runs
// on a fresh thread (its own stack) while this one waits, as LibTorch hands a
// deep re-entrant pass to another worker. Grad mode goes along; when no
// thread can be made (a fenced process), it runs here.
constexpr size_t kReentrantPerThread = 32;

template <class F>
auto run_with_room(F&& f) {
  if (t_depth < kReentrantPerThread) return f();
  const detail::ModeFlags modes = detail::t_modes;
  decltype(f()) result;
  std::exception_ptr error;
  try {
    std::thread worker([&] {
      detail::t_modes = modes;
      try {
        result = f();
      } catch (...) {
        error = std::current_exception();
      }
    });
    worker.join();
  } catch (const std::system_error&) {
    return f();
  }
  if (error) std::rethrow_exception(error);
  return result;
}

}  // namespace

const void* last_stale_storage() { return g_stale_storage.load(); }
void note_stale_storage(const void* storage) { g_stale_storage.store(storage); }

std::shared_ptr<Node> last_failed_node() {
  std::lock_guard<std::mutex> lock(g_failed_mutex);
  return g_failed.lock();
}

void clear_failed_node() {
  std::lock_guard<std::mutex> lock(g_failed_mutex);
  g_failed.reset();
  g_stale_storage.store(nullptr);
}

bool Node::task_should_compute_output(size_t i) const {
  if (!should_compute_output(i)) return false;
  if (!t_task_needs) return true;
  const NodeState* st = t_task_needs->find(next_edges_[i].function.get());
  return st && st->needed;
}

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  GRADLAB_TAPE("autograd::backward", backward(tensors, grad_tensors, retain_graph, create_graph, inputs), tensors,
               grad_tensors, retain_graph, create_graph, inputs);
  backward_impl(tensors, grad_tensors, retain_graph, create_graph, inputs);
}

void backward_impl(TensorList tensors, TensorList grad_tensors, std::optional<bool> retain_graph, bool create_graph,
                   TensorList inputs) {
  if (create_graph) {
    // Once a process, as LibTorch's TORCH_WARN_ONCE (both backward spellings).
    static bool warned = false;
    warn_once(warned, {"operator()", "./torch/csrc/autograd/engine.cpp", 1059}, msg::kCreateGraphCycle);
  }
  const bool keep = retain_graph.value_or(create_graph);
  // A non-leaf input's .grad is filled by retain_grad, which LibTorch turns
  // on for it (and leaves on): after the tensor's other hooks, then.
  for (const Tensor& in : inputs)
    if (in.defined() && in.requires_grad() && !in.is_leaf()) in.retain_grad();
  run_with_room([&] { return run(tensors, grad_tensors, keep, create_graph, inputs, true, true); });
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  GRADLAB_TAPE("autograd::grad", grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused), outputs,
               inputs, grad_outputs, retain_graph, create_graph, allow_unused);
  if (inputs.empty()) throw Error("grad requires non-empty inputs.");
  const bool keep = retain_graph.value_or(create_graph);
  return run_with_room([&] { return run(outputs, grad_outputs, keep, create_graph, inputs, false, allow_unused); });
}

}  // namespace gradlab::autograd

// The backward engine. Iterative everywhere (a chain of a million nodes must
// not touch the call stack): dependencies are counted with an explicit DFS,
// then nodes run from a ready queue ordered like PyTorch's (highest sequence
// number first, AccumulateGrad before anything else). The engine sums the
// gradients flowing into each node, validates every node's outputs against
// the shapes recorded at forward time (reducing broadcast gradients), and
// frees saved tensors unless the graph is retained.
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "gradlab/autograd.h"
#include "ops/ops_internal.h"

namespace gradlab::autograd {

namespace {

struct NodeTask {
  Node* node;
  bool operator<(const NodeTask& o) const { return node->sequence_nr() < o.node->sequence_nr(); }
};

struct NodeState {
  int dependencies = 0;
  variable_list inputs;
  bool needed = true;   // with explicit inputs: lies on a path to one of them
  bool executed = false;
};

// Where a gradient that is asked for (autograd::grad or backward(inputs=)) is read off.
struct Capture {
  Node* node;
  uint32_t input_nr;
  size_t slot;
};

std::string function_name(const Node& n) { return n.name(); }

void validate_outputs(const Node* fn, const edge_list& edges, variable_list& grads, bool is_root) {
  if (grads.size() != edges.size()) {
    const std::string who = fn ? function_name(*fn) : std::string("backward");
    throw std::runtime_error(str_cat("function ", who, " returned an incorrect number of gradients (expected ",
                                     edges.size(), ", got ", grads.size(), ")"));
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    const Edge& e = edges[i];
    if (!e.function) continue;
    Tensor& g = grads[i];
    if (!g.defined()) continue;
    const InputMetadata& meta = e.function->input_metadata(e.input_nr);
    if (!g.sizes().equals(meta.shape)) {
      if (!is_expandable_to(meta.shape, g.sizes())) {
        const std::string prefix = is_root || !fn ? std::string() : function_name(*fn) + ": ";
        throw Error(str_cat(prefix, "invalid gradient at index ", i, " - got ", g.sizes(),
                            " but expected shape compatible with ", IntArrayRef(meta.shape)));
      }
      g = sum_to(g, meta.shape);
    }
    if (g.scalar_type() != meta.dtype) g = g.to(meta.dtype);
    if (g.device() != meta.device)
      throw Error(str_cat(is_root || !fn ? std::string() : function_name(*fn) + ": ", "invalid gradient at index ",
                          i, " - expected device ", meta.device, " but got ", g.device()));
  }
}

void accumulate(variable_list& buf, uint32_t nr, Tensor&& g) {
  if (buf.size() <= nr) buf.resize(nr + 1);
  Tensor& slot = buf[nr];
  if (!slot.defined()) {
    slot = std::move(g);
  } else {
    slot = slot + g;
  }
}

void run_retain_hooks(Node* n, const variable_list& inputs) {
  for (auto& [nr, slot] : n->retain_hooks) {
    TensorImpl* owner = slot->owner;
    if (!owner || nr >= inputs.size() || !inputs[nr].defined()) continue;
    Tensor& grad = reinterpret_cast<Tensor&>(owner->grad);
    grad = grad.defined() ? grad + inputs[nr] : inputs[nr].clone();
  }
}

variable_list run(const variable_list& roots, const variable_list& root_grads, bool keep_graph, bool create_graph,
                  const variable_list& inputs, bool accumulate_into_grad, bool allow_unused) {
  // 1. root edges and their gradients
  edge_list root_edges;
  variable_list grads;
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
  std::unordered_map<Node*, NodeState> state;
  std::vector<Node*> order;  // discovery order, for the "needed" pass
  {
    std::vector<Node*> stack;
    for (auto& e : root_edges) {
      if (state.emplace(e.function.get(), NodeState{}).second) {
        stack.push_back(e.function.get());
        order.push_back(e.function.get());
      }
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.function) continue;
        auto [it, inserted] = state.try_emplace(e.function.get());
        it->second.dependencies++;
        if (inserted) {
          stack.push_back(e.function.get());
          order.push_back(e.function.get());
        }
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
    for (auto& [n, st] : state) st.needed = targets.count(n) > 0;
    // A node is needed when one of its edges leads to a needed node: iterate
    // to a fixed point over reverse discovery order (children first).
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        NodeState& st = state[*it];
        if (st.needed) continue;
        for (const Edge& e : (*it)->next_edges())
          if (e.function && state[e.function.get()].needed) {
            st.needed = true;
            changed = true;
            break;
          }
      }
    }
  }

  // 4. execute
  std::priority_queue<NodeTask> ready;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* n = root_edges[i].function.get();
    accumulate(state[n].inputs, root_edges[i].input_nr, std::move(grads[i]));
  }
  for (auto& e : root_edges) {
    NodeState& st = state[e.function.get()];
    if (st.dependencies == 0 && !st.executed) {
      st.executed = true;  // queued
      ready.push(NodeTask{e.function.get()});
    }
  }

  std::vector<Node*> ran;
  AutoGradMode mode(create_graph);
  while (!ready.empty()) {
    Node* n = ready.top().node;
    ready.pop();
    NodeState& st = state[n];
    variable_list in = std::move(st.inputs);
    in.resize(n->num_inputs());
    run_retain_hooks(n, in);
    for (const Capture& c : captures)
      if (c.node == n && c.input_nr < in.size() && in[c.input_nr].defined()) {
        Tensor& dst = captured[c.slot];
        dst = dst.defined() ? dst + in[c.input_nr] : in[c.input_nr];
      }
    const bool is_accumulator = dynamic_cast<AccumulateGrad*>(n) != nullptr;
    bool should_run = st.needed;
    if (!inputs.empty()) {
      // With explicit inputs, only the asked-for leaves accumulate (backward)
      // and nothing accumulates for autograd::grad.
      if (is_accumulator) {
        should_run = accumulate_into_grad && st.needed;
      } else {
        bool leads_on = false;
        for (const Edge& e : n->next_edges())
          if (e.function && state[e.function.get()].needed) leads_on = true;
        should_run = leads_on;
      }
    }
    variable_list outs;
    if (should_run) {
      try {
        outs = n->apply(std::move(in));
      } catch (const Error&) {
        if (DetectAnomalyGuard::is_enabled())
          warn({"print_stack", "./torch/csrc/autograd/anomaly_mode.cpp", 49},
               str_cat("Error detected in ", n->name(), ". Traceback of forward call that caused the error:\n"));
        throw;
      }
      ran.push_back(n);
      if (!is_accumulator) validate_outputs(n, n->next_edges(), outs, false);
    }
    const edge_list& edges = n->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.function) continue;
      NodeState& next = state[e.function.get()];
      if (should_run && i < outs.size() && outs[i].defined())
        accumulate(next.inputs, e.input_nr, std::move(outs[i]));
      if (--next.dependencies == 0 && !next.executed) {
        next.executed = true;
        ready.push(NodeTask{e.function.get()});
      }
    }
  }
  if (!keep_graph)
    for (Node* n : ran) n->release_variables();

  for (size_t i = 0; i < captured.size(); ++i)
    if (!captured[i].defined() && !allow_unused && !accumulate_into_grad)
      throw Error(
          "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
          "if this is the desired behavior.");
  return captured;
}

}  // namespace

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  const bool keep = retain_graph.value_or(create_graph);
  variable_list leaves_captured = run(tensors, grad_tensors, keep, create_graph, inputs, true, true);
  // backward(inputs=...) on a non-leaf input fills its .grad like retain_grad would.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_leaf() || !leaves_captured[i].defined()) continue;
    Tensor& g = inputs[i].mutable_grad();
    g = g.defined() ? g + leaves_captured[i] : leaves_captured[i].clone();
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  const bool keep = retain_graph.value_or(create_graph);
  return run(outputs, grad_outputs, keep, create_graph, inputs, false, allow_unused);
}

}  // namespace gradlab::autograd

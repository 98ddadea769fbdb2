// The replay's events (replayer.h): each op redone through the engine's own
// function, each tensor's lineage and each gradient's route kept as it goes.
#include "judge/replayer.h"
#include "judge/replay_route.h"

#include <set>

#include <gradlab/failed_node.h>
#include <gradlab/tape.h>

#include <cmath>
#include <stdexcept>

namespace grader::replay {

namespace facts = lab::facts;

namespace {

// A tensor described with its values ("new", "given", "custom"), made again.
Tensor rebuild(const json& e) {
  std::vector<int64_t> shape = e.at("shape").get<std::vector<int64_t>>();
  const json& values = e.at("values");
  if (values.is_null()) throw Failure{"the program's tensors were too large to write down whole"};
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > (int64_t{1} << 32)) throw std::runtime_error("a shape out of range");
    n *= d;
    if (n > (int64_t{1} << 32)) throw std::runtime_error("a shape out of range");
  }
  if (!values.is_array() || static_cast<int64_t>(values.size()) != n)
    throw std::runtime_error("values do not fill the shape");
  std::vector<double> v;
  v.reserve(values.size());
  for (const auto& x : values) {
    if (x.is_number()) v.push_back(x.get<double>());
    else if (x == "nan") v.push_back(NAN);
    else if (x == "inf") v.push_back(INFINITY);
    else if (x == "-inf") v.push_back(-INFINITY);
    else throw std::runtime_error("a value that is not a number");
  }
  Tensor t = torch::tensor(v, torch::dtype(torch::kDouble));
  const std::string dtype = e.at("dtype");
  gradlab::ScalarType st = gradlab::ScalarType::Float;
  bool known = false;
  for (auto k : {gradlab::ScalarType::Bool, gradlab::ScalarType::Int, gradlab::ScalarType::Long,
                 gradlab::ScalarType::Float, gradlab::ScalarType::Double})
    if (dtype == gradlab::c10_name(k)) st = k, known = true;
  if (!known) throw std::runtime_error("an unknown dtype");
  t = t.reshape(shape).to(st).contiguous();
  // A tensor whose history the tape did not see stands in as a leaf, so that
  // what follows from it still builds its graph.
  if (e.value("requires_grad", false) && t.is_floating_point()) t.set_requires_grad(true);
  const json& version = e.at("version");
  if (!version.is_number_unsigned()) throw std::runtime_error("a version that is not a count");
  t.unsafeGetTensorImpl()->version() = version.get<uint32_t>();
  return t;
}

}  // namespace

void Replayer::made(const json& e, bool taint) {
  const std::string kind = e.at("e");
  if (e.contains("throws")) {
    last_error_ = e.at("throws");
    error_from_.clear();  // a factory's error reads no tensor
    error_from_leaf_ = false;
    return;
  }
  // A tensor with a history the tape never saw made: every op a program can
  // call is taped, so the program rewrote what the tape knows of it.
  if (kind == "given" && !e.at("grad_fn").is_null())
    throw Failure{"the program used a tensor with a history (" + e.at("grad_fn").get<std::string>() +
                  ") that its tape never made"};
  // A custom Function's output: its values and the gradients its backward
  // gives are the program's own; so are the gradients upstream of its inputs.
  const bool foreign = kind == "custom";
  if (foreign) {
    note_unverified("a custom autograd Function (" + e.value("node", std::string()) +
                    "): its backward is the program's own code, and so are the gradients it passes back");
    for (const auto& in : e.value("in", json::array())) {
      if (in.is_null()) continue;
      Tensor i = at(in);
      custom_upstream.insert(i.unsafeGetTensorImpl());
      auto l = lineage.find(i.unsafeGetTensorImpl());
      if (l != lineage.end()) custom_upstream.insert(l->second.from.items().begin(), l->second.from.items().end());
    }
  }
  Tensor t = rebuild(e);
  bind(e.at("id"), t, taint || foreign);
  Lineage& l = lineage[t.unsafeGetTensorImpl()];
  l = {};
  l.from.insert(t.unsafeGetTensorImpl());
  l.made_by = kind == "new" ? e.value("op", std::string("new")) : kind;
  l.from_param = t.requires_grad();
  // Its values as made, for a backward's point to tell a leaf moved since.
  if (probe_curvature && t.defined() && t.numel() <= (int64_t{1} << 16)) made_as_[t.unsafeGetTensorImpl()] = replay::values_sketch(t);
}

// A random in-place fill: the values it left, written into the replay's
// tensor as the op wrote them (one version step), outside any graph.
void Replayer::refill(const json& e) {
  Tensor t = at(e.at("id"));
  if (e.contains("throws")) {
    last_error_ = e.at("throws");
    auto l = lineage.find(t.unsafeGetTensorImpl());
    error_from_ = l == lineage.end() ? std::set<const gradlab::TensorImpl*>{} : l->second.graph_from.items();
    error_from_.insert(t.unsafeGetTensorImpl());
    return;
  }
  Tensor values = rebuild(e);
  {
    gradlab::autograd::NoGradGuard no_graph;
    t.detach().copy_(values.detach());
  }
  // A fill of a gradient's memory (uniform_(v, v) on x.grad()) sets it by
  // hand, as any other in-place op on it does.
  if (Tensor owner = grad_memory_owner(t); owner.defined())
    grad_origin[owner.unsafeGetTensorImpl()] = {"changed by hand (" + e.value("op", std::string("a random fill")) + ")", {}, {}, {}};
  t.unsafeGetTensorImpl()->version() = e.at("version").get<uint32_t>();
  Lineage& l = lineage[t.unsafeGetTensorImpl()];
  l.made_by = e.value("op", std::string("refill"));
  l.ops.insert(l.made_by);
}

void Replayer::op(const json& e) {
  const std::string name = e.at("op"), sig = e.at("sig");
  const auto& table = replay::ops();
  auto it = table.find(name + "(" + sig + ")");
  if (it == table.end()) throw Failure{"the tape holds an op the replay cannot redo: " + name + "(" + sig + ")"};
  taint_now_ = false;
  inputs_.clear();
  const bool backward = name == "backward" || name == "autograd::backward";
  // What each gradient held before a backward, to see which ones it wrote;
  // and which held numbers written by hand (not zeros): a backward that adds
  // to them leaves a gradient that is still partly the program's own.
  std::vector<std::tuple<Tensor, const gradlab::TensorImpl*, int64_t>> before;
  std::set<const gradlab::TensorImpl*> hand_held;
  if (backward)
    for (const auto& [id, t] : tensors_)
      if (t.defined() && (t.is_leaf() || t.retains_grad())) {
        const Tensor& g = t.grad();
        before.emplace_back(t, g.unsafeGetTensorImpl(), g.defined() ? g._version() : -1);
        auto o = grad_origin.find(t.unsafeGetTensorImpl());
        if (g.defined() && o != grad_origin.end() && o->second.how.find("by hand") != std::string::npos) {
          gradlab::autograd::NoGradGuard untracked;
          if (g.ne(0).any().item<bool>()) hand_held.insert(t.unsafeGetTensorImpl());
        }
      }
  // An in-place op whose target shares memory with some tensor's .grad
  // changes that gradient by hand.
  // A gradient changed in place, or given other memory (set_data: the
  // numbers typed over what a backward wrote, red team 16), by the program.
  Tensor grad_owner;
  bool whole_grad = false;  // the change covers all of it (a zero_ of an empty slice zeroes nothing)
  const json& args = e.at("args");
  if (!backward && name.size() > 1 && (name.back() == '_' || name == "set_data") && args.is_array() &&
      !args.empty() && args[0].is_number_integer() && tensors_.count(args[0].get<int64_t>())) {
    const Tensor& target = tensors_.at(args[0].get<int64_t>());
    grad_owner = grad_memory_owner(target);
    whole_grad = grad_owner.defined() && target.numel() == grad_owner.grad().numel();
  }
  // How the root curves in the leaves, while its graph is whole (the
  // program's backward may free it).
  // (autograd::grad's roots are args[0] too, the gradients they start from args[2].)
  const bool gives = name == "autograd::grad";
  if (gives)
    for (const auto& [id, t] : tensors_)
      if (t.defined() && t.is_leaf() && t.requires_grad()) before.emplace_back(t, t.grad().unsafeGetTensorImpl(), -1);
  const auto curvature = backward || gives ? curvature_before_backward(args, gives ? 2 : 1, before) : std::vector<Curvatures>{};
  if (gives) before.clear();
  replay::Outcome out;
  std::string thrown;
  bool threw = false;
  {
    gradlab::autograd::AutoGradMode mode(!e.value("no_grad", false));
    gradlab::autograd::clear_failed_node();
    try {
      out = it->second(e.at("args"), *this);
    } catch (const Failure&) {
      throw;
    } catch (const gradlab::tape::LimitExceeded& ex) {
      throw Failure{"the program's computation asks for more memory than the grader gives a replay (" +
                    std::string(ex.what()) + ")"};
    } catch (const std::exception& ex) {
      threw = true;
      thrown = ex.what();
    }
  }
  const bool claimed_throw = e.contains("throws");
  // On what the replay could not follow, the program's own account stands:
  // its error, and the gradients a backward from there wrote.
  if (taint_now_) {
    if (name == "backward" || name == "autograd::backward" || name == "autograd::grad") grads_tainted = true;
    // An error raised past it came from the program's own code (its
    // backward), not from autograd: it provokes nothing.
    last_error_.clear();
    if (threw || claimed_throw) return;
  }
  if (claimed_throw || threw) {
    const std::string claimed = claimed_throw ? e.at("throws").get<std::string>() : std::string();
    // The same op on the same tensors in the same engine raises the same
    // error: a tape that says otherwise was not written by this computation.
    if (threw != claimed_throw || claimed != thrown)
      throw Failure{"the program's " + name + " " + (claimed_throw ? "raised \"" + cut(claimed) + "\"" : "raised no error") +
                    ", which its replay " + (threw ? "answers with \"" + cut(thrown) + "\"" : "does not raise")};
    last_error_ = thrown;
    error_from_.clear();
    // What the error is about: a backward's roots (not the gradient it was
    // given, nor its inputs=), or the leaves of the saved tensor it found
    // changed; an in-place op's target (not what it adds);
    // any other op's operands. An error provoked on a throwaway tensor that
    // only takes the named one as an argument is not the named one's.
    std::vector<Tensor> about;
    error_from_leaf_ = false;
    if (backward || name == "autograd::grad") {
      about = backward_error_about(args, name == "autograd::grad" ? 2 : 1, thrown);
      const auto roots = backward_roots(args, name == "autograd::grad" ? 2 : 1);
      error_from_leaf_ = !roots.empty();
      for (const auto& [r, given] : roots) error_from_leaf_ = error_from_leaf_ && r.defined() && !r.grad_fn();
    } else if (name.size() > 1 && name.back() == '_' && !inputs_.empty())
      about.push_back(inputs_[0]);
    else
      about = inputs_;
    for (const Tensor& in : about) {
      if (!in.defined()) continue;
      auto l = lineage.find(in.unsafeGetTensorImpl());
      if (l != lineage.end()) error_from_.insert(l->second.graph_from.items().begin(), l->second.graph_from.items().end());
      error_from_.insert(in.unsafeGetTensorImpl());
    }
    return;
  }
  // A backward from (or through) what the replay could not follow leaves
  // gradients it cannot vouch for.
  if (taint_now_ && (name == "backward" || name == "autograd::backward" || name == "autograd::grad"))
    grads_tainted = true;
  if (backward) {
    // Every root of the backward (autograd::backward takes several), each
    // with the gradient it starts from.
    const auto roots = backward_roots(args, 1);
    // A backward that wrote no gradient ran no node of its graph (inputs=
    // the root itself): it is no pass, through a kept graph or any other.
    bool wrote = false;
    for (const auto& [t, g, version] : before) {
      const Tensor& now = t.grad();
      wrote |= now.unsafeGetTensorImpl() != g || (now.defined() && now._version() != version);
    }
    // A backward through a graph an earlier backward went through (kept by
    // retain_graph), as opposed to one through a graph built again.
    // (A backward from a leaf is a pass too: it makes the leaf's gradient.)
    if (!roots.empty() && roots[0].first.defined() && wrote) {
      ++backwards_since_record_;
      ++backwards_;
      for (const auto& [r, given] : roots)
        if (r.defined() && r.grad_fn() && !backward_roots_.emplace(r.grad_fn().get(), r.grad_fn()).second) {
          reused_since_record_ = true;
          reused_roots_.emplace_back(r, r.grad_fn());
          if (attempt_from_ >= 0) reused_in_attempt_ = true, attempt_reused_.emplace_back(r, r.grad_fn());
        }
    }
    for (const auto& [t, g, version] : before) {
      const Tensor& now = t.grad();
      if (now.unsafeGetTensorImpl() != g || (now.defined() && now._version() != version)) {
        const Origin reached = reached_from(roots, curvature, t);
        const Tensor root_t = reached.root;
        const json& seed = reached.seed;
        if (hand_held.count(t.unsafeGetTensorImpl())) {
          gradient_given(t, now);  // still the program's numbers, with a backward's added
          continue;
        }
        // How many backward passes have added up in this gradient: one more
        // than before when the last writer was a backward and nothing zeroed
        // or replaced it since, else this pass alone.
        json counted = seed;
        auto prev = grad_origin.find(t.unsafeGetTensorImpl());
        const bool adds = g != nullptr && prev != grad_origin.end() && prev->second.how == "backward";
        if (counted.is_object()) counted["passes"] = adds ? prev->second.seed.value("passes", 1) + 1 : 1;
        // (The seed holds the route the backward took from its root, as the
        // root was when it ran: reached_from's.)
        Origin now_origin{"backward", root_t, counted, root_t.grad_fn(), {}};
        if (adds) {
          now_origin.earlier = prev->second.earlier;
          if (now_origin.earlier.size() < 64) now_origin.earlier.emplace_back(prev->second.root, prev->second.root_node);
        }
        grad_origin[t.unsafeGetTensorImpl()] = std::move(now_origin);
        gradient_given(t, now);
      }
    }
  }
  gradients_given(e, out);
  // What autograd::grad gives is a gradient as a backward would write it:
  // the same root, start and route travel with it into any step made from it.
  if (gives && args.is_array() && args.size() > 1 && args[1].is_array()) {
    const auto roots = backward_roots(args, 2);
    for (size_t k = 0; k < args[1].size() && k < out.tensors.size(); ++k)
      if (out.tensors[k].defined() && args[1][k].is_number_integer() && tensors_.count(args[1][k].get<int64_t>())) {
        const Tensor& input = tensors_.at(args[1][k].get<int64_t>());
        Origin o = reached_from(roots, curvature, input);
        if (o.seed.is_object()) o.seed["passes"] = 1;
        given_origin[out.tensors[k].unsafeGetTensorImpl()] = {input.unsafeGetTensorImpl(), o};
      }
  }
  if (grad_owner.defined())
    grad_origin[grad_owner.unsafeGetTensorImpl()] = {
        name == "zero_" && whole_grad ? "zeroed" : "changed by hand (" + name + ")", {}, {}, {}};
  const json& ids = e.contains("out") ? e.at("out") : json();
  if (ids.is_array()) {
    if (ids.size() != out.tensors.size()) throw std::runtime_error("the op gave another number of outputs");
    for (size_t i = 0; i < ids.size(); ++i)
      if (!ids[i].is_null()) bind(ids[i], out.tensors[i], taint_now_);
  } else if (ids.is_number_integer()) {
    if (out.tensors.size() != 1) throw std::runtime_error("the op gave another number of outputs");
    if (out.tensors[0].defined()) bind(ids, out.tensors[0], taint_now_);
    else if (stands_in_for_program_grad(name)) bind(ids, torch::zeros_like(inputs_[0]).detach(), true);
  }
  // Whose gradient an undefined read was (a snapshot of G_w.grad() right
  // after it): an undefined tensor carries no owner of its own.
  const bool undefined_grad = (name == "grad" || name == "mutable_grad") && inputs_.size() == 1 &&
                              out.tensors.size() == 1 && !out.tensors[0].defined();
  undefined_grad_of_ = undefined_grad ? inputs_[0] : Tensor();
  if (name == "item" && !out.value.is_null() && out.value.is_number() && !inputs_.empty()) {
    auto l = lineage.find(inputs_[0].unsafeGetTensorImpl());
    items.push_back({out.value.get<double>(), l == lineage.end() ? TensorSet{} : l->second.from});
  }
  trace(name, e, out);
}

void Replayer::trace(const std::string& name, const json& e, const replay::Outcome& out) {
  // The small sets (op names, the gradients read, what each detach took) are
  // copied, within a bound; what a tensor was computed from is shared
  // (TensorSet), and so costs no copy along a long chain.
  constexpr size_t kMaxLineage = 512;
  auto merge = [](auto& into, const auto& from) {
    for (const auto& x : from)
      if (into.size() < kMaxLineage) into.insert(x);
  };
  const bool no_grad = e.value("no_grad", false);
  const bool inplace = name.size() > 1 && name.back() == '_' && !inputs_.empty();
  if (inplace) {
    // An in-place change: the target now also comes from the other operands.
    const gradlab::TensorImpl* self = inputs_[0].unsafeGetTensorImpl();
    Lineage& l = lineage[self];
    bool own_grad = false;
    // Whose gradient it is: the tensor itself, or (a change through data()
    // or a detached alias, as optim::SGD's step makes) the tensor whose
    // memory it shares.
    const gradlab::TensorImpl* grad_owner = self;
    const Origin* given = nullptr;
    const bool graphed = inputs_[0].grad_fn() != nullptr;
    for (size_t i = 1; i < inputs_.size(); ++i) {
      const Lineage& o = lineage[inputs_[i].unsafeGetTensorImpl()];
      if (graphed) l.graph_from.merge(o.graph_from), l.graph_from.insert(inputs_[i].unsafeGetTensorImpl());
      l.from.merge(o.from);
      merge(l.grad_of, o.grad_of);
      merge(l.given_grads, o.given_grads);
      l.via_grad.merge(o.via_grad);
      for (const gradlab::TensorImpl* g : o.grad_of)
        if (g->storage.get() == self->storage.get()) {
          if (!own_grad || g == self) grad_owner = g;
          own_grad = true;
        }
      // A step computed from what autograd::grad gave for this tensor: that gradient's origin.
      for (const gradlab::TensorImpl* g : o.given_grads)
        if (auto it = given_origin.find(g); it != given_origin.end() && it->second.first->storage.get() == self->storage.get())
          given = &it->second.second;
    }
    l.ops.insert(name);
    if (auto to = alias_of.find(self); to != alias_of.end()) {
      Lineage& b = lineage[to->second];
      b.from.merge(l.from);
      b.via_grad.merge(l.via_grad);
      merge(b.grad_of, l.grad_of);
      merge(b.given_grads, l.given_grads);
      b.ops.insert(name);
    }
    if (name == "requires_grad_") l.from_param = true;
    watch_update(inputs_[0]);
    // A change through an alias is a change of the tensor it aliases too.
    const auto base = alias_of.find(self);
    const gradlab::TensorImpl* changed = base != alias_of.end() ? base->second : self;
    if (changed != self) ++then_[self].changes;
    const int changes = ++then_[changed].changes;
    auto shaken = tensors_.find(perturb.tensor);
    if (perturb.after_changes > 0 && changes == perturb.after_changes && shaken != tensors_.end() &&
        shaken->second.unsafeGetTensorImpl() == changed)
      shake(inputs_[0]);
    // A change through a tensor outside autograd (data(), a detached alias)
    // builds no graph, as one under no_grad does.
    const bool untracked = no_grad || !inputs_[0].requires_grad();
    if (name != "requires_grad_" && name != "detach_") {
      auto o = own_grad ? grad_origin.find(grad_owner) : grad_origin.end();
      updates.push_back({self, {name, untracked, no_grad, own_grad, inputs_.size() == 1,
                                given ? *given : o != grad_origin.end() ? o->second : Origin{}}});
    }
    return;
  }
  for (size_t k = 0; k < out.tensors.size(); ++k) {
    const Tensor& t = out.tensors[k];
    if (!t.defined()) continue;
    const gradlab::TensorImpl* impl = t.unsafeGetTensorImpl();
    bool known = false;
    for (const Tensor& in : inputs_) known |= in.unsafeGetTensorImpl() == impl;
    if (known) continue;  // an op that gave back its input (contiguous, a no-op to())
    Lineage l;
    l.from.insert(impl);
    if (name != "grad" && name != "mutable_grad" && !inputs_.empty() && inputs_[0].defined() &&
        impl->storage.get() == inputs_[0].unsafeGetTensorImpl()->storage.get()) {
      const gradlab::TensorImpl* base = inputs_[0].unsafeGetTensorImpl();
      if (auto b = alias_of.find(base); b != alias_of.end()) base = b->second;
      alias_of[impl] = base;
    }
    if (name == "grad" || name == "mutable_grad") {
      l.grad_of.insert(inputs_[0].unsafeGetTensorImpl());
      // A gradient a backward wrote is computed from what its root was.
      auto o = grad_origin.find(inputs_[0].unsafeGetTensorImpl());
      if (o != grad_origin.end() && o->second.root.defined()) {
        auto rl = lineage.find(o->second.root.unsafeGetTensorImpl());
        if (rl != lineage.end()) l.via_grad.merge(rl->second.from), l.via_grad.merge(rl->second.via_grad);
      }
    } else if (name == "autograd::grad") {
      l.given_grads.insert(impl);
      // Computed from what its roots were, as a gradient a backward wrote.
      if (auto g = given_origin.find(impl); g != given_origin.end() && g->second.second.root.defined())
        if (auto rl = lineage.find(g->second.second.root.unsafeGetTensorImpl()); rl != lineage.end())
          l.via_grad.merge(rl->second.from), l.via_grad.merge(rl->second.via_grad);
      // The k-th gradient autograd::grad gives is the gradient of its k-th input.
      const json& ins = e.at("args").size() > 1 ? e.at("args")[1] : json();
      if (ins.is_array() && k < ins.size() && ins[k].is_number_integer() && tensors_.count(ins[k].get<int64_t>()))
        l.grad_of.insert(tensors_.at(ins[k].get<int64_t>()).unsafeGetTensorImpl());
    } else {
      const bool graphed = t.grad_fn() != nullptr;
      for (const Tensor& in : inputs_) {
        const Lineage& o = lineage[in.unsafeGetTensorImpl()];
        if (graphed) l.graph_from.merge(o.graph_from), l.graph_from.insert(in.unsafeGetTensorImpl());
        l.from.merge(o.from);
        merge(l.ops, o.ops);
        merge(l.grad_of, o.grad_of);
        merge(l.given_grads, o.given_grads);
        l.via_grad.merge(o.via_grad);
        l.built_graph |= o.built_graph || (!no_grad && in.requires_grad());
        l.from_param |= o.from_param;
        l.grad_mode_on_param |= o.grad_mode_on_param || (!no_grad && o.from_param);
        for (const auto& [op, on] : o.applied_to) merge(l.applied_to[op], on);
      }
      if ((name == "detach" || name == "clone") && !inputs_.empty())
        l.applied_to[name].insert(inputs_[0].unsafeGetTensorImpl());
    }
    l.ops.insert(name);
    l.made_by = name;
    l.no_grad = no_grad;
    lineage[impl] = std::move(l);
  }
}

// The program read a gradient (grad(), mutable_grad()) that only its own
// code wrote: a backward went through a custom Function, whose backward the
// replay does not run, so the replay has none. A stand-in, marked as the
// program's own like everything computed from it, keeps the replay going (a
// print of x.grad() after such a backward); what the grade reads of it comes
// from the program's account, as for every gradient upstream of a custom
// Function.
bool Replayer::stands_in_for_program_grad(const std::string& op) const {
  return (op == "grad" || op == "mutable_grad") && grads_tainted && inputs_.size() == 1 && vouched_by_program(inputs_[0]);
}

// Whether `g` is the .grad of a tensor upstream of a custom Function.
bool Replayer::grad_of_upstream(const Tensor& g) const {
  if (!g.defined()) return false;
  for (const gradlab::TensorImpl* owner : custom_upstream) {
    const auto& og = owner->grad;
    if (og && og->storage.get() == g.unsafeGetTensorImpl()->storage.get()) return true;
  }
  return false;
}

// The tensor whose .grad shares `t`'s memory (its gradient, or a view or
// detached alias of it), or an undefined tensor.
Tensor Replayer::grad_memory_owner(const Tensor& t) const {
  if (!t.defined()) return {};
  for (const auto& [id, owner] : tensors_) {
    if (!owner.defined() || !(owner.is_leaf() || owner.retains_grad())) continue;
    const Tensor& g = owner.grad();
    if (g.defined() && g.unsafeGetTensorImpl()->storage.get() == t.unsafeGetTensorImpl()->storage.get()) return owner;
  }
  return {};
}

// How a tensor that is some tensor's .grad (or shares its memory) came to
// hold its values; null for any other tensor.
const gradlab::TensorImpl* Replayer::grad_owner_of(const Tensor& t) const {
  return grad_route_of(t) ? *lineage.at(t.unsafeGetTensorImpl()).grad_of.begin() : nullptr;
}

const Replayer::Origin* Replayer::grad_route_of(const Tensor& t) const {
  if (!t.defined()) return nullptr;
  if (const Tensor owner = grad_memory_owner(t); owner.defined()) {
    auto it = grad_origin.find(owner.unsafeGetTensorImpl());
    return it == grad_origin.end() ? nullptr : &it->second;
  }
  // A copy of a gradient (clone, detach, to) taken before it is snapshot.
  auto l = lineage.find(t.unsafeGetTensorImpl());
  if (l == lineage.end() || l->second.grad_of.size() != 1) return nullptr;
  static const std::set<std::string> copies = {"grad", "mutable_grad", "clone", "detach", "contiguous", "to", "data"};
  for (const auto& op : l->second.ops)
    if (!copies.count(op)) return nullptr;
  auto it = grad_origin.find(*l->second.grad_of.begin());
  return it == grad_origin.end() ? nullptr : &it->second;
}

void Replayer::event(const json& e) {
  if (!e.is_object() || !e.contains("e") || !e.at("e").is_string()) throw std::runtime_error("not an event");
  const std::string kind = e.at("e");
  if (kind == "op") op(e);
  else if (kind == "new") made(e, false);
  else if (kind == "given" || kind == "custom") made(e, false);
  else if (kind == "lab") lab(e);
  else if (kind == "refill") refill(e);
  else if (kind == "node") node_read(e);
  else if (kind == "set_grad") {
    Tensor owner = at(e.at("of"));
    owner.mutable_grad() = e.at("to").is_null() ? Tensor() : at(e.at("to"));
    // A gradient a backward wrote, then reset: what it held is gone from the
    // tensor's state, not from the tape (a "keeps no gradient" check reads it).
    const bool written = grad_writes.count(owner.unsafeGetTensorImpl()) > 0;
    grad_origin[owner.unsafeGetTensorImpl()] = {
        std::string(e.at("to").is_null() ? (written ? kResetAfterBackward : "reset by hand") : "set by hand"), {}, {}, {}};
  } else if (kind == "forged_id") {
    throw Failure{"the program rewrote the tape's record of which tensor is which (a tensor carried another's "
                  "number, or its own wiped): nothing it computed can be told apart"};
  } else if (kind == "overflow") {
    throw Failure{"the program did more than the grader can check (over " + std::to_string(gradlab::tape::kMaxEvents) +
                  " operations or " + std::to_string(gradlab::tape::kMaxValues) + " numbers written down)"};
  } else {
    throw std::runtime_error("an event of an unknown kind");
  }
}

// A recorded number must be read from a tensor computed from at least one of
// the tensors the exercise names (a loss from its parameters), not from a
// tensor made of typed numbers.
void Replayer::check_values() {
  for (const auto& [label, value, sources] : values_to_check) {
    bool named_source = false;
    for (const auto& from : sources)
      for (const auto& [n, t] : named) named_source |= t.defined() && from.contains(t.unsafeGetTensorImpl());
    if (!named_source)
      problems.push_back({"record \"" + label + "\"", "value", value,
                          "no item() of a tensor computed from the exercise's named tensors gave it"});
  }
}

}  // namespace grader::replay

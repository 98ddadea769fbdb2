#include "replay.h"

#include <gradlab/tape.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "../harness/facts_of.h"
#include "replay_ops.h"

namespace grader {
namespace {

namespace facts = lab::facts;
using torch::Tensor;

// What a forged tape may ask of the grader: no tensor beyond this, and no
// more time than this for the whole replay.
constexpr size_t kMaxTensorBytes = size_t{256} << 20;
constexpr double kMaxSeconds = 20;

struct Failure {
  std::string why;
};

std::string cut(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 200) + "…"; }

class Replayer final : public replay::Tensors {
 public:
  Tensor at(const json& id) override {
    if (!id.is_number_integer()) throw Failure{"a tensor id that is not an integer: " + cut(id.dump())};
    auto it = tensors_.find(id.get<int64_t>());
    if (it == tensors_.end()) throw Failure{"the tape uses tensor " + id.dump() + ", which was never made on it"};
    if (tainted_.count(id.get<int64_t>())) taint_now_ = true;
    inputs_.push_back(it->second);
    return it->second;
  }

  void event(const json& e);
  void finish(const json& claimed, const json& probes, Verified& v);

  facts::Named named;
  json records = json::array();
  std::vector<Mismatch> problems;
  std::vector<std::string> unverified;
  std::unordered_set<std::string> tainted_names;
  bool grads_tainted = false;
  // The tensors upstream of a custom Function's inputs: their gradients went
  // through the program's own backward, and only theirs are taken as claimed.
  std::set<const gradlab::TensorImpl*> custom_upstream;
  bool vouched_by_program(const Tensor& t) const {
    return t.defined() && custom_upstream.count(t.unsafeGetTensorImpl()) > 0;
  }
  bool grad_of_upstream(const Tensor& g) const;

  // How each tensor's .grad came to hold what it holds (the provenance the
  // grade asks of a gradient): written by a backward (from `root`), set or
  // changed by the program's own hand, or zeroed.
  struct Origin {
    std::string how;
    Tensor root;
  };
  std::unordered_map<const gradlab::TensorImpl*, Origin> grad_origin;

  // Where each tensor's values came from: the tensors it was computed from
  // (itself included), the ops on the way, the gradients it was computed
  // from, what made it and whether grad mode was off then; and the in-place
  // changes made to it afterwards. Sets stop growing at kMaxLineage.
  struct Lineage {
    std::set<const gradlab::TensorImpl*> from;
    std::set<std::string> ops;
    std::set<const gradlab::TensorImpl*> grad_of;
    std::string made_by;
    bool no_grad = false;
  };
  struct Update {
    std::string op;
    bool no_grad = false;
    bool from_own_grad = false;
  };
  std::unordered_map<const gradlab::TensorImpl*, Lineage> lineage;
  std::vector<std::pair<const gradlab::TensorImpl*, Update>> updates;  // in the order they were made
  // The numbers item() gave, which a value record must be one of; and how
  // each snapshot's tensor came to be when it is a gradient.
  struct Item {
    double value;
    std::set<const gradlab::TensorImpl*> from;  // what the tensor it was read from was computed from
  };
  std::vector<Item> items;
  // Value records whose item() must come from the exercise's tensors, held
  // to the names known at the end: (label, the lineages of the items that gave the number).
  struct ValueRecord {
    std::string label, value;
    std::vector<std::set<const gradlab::TensorImpl*>> sources;
  };
  std::vector<ValueRecord> values_to_check;
  void check_values();
  json record_routes = json::object();
  json provenance() const;

 private:
  void made(const json& e, bool taint);
  void refill(const json& e);
  void op(const json& e);
  void lab(const json& e);
  void bind(const json& id, const Tensor& t, bool taint) {
    if (!id.is_number_integer()) throw std::runtime_error("an output id that is not an integer");
    tensors_[id.get<int64_t>()] = t;
    if (taint) tainted_.insert(id.get<int64_t>());
    else tainted_.erase(id.get<int64_t>());
  }
  void note_unverified(const std::string& why) {
    for (const auto& u : unverified)
      if (u == why) return;
    unverified.push_back(why);
  }

  void trace(const std::string& name, const json& e, const replay::Outcome& out);
  const Origin* grad_route_of(const Tensor& t) const;
  Tensor grad_memory_owner(const Tensor& t) const;

  std::unordered_map<int64_t, Tensor> tensors_;
  std::vector<Tensor> inputs_;  // the tensors the current op read, in order
  // The root nodes backward passes started from, held so that no later node
  // takes one's address.
  std::map<const void*, std::shared_ptr<gradlab::autograd::Node>> backward_roots_;
  int backwards_since_record_ = 0;
  bool reused_since_record_ = false;
  std::unordered_set<int64_t> tainted_;
  bool taint_now_ = false;
  std::string last_error_;  // the error the latest op raised, until a record takes it
};

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

void Replayer::made(const json& e, bool taint) {
  const std::string kind = e.at("e");
  if (e.contains("throws")) {
    last_error_ = e.at("throws");
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
      if (l != lineage.end()) custom_upstream.insert(l->second.from.begin(), l->second.from.end());
    }
  }
  Tensor t = rebuild(e);
  bind(e.at("id"), t, taint || foreign);
  Lineage& l = lineage[t.unsafeGetTensorImpl()];
  l = {};
  l.from.insert(t.unsafeGetTensorImpl());
  l.made_by = kind == "new" ? e.value("op", std::string("new")) : kind;
}

// A random in-place fill: the values it left, written into the replay's
// tensor as the op wrote them (one version step), outside any graph.
void Replayer::refill(const json& e) {
  Tensor t = at(e.at("id"));
  if (e.contains("throws")) {
    last_error_ = e.at("throws");
    return;
  }
  Tensor values = rebuild(e);
  {
    gradlab::autograd::NoGradGuard no_graph;
    t.detach().copy_(values.detach());
  }
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
  // What each gradient held before a backward, to see which ones it wrote.
  std::vector<std::tuple<Tensor, const gradlab::TensorImpl*, int64_t>> before;
  if (backward)
    for (const auto& [id, t] : tensors_)
      if (t.defined() && (t.is_leaf() || t.retains_grad())) {
        const Tensor& g = t.grad();
        before.emplace_back(t, g.unsafeGetTensorImpl(), g.defined() ? g._version() : -1);
      }
  // An in-place op whose target shares memory with some tensor's .grad
  // changes that gradient by hand.
  Tensor grad_owner;
  const json& args = e.at("args");
  if (!backward && name.size() > 1 && name.back() == '_' && args.is_array() && !args.empty() &&
      args[0].is_number_integer() && tensors_.count(args[0].get<int64_t>())) {
    grad_owner = grad_memory_owner(tensors_.at(args[0].get<int64_t>()));
  }
  replay::Outcome out;
  std::string thrown;
  bool threw = false;
  {
    gradlab::autograd::AutoGradMode mode(!e.value("no_grad", false));
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
    return;
  }
  // A backward from (or through) what the replay could not follow leaves
  // gradients it cannot vouch for.
  if (taint_now_ && (name == "backward" || name == "autograd::backward" || name == "autograd::grad"))
    grads_tainted = true;
  if (backward) {
    const json& root = args[0].is_array() ? (args[0].empty() ? json() : args[0][0]) : args[0];
    Tensor root_t = root.is_number_integer() ? at(root) : Tensor();
    // A backward through a graph an earlier backward went through (kept by
    // retain_graph), as opposed to one through a graph built again.
    if (root_t.defined() && root_t.grad_fn()) {
      ++backwards_since_record_;
      if (!backward_roots_.emplace(root_t.grad_fn().get(), root_t.grad_fn()).second) reused_since_record_ = true;
    }
    for (const auto& [t, g, version] : before) {
      const Tensor& now = t.grad();
      if (now.unsafeGetTensorImpl() != g || (now.defined() && now._version() != version))
        grad_origin[t.unsafeGetTensorImpl()] = {"backward", root_t};
    }
  }
  if (grad_owner.defined()) grad_origin[grad_owner.unsafeGetTensorImpl()] = {name == "zero_" ? "zeroed" : "changed by hand (" + name + ")", {}};
  const json& ids = e.contains("out") ? e.at("out") : json();
  if (ids.is_array()) {
    if (ids.size() != out.tensors.size()) throw std::runtime_error("the op gave another number of outputs");
    for (size_t i = 0; i < ids.size(); ++i)
      if (!ids[i].is_null()) bind(ids[i], out.tensors[i], taint_now_);
  } else if (ids.is_number_integer()) {
    if (out.tensors.size() != 1) throw std::runtime_error("the op gave another number of outputs");
    if (out.tensors[0].defined()) bind(ids, out.tensors[0], taint_now_);
  }
  if (name == "item" && !out.value.is_null() && out.value.is_number() && !inputs_.empty()) {
    auto l = lineage.find(inputs_[0].unsafeGetTensorImpl());
    items.push_back({out.value.get<double>(), l == lineage.end() ? std::set<const gradlab::TensorImpl*>{} : l->second.from});
  }
  trace(name, e, out);
}

void Replayer::trace(const std::string& name, const json& e, const replay::Outcome& out) {
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
    for (size_t i = 1; i < inputs_.size(); ++i) {
      const Lineage& o = lineage[inputs_[i].unsafeGetTensorImpl()];
      merge(l.from, o.from);
      merge(l.grad_of, o.grad_of);
      for (const gradlab::TensorImpl* g : o.grad_of) own_grad |= g->storage.get() == self->storage.get();
    }
    l.ops.insert(name);
    // A change through a tensor outside autograd (data(), a detached alias)
    // builds no graph, as one under no_grad does.
    const bool untracked = no_grad || !inputs_[0].requires_grad();
    if (name != "requires_grad_" && name != "detach_") updates.push_back({self, {name, untracked, own_grad}});
    return;
  }
  for (const Tensor& t : out.tensors) {
    if (!t.defined()) continue;
    const gradlab::TensorImpl* impl = t.unsafeGetTensorImpl();
    bool known = false;
    for (const Tensor& in : inputs_) known |= in.unsafeGetTensorImpl() == impl;
    if (known) continue;  // an op that gave back its input (contiguous, a no-op to())
    Lineage l;
    l.from.insert(impl);
    if (name == "grad" || name == "mutable_grad") {
      l.grad_of.insert(inputs_[0].unsafeGetTensorImpl());
    } else {
      for (const Tensor& in : inputs_) {
        const Lineage& o = lineage[in.unsafeGetTensorImpl()];
        merge(l.from, o.from);
        merge(l.ops, o.ops);
        merge(l.grad_of, o.grad_of);
      }
    }
    l.ops.insert(name);
    l.made_by = name;
    l.no_grad = no_grad;
    lineage[impl] = std::move(l);
  }
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

// How a tensor that is some tensor's .grad (or shares its memory) came to
// hold its values; null for any other tensor.
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

void Replayer::lab(const json& e) {
  const std::string kind = e.at("kind"), label = e.at("label");
  Tensor t;
  bool tainted = false;
  if (e.contains("id")) {
    taint_now_ = false;
    t = e.at("id").is_null() ? Tensor() : at(e.at("id"));
    tainted = taint_now_;
  }
  if (kind == "name") {
    bool replaced = false;
    for (auto& [n, v] : named)
      if (n == label) v = t, replaced = true;
    if (!replaced) named.emplace_back(label, t);
    if (tainted) tainted_names.insert(label);
    else tainted_names.erase(label);
  } else if (kind == "snapshot") {
    json r = {{"kind", "snapshot"}, {"label", label}, {"tensor", facts::describe(t)}};
    if (tainted || (grads_tainted && grad_of_upstream(t))) r["unverified"] = true;
    records.push_back(std::move(r));
    // How each snapshot under this label came to be, in order: a gradient
    // and its route, or null for any other tensor.
    const Origin* o = grad_route_of(t);
    if (o) record_routes[label]["grad"] = o->how;
    record_routes[label]["grads"].push_back(o ? json(o->how) : json(nullptr));
  } else if (kind == "value") {
    const json& value = e.at("value");
    // A number the program records is one its tensors gave (item()), not
    // one it typed or worked out beside them.
    std::vector<std::set<const gradlab::TensorImpl*>> sources;
    if (value.is_number())
      for (const Item& i : items)
        if (i.value == value.get<double>() || std::abs(i.value - value.get<double>()) <= 1e-9 * std::abs(i.value))
          sources.push_back(i.from);
    if (sources.empty() && value.is_number())
      problems.push_back({"record \"" + label + "\"", "value", cut(value.dump()), "no item() of a tensor the program computed gave this number"});
    else if (value.is_number())
      values_to_check.push_back({label, cut(value.dump()), std::move(sources)});
    records.push_back({{"kind", "value"}, {"label", label}, {"value", value}});
  } else if (kind == "error") {
    const std::string message = e.value("message", std::string());
    // The error a program records must be one an op of its raised.
    if (message != last_error_)
      problems.push_back({"record \"" + label + "\"", "message", cut(message),
                          last_error_.empty() ? "no op the program called raised an error" : cut(last_error_)});
    records.push_back({{"kind", "error"}, {"label", label}, {"message", message}});
  } else if (kind == "no_error") {
    records.push_back({{"kind", "no_error"}, {"label", label}});
  } else {
    throw std::runtime_error("a lab record of an unknown kind");
  }
  if (kind != "name") {
    record_routes[label]["backward_passes"] = backwards_since_record_;
    record_routes[label]["reused_retained_graph"] = reused_since_record_;
  }
  backwards_since_record_ = 0;
  reused_since_record_ = false;
  last_error_.clear();
}

void Replayer::event(const json& e) {
  if (!e.is_object() || !e.contains("e") || !e.at("e").is_string()) throw std::runtime_error("not an event");
  const std::string kind = e.at("e");
  if (kind == "op") op(e);
  else if (kind == "new") made(e, false);
  else if (kind == "given" || kind == "custom") made(e, false);
  else if (kind == "lab") lab(e);
  else if (kind == "refill") refill(e);
  else if (kind == "set_grad") {
    Tensor owner = at(e.at("of"));
    owner.mutable_grad() = e.at("to").is_null() ? Tensor() : at(e.at("to"));
    grad_origin[owner.unsafeGetTensorImpl()] = {e.at("to").is_null() ? "reset by hand" : "set by hand", {}};
  } else if (kind == "overflow") {
    throw Failure{"the program did more than the grader can check (over " + std::to_string(gradlab::tape::kMaxEvents) +
                  " operations or " + std::to_string(gradlab::tape::kMaxValues) + " numbers written down)"};
  } else {
    throw std::runtime_error("an event of an unknown kind");
  }
}

// Two numbers as the harness writes them, equal within what the engine on
// another device (or another summation order) may differ by.
bool same_number(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || std::abs(x - y) <= 1e-6 + 1e-5 * std::abs(y);
  }
  return a == b;
}

// Where `claimed` and `computed` (tensor descriptions, graphs, records)
// differ: the first field, or "" when they agree. The device is not compared
// (the replay runs on the CPU).
std::string first_difference(const json& claimed, const json& computed, const std::string& at, json& c_out, json& r_out) {
  if (claimed.is_object() && computed.is_object()) {
    for (const auto& [k, v] : computed.items()) {
      if (k == "device") continue;
      const std::string where = at.empty() ? k : at + "." + k;
      if (!claimed.contains(k)) {
        c_out = "nothing", r_out = v;
        return where;
      }
      std::string d = first_difference(claimed.at(k), v, where, c_out, r_out);
      if (!d.empty()) return d;
    }
    for (const auto& [k, v] : claimed.items())
      if (!computed.contains(k) && k != "unverified") {
        c_out = v, r_out = "nothing";
        return at.empty() ? k : at + "." + k;
      }
    return "";
  }
  if (claimed.is_array() && computed.is_array()) {
    if (claimed.size() != computed.size()) {
      c_out = claimed, r_out = computed;
      return at.empty() ? "length" : at;
    }
    for (size_t i = 0; i < claimed.size(); ++i) {
      json c, r;
      if (!first_difference(claimed[i], computed[i], at, c, r).empty()) {
        c_out = claimed, r_out = computed;
        return at;
      }
    }
    return "";
  }
  if (same_number(claimed, computed)) return "";
  c_out = claimed, r_out = computed;
  return at;
}

void compare(const std::string& what, const json& claimed, const json& computed, std::vector<Mismatch>& out) {
  json c, r;
  const std::string field = first_difference(claimed, computed, "", c, r);
  if (!field.empty()) out.push_back({what, field, cut(c.dump()), cut(r.dump())});
}

// Holds the program's claims against the replay's facts; what the replay
// could not vouch for is left as the program claimed it.
void compare_all(const json& claimed, Replayer& r, Verified& v) {
  json& doc = v.doc;
  const json no_object = json::object();
  const json& ct = claimed.contains("tensors") ? claimed["tensors"] : no_object;
  for (const auto& [name, t] : ct.items())
    if (!doc["tensors"].contains(name)) v.mismatches.push_back({"tensor " + name, "name", "named", "never named"});
  for (auto& [name, t] : doc["tensors"].items()) {
    if (!ct.contains(name)) {
      v.mismatches.push_back({"tensor " + name, "name", "not in the result", "named"});
      continue;
    }
    if (r.tainted_names.count(name)) {
      // Past a custom Function the replay knows the values (its forward was
      // taped) but not the graph the program's node makes: the values are
      // held to the replay, the rest is the program's account.
      json claimed_part = json::object(), computed_part = json::object();
      for (const char* k : {"defined", "shape", "dtype", "values"}) {
        if (ct[name].contains(k)) claimed_part[k] = ct[name][k];
        if (t.contains(k)) computed_part[k] = t[k];
      }
      compare("tensor " + name, claimed_part, computed_part, v.mismatches);
      t = ct[name];
      continue;
    }
    bool upstream = false;
    for (const auto& [n, x] : r.named) upstream |= n == name && r.vouched_by_program(x);
    if (r.grads_tainted && upstream && ct[name].contains("grad")) t["grad"] = ct[name]["grad"];
    compare("tensor " + name, ct[name], t, v.mismatches);
  }
  const json& cg = claimed.contains("graphs") ? claimed["graphs"] : no_object;
  for (auto& [name, g] : doc["graphs"].items()) {
    if (r.tainted_names.count(name)) continue;
    if (!cg.contains(name) || cg[name] != g) v.mismatches.push_back({"tensor " + name, "graph", cg.contains(name) ? "another graph" : "none", "its computation's graph"});
  }
  for (const auto& [name, g] : cg.items())
    if (r.tainted_names.count(name)) doc["graphs"][name] = g;
  const json& cr = claimed.contains("records") ? claimed["records"] : json::array();
  json& rr = doc["records"];
  for (size_t i = 0; i < std::max(cr.size(), rr.size()); ++i) {
    if (i >= cr.size() || i >= rr.size()) {
      const json& extra = i < cr.size() ? cr[i] : rr[i];
      v.mismatches.push_back({"record \"" + extra.value("label", std::string()) + "\"", "records",
                              std::to_string(cr.size()) + " records", std::to_string(rr.size()) + " records"});
      continue;
    }
    if (rr[i].value("unverified", false)) {
      rr[i] = cr[i];
      continue;
    }
    compare("record \"" + rr[i].value("label", std::string()) + "\"", cr[i], rr[i], v.mismatches);
  }
  if (doc.contains("probes") && claimed.contains("probes"))
    for (auto& [id, p] : doc["probes"].items()) {
      if (!claimed["probes"].contains(id)) continue;
      compare("probe " + id, claimed["probes"][id], p, v.mismatches);
    }
}

// A recorded number must be read from a tensor computed from at least one of
// the tensors the exercise names (a loss from its parameters), not from a
// tensor made of typed numbers.
void Replayer::check_values() {
  for (const auto& [label, value, sources] : values_to_check) {
    bool named_source = false;
    for (const auto& from : sources)
      for (const auto& [n, t] : named) named_source |= t.defined() && from.count(t.unsafeGetTensorImpl()) > 0;
    if (!named_source)
      problems.push_back({"record \"" + label + "\"", "value", value,
                          "no item() of a tensor computed from the exercise's named tensors gave it"});
  }
}

json Replayer::provenance() const {
  json out = json::object();
  auto names_of = [&](const std::set<const gradlab::TensorImpl*>& impls) {
    json ns = json::array();
    for (const auto& [n, r] : named)
      if (r.defined() && impls.count(r.unsafeGetTensorImpl())) ns.push_back(n);
    return ns;
  };
  for (const auto& [name, t] : named) {
    if (!t.defined()) continue;
    const gradlab::TensorImpl* impl = t.unsafeGetTensorImpl();
    json p = json::object();
    auto it = grad_origin.find(impl);
    if (it != grad_origin.end()) {
      p["grad"] = it->second.how;
      if (it->second.root.defined()) {
        p["root"] = nullptr;
        for (const auto& [n, r] : named)
          if (r.defined() && r.is_same(it->second.root)) p["root"] = n;
      }
    }
    auto l = lineage.find(impl);
    if (l != lineage.end()) {
      p["made_by"] = l->second.made_by;
      p["no_grad"] = l->second.no_grad;
      p["from"] = names_of(l->second.from);
      p["ops"] = l->second.ops;
      p["grad_of"] = names_of(l->second.grad_of);
    }
    // Its in-place changes, made through it or through a tensor over the
    // same memory (data(), a detached alias, a view).
    json us = json::array();
    for (const auto& [target, up] : updates)
      if (target->storage.get() == impl->storage.get())
        us.push_back({{"op", up.op}, {"no_grad", up.no_grad}, {"from_own_grad", up.from_own_grad}});
    if (!us.empty()) p["updates"] = us;
    out[name] = p;
  }
  return {{"tensors", out}, {"records", record_routes}};
}

}  // namespace

Channel split_channel(std::string_view text) {
  const size_t cut_at = text.rfind('\n');
  if (cut_at == std::string_view::npos) return {{}, text};
  return {text.substr(0, cut_at + 1), text.substr(cut_at + 1)};
}

Verified verify(std::string_view tape, const json& claimed, const json& probes, const std::string& key) {
  if (const char* dump = std::getenv("GRADLAB_DEBUG_TAPE")) {
    FILE* f = std::fopen(dump, "w");
    if (f) std::fwrite(tape.data(), 1, tape.size(), f), std::fclose(f);
  }
  Verified v;
  v.doc = claimed;
  Replayer r;
  const auto started = std::chrono::steady_clock::now();
  // The grader's own tensors are small: the bound stays for the process.
  gradlab::tape::detail::g_storage_limit = kMaxTensorBytes;
  size_t line_no = 0;
  json provenance;
  try {
    if (!key.empty()) {
      gradlab::tape::Chain chain(key);
      for (size_t from = 0; from < tape.size();) {  // line by line, as the engine chained them
        const size_t end = tape.find('\n', from);
        chain.add(tape.substr(from, end - from));
        chain.add("\n");
        from = end == std::string_view::npos ? tape.size() : end + 1;
      }
      if (claimed.value("tape_chain", std::string()) != chain.hex())
        throw Failure{"the op tape on the channel is not the one the engine wrote: lines were added, changed or "
                      "left out (something in the program wrote to the grader's channel)"};
    }
    size_t from = 0;
    while (from < tape.size()) {
      const size_t end = tape.find('\n', from);
      const std::string_view line = tape.substr(from, end - from);
      from = end + 1;
      ++line_no;
      if (line_no > gradlab::tape::kMaxEvents + 1) throw Failure{"the tape is longer than any program may write"};
      r.event(json::parse(line));
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > kMaxSeconds)
        throw Failure{"the program's computation took the grader too long to check"};
    }
    // The facts as the harness writes them, from the replay's tensors.
    json tensors = json::object(), graphs = json::object();
    for (const auto& [name, t] : r.named) {
      tensors[name] = facts::describe(t);
      if (t.defined() && t.grad_fn()) graphs[name] = facts::graph_of(t, r.named);
    }
    json probes_out = json::object();
    if (claimed.value("status", "") == "ok")
      for (const auto& p : probes) {
        const std::string id = p.at("id");
        json out;
        // A probe of a tensor the replay could not follow: the program's answer.
        if (r.tainted_names.count(p.value("tensor", std::string()))) {
          probes_out[id] = claimed.contains("probes") ? claimed["probes"].value(id, json()) : json();
          continue;
        }
        try {
          out = facts::state_probe(r.named, p);
        } catch (const std::exception& e) {
          out = {{"ok", false}, {"error", facts::error_text(e)}};
        }
        if (out.is_null()) {  // a probe of the program's own functions (gradcheck): its own answer
          out = claimed.at("probes").value(id, json());
        } else {
          for (const auto& name : p.value("after", std::vector<std::string>{})) {
            const Tensor* t = nullptr;
            for (const auto& [n, x] : r.named)
              if (n == name) t = &x;
            out["after"][name] = t ? facts::describe(*t) : json(nullptr);
          }
        }
        probes_out[id] = out;
      }
    v.doc["tensors"] = tensors;
    v.doc["graphs"] = graphs;
    v.doc["records"] = r.records;
    if (claimed.contains("probes")) v.doc["probes"] = probes_out;
    provenance = r.provenance();
    r.check_values();
    v.replayed = true;
  } catch (const Failure& f) {
    v.failure = f.why;
  } catch (const std::exception& e) {
    v.failure = "the tape could not be replayed (line " + std::to_string(line_no) + "): " + cut(e.what());
  }
  v.mismatches = std::move(r.problems);
  v.unverified = std::move(r.unverified);
  if (r.grads_tainted)
    v.unverified.push_back("gradients from a backward through that part of the graph");
  if (v.replayed) {
    compare_all(claimed, r, v);
    v.doc["provenance"] = provenance;
  }
  return v;
}

}  // namespace grader

// The replayer's part in the lab's records: each record as the replay makes
// it (snapshots, values, errors, attempts, names), how each recorded
// gradient came to be, and the named tensor a backward's root is or restates.
#include <set>

#include "judge/replay_route.h"
#include "judge/replayer.h"

namespace grader::replay {

namespace facts = lab::facts;

void Replayer::lab(const json& e) {
  const std::string kind = e.at("kind"), label = e.at("label");
  // An attempt's body begins: its record says what the body did, not what
  // ran before it (an empty attempt after the real backward, an error
  // caught earlier and thrown again by hand inside it).
  if (kind == "begin") {
    attempt_from_ = backwards_;
    reused_in_attempt_ = false;
    attempt_reused_.clear();
    last_error_.clear();
    return;
  }
  Tensor t;
  bool tainted = false;
  if (e.contains("id")) {
    taint_now_ = false;
    t = e.at("id").is_null() ? Tensor() : at(e.at("id"));
    tainted = taint_now_;
  }
  if (kind == "name") {
    if (e.at("id").is_number_integer()) named_ids[label] = e.at("id").get<int64_t>();
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
    auto l = t.defined() ? lineage.find(t.unsafeGetTensorImpl()) : lineage.end();
    note_record_source(l == lineage.end() ? TensorSet{} : l->second.from);
    // How each snapshot under this label came to be, in order: a gradient
    // and its route, or null for any other tensor.
    const Origin* o = grad_route_of(t);
    if (!t.defined() && undefined_grad_of_.defined())  // no gradient because the program reset it
      if (auto r = grad_origin.find(undefined_grad_of_.unsafeGetTensorImpl());
          r != grad_origin.end() && r->second.how == kResetAfterBackward)
        o = &r->second;
    if (o) record_routes[label]["grad"] = o->how;
    record_routes[label]["grads"].push_back(o ? json(o->how) : json(nullptr));
    record_routes[label]["seeds"].push_back(o ? o->seed : json(nullptr));
    record_roots[label].emplace_back(o ? o->root : Tensor(), o ? o->root_node : nullptr);
    record_owners_[label].push_back(grad_owner_of(t));
  } else if (kind == "value") {
    const json& value = e.at("value");
    // A number the program records is one its tensors gave (item()), not
    // one it typed or worked out beside them.
    std::vector<TensorSet> sources;
    int latest = -1;
    if (value.is_number())
      for (size_t k = 0; k < items.size(); ++k)
        if (const Item& i = items[k];
            i.value == value.get<double>() || std::abs(i.value - value.get<double>()) <= 1e-9 * std::abs(i.value)) {
          sources.push_back(i.from);
          latest = static_cast<int>(k);
        }
    if (sources.empty() && value.is_number())
      problems.push_back({"record \"" + label + "\"", "value", cut(value.dump()), "no item() of a tensor the program computed gave this number"});
    else if (value.is_number())
      values_to_check.push_back({label, cut(value.dump()), std::move(sources)});
    json recorded = value;
    if (items_of_values) {  // a shadow: what the base's item gives here
      const size_t n = value_items.size();
      const int k = n < items_of_values->size() ? (*items_of_values)[n] : -1;
      if (k >= 0 && static_cast<size_t>(k) < items.size()) recorded = items[static_cast<size_t>(k)].value;
    }
    value_items.push_back(latest);
    note_record_source(latest >= 0 ? items[static_cast<size_t>(latest)].from : TensorSet{});
    records.push_back({{"kind", "value"}, {"label", label}, {"value", recorded}});
  } else if (kind == "error") {
    const std::string message = e.value("message", std::string());
    // The error a program records must be one an op of its raised.
    if (message != last_error_)
      problems.push_back({"record \"" + label + "\"", "message", cut(message),
                          last_error_.empty() ? "no op the program called raised an error" : cut(last_error_)});
    records.push_back({{"kind", "error"}, {"label", label}, {"message", message}});
    error_sources_[label] = message == last_error_ ? error_from_ : std::set<const gradlab::TensorImpl*>{};
    error_leaf_roots_[label] = message == last_error_ && error_from_leaf_;
  } else if (kind == "no_error") {
    records.push_back({{"kind", "no_error"}, {"label", label}});
  } else {
    throw std::runtime_error("a lab record of an unknown kind");
  }
  if (kind != "name") {
    // How many backward passes came before each record of the label, in
    // order: a snapshot "before backward" taken after one is not.
    record_routes[label]["after_backwards"].push_back(backwards_);
    record_routes[label]["backward_passes"] = backwards_since_record_;
    record_routes[label]["reused_retained_graph"] = reused_since_record_;
    // An attempt's record: what its body did (passes, a kept graph gone
    // through again, by which roots).
    const bool attempt = attempt_from_ >= 0 && (kind == "error" || kind == "no_error");
    if (attempt) {
      record_routes[label]["attempt_passes"] = backwards_ - attempt_from_;
      record_routes[label]["reused_in_attempt"] = reused_in_attempt_;
    }
    const auto& roots = attempt ? attempt_reused_ : reused_roots_;
    auto& reused = record_reused_[label];
    reused.insert(reused.end(), roots.begin(), roots.end());
  }
  reused_roots_.clear();
  attempt_from_ = -1;
  backwards_since_record_ = 0;
  reused_since_record_ = false;
  last_error_.clear();
}

// The named tensor `root` restates (itself, or through ops that keep its
// value and pass the gradient on unchanged: a one-element sum, a view, a
// clone), or "" when it is computed from anything else as well.
std::string Replayer::restated(const Tensor& root, const std::shared_ptr<gradlab::autograd::Node>& at) const {
  static const std::set<std::string> kRestating = {
      "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "ViewBackward0", "ReshapeAliasBackward0",
      "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "CloneBackward0", "AliasBackward0",
      "ToCopyBackward0"};
  // (One element, as the root: a sum or mean of more is not the tensor.)
  auto name_of = [&](const gradlab::autograd::Node* node) -> std::string {
    for (const auto& [n, t] : named)
      if (t.defined() && t.grad_fn().get() == node && node && t.numel() == 1) return n;
    return "";
  };
  for (const auto& [n, t] : named)
    if (t.defined() && t.is_same(root) && t.grad_fn() == at) return n;
  if (root.numel() != 1) return "";
  std::shared_ptr<gradlab::autograd::Node> node = at;
  for (int depth = 0; node && depth < 16; ++depth) {
    if (const std::string n = name_of(node.get()); !n.empty()) return n;
    if (!kRestating.count(node->name())) return "";
    std::shared_ptr<gradlab::autograd::Node> next;
    for (const auto& e : node->next_edges()) {
      if (!e.function) continue;
      if (next) return "";  // two inputs: more than a restatement
      next = e.function;
    }
    node = next;
  }
  return "";
}

// A backward's root as the checks name it (as it was when the backward ran:
// `node` was its grad_fn then): the named tensor it is, and the
// named tensor it only restates, when it does (f.sum().backward() on a
// scalar f, f.reshape({1}), f.clone() are a backward from f too; f * 0 + 3 * q
// is not). Null for no root.
json Replayer::root_name(const Tensor& root, const std::shared_ptr<gradlab::autograd::Node>& node) const {
  if (!root.defined()) return nullptr;
  json r = {{"name", nullptr}};
  for (const auto& [n, t] : named)
    if (t.defined() && t.is_same(root) && t.grad_fn() == node) r["name"] = n;
  if (const std::string of = restated(root, node); !of.empty()) r["restates"] = of;
  return r;
}

void Replayer::node_read(const json& e) {
  const std::string how = e.at("how");
  const json& id = e.at("id");
  if (!id.is_number_integer()) throw std::runtime_error("a node number that is not an integer");
  auto node_at = [&](const json& n) -> std::shared_ptr<gradlab::autograd::Node> {
    if (!n.is_number_integer()) return nullptr;
    auto it = read_nodes_.find(n.get<int64_t>());
    return it == read_nodes_.end() ? nullptr : it->second;
  };
  if (how == "name") {
    if (const auto n = node_at(id)) names_read_.insert(n.get());
    return;
  }
  if (read_nodes_.size() >= kMaxReadNodes && !read_nodes_.count(id.get<int64_t>())) return;
  std::shared_ptr<gradlab::autograd::Node> found;
  if (how == "grad_fn") {
    const json& of = e.at("of");
    auto t = of.is_number_integer() ? tensors_.find(of.get<int64_t>()) : tensors_.end();
    if (t != tensors_.end() && t->second.defined()) found = t->second.grad_fn();
  } else if (how == "edge") {
    const auto from = node_at(e.at("from"));
    const json& at = e.at("at");
    if (from && at.is_number_integer() && at.get<int64_t>() >= 0 &&
        static_cast<size_t>(at.get<int64_t>()) < from->untaped_next_edges().size())
      found = from->untaped_next_edges()[static_cast<size_t>(at.get<int64_t>())].function;
  } else {
    throw std::runtime_error("a node event of an unknown kind");
  }
  read_nodes_[id.get<int64_t>()] = found;  // (null: a node the replay has no counterpart for)
}

// How much of t's backward graph the program read: its nodes, and how many
// of them had their name() read.
json Replayer::walked(const Tensor& t) const {
  const auto seen = replay::nodes_under(t.grad_fn().get(), 10000);
  size_t read = 0;
  for (const auto* n : seen) read += names_read_.count(n);
  return {{"nodes", seen.size()}, {"names_read", read}};
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
        const json root = root_name(it->second.root, it->second.root_node);
        p["root"] = root.value("name", json());
        if (root.contains("restates")) p["root_restates"] = root["restates"];
        p["seed"] = it->second.seed;
        if (!it->second.earlier.empty()) {
          json earlier = json::array();
          for (const auto& [r, node] : it->second.earlier) earlier.push_back(root_name(r, node).value("name", json()));
          p["earlier_roots"] = earlier;
        }
      }
    }
    auto l = lineage.find(impl);
    if (l != lineage.end()) {
      p["made_by"] = l->second.made_by;
      p["no_grad"] = l->second.no_grad;
      p["built_graph"] = l->second.built_graph;
      p["grad_mode_on_param"] = l->second.grad_mode_on_param;
      std::set<const gradlab::TensorImpl*> from = l->second.from.items();
      from.insert(l->second.via_grad.items().begin(), l->second.via_grad.items().end());
      p["from"] = names_of(from);
      p["ops"] = l->second.ops;
      p["grad_of"] = names_of(l->second.grad_of);
      // What each detach() and clone() on the way took: a named tensor, or
      // a result computed from which named tensors.
      for (const auto& [op, on] : l->second.applied_to)
        for (const auto* in : on) {
          const auto il = lineage.find(in);
          const json is = names_of({in});
          p["through_inputs"][op].push_back({{"is", is.empty() ? json(nullptr) : is[0]},
                                            {"from", il == lineage.end() ? json::array() : names_of(il->second.from.items())}});
        }
    }
    // Its in-place changes, made through it or through a tensor over the
    // same memory (data(), a detached alias, a view).
    json us = json::array();
    for (const auto& [target, up] : updates)
      if (target->storage.get() == impl->storage.get())
        us.push_back({{"op", up.op}, {"no_grad", up.no_grad}, {"grad_mode_off", up.grad_mode_off}, {"from_own_grad", up.from_own_grad},
                      {"by_number", up.by_number}, {"grad_how", up.grad.how},
                      {"grad_route", up.grad.seed.is_object() ? up.grad.seed.value("route", "") : ""},
                      {"grad_passes", up.grad.seed.is_object() ? up.grad.seed.value("passes", 0) : 0},
                      {"grad_root", root_name(up.grad.root, up.grad.root_node)}, {"through", names_of({target})}});
    if (!us.empty()) p["updates"] = us;
    if (t.grad_fn()) p["walked"] = walked(t);
    out[name] = p;
  }
  // What the op that raised each recorded error read was computed from.
  json routes = record_routes;
  for (const auto& [label, from] : error_sources_) routes[label]["error_from"] = names_of(from);
  for (const auto& [label, leaf] : error_leaf_roots_) routes[label]["error_from_leaf"] = leaf;
  for (const auto& [label, roots] : record_roots) {
    json& r = routes[label]["roots"] = json::array();
    json& g = routes[label]["root_graphs"] = json::array();
    for (const auto& [root, node] : roots) {
      r.push_back(root_name(root, node));
      // The graph the backward started from, for a check that holds it to the
      // reference's ("root_graph"): a sum of 10 − d, not of a stand-in. The
      // root is named (kBackwardRoot) so that its shape can say that a sum
      // over every dimension left a scalar.
      if (!root.defined() || !root.grad_fn()) {
        g.push_back(nullptr);
        continue;
      }
      auto with_root = named;
      with_root.emplace_back(kBackwardRoot, root);
      g.push_back({{"graph", lab::facts::graph_of(root, with_root)}, {"shape", root.sizes().vec()}});
    }
  }
  // Whose gradient each snapshot holds: a named tensor's, or another's
  // (null: a leaf of the program's own, such as a copy of a parameter made
  // a leaf to take the backward passes the exercise asks of the parameter).
  for (const auto& [label, owners] : record_owners_) {
    json& o = routes[label]["grad_owner"] = json::array();
    for (const auto* impl : owners) {
      const json names = impl ? names_of({impl}) : json::array();
      o.push_back(names.empty() ? json(nullptr) : names[0]);
    }
  }
  // The roots whose kept graphs a backward went through again, by record.
  for (const auto& [label, roots] : record_reused_) {
    json& r = routes[label]["reused_roots"] = json::array();
    for (const auto& [root, node] : roots) r.push_back(root_name(root, node));
  }
  return {{"tensors", out}, {"records", routes}};
}

}  // namespace grader::replay

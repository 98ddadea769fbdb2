// The replayer's part in reading a backward's roots: which roots a call to
// backward (or autograd::grad) names, how each curves in the leaves before
// the program's backward runs (replay_route.h), and how the gradient each
// leaf gets was reached from them.
#include "judge/replay_route.h"
#include "judge/replayer.h"

#include <gradlab/failed_node.h>

#include <unordered_set>

namespace grader::replay {
namespace {

namespace facts = lab::facts;

// How a backward started: the shape of its root and the gradient it was
// seeded with (none given: ones, as backward() seeds a scalar). Two passes
// that write the same numbers from other seeds (−2·g on top of 3·g never
// zeroed) are not the same computation.
json seed_of(const Tensor& root, const Tensor& given) {
  json s = {{"root", root.sizes().vec()}, {"given", given.defined()}, {"ones", true}};
  if (!given.defined()) return s;
  const json values = facts::describe(given).value("values", json::array());
  json shown = json::array();
  for (const auto& v : values) {
    if (!(v.is_number() && v.get<double>() == 1.0)) s["ones"] = false;
    if (shown.size() < 6) shown.push_back(v);
  }
  s["values"] = shown;
  return s;
}

}  // namespace

// How a backward (or autograd::grad) from `roots` reached `t`: the roots
// that reach it, and by which route (a leaf root reaches itself through no
// op). One root: its start, route and curvature. Several: passes summed in
// one call, whose route is theirs together ("Roots{…}"), no single root's.
// None: "?", a route that cannot be followed.
Replayer::Origin Replayer::reached_from(const std::vector<std::pair<Tensor, Tensor>>& roots,
                                        const std::vector<Curvatures>& curvature, const Tensor& t) const {
  std::vector<std::pair<size_t, std::string>> reaching;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i].first;
    if (!r.defined()) continue;
    std::string route = r.grad_fn() ? route_to(t, r.grad_fn()) : r.is_same(t) ? "X" : "";
    if (route.empty()) continue;
    // (A root that is the tensor itself has no curvature in it to compare.)
    if (i < curvature.size() && !r.is_same(t))
      if (const auto c = curvature[i].find(t.unsafeGetTensorImpl()); c != curvature[i].end()) route += "@" + c->second;
    reaching.emplace_back(i, route);
  }
  const size_t chosen = reaching.empty() ? 0 : reaching[0].first;
  Origin o{"backward", chosen < roots.size() ? roots[chosen].first : Tensor(), json(), nullptr};
  if (!o.root.defined()) return o;
  o.root_node = o.root.grad_fn();
  o.seed = seed_of(o.root, roots[chosen].second);
  std::string route = reaching.empty() ? "?" : reaching[0].second;
  if (reaching.size() > 1) {
    route = "Roots{";
    for (size_t i = 0; i < reaching.size(); ++i) route += (i ? "," : "") + reaching[i].second.substr(0, reaching[i].second.find('@'));
    route += "}";
  }
  o.seed["route"] = route;
  return o;
}

// A backward's roots, each with the gradient it starts from (undefined:
// none given), from the op's arguments: one tensor, or lists of them.
std::vector<std::pair<Tensor, Tensor>> Replayer::backward_roots(const json& args, size_t given_at) const {
  auto list = [](const json& a) { return a.is_array() ? a : a.is_null() ? json::array() : json::array({a}); };
  auto tensor = [&](const json& id) {
    return id.is_number_integer() && tensors_.count(id.get<int64_t>()) ? tensors_.at(id.get<int64_t>()) : Tensor();
  };
  std::vector<std::pair<Tensor, Tensor>> out;
  if (!args.is_array() || args.empty()) return out;
  const json roots = list(args[0]), givens = args.size() > given_at ? list(args[given_at]) : json::array();
  for (size_t i = 0; i < roots.size(); ++i) out.emplace_back(tensor(roots[i]), i < givens.size() ? tensor(givens[i]) : Tensor());
  return out;
}

std::vector<Tensor> Replayer::backward_error_about(const json& args, size_t given_at, const std::string& error) const {
  std::vector<Tensor> about;
  const auto failed = gradlab::autograd::last_failed_node();
  if (const void* stale = gradlab::autograd::last_stale_storage();
      stale && error.find("modified by an inplace operation") != std::string::npos) {
    // The tensor changed in place is the one over that storage: e = w.exp()
    // changed after exp saved it, not a data tensor a product saved.
    for (const auto& [id, t] : tensors_)
      if (t.defined() && t.unsafeGetTensorImpl()->storage.get() == stale) about.push_back(t);
    if (!about.empty()) return about;
  }
  if (failed && error.find("modified by an inplace operation") != std::string::npos) {
    // The leaves the failing node's graph reaches (bounded: a forged graph
    // buys nothing by being long).
    const auto seen = replay::nodes_under(failed.get(), 20000);
    for (const auto* n : seen)
      if (const auto* acc = dynamic_cast<const torch::autograd::AccumulateGrad*>(n)) about.push_back(acc->variable);
    // And the program's tensors computed in that graph (w rebound to w − lr·g
    // is no leaf, but the tensor the node saved came from it).
    for (const auto& [id, t] : tensors_)
      if (t.defined() && t.grad_fn() && seen.count(t.grad_fn().get())) about.push_back(t);
    return about;
  }
  for (const auto& [r, given] : backward_roots(args, given_at)) about.push_back(r);
  return about;
}

// How each root curves in the leaves (replay_route.h), one map per root.
std::vector<Replayer::Curvatures> Replayer::curvature_before_backward(
    const json& args, size_t given_at, const std::vector<std::tuple<Tensor, const gradlab::TensorImpl*, int64_t>>& before) {
  const auto roots = backward_roots(args, given_at);
  if (!probe_curvature || roots.empty() || roots.size() > 4) return {};
  std::vector<Tensor> leaves, grads;
  for (const auto& [t, g, version] : before) {
    grads.push_back(t);
    if (t.is_leaf() && t.requires_grad()) leaves.push_back(t);
  }
  std::vector<Curvatures> out;
  for (const auto& [root, given] : roots)
    out.push_back(++curvature_probes_ > kMaxCurvatureProbes ? Curvatures{} : replay::curvature_of(root, given, leaves, grads, made_as_));
  return out;
}

}  // namespace grader::replay

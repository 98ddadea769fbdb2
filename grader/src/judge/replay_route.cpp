#include "judge/replay_route.h"

#include "common/sha256.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace grader::replay {
namespace {

using Tensor = torch::Tensor;

// How a backward's root reached one tensor, as the checks compare it with
// the reference's: the ops on the paths from the root down to the tensor.
// Ops that only add, subtract, negate, sum, average, stack or reshape are
// see-through, and so is a product or quotient by something off the path
// (a scaling, matrix products included): 10 - d, -d + 10 and d.sum({0, 1}) take one route. Products
// and powers of the path are one "Prod" (x·x ≡ x.pow(2); mse_loss is the
// mean of a square). A stand-in Σ w·g, with g worked out by hand, reaches w
// through nothing: "X", where the exercise's loss goes through its ops.
class Route {
 public:
  explicit Route(const Tensor& target) : target_(target) {}
  // "" when the graph does not reach the target, "?" past kMaxNodes nodes
  // or kMaxDepth levels: a route that cannot be followed is not the
  // reference's (padding a stand-in's graph with a long chain must not buy
  // it a pass).
  std::string from(const std::shared_ptr<gradlab::autograd::Node>& root) {
    const auto r = at(root.get(), 0);
    return over_ ? std::string("?") : r ? *r : std::string();
  }

 private:
  static constexpr size_t kMaxNodes = 20000, kMaxDepth = 2000;  // (the walk recurses: its stack stays small)
  using Node = gradlab::autograd::Node;

  bool is_target(const Node* n) const {
    if (target_.grad_fn()) return n == target_.grad_fn().get();
    const auto* acc = dynamic_cast<const torch::autograd::AccumulateGrad*>(n);
    return acc && acc->variable.is_same(target_);
  }
  static bool see_through(const std::string& op) {
    static const std::set<std::string> ops = {
        "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0", "RsubBackward1",
        "NegBackward0", "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1", "ViewBackward0",
        "ReshapeAliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "CloneBackward0",
        "AliasBackward0", "ToCopyBackward0", "ExpandBackward0", "StackBackward0", "CatBackward0", "TBackward0",
        "PermuteBackward0", "TransposeBackward0"};
    return ops.count(op) > 0;
  }
  // A matrix product is a product too: x.mm(w) for a 1×1 w, addmm and
  // F::linear (and addcmul, b + x·w fused) scale w by the data as x * w does (red team 16's honest
  // controls took the route Prod{Mm(X)} for the exercise's Prod{X}).
  static bool product(const std::string& op) {
    return op == "MulBackward0" || op == "MulBackward1" || op == "DivBackward0" || op == "DivBackward1" ||
           op == "PowBackward0" || op == "PowBackward1" || op == "MseLossBackward0" || op == "MmBackward0" ||
           op == "AddmmBackward0" || op == "MvBackward0" || op == "BmmBackward0" || op == "DotBackward0" ||
           op == "AddcmulBackward0" || op == "AddcdivBackward0";
  }
  // Sorted, without repeats; a kind's own members folded in: Prod{Prod{X}} is Prod{X}.
  static std::string group(const std::string& kind, const std::vector<std::string>& kids) {
    std::set<std::string> parts;
    for (const std::string& k : kids) {
      if (k.rfind(kind + "{", 0) == 0) {
        // Split the member's own list at its top level.
        int depth = 0;
        size_t from = kind.size() + 1;
        for (size_t i = from; i + 1 < k.size(); ++i) {
          if (k[i] == '{' || k[i] == '(') ++depth;
          if (k[i] == '}' || k[i] == ')') --depth;
          if (k[i] == ',' && depth == 0) parts.insert(k.substr(from, i - from)), from = i + 1;
        }
        parts.insert(k.substr(from, k.size() - 1 - from));
      } else {
        parts.insert(k);
      }
    }
    // (A sum of one route is that route: x² + x³ reaches x through powers.)
    if (kind == "Lin" && parts.size() == 1) return *parts.begin();
    std::string s = kind + "{";
    for (const std::string& p : parts) s += (s.back() == '{' ? "" : ",") + p;
    return s + "}";
  }
  std::optional<std::string> at(const Node* n, size_t depth) {
    if (!n) return std::nullopt;
    if (auto m = memo_.find(n); m != memo_.end()) return m->second;
    if (memo_.size() > kMaxNodes || depth > kMaxDepth) {
      over_ = true;
      return std::nullopt;
    }
    memo_[n] = std::nullopt;  // (a graph has no cycles; this only bounds the work)
    std::optional<std::string> r;
    if (is_target(n)) {
      r.emplace(1, 'X');  // (emplace: GCC 12 warns falsely of an overlap for = "X")
    } else {
      std::vector<std::string> kids;
      for (const auto& e : n->next_edges())
        if (auto k = at(e.function.get(), depth + 1)) kids.push_back(*k);
      const std::string op = n->name();
      if (kids.empty()) r = std::nullopt;
      else if (see_through(op)) r = kids.size() == 1 ? kids[0] : group("Lin", kids);
      else if (product(op)) r = kids.size() == 1 && op.rfind("Pow", 0) != 0 && op != "MseLossBackward0" ? kids[0] : group("Prod", kids);
      else {
        std::string s = op.substr(0, op.find("Backward")) + "(";
        for (size_t i = 0; i < kids.size(); ++i) s += (i ? "," : "") + kids[i];
        r = s + ")";
      }
    }
    memo_[n] = r;
    return r;
  }

  const Tensor& target_;
  std::unordered_map<const Node*, std::optional<std::string>> memo_;
  bool over_ = false;
};

}  // namespace

std::string route_to(const Tensor& target, const std::shared_ptr<gradlab::autograd::Node>& root) {
  return Route(target).from(root);
}

std::unordered_set<const gradlab::autograd::Node*> nodes_under(const gradlab::autograd::Node* root, size_t limit) {
  std::unordered_set<const gradlab::autograd::Node*> seen;
  std::vector<const gradlab::autograd::Node*> stack{root};
  while (!stack.empty() && seen.size() < limit) {
    const auto* n = stack.back();
    stack.pop_back();
    if (!n || !seen.insert(n).second) continue;
    for (const auto& e : n->untaped_next_edges()) stack.push_back(e.function.get());
  }
  return seen;
}

namespace {

// A number in [-1, 1] for element `i` of probe vector `k`: the same in every replay.
double probe_value(uint64_t i, uint64_t k) {
  uint64_t z = 0x9E3779B97F4A7C15ull * (i + 1) + 0xD1B54A32D192ED03ull * (k + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 4503599627370496.0 - 1.0;
}

Tensor probe_vector(const Tensor& like, uint64_t k) {
  std::vector<double> v(static_cast<size_t>(like.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = probe_value(i, k);
  return torch::tensor(v, torch::dtype(torch::kDouble)).reshape(like.sizes());
}

constexpr int64_t kMaxProbeElements = 1 << 16;
constexpr size_t kMaxProbeLeaves = 32, kMaxProbeNodes = 20000;

// The leaves the root's graph reaches (their AccumulateGrad nodes), in the
// order of `candidates`; none when the graph is past kMaxProbeNodes nodes.
std::vector<Tensor> reached_leaves(const Tensor& root, const std::vector<Tensor>& candidates) {
  const auto seen = nodes_under(root.grad_fn().get(), kMaxProbeNodes + 1);
  if (seen.size() > kMaxProbeNodes) return {};  // none past the bound
  std::unordered_set<const gradlab::TensorImpl*> reached;
  for (const auto* n : seen)
    if (const auto* acc = dynamic_cast<const torch::autograd::AccumulateGrad*>(n)) reached.insert(acc->variable.unsafeGetTensorImpl());
  std::vector<Tensor> out;
  for (const Tensor& t : candidates)
    if (reached.count(t.unsafeGetTensorImpl())) out.push_back(t);
  return out;
}

}  // namespace

std::string values_sketch(const Tensor& t) {
  gradlab::autograd::NoGradGuard off;
  const Tensor v = t.detach().to(torch::kDouble);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.9g:%.9g:%.9g", v.sum().item<double>(), (v * probe_vector(v, 5)).sum().item<double>(),
                (v * probe_vector(v, 6)).sum().item<double>());
  return buf;
}

namespace {

// Where the root was probed: every leaf that requires grad when the
// backward runs (reached or not: a root that leaves one out is another
// function of them all), each as its shape and a sketch of its values (their
// sum and two fixed projections), sorted. Compared within a tolerance, so
// that a leaf nudged by 1e-5 is still the reference's point.
std::string point_of(const std::vector<Tensor>& leaves, const MadeAs& made_as) {
  // Past that many, no point is given, and curvature is compared as at the
  // reference's point (many leaves cannot buy a pass).
  if (leaves.size() > 64) return "";
  std::vector<std::string> parts;
  for (const Tensor& l : leaves) {
    if (l.numel() > kMaxProbeElements) continue;
    std::string d;
    for (int64_t s : l.sizes()) d += std::to_string(s) + "x";
    const std::string now = values_sketch(l);
    // "~": not the values it was made with (moved before this backward,
    // whether or not it is moved back after).
    auto made = made_as.find(l.unsafeGetTensorImpl());
    parts.push_back((made != made_as.end() && made->second != now ? "~" : "") + d + ":" + now);
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ";") + p;
  return out;
}

}  // namespace

std::unordered_map<const gradlab::TensorImpl*, std::string> curvature_of(const Tensor& root, const Tensor& given,
                                                                         const std::vector<Tensor>& candidates,
                                                                         const std::vector<Tensor>& grads,
                                                                         const MadeAs& made_as) {
  std::unordered_map<const gradlab::TensorImpl*, std::string> out;
  if (!root.defined() || !root.grad_fn()) return out;
  const std::vector<Tensor> leaves = reached_leaves(root, candidates);
  const std::string point = point_of(candidates, made_as);
  if (leaves.empty() || leaves.size() > kMaxProbeLeaves) return out;
  int64_t elements = 0;
  for (const Tensor& l : leaves) elements += l.numel();
  if (elements > kMaxProbeElements) return out;
  std::vector<Tensor> held;
  for (const Tensor& t : grads) held.push_back(t.grad());
  // Four projections of a Hessian-vector product over the leaves.
  auto projections = [&](const std::vector<Tensor>& hv) {
    gradlab::autograd::NoGradGuard off;
    std::string c;
    for (uint64_t k = 1; k <= 4; ++k) {
      double p = 0.0;
      for (size_t i = 0; i < leaves.size(); ++i)
        if (hv[i].defined()) p += (hv[i].to(torch::kDouble) * probe_vector(leaves[i], k)).sum().item<double>();
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.12g", p);
      c += (c.empty() ? "" : ",") + std::string(buf);
    }
    return point.empty() ? c : c + "#" + point;
  };
  // d/d(leaves) of Σ g·v over `of` with its first-order gradients `g`.
  auto second = [&](const std::vector<Tensor>& of, const std::vector<Tensor>& g) {
    Tensor s;
    for (size_t i = 0; i < of.size(); ++i)
      if (g[i].defined() && g[i].requires_grad()) {
        const Tensor term = (g[i].to(torch::kDouble) * probe_vector(of[i], 0)).sum();
        s = s.defined() ? s + term : term;
      }
    if (!s.defined()) return std::vector<Tensor>(leaves.size());
    return gradlab::autograd::grad({s}, leaves, {}, true, false, true);
  };
  try {
    gradlab::autograd::AutoGradMode on(true);
    // Each leaf: its own row of the Hessian, projected.
    const auto g = gradlab::autograd::grad({root}, leaves, {given}, true, true, true);
    const std::vector<Tensor> hv = second(leaves, g);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!g[i].defined()) continue;  // the root does not reach it
      std::vector<Tensor> row(leaves.size());
      row[i] = hv[i];
      std::string c = projections(row);
      // With other leaves, the leaf's own block too (after ';'): how its
      // gradient moves with it alone, every other leaf held. A check that
      // asks for it ("curvature": "own") lets a program reach more leaves
      // than the reference (a fake left attached) without its cross terms
      // counting, while a stand-in Σ σ(w)·c, c worked out by hand, still
      // curves otherwise than Σ σ(w·x) in w itself (red team 14).
      if (leaves.size() > 1) {
        std::vector<Tensor> own(leaves.size());
        own[i] = second({leaves[i]}, {g[i]})[i];
        const std::string o = projections(own);
        c = c.substr(0, c.find('#')) + ";" + o;
      }
      out[leaves[i].unsafeGetTensorImpl()] = c;
    }
    // Each kept intermediate (retain_grad): how the root's gradient there
    // changes with the leaves. 3q + 6z − 18 has the gradient 3 = z at q,
    // but a constant one where q·z's moves with z. (One at a time: another
    // tensor kept by the program must not change this one's numbers.)
    size_t kept = 0;
    for (const Tensor& t : grads) {
      if (t.is_leaf() || !t.requires_grad() || !t.grad_fn() || ++kept > kMaxProbeLeaves) continue;
      try {
        const auto gt = gradlab::autograd::grad({root}, {t}, {given}, true, true, true);
        if (gt[0].defined()) out[t.unsafeGetTensorImpl()] = projections(second({t}, gt));
      } catch (const std::exception&) {
        // not twice differentiable from here: this one has no curvature to compare
      }
    }
  } catch (const std::exception&) {
    out.clear();  // not twice differentiable here: no curvature to compare
  }
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i].grad().is_same(held[i])) grads[i].mutable_grad() = held[i];
  return out;
}

namespace {

// Whether the program's leaves (`mine`, point_of's) hold the reference's
// (`want`): each of the reference's matched by one of the program's of its
// shape with values within 1e-3. nullopt: not the reference's point; true:
// exactly it; false: near it.
std::optional<bool> same_point(const std::string& mine, const std::string& want) {
  auto split = [](const std::string& s, char sep) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= s.size();) {
      const size_t end = std::min(s.find(sep, at), s.size());
      out.push_back(s.substr(at, end - at));
      at = end + 1;
    }
    return out;
  };
  const auto have = split(mine, ';'), need = split(want, ';');
  std::vector<bool> used(have.size(), false);
  bool exact = true;
  auto unmarked = [](const std::string& p) { return !p.empty() && p[0] == '~' ? p.substr(1) : p; };
  for (const std::string& n0 : need) {
    const std::string n = unmarked(n0);
    if (n.empty()) continue;
    const auto nf = split(n, ':');
    bool found = false;
    for (size_t i = 0; i < have.size() && !found; ++i) {
      const auto hf = split(unmarked(have[i]), ':');
      if (used[i] || hf.size() != nf.size() || hf[0] != nf[0]) continue;
      bool close = true;
      for (size_t k = 1; k < nf.size() && close; ++k) {
        const double x = std::strtod(hf[k].c_str(), nullptr), y = std::strtod(nf[k].c_str(), nullptr);
        close = std::abs(x - y) <= 1e-3 * std::max({1.0, std::abs(x), std::abs(y)});
      }
      if (close) used[i] = found = true, exact = exact && unmarked(have[i]) == n;
    }
    if (!found) return std::nullopt;
  }
  return exact;
}

}  // namespace

bool routes_agree(const std::string& a, const std::string& b, Curvature curvature, OffPoint off_point) {
  const size_t ia = a.find('@'), ib = b.find('@');
  if (a.substr(0, ia) != b.substr(0, ib)) return false;
  if (curvature == Curvature::Off || ib == std::string::npos) return true;  // the reference's unknown: nothing to hold it to
  if (ia == std::string::npos) return false;  // the reference's known, the program's root could not be probed
  auto numbers = [](const std::string& s) {
    std::vector<double> v;
    for (size_t at = 0; at < s.size();) {
      const size_t end = std::min(s.find(',', at), s.size());
      v.push_back(std::strtod(s.substr(at, end - at).c_str(), nullptr));
      at = end + 1;
    }
    return v;
  };
  // At the reference's point (every leaf of its that requires grad, with its
  // values, within 1e-3), curvature is compared at a tolerance of 1e-6; near
  // it, at 1e-2, as it moves a little with the point. Leaves the program adds
  // are allowed for. Off the point, a gradient's curvature is not compared
  // (an honest typo in another leaf moves the point: x = 2 for -2 leaves
  // z's gradient right and its curvature not), but a step's is, at 1e-2: the
  // caller compares it only where the parameter ended right, so an honest
  // program took each step at the reference's point, and one that did not got
  // its gradient another way: a leaf switched off (requires_grad_(false)) for
  // the backward, or a backward run after another parameter had stepped,
  // through a stand-in linear in its leaf (red team 13). A squared error's
  // curvature is the same everywhere.
  const size_t pa = a.find('#', ia), pb = b.find('#', ib);
  double tolerance = 1e-6;
  if (pa != std::string::npos && pb != std::string::npos) {
    const std::string mine = a.substr(pa + 1);
    const auto near = same_point(mine, b.substr(pb + 1));
    // A leaf moved before the backward ("~") is no typo: a typo is in the
    // values a leaf is made with, and stays (red team 14 moved Wh by 0.5
    // under no_grad, fed a hand-worked gradient through a stand-in there,
    // and moved it back).
    const bool moved = mine.find('~') != std::string::npos;
    if (!near && off_point == OffPoint::Skip && !moved) return true;
    if (!near || !*near) tolerance = 1e-2;
  }
  // "row;own" (curvature_of's, where the root reached other leaves too), or
  // "row" alone, which is the own block too.
  auto block = [&](const std::string& s, size_t at, size_t end) {
    const std::string all = s.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    const size_t semi = all.find(';');
    if (semi == std::string::npos) return all;
    return curvature == Curvature::Own ? all.substr(semi + 1) : all.substr(0, semi);
  };
  const auto x = numbers(block(a, ia, pa)), y = numbers(block(b, ib, pb));
  if (x.size() != y.size()) return false;
  double scale = 1e-9;
  for (size_t i = 0; i < x.size(); ++i) scale = std::max({scale, std::abs(x[i]), std::abs(y[i])});
  for (size_t i = 0; i < x.size(); ++i)
    if (std::abs(x[i] - y[i]) > tolerance * scale) return false;
  return true;
}

}  // namespace grader::replay

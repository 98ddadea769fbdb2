#include "replay_route.h"

#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace grader::replay {
namespace {

using Tensor = torch::Tensor;

// How a backward's root reached one tensor, as the checks compare it with
// the reference's: the ops on the paths from the root down to the tensor.
// Ops that only add, subtract, negate, sum, average, stack or reshape are
// see-through, and so is a product or quotient by something off the path
// (a scaling): 10 - d, -d + 10 and d.sum({0, 1}) take one route. Products
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
  static bool product(const std::string& op) {
    return op == "MulBackward0" || op == "MulBackward1" || op == "DivBackward0" || op == "DivBackward1" ||
           op == "PowBackward0" || op == "PowBackward1" || op == "MseLossBackward0";
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

}  // namespace grader::replay

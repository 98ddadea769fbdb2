// Normal forms of backward graphs (see normal_form.h for the rules).
//
// Terms are hash-consed: a table gives each distinct (op, name, operands)
// one number, so a graph that reuses a node many times costs its size, not
// the size of its expansion, and two graphs normalised into one table have
// the same normal form exactly when their roots get the same number.
#include "judge/normal_form.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace grader {
namespace {

constexpr const char* kAccumulate = "torch::autograd::AccumulateGrad";

struct Term {
  std::string op;    // "none", "leaf", "named", "add", "mul", "power", "sum", or a grad_fn name
  std::string name;  // the leaf's or the named tensor's name(s); a leaf's shape when it has none
  std::vector<int> kids;
  // For "add": how many times each kid is an operand (x + x has x twice).
  // Kept as counts, not copies: y = y + y repeated 60 times is 2^60 x's.
  std::vector<uint64_t> counts;
  bool operator<(const Term& o) const {
    return std::tie(op, name, kids, counts) < std::tie(o.op, o.name, o.kids, o.counts);
  }
};

// Counts past this are "many": a sum cannot tell 2^40 copies from 2^41.
constexpr uint64_t kManyOperands = uint64_t{1} << 40;

class Terms {
 public:
  explicit Terms(const Rubric& rubric) : rubric_(rubric) {
    none_ = make({"none", "", {}, {}});
    number_ = make({"number", "", {}, {}});
  }

  int none() const { return none_; }
  const Term& at(int id) const { return terms_[static_cast<size_t>(id)]; }

  // The normal form of a graph's root; -1 for an empty or malformed graph.
  int graph(const json& nodes, const json& tensors) {
    if (!nodes.is_array() || nodes.empty()) return -1;
    std::unordered_map<std::string, const json*> by_id;
    for (const auto& n : nodes)
      if (n.is_object() && n.contains("id") && n["id"].is_string()) by_id[n["id"].get<std::string>()] = &n;
    // Post-order with an explicit stack: a graph is as deep as the student
    // made it.
    std::unordered_map<std::string, int> done;
    std::vector<std::pair<const json*, bool>> stack = {{&nodes[0], false}};
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      stack.pop_back();
      const std::string id = n->value("id", "");
      if (done.count(id)) continue;
      const json& next = n->contains("next") && (*n)["next"].is_array() ? (*n)["next"] : empty_;
      if (!expanded) {
        stack.push_back({n, true});
        for (const auto& e : next) {
          const std::string kid = edge_target(e);
          if (!kid.empty() && !done.count(kid) && by_id.count(kid)) stack.push_back({by_id[kid], false});
        }
        continue;
      }
      std::vector<int> kids;
      for (const auto& e : next) {
        const std::string kid = edge_target(e);
        kids.push_back(kid.empty() || !done.count(kid) ? none_ : done[kid]);
      }
      done[id] = node(*n, std::move(kids), tensors);
    }
    return done[nodes[0].value("id", "")];
  }

  std::string text(int id, size_t budget = 4096) const {
    std::string out;
    write(id, out, budget);
    return out;
  }

 private:
  static std::string edge_target(const json& e) {
    if (!e.is_array() || e.empty() || !e[0].is_string()) return "";
    return e[0].get<std::string>();
  }

  int make(Term t) {
    auto it = index_.find(t);
    if (it != index_.end()) return it->second;
    const int id = static_cast<int>(terms_.size());
    index_.emplace(t, id);
    terms_.push_back(std::move(t));
    return id;
  }

  // The names a node stands for, joined: an alias carries two.
  static std::string names_of(const json& n) {
    std::string s;
    if (!n.contains("tensors") || !n["tensors"].is_array()) return s;
    std::vector<std::string> v;
    for (const auto& t : n["tensors"])
      if (t.is_string()) v.push_back(t.get<std::string>());
    std::sort(v.begin(), v.end());
    for (const auto& x : v) s += (s.empty() ? "" : "=") + x;
    return s;
  }

  // Whether every named result of this node is a scalar (a sum over all dims).
  static bool scalar_result(const json& n, const json& tensors) {
    if (!tensors.is_object() || !n.contains("tensors") || !n["tensors"].is_array() || n["tensors"].empty())
      return false;
    for (const auto& t : n["tensors"]) {
      if (!t.is_string() || !tensors.contains(t.get<std::string>())) return false;
      const json& d = tensors[t.get<std::string>()];
      if (!d.is_object() || !d.contains("shape") || !d["shape"].is_array() || !d["shape"].empty()) return false;
    }
    return true;
  }

  int node(const json& n, std::vector<int> kids, const json& tensors) {
    const std::string gf = n.value("name", "");
    const std::string names = names_of(n);
    if (gf == kAccumulate) {
      // A leaf is its name; one without a name is known only by its shape.
      std::string id = names;
      if (id.empty()) id = "?" + (n.contains("shape") ? n["shape"].dump() : std::string());
      return make({"leaf", id, {}, {}});
    }
    int t = op(gf, std::move(kids), scalar_result(n, tensors));
    // A named result stays a node of its own: flattening stops at it.
    return names.empty() ? t : make({"named", names, {t}, {}});
  }

  int op(const std::string& gf, std::vector<int> kids, bool scalar) {
    if (gf == "AddBackward0" && kids.size() == 2) return add(kids);
    if (gf == "AddBackward1" && kids.size() == 1) return add({kids[0], none_});  // tensor + number
    if (gf == "MulBackward0" && kids.size() == 2) return mul(kids);
    if (gf == "MulBackward1" && kids.size() == 1) return mul({kids[0], number_});  // tensor * number
    if (gf == "PowBackward0" && kids.size() == 1) return power(kids[0]);
    // x.pow(torch::tensor(2.)): a tensor exponent that carries no gradient is a number.
    if (gf == "PowBackward1" && kids.size() == 2 && kids[1] == none_) return power(kids[0]);
    // A difference is a sum with a negated operand, however it is spelled:
    // 10 - d (rsub), -d + 10, torch::sub(a, b), a - 3.
    if (gf == "NegBackward0" && kids.size() == 1) return neg(kids[0]);
    if (gf == "SubBackward0" && kids.size() == 2) return add({kids[0], neg(kids[1])});
    if (gf == "SubBackward1" && kids.size() == 1) return add({kids[0], none_});  // tensor - number
    if (gf == "RsubBackward1" && kids.size() == 1) return add({none_, neg(kids[0])});  // number - tensor
    if (gf == "RsubBackward0" && kids.size() == 2) return add({kids[1], neg(kids[0])});  // rsub(a, b) = b - a
    const std::string name = reduction_name(gf, scalar);
    if (name == "SumBackward0" && kids.size() == 1) return sum(kids[0]);
    return make({representative(name), "", std::move(kids), {}});
  }

  // The name standing for a group of accepted alternatives: its first.
  std::string representative(const std::string& gf) const {
    for (const auto& group : rubric_.alternatives)
      for (const auto& g : group)
        if (g == gf) return group.front();
    return gf;
  }

  // Operands of a sum or a product with how often each occurs, the unnamed
  // inner ones of the same kind spliced in, in one order.
  std::map<int, uint64_t> flat(const std::vector<int>& kids, const std::vector<uint64_t>& counts,
                               const std::string& kind) const {
    std::map<int, uint64_t> out;
    auto put = [&](int k, uint64_t c) { out[k] = std::min(kManyOperands, out[k] + std::min(c, kManyOperands)); };
    for (size_t i = 0; i < kids.size(); ++i) {
      const uint64_t c = i < counts.size() ? counts[i] : 1;
      const Term& t = at(kids[i]);
      if (t.op != kind) {
        put(kids[i], c);
        continue;
      }
      for (size_t j = 0; j < t.kids.size(); ++j)
        put(t.kids[j], std::min(kManyOperands, c * std::min<uint64_t>(t.counts.empty() ? 1 : t.counts[j], 1u << 20)));
    }
    return out;
  }

  int add(const std::vector<int>& kids, const std::vector<uint64_t>& counts = {}) {
    Term t{"add", "", {}, {}};
    const auto operands = flat(kids, counts, "add");
    // A constant added to what carries a gradient changes no gradient and no
    // graph: 0 - Σs is -Σs (red team 16), x + 0 is x. (The value checks
    // tell 10 - d from -d.)
    const bool varies = std::any_of(operands.begin(), operands.end(), [&](const auto& kc) { return kc.first != none_; });
    for (const auto& [k, c] : operands)
      if (!(varies && k == none_)) t.kids.push_back(k), t.counts.push_back(c);
    if (t.kids.size() == 1 && t.counts[0] == 1) return t.kids[0];
    return make(std::move(t));
  }

  int mul(const std::vector<int>& kids) {
    // Factors with one base (x, x, x.pow(2)) become one power of it.
    std::map<int, int> count;  // base -> how many factors, powers counted twice
    std::vector<int> order;
    for (const auto& [k, c] : flat(kids, {}, "mul")) {
      const bool pw = at(k).op == "power";
      const int base = pw ? at(k).kids[0] : k;
      if (k == number_ && count.count(base)) continue;  // numbers multiply into one
      if (k == number_) {
        count[base] = 1;
        order.push_back(k);
        continue;
      }
      if (k == none_) {  // a product of constants is one constant
        if (std::find(order.begin(), order.end(), none_) == order.end()) order.push_back(k);
        continue;
      }
      if (!count.count(base)) order.push_back(base);
      count[base] += pw || c > 1 ? 2 : 1;
    }
    std::vector<int> factors;
    for (int b : order) factors.push_back(b != none_ && b != number_ && count[b] >= 2 ? power(b) : b);
    if (factors.size() == 1) return factors[0];
    std::sort(factors.begin(), factors.end());
    factors.erase(std::unique(factors.begin(), factors.end()), factors.end());
    return make({"mul", "", factors, {}});
  }

  // A negation is a product with a number: -x ≡ -1.0 * x ≡ x * -1 (the
  // number is the value checks' business, as everywhere here). It spreads
  // over a sum, so -(d - 10) is 10 - d (red team 16: an honest
  // L = -(forward() - 10) lost its graph check and the root checks with it).
  int neg(int operand) {
    if (operand == none_) return none_;
    if (at(operand).op == "add") {
      const Term inner = at(operand);  // a copy: neg() below grows the table
      std::vector<int> parts;
      for (int k : inner.kids) parts.push_back(neg(k));
      return add(parts, inner.counts);
    }
    return mul({operand, number_});
  }

  int power(int base) {
    if (at(base).op == "power") return base;  // (x²)² is a power of x
    return make({"power", "", {base}, {}});
  }

  int sum(int operand) {
    if (operand == none_) return none_;
    // The sum of a sum over some dimensions is the sum of it all:
    // L.sum(0).sum() ≡ L.sum().
    if (at(operand).op == "SumBackward1" && at(operand).kids.size() == 1) return sum(at(operand).kids[0]);
    // Σ(c·x) = c·Σx for a number c (so Σ(−x) = −Σx); not for a tensor
    // that needs no gradient: Σ(w·x) is no multiple of Σw.
    if (at(operand).op == "mul") {
      const Term inner = at(operand);  // a copy: the calls below grow the table
      if (std::find(inner.kids.begin(), inner.kids.end(), number_) != inner.kids.end()) {
        std::vector<int> rest;
        for (int k : inner.kids)
          if (k != number_) rest.push_back(k);
        return mul({sum(rest.size() == 1 ? rest[0] : mul(rest)), number_});
      }
    }
    const bool distributes = std::find(rubric_.graph_rules.begin(), rubric_.graph_rules.end(), "sum_distributes") !=
                             rubric_.graph_rules.end();
    if (distributes && at(operand).op == "add") {
      const Term inner = at(operand);  // a copy: sum() below grows the table
      std::vector<int> parts;
      for (int k : inner.kids) parts.push_back(sum(k));
      return add(parts, inner.counts);
    }
    return make({"sum", "", {operand}, {}});
  }

  void write(int id, std::string& out, size_t budget) const {
    if (out.size() > budget) {
      out += "…";
      return;
    }
    const Term& t = at(id);
    if (t.op == "none") out += "None";
    else if (t.op == "number") out += "Number";
    else if (t.op == "leaf") out += t.name;
    else if (t.op == "named") {
      out += t.name + "=";
      write(t.kids[0], out, budget);
    } else {
      static const std::map<std::string, std::string> shown = {
          {"add", "Add"}, {"mul", "Mul"}, {"power", "Pow"}, {"sum", "Sum"}, {"neg", "Neg"}};
      const bool multiset = t.op == "add" || t.op == "mul";
      out += (shown.count(t.op) ? shown.at(t.op) : t.op) + (multiset ? "{" : "(");
      for (size_t i = 0; i < t.kids.size(); ++i) {
        if (i) out += ", ";
        if (i < t.counts.size() && t.counts[i] > 1)
          out += (t.counts[i] >= kManyOperands ? std::string("many") : std::to_string(t.counts[i])) + "×";
        write(t.kids[i], out, budget);
      }
      out += multiset ? "}" : ")";
    }
  }

  const Rubric& rubric_;
  std::vector<Term> terms_;
  std::map<Term, int> index_;
  int none_ = 0;
  int number_ = 0;  // a number an op was given (x * 2, -x)
  const json empty_ = json::array();
};

}  // namespace

std::string reduction_name(const std::string& grad_fn, bool scalar_result) {
  if (scalar_result && grad_fn == "SumBackward1") return "SumBackward0";
  if (scalar_result && grad_fn == "MeanBackward1") return "MeanBackward0";
  return grad_fn;
}

bool same_normal_form(const json& student, const json& student_tensors, const json& reference,
                      const json& reference_tensors, const Rubric& rubric) {
  Terms terms(rubric);
  const int s = terms.graph(student, student_tensors);
  const int r = terms.graph(reference, reference_tensors);
  return s >= 0 && s == r;
}

std::string normal_form_text(const json& graph, const json& tensors, const Rubric& rubric) {
  Terms terms(rubric);
  const int id = terms.graph(graph, tensors);
  return id < 0 ? "no graph" : terms.text(id);
}

}  // namespace grader

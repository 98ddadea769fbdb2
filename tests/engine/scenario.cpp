#include "scenario.h"

#include <algorithm>
#include <unordered_map>

namespace ref {

Scenario::Scenario(std::string case_id, const json& db)
    : case_id_(std::move(case_id)), facts_(db["cases"].at(case_id_)["facts"]) {}

Scenario& Scenario::var(const std::string& name, torch::Tensor& t) {
  vars_[name] = &t;
  return *this;
}
Scenario& Scenario::run(const std::string& label, std::function<void()> fn) {
  runs_[label] = std::move(fn);
  return *this;
}
Scenario& Scenario::value(const std::string& label, std::function<json()> fn) {
  values_[label] = std::move(fn);
  return *this;
}
Scenario& Scenario::value_tensor(const std::string& label, std::function<torch::Tensor()> fn) {
  tensor_values_[label] = std::move(fn);
  return *this;
}
Scenario& Scenario::expr(const std::string& e, std::function<torch::Tensor()> fn) {
  exprs_[e] = std::move(fn);
  return *this;
}
Scenario& Scenario::skip(const std::string& label, const std::string& why) {
  skipped_[label] = why;
  return *this;
}

bool json_close(const json& got, const json& want) {
  if (want.is_number() && got.is_number()) return close(got.get<double>(), want.get<double>());
  if (want.is_array() && got.is_array()) {
    if (want.size() != got.size()) return false;
    for (size_t i = 0; i < want.size(); ++i)
      if (!json_close(got[i], want[i])) return false;
    return true;
  }
  if (want.is_object() && got.is_object()) {
    if (want.size() != got.size()) return false;
    for (const auto& [k, v] : want.items())
      if (!got.contains(k) || !json_close(got[k], v)) return false;
    return true;
  }
  return got == want;
}

// The oracle's graph record: nodes numbered in first-visit order of a
// depth-first walk; a shared node is expanded again at every visit, keeping
// its first id; AccumulateGrad nodes name their leaf by the case's variable.
json Scenario::graph_record(const torch::Tensor& root) const {
  if (!root.grad_fn()) return nullptr;
  std::unordered_map<const torch::autograd::Node*, int> ids;
  std::function<json(const std::shared_ptr<torch::autograd::Node>&)> visit =
      [&](const std::shared_ptr<torch::autograd::Node>& n) -> json {
    auto [it, fresh] = ids.emplace(n.get(), static_cast<int>(ids.size()));
    (void)fresh;
    json r = {{"name", n->name()}, {"id", it->second}};
    if (auto* acc = dynamic_cast<torch::autograd::AccumulateGrad*>(n.get())) {
      json name = nullptr;
      for (const auto& [vn, t] : vars_)
        if (t->defined() && t->is_same(acc->variable)) name = vn;
      r["variable"] = name;
      r["variable_shape"] = acc->variable.sizes().vec();
    }
    json next = json::array();
    for (const auto& e : n->next_edges())
      next.push_back({{"input_nr", e.input_nr}, {"node", e.function ? visit(e.function) : json(nullptr)}});
    r["next"] = next;
    return r;
  };
  return visit(root.grad_fn());
}

void Scenario::play() {
  std::vector<std::pair<std::string, const json*>> order;
  for (const auto& [label, rec] : facts_.items()) order.emplace_back(label, &rec);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return (*a.second)["seq"] < (*b.second)["seq"]; });
  for (const auto& [label, recp] : order) {
    const json& rec = *recp;
    const std::string kind = rec["kind"];
    INFO("case " << case_id_ << ", fact " << label << " (" << kind << ")");
    if (skipped_.count(label)) continue;
    if (kind == "note") continue;
    if (kind == "run") {
      REQUIRE(runs_.count(label));
      check_run(rec, runs_.at(label));
    } else if (kind == "tensor") {
      const std::string e = rec["expr"];
      if (exprs_.count(e)) {
        check_tensor(rec, exprs_.at(e)());
      } else {
        INFO("no variable or expression bound for " << e);
        REQUIRE(vars_.count(e));
        check_tensor(rec, *vars_.at(e));
      }
    } else if (kind == "value") {
      gradlab::WarningCollector warnings;
      if (tensor_values_.count(label)) {
        check_tensor(rec["result"], tensor_values_.at(label)());
      } else {
        REQUIRE(values_.count(label));
        const json got = values_.at(label)();
        INFO("got " << got.dump() << ", want " << rec["result"].dump());
        CHECK(json_close(got, rec["result"]));
      }
      if (rec.contains("warnings")) CHECK(warnings.warnings().size() == rec["warnings"].size());
    } else if (kind == "graph") {
      const std::string e = rec["expr"];
      REQUIRE(vars_.count(e));
      const json got = graph_record(*vars_.at(e));
      INFO("got " << got.dump() << "\nwant " << rec["root"].dump());
      CHECK(got == rec["root"]);
    } else {
      FAIL("unknown fact kind " << kind);
    }
  }
}

}  // namespace ref

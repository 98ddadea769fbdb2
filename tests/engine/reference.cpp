#include "reference.h"

#include <cmath>
#include <fstream>
#include <sstream>

#ifndef GRADLAB_REFERENCE_DIR
#error "GRADLAB_REFERENCE_DIR must point at tests/reference"
#endif

namespace ref {

namespace {
json load(const char* name) {
  std::ifstream in(std::string(GRADLAB_REFERENCE_DIR) + "/" + name);
  if (!in) throw std::runtime_error(std::string("cannot open reference file ") + name);
  return json::parse(in);
}
double decode(const json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return v.get<double>();
}
void flatten_into(const json& v, std::vector<double>& out) {
  if (v.is_array()) {
    for (const auto& e : v) flatten_into(e, out);
  } else {
    out.push_back(decode(v));
  }
}
std::string python_dtype(torch::ScalarType t) { return gradlab::python_name(t); }
}  // namespace

const json& cpp() {
  static const json j = load("libtorch-cpp.json");
  return j;
}
const json& py() {
  static const json j = load("pytorch-golden.json");
  return j;
}

const json& fact(const json& db, const std::string& case_id, const std::string& label) {
  INFO("case " << case_id << " / " << label);
  REQUIRE(db["cases"].contains(case_id));
  const json& c = db["cases"][case_id]["facts"];
  REQUIRE(c.contains(label));
  return c[label];
}

std::vector<double> flat(const json& v) {
  std::vector<double> out;
  flatten_into(v, out);
  return out;
}

std::vector<double> flat(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

bool close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

namespace {
void check_values(const json& want, const torch::Tensor& got) {
  const auto w = flat(want);
  const auto g = flat(got);
  REQUIRE(g.size() == w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
    CHECK(close(g[i], w[i]));
  }
}
}  // namespace

json next_edges_record(const std::shared_ptr<torch::autograd::Node>& fn) {
  json r = json::array();
  if (!fn) return r;
  for (const auto& e : fn->next_edges())
    r.push_back(json::array({e.function ? json(e.function->name()) : json(nullptr), e.input_nr}));
  return r;
}

json walk_lines(const torch::Tensor& t) {
  json r = json::array();
  std::istringstream in(gradlab::walk_graph(t));
  for (std::string line; std::getline(in, line);) r.push_back(line);
  return r;
}

void check_tensor(const json& rec, const torch::Tensor& t) {
  INFO("tensor fact: " << rec.value("expr", std::string("?")));
  REQUIRE(t.defined() == rec.value("defined", true));
  if (!t.defined()) return;
  CHECK(t.sizes().vec() == rec["shape"].get<std::vector<int64_t>>());
  CHECK(python_dtype(t.scalar_type()) == rec["dtype"].get<std::string>());
  CHECK(t.requires_grad() == rec["requires_grad"].get<bool>());
  CHECK(t.is_leaf() == rec["is_leaf"].get<bool>());
  if (rec["grad_fn"].is_null()) {
    CHECK(t.grad_fn() == nullptr);
  } else {
    REQUIRE(t.grad_fn() != nullptr);
    CHECK(t.grad_fn()->name() == rec["grad_fn"].get<std::string>());
    CHECK(next_edges_record(t.grad_fn()) == rec["next_functions"]);
  }
  CHECK(t.retains_grad() == rec["retains_grad"].get<bool>());
  CHECK(t._version() == rec["version"].get<int64_t>());
  CHECK(t.is_view() == rec["is_view"].get<bool>());
  if (rec.contains("output_nr")) CHECK(t.output_nr() == rec["output_nr"].get<uint32_t>());
  if (!rec["value"].is_null()) check_values(rec["value"], t);
  // Reading .grad of a non-leaf warns; the warnings are part of the fact.
  gradlab::WarningCollector warnings;
  const torch::Tensor& g = t.grad();
  CHECK(warnings.warnings().size() == rec["grad_access_warnings"].size());
  if (rec["grad"].is_null()) {
    CHECK_FALSE(g.defined());
  } else {
    REQUIRE(g.defined());
    check_values(rec["grad"]["value"], g);
    if (rec["grad"].contains("shape")) CHECK(g.sizes().vec() == rec["grad"]["shape"].get<std::vector<int64_t>>());
  }
}

void check_run(const json& rec, const std::function<void()>& fn) {
  INFO("statement: " << rec["code"].get<std::string>());
  bool raised = false;
  std::string type, message;
  gradlab::WarningCollector warnings;
  try {
    fn();
  } catch (const c10::Error& e) {
    raised = true;
    type = "c10::Error";
    message = e.what_without_backtrace();
  } catch (const std::runtime_error& e) {
    raised = true;
    type = "std::runtime_error";
    message = e.what();
  }
  REQUIRE(raised == rec["raised"].get<bool>());
  if (rec.contains("warnings")) {
    std::vector<std::string> want, got;
    for (const auto& w : rec["warnings"]) want.push_back(w["message"]);
    for (const auto& w : warnings.warnings()) got.push_back(w.msg());
    CHECK(got == want);
  }
  if (raised) {
    CHECK(type == rec["exception"]["type"].get<std::string>());
    CHECK(message == rec["exception"]["message"].get<std::string>());
  }
}

}  // namespace ref

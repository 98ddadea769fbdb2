#include "judge/checks.h"
#include "judge/checks_internal.h"
#include "judge/normal_form.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace grader {

using namespace check_detail;

const json* named(const json& snap, const std::string& name) {
  if (!snap.contains("tensors") || !snap["tensors"].contains(name)) return nullptr;
  return &snap["tensors"][name];
}

bool check_detail::target_unnamed(const json& student, const std::string& name, const std::string& role, Outcome& o) {
  if (name.empty() || named(student, name)) return false;
  o.pass = false;
  // After an exception the starter's lab::Names has still named its tensors
  // (it names them however the function ends): a name missing then was never
  // given, and the check is one the program did not reach.
  o.unreached = student.value("status", "") != "ok";
  o.found = name + " not named";
  o.message = "the program did not name " + name + " (lab.name(\"" + name + "\", " + name + ")), so the grader cannot see " +
              role + ": keep the starter's lab::Names line (or lab.name calls the program reaches)";
  return true;
}

replay::Curvature check_detail::curvature_asked(const Check& c) {
  const json v = c.spec.value("curvature", json(false));
  if (v.is_string()) return replay::Curvature::Own;  // the rubric's reader allows "own" alone
  return v.get<bool>() ? replay::Curvature::Row : replay::Curvature::Off;
}

void check_detail::rubric_bug(const Check& c, const std::string& what) {
  throw std::logic_error("check \"" + c.id + "\": " + what);
}

namespace {

double as_double(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v;
    if (s == "nan") return NAN;
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  return NAN;
}

}  // namespace

std::string check_detail::format_number(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  const double d = as_double(v);
  if (d == std::floor(d) && std::abs(d) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", d);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", d);
  return buf;
}

// Where two outputs part: the first line that differs, quoted, so that a
// missing space or a wrong depth is visible without diffing by eye.
std::string check_detail::first_difference(const std::string& found, const std::string& expected) {
  std::istringstream fs(found), es(expected);
  std::string f, e;
  for (int line = 1;; ++line) {
    const bool hf = static_cast<bool>(std::getline(fs, f)), he = static_cast<bool>(std::getline(es, e));
    if (!hf && !he) return "the outputs differ";
    const std::string n = "line " + std::to_string(line);
    if (!hf) return n + " is missing; expected \"" + e + "\"";
    if (!he) return n + " is \"" + f + "\", but the reference's output ends before it";
    if (f != e) return n + " is \"" + f + "\", expected \"" + e + "\"";
  }
}

std::string check_detail::normalise_output(const std::string& s) {
  std::istringstream in(s);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '\t')) line.pop_back();
    out += line + "\n";
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

namespace check_detail {

// A literal from a rubric ("expected": 3 or [[1, 2], [3, 4]]) as values + shape.
void flatten_literal(const json& lit, json& values, json& shape) {
  values = json::array();
  shape = json::array();
  if (!lit.is_array()) {
    values.push_back(lit);
    return;
  }
  std::function<void(const json&, size_t)> walk = [&](const json& a, size_t depth) {
    if (a.is_array()) {
      if (shape.size() == depth) shape.push_back(a.size());
      for (const auto& e : a) walk(e, depth + 1);
    } else {
      values.push_back(a);
    }
  };
  walk(lit, 0);
}


std::string missing_name(const std::string& name) {
  return "the exercise did not name a tensor \"" + name + "\" (lab.name(\"" + name + "\", " + name + "))";
}

std::string yes_no(const json& b) { return b.is_boolean() ? (b.get<bool>() ? "true" : "false") : b.dump(); }

const json* record(const json& snap, const std::string& label) {
  if (!snap.contains("records")) return nullptr;
  for (const auto& r : snap["records"])
    if (r.value("label", "") == label) return &r;
  return nullptr;
}

// One field of a recorded tensor as a student reads it: grad_fn=None,
// is_leaf=true, shape=[3,1].
std::string field_text(const json& t, const std::string& f) {
  if (f == "values") return format_values(t["values"], t["shape"]);
  const json& v = t.contains(f) ? t[f] : json(nullptr);
  if (v.is_null()) return f + "=None";
  if (v.is_string()) return f + "=" + v.get<std::string>();
  return f + "=" + yes_no(v);
}

// A record as text; for a snapshot, the fields a check compares (its values
// unless the check says otherwise).
std::string record_text(const json* r, const std::vector<std::string>& fields) {
  if (!r) return "nothing recorded";
  const std::string kind = r->value("kind", "");
  if (kind == "error") return "error: " + r->value("message", "");
  if (kind == "no_error") return "no error";
  if (kind == "value") return format_number((*r)["value"]);
  const json& t = (*r)["tensor"];
  if (!t.value("defined", false)) return "undefined";
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ", ") + field_text(t, f);
  return out;
}

// The first line of an error message: what a student recognises, without
// the hint paragraphs PyTorch appends.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A one-element tensor where the reference has a scalar: [1], [1, 1], ...
bool one_element_for_scalar(const json& found_shape, const json& exp_shape) {
  if (!exp_shape.is_array() || !exp_shape.empty() || !found_shape.is_array() || found_shape.empty()) return false;
  for (const auto& d : found_shape)
    if (d != 1) return false;
  return true;
}

Outcome tensor_values(const json& found_values, const json& found_shape, const json& exp_values,
                      const json& exp_shape, const Tolerance& tol) {
  Outcome o;
  o.expected = format_values(exp_values, exp_shape);
  o.found = format_values(found_values, found_shape);
  if (found_shape != exp_shape && !(tol.one_element_is_scalar && one_element_for_scalar(found_shape, exp_shape))) {
    o.message = "the shape is " + found_shape.dump() + ", expected " + exp_shape.dump();
    return o;
  }
  o.pass = close(found_values, exp_values, tol);
  if (!o.pass) o.message = "the values differ beyond rtol " + format_number(tol.rtol) + ", atol " + format_number(tol.atol);
  return o;
}

Outcome check_value(const Check& c, const json& t, const json* ref) {
  json ev, es;
  if (c.spec.contains("expected")) {
    flatten_literal(c.spec["expected"], ev, es);
  } else {
    if (!ref) rubric_bug(c, "the reference did not name \"" + c.spec["tensor"].get<std::string>() + "\"");
    ev = (*ref)["values"], es = (*ref)["shape"];
  }
  if (!t.value("defined", false)) return {false, format_values(ev, es), "undefined", "the tensor is undefined"};
  return tensor_values(t["values"], t["shape"], ev, es, c.tol);
}

// Whether a backward ran at all: some named tensor holds a gradient.
bool some_gradient(const json& student) {
  if (!student.contains("tensors") || !student["tensors"].is_object()) return false;
  for (const auto& [_, t] : student["tensors"].items())
    if (t.is_object() && t.contains("grad") && !t["grad"].is_null()) return true;
  return false;
}

// Whether `name` is a node of the backward graph of another named tensor
// that a backward may have started from or passed through: one that is not
// itself a retaining non-leaf left without a gradient (q = p + y computed
// beside f, never reached, does not make p reached).
bool on_another_graph(const json& student, const std::string& name) {
  if (!student.contains("graphs") || !student["graphs"].is_object()) return false;
  for (const auto& [root, g] : student["graphs"].items()) {
    if (root == name || !g.is_array()) continue;
    const json* r = named(student, root);
    if (r && !r->value("is_leaf", true) && r->value("retains_grad", false) &&
        (!r->contains("grad") || (*r)["grad"].is_null()))
      continue;
    for (const auto& n : g)
      if (n.is_object() && n.contains("tensors") && n["tensors"].is_array())
        for (const auto& t : n["tensors"])
          if (t == name) return true;
  }
  return false;
}

Outcome check_grad(const Check& c, const std::string& name, const json& t, const json* ref, bool backward_ran,
                   bool on_graph) {
  json expected_grad;  // null: must be undefined
  if (c.spec.contains("expected")) {
    if (!c.spec["expected"].is_null()) {
      json ev, es;
      flatten_literal(c.spec["expected"], ev, es);
      expected_grad = {{"shape", es}, {"values", ev}};
    }
  } else {
    if (!ref) rubric_bug(c, "the reference did not name \"" + name + "\"");
    expected_grad = (*ref)["grad"];
  }
  const json& g = t.contains("grad") ? t["grad"] : json();
  if (expected_grad.is_null()) {
    if (g.is_null()) return {true, "undefined", "undefined", ""};
    return {false, "undefined", format_values(g["values"], g["shape"]),
            name + ".grad() should be undefined, but it holds a gradient"};
  }
  if (g.is_null()) {
    std::string why = name + ".grad() is undefined";
    if (t.value("defined", false) && !t.value("is_leaf", true) && !t.value("retains_grad", false))
      why += ": " + name + " is not a leaf and does not retain its gradient";
    else if (t.value("defined", false) && !t.value("requires_grad", false))
      why += ": " + name + " does not require grad";
    else if (t.value("defined", false) && !t.value("is_leaf", true) && backward_ran && on_graph)
      // It retains, lies on a graph a backward ran through, and still
      // holds nothing: retain_grad() keeps the gradients of later passes.
      why += ": " + name + ".retain_grad() was called, but after the backward pass (a non-leaf keeps only the "
             "gradients of passes run after retain_grad())";
    else if (t.value("defined", false) && !t.value("is_leaf", true) && backward_ran)
      why += ": " + name + " is not part of the graph backward ran through (was it computed separately from the "
             "tensor backward started from?)";
    else if (!backward_ran)
      why += ": no backward ran (no named tensor holds a gradient)";
    else
      why += ": no backward reached it";
    return {false, format_values(expected_grad["values"], expected_grad["shape"]), "undefined", why, !backward_ran};
  }
  return tensor_values(g["values"], g["shape"], expected_grad["values"], expected_grad["shape"], c.tol);
}

Outcome check_field(const Check& c, const std::string& name, const json& t, const json* ref) {
  json expected;
  if (c.spec.contains("expected")) {
    expected = c.spec["expected"];
  } else {
    if (!ref) rubric_bug(c, "the reference did not name \"" + name + "\"");
    expected = (*ref)[c.kind];
  }
  const json& found = t.contains(c.kind) ? t[c.kind] : json();
  Outcome o;
  o.pass = found == expected;
  auto show = [](const json& v) { return v.is_boolean() ? yes_no(v) : v.is_string() ? v.get<std::string>() : v.dump(); };
  o.expected = name + "." + c.kind + " = " + show(expected);
  o.found = name + "." + c.kind + " = " + show(found);
  return o;
}

// The spellings of a subtraction from a number, as one name: 10 - d records
// SubBackward0 in C++, torch::rsub(d, 10) RsubBackward1 (as 10 - d does in
// Python), and -d + 10 an AddBackward1 over a NegBackward0. The function and
// its gradient are the same; the value checks tell 10 - d from d - 10.
std::string subtraction_name(const std::string& grad_fn, const json* graph) {
  if (grad_fn == "RsubBackward0" || grad_fn == "RsubBackward1") return "SubBackward0";
  if (!graph || !graph->is_array() || graph->empty()) return grad_fn;
  // The names of the root's inputs (its next nodes).
  std::map<std::string, std::string> names;
  for (const auto& n : *graph) names[n.value("id", "")] = n.value("name", "");
  std::vector<std::string> inputs;
  for (const auto& e : (*graph)[0].value("next", json::array()))
    if (e.is_array() && !e.empty() && e[0].is_string()) inputs.push_back(names[e[0].get<std::string>()]);
  // -d + 10: a sum with a negated operand.
  if ((grad_fn == "AddBackward0" || grad_fn == "AddBackward1") &&
      std::find(inputs.begin(), inputs.end(), "NegBackward0") != inputs.end())
    return "SubBackward0";
  // -(d - 10), a negated difference (red team 16's honest control).
  if (grad_fn == "NegBackward0" && inputs.size() == 1 &&
      (inputs[0] == "SubBackward1" || subtraction_name(inputs[0], nullptr) == "SubBackward0"))
    return "SubBackward0";
  return grad_fn;
}

Outcome check_grad_fn(const Check& c, const Rubric& rubric, const std::string& name, const json& t, const json* ref,
                      const json* graph) {
  std::vector<std::string> accept;
  if (c.spec.contains("expected")) {
    if (!c.spec["expected"].is_null()) accept.push_back(c.spec["expected"]);
  } else {
    if (!ref) rubric_bug(c, "the reference did not name \"" + name + "\"");
    if (!(*ref)["grad_fn"].is_null()) accept.push_back((*ref)["grad_fn"]);
  }
  for (const auto& a : c.spec.value("accept", json::array())) accept.push_back(a);
  const json& f = t.contains("grad_fn") ? t["grad_fn"] : json();
  Outcome o;
  std::string want;
  for (const auto& a : accept) want += (want.empty() ? "" : " or ") + a;
  o.expected = accept.empty() ? "no grad_fn" : want;
  o.found = f.is_null() ? "no grad_fn" : f.get<std::string>();
  if (accept.empty()) {
    o.pass = f.is_null();
  } else if (!f.is_null()) {
    // A sum (mean) over every dimension of a tensor is sum() (mean()),
    // whichever of PyTorch's two names its spelling recorded.
    const bool scalar = t.contains("shape") && t["shape"].is_array() && t["shape"].empty();
    const std::string found = reduction_name(f.get<std::string>(), scalar);
    for (const auto& a : accept) o.pass |= rubric.equivalent(found, reduction_name(a, scalar));
    for (const auto& a : accept)
      o.pass |= a == "SubBackward0" && subtraction_name(f.get<std::string>(), graph) == "SubBackward0";
  }
  if (!o.pass && f.is_null())
    o.message = name + " has no grad_fn: it is a leaf, or nothing it was computed from requires grad";
  return o;
}

Outcome check_graph(const Check& c, const Rubric& rubric, const std::string& name, const json& student,
                    const json& reference) {
  if (!reference.contains("graphs") || !reference["graphs"].contains(name))
    rubric_bug(c, "the reference has no graph for \"" + name + "\"");
  const json& rg = reference["graphs"][name];
  Outcome o;
  o.expected = graph_expression(rg);
  if (!student.contains("graphs") || !student["graphs"].contains(name)) {
    o.found = "no graph";
    o.message = name + " has no grad_fn, so there is no backward graph to follow from it";
    return o;
  }
  const json& sg = student["graphs"][name];
  o.found = graph_expression(sg);
  GraphDiff d = compare_graphs(sg, rg, rubric, student.value("tensors", json()), reference.value("tensors", json()));
  o.pass = d.differences.empty();
  for (size_t i = 0; i < d.differences.size() && i < 3; ++i) o.message += (i ? "; " : "") + d.differences[i];
  if (d.differences.size() > 3) o.message += "; and " + std::to_string(d.differences.size() - 3) + " more";
  return o;
}

}  // namespace check_detail

bool close(const json& found, const json& expected, const Tolerance& tol) {
  if (!found.is_array() || !expected.is_array() || found.size() != expected.size()) return false;
  for (size_t i = 0; i < found.size(); ++i) {
    const double a = as_double(found[i]), b = as_double(expected[i]);
    if (std::isnan(a) || std::isnan(b)) {
      if (!(std::isnan(a) && std::isnan(b))) return false;
      continue;
    }
    if (std::isinf(a) || std::isinf(b)) {
      if (a != b) return false;
      continue;
    }
    if (!(std::abs(a - b) <= tol.atol + tol.rtol * std::abs(b))) return false;
  }
  return true;
}

std::string format_values(const json& values, const json& shape) {
  if (!values.is_array()) return "?";
  if (!shape.is_array() || shape.empty()) return values.empty() ? "[]" : format_number(values[0]);
  std::vector<uint64_t> dims;
  for (const auto& d : shape) {
    if (!d.is_number_integer() || (!d.is_number_unsigned() && d.get<int64_t>() < 0)) return "?";
    dims.push_back(d.get<uint64_t>());
  }
  // An explicit stack of open brackets, each with how many entries it has
  // written, and a budget: a shape such as [2^40, 0] holds nothing, yet
  // nesting over it would write "[]" 2^40 times.
  std::vector<uint64_t> written = {0};
  std::string s = "[";
  size_t pos = 0;
  while (!written.empty()) {
    const size_t depth = written.size() - 1;
    if (written[depth] == dims[depth]) {
      s += "]";
      written.pop_back();
      continue;
    }
    if (s.size() > kMaxShownText) {
      s += ", …";
      s.append(written.size(), ']');
      break;
    }
    if (written[depth]++) s += ", ";
    if (depth + 1 == dims.size()) {
      s += pos < values.size() ? format_number(values[pos++]) : "…";
    } else {
      s += "[";
      written.push_back(0);
    }
  }
  return s;
}


namespace {

// A check "from" a named tensor counts only where that tensor is the
// exercise's: where the rubric checks its graph with "root": true and that
// check failed (the tensor was reached, but is another computation), a
// backward from it, a stand-in given the root's name, is not the exercise's
// backward. (Only where the rubric says so: most graph checks judge named
// intermediates, which an honest one-expression spelling leaves out.)
void void_from_other_roots(const Rubric& rubric, std::vector<CheckResult>& out, const std::vector<bool>& unreached) {
  std::map<std::string, size_t> graph_check;
  for (size_t i = 0; i < rubric.checks.size(); ++i)
    if (rubric.checks[i].kind == "graph" && rubric.checks[i].spec.value("root", false)) graph_check[rubric.checks[i].spec.value("tensor", "")] = i;
  for (size_t i = 0; i < rubric.checks.size() && i < out.size(); ++i) {
    const std::string from = rubric.checks[i].spec.value("from", "");
    const auto g = graph_check.find(from);
    if (from.empty() || g == graph_check.end() || out[i].status != CheckStatus::Passed ||
        out[g->second].status != CheckStatus::Failed || unreached[g->second])
      continue;
    out[i].status = CheckStatus::Failed;
    out[i].points = 0;
    out[i].message = "written by a backward from " + from + ", but " + from + " is not the exercise's " + from +
                     " (its graph check failed): a backward from another computation given that name is not the "
                     "exercise's backward";
    out[i].hint = "Compute " + from + " as the statement says, and call backward() on it.";
  }
}

}  // namespace

std::vector<CheckResult> evaluate(const Rubric& rubric, const json& student, const json& reference,
                                  const std::string& stopped_at) {
  std::vector<CheckResult> out;
  std::vector<bool> unreached;
  for (const Check& c : rubric.checks) {
    CheckResult r;
    r.id = c.id, r.name = c.name, r.kind = c.kind, r.max = c.points, r.hint = c.hint, r.hidden = c.hidden;
    Outcome o;
    const std::string name = c.spec.value("tensor", "");
    const json* t = name.empty() ? nullptr : named(student, name);
    const json* ref = name.empty() ? nullptr : named(reference, name);
    if (!name.empty() && !t) {
      o.message = missing_name(name);
      o.found = "not named";
      o.unreached = true;
    } else if (c.kind == "value") {
      o = check_value(c, *t, ref);
      if (o.pass && changed_elsewhere(c, name, student, o)) o.pass = false;
    } else if (c.kind == "grad") {
      o = check_grad(c, name, *t, ref, some_gradient(student), on_another_graph(student, name));
    } else if (c.kind == "grad_fn") {
      const json* graph = student.contains("graphs") && student["graphs"].contains(name) ? &student["graphs"][name] : nullptr;
      o = check_grad_fn(c, rubric, name, *t, ref, graph);
    } else if (c.kind == "graph") {
      o = check_graph(c, rubric, name, student, reference);
    } else if (c.kind == "snapshots") {
      o = check_snapshots(c, student, reference);
    } else if (c.kind == "error") {
      o = check_error(c, student, reference);
    } else if (c.kind == "no_error") {
      o = check_no_error(c, student, reference);
    } else if (c.kind == "probe") {
      o = check_probe(c, student, reference);
    } else if (c.kind == "gradcheck") {
      o = check_gradcheck(c, student, reference);
    } else if (c.kind == "probe_cases") {
      o = check_probe_cases(c, rubric, student, reference);
    } else if (c.kind == "reuses_graph") {
      o = check_reuses_graph(c, student);
    } else if (c.kind == "derives_from") {
      o = check_derives_from(c, name, student, reference);
    } else if (c.kind == "updated_from_grad") {
      o = check_updated_from_grad(c, name, student, reference);
    } else if (c.kind == "made_under_no_grad") {
      o = check_made_under_no_grad(name, student);
    } else if (c.kind == "stdout") {
      const std::string a = normalise_output(student.value("stdout", "")), b = normalise_output(reference.value("stdout", ""));
      // An output that stops short of the reference's was cut off.
      o = {a == b, b, a, a == b ? "" : first_difference(a, b), a.size() < b.size() && b.compare(0, a.size(), a) == 0};
      if (o.pass) o = walk_printed_elsewhere(c, student, o);
    } else {
      o = check_field(c, name, *t, ref);
    }
    if (t && !t->value("defined", false)) {  // whatever the check, say the root cause
      o.pass = false;
      o.found = "undefined";
      o.message = name + " was never given a value (it is an undefined tensor)";
    }
    std::string route_hint;
    // A wrong route says why; where the numbers were wrong too, they stay
    // what was found (x.grad = -24 from two passes added up).
    const json wrong_numbers = o.pass ? json() : o.found;
    if (c.kind == "grad" && t && grad_route_wrong(c, name, student, reference, o, route_hint)) {
      o.pass = false;
      r.hint = route_hint;
      if (!wrong_numbers.is_null()) o.found = wrong_numbers;
    }
    if (c.kind == "snapshots" && snapshot_route_wrong(rubric, c, student, reference, o, route_hint)) {
      o.pass = false;
      r.hint = route_hint;
      if (!wrong_numbers.is_null()) o.found = wrong_numbers;
    }
    // A failed snapshot beside labels the exercise does not use: say them.
    if (c.kind == "snapshots" && !o.pass && o.message.find("which the exercise does not name") == std::string::npos)
      o.message += unknown_labels(student, reference);
    if (c.kind != "stdout" && contradicted(c, student, o)) {
      o.pass = false;
      o.unreached = false;
      r.hint =
          "A result counts when the program's own tensor operations computed it: writing into a tensor's memory "
          "(data_ptr), into the grader's records or around the engine is not computing it.";
    }
    r.status = o.pass ? CheckStatus::Passed : CheckStatus::Failed;
    r.points = o.pass ? c.points : 0;
    r.expected = o.expected;
    r.found = o.found;
    r.message = o.message;
    out.push_back(std::move(r));
    unreached.push_back(o.unreached);
  }
  void_from_other_roots(rubric, out, unreached);
  diagnose(rubric, student, out);
  // After an exception, a check whose facts were never recorded says so,
  // and nothing more: a hint about a mistake would blame code that never ran.
  if (!stopped_at.empty())
    for (size_t i = 0; i < out.size(); ++i)
      if (unreached[i] && out[i].status == CheckStatus::Failed) {
        out[i].message = "not reached: the program stopped at " + stopped_at + " before this";
        out[i].found = nullptr;
        out[i].hint.clear();
      }
  return out;
}

std::vector<CheckResult> not_run(const Rubric& rubric, const std::string& why) {
  std::vector<CheckResult> out;
  for (const Check& c : rubric.checks) {
    CheckResult r;
    r.id = c.id, r.name = c.name, r.kind = c.kind, r.max = c.points, r.hidden = c.hidden;
    r.status = CheckStatus::NotRun;
    r.message = why;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace grader

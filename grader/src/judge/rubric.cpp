#include "judge/rubric.h"
#include "common/compat.h"

#include "common/files.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace grader {
namespace {

// Per kind: the fields it requires and the ones it may have, beyond the
// fields every check has. Unknown fields are errors: a typo in a rubric
// should not silently turn a check into a different one.
struct KindSpec {
  std::vector<std::string> required, optional;
};

const std::map<std::string, KindSpec>& kinds() {
  static const std::map<std::string, KindSpec> k = {
      {"value", {{"tensor"}, {"expected", "changed_through"}}},
      {"grad", {{"tensor"}, {"expected", "from", "curvature"}}},
      {"requires_grad", {{"tensor"}, {"expected"}}},
      {"is_leaf", {{"tensor"}, {"expected"}}},
      {"retains_grad", {{"tensor"}, {"expected"}}},
      {"version", {{"tensor"}, {"expected"}}},
      {"shape", {{"tensor"}, {"expected"}}},
      {"dtype", {{"tensor"}, {"expected"}}},
      {"grad_fn", {{"tensor"}, {"expected", "accept"}}},
      {"graph", {{"tensor"}, {"root"}}},
      {"snapshots", {{"labels"}, {"fields", "source", "at_backward", "from", "curvature", "root_graph"}}},
      {"error", {{"label"}, {"contains", "on"}}},
      {"no_error", {{"label"}, {}}},
      {"probe", {{"probe", "expect"}, {"contains", "grad_of"}}},
      {"gradcheck", {{"probe"}, {"same_node"}}},
      // The program's own function on the grader's inputs, against the reference's.
      {"probe_cases", {{"probe"}, {"same_node"}}},
      // "walked": a named tensor whose graph the printed walk must have read.
      {"stdout", {{}, {"walked"}}},
      // How a tensor came to be, from the replay of the program's op tape.
      {"derives_from", {{"tensor", "source"}, {"through"}}},
      {"updated_from_grad", {{"tensor"}, {"under_no_grad", "from", "curvature"}}},
      {"made_under_no_grad", {{"tensor"}, {}}},
      {"reuses_graph", {{"label"}, {"on"}}},
  };
  return k;
}

const std::set<std::string> kCommon = {"id", "name", "kind", "points", "hint", "visibility", "tolerance"};
const std::set<std::string> kProbeKinds = {"backward", "inplace", "gradcheck", "call", "walk"};
// The graphs a walk probe can ask for (grader/harness/probes.h builds them).
const std::set<std::string> kWalkGraphs = {"unused-input", "deep-chain", "three-inputs", "leaf"};

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw RubricError(path + ": " + where + ": " + what);
}

std::string type_name(const json& j) { return j.type_name(); }

GRADLAB_NO_DANGLING const json& field(const json& obj, const std::string& key, const std::string& path, const std::string& where,
                  json::value_t type) {
  if (!obj.contains(key)) fail(path, where, "missing field \"" + key + "\"");
  const json& v = obj[key];
  const bool ok = type == json::value_t::number_float ? v.is_number() : v.type() == type;
  if (!ok) {
    const char* want = type == json::value_t::string    ? "a string"
                       : type == json::value_t::array   ? "an array"
                       : type == json::value_t::object  ? "an object"
                       : type == json::value_t::boolean ? "true or false"
                                                        : "a number";
    fail(path, where + "." + key, std::string("must be ") + want + ", found " + type_name(v));
  }
  return v;
}

std::string string_field(const json& obj, const std::string& key, const std::string& path, const std::string& where) {
  return field(obj, key, path, where, json::value_t::string).get<std::string>();
}

double positive(const json& obj, const std::string& key, double dflt, const std::string& path,
                const std::string& where) {
  if (!obj.contains(key)) return dflt;
  double v = field(obj, key, path, where, json::value_t::number_float).get<double>();
  if (!(v > 0)) fail(path, where + "." + key, "must be greater than 0, found " + obj[key].dump());
  return v;
}

}  // namespace

const std::vector<std::string>& check_kinds() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [k, _] : kinds()) v.push_back(k);
    return v;
  }();
  return names;
}

double Rubric::max_points() const {
  double s = 0;
  for (const auto& c : checks) s += c.points;
  return s;
}

bool reads_computation(const std::string& kind) {
  return kind == "derives_from" || kind == "updated_from_grad" || kind == "made_under_no_grad" ||
         kind == "reuses_graph";
}

bool Rubric::equivalent(const std::string& a, const std::string& b) const {
  if (a == b) return true;
  for (const auto& group : alternatives) {
    bool ha = false, hb = false;
    for (const auto& n : group) ha |= n == a, hb |= n == b;
    if (ha && hb) return true;
  }
  return false;
}

void parse_diagnoses(const json& j, Rubric& r, const std::set<std::string>& probe_ids, const std::string& path) {
  if (!j.contains("diagnoses")) return;
  std::set<std::string> check_ids;
  for (const auto& c : r.checks) check_ids.insert(c.id);
  const json& ds = field(j, "diagnoses", path, "top level", json::value_t::array);
  static const std::set<std::string> fields = {"requires_grad", "is_leaf", "retains_grad", "grad_fn", "version",
                                               "shape", "dtype", "grad_defined"};
  for (size_t i = 0; i < ds.size(); ++i) {
    const std::string at = "diagnoses[" + std::to_string(i) + "]";
    if (!ds[i].is_object()) fail(path, at, "must be an object, found " + type_name(ds[i]));
    for (const auto& [k, _] : ds[i].items())
      if (k != "check" && k != "when" && k != "hint") fail(path, at, "unknown field \"" + k + "\"");
    Diagnosis d;
    d.check = string_field(ds[i], "check", path, at);
    if (!check_ids.count(d.check)) fail(path, at + ".check", "no check has the id \"" + d.check + "\"");
    d.hint = string_field(ds[i], "hint", path, at);
    d.when = field(ds[i], "when", path, at, json::value_t::array);
    if (d.when.empty()) fail(path, at + ".when", "must hold at least one condition");
    for (size_t k = 0; k < d.when.size(); ++k) {
      const std::string w = at + ".when[" + std::to_string(k) + "]";
      const json& c = d.when[k];
      if (!c.is_object()) fail(path, w, "must be an object, found " + type_name(c));
      if (c.contains("probe")) {
        if (!probe_ids.count(string_field(c, "probe", path, w))) fail(path, w + ".probe", "no probe has that id");
        if (!c.contains("ok") || !c["ok"].is_boolean() || c.size() != 2) fail(path, w, "a probe condition is {\"probe\": ID, \"ok\": true|false}");
      } else if (c.contains("check")) {
        if (!check_ids.count(string_field(c, "check", path, w))) fail(path, w + ".check", "no check has that id");
        const std::string st = c.contains("status") ? string_field(c, "status", path, w) : "";
        if ((st != "passed" && st != "failed") || c.size() != 2)
          fail(path, w, "a check condition is {\"check\": ID, \"status\": \"passed\"|\"failed\"}");
      } else if (c.contains("record")) {
        string_field(c, "record", path, w);
        if (!c.contains("backward_passes") || !c["backward_passes"].is_number_unsigned() || c.size() != 2)
          fail(path, w, "a record condition is {\"record\": LABEL, \"backward_passes\": N}");
      } else if (c.contains("tensor")) {
        string_field(c, "tensor", path, w);
        const std::string f = c.contains("field") ? string_field(c, "field", path, w) : "";
        if (!fields.count(f)) fail(path, w + ".field", "unknown field \"" + f + "\" (known: requires_grad, is_leaf, retains_grad, grad_fn, version, shape, dtype, grad_defined)");
        if (!c.contains("equals") || c.size() != 3) fail(path, w, "a tensor condition is {\"tensor\": NAME, \"field\": F, \"equals\": VALUE}");
      } else {
        fail(path, w, "a condition names a \"probe\", a \"check\", a \"record\" or a \"tensor\"");
      }
    }
    r.diagnoses.push_back(std::move(d));
  }
}

namespace {

// The run's limits: each a positive number, none unknown.
void parse_limits(const json& j, const std::string& path, Rubric& r) {
  if (j.contains("limits")) {
    const json& l = field(j, "limits", path, "top level", json::value_t::object);
    for (const auto& [k, _] : l.items())
      if (k != "cpu_seconds" && k != "wall_seconds" && k != "memory_mb" && k != "output_kb" && k != "processes")
        fail(path, "limits", "unknown field \"" + k + "\"");
    r.limits.cpu_seconds = positive(l, "cpu_seconds", r.limits.cpu_seconds, path, "limits");
    r.limits.wall_seconds = positive(l, "wall_seconds", r.limits.wall_seconds, path, "limits");
    r.limits.memory_mb = static_cast<long>(positive(l, "memory_mb", double(r.limits.memory_mb), path, "limits"));
    r.limits.output_kb = static_cast<long>(positive(l, "output_kb", double(r.limits.output_kb), path, "limits"));
    r.limits.processes = static_cast<long>(positive(l, "processes", double(r.limits.processes), path, "limits"));
  }
}

// Groups of grad_fn names a grad_fn check takes as one another.
void parse_alternatives(const json& j, const std::string& path, Rubric& r) {
  if (j.contains("alternatives")) {
    const json& a = field(j, "alternatives", path, "top level", json::value_t::array);
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string where = "alternatives[" + std::to_string(i) + "]";
      if (!a[i].is_array() || a[i].size() < 2) fail(path, where, "must be an array of at least two grad_fn names");
      std::vector<std::string> group;
      for (const auto& n : a[i]) {
        if (!n.is_string()) fail(path, where, "must hold strings, found " + type_name(n));
        group.push_back(n);
      }
      r.alternatives.push_back(group);
    }
  }
}

void parse_graph_rules(const json& j, const std::string& path, Rubric& r) {
  if (j.contains("graph_rules")) {
    const json& g = field(j, "graph_rules", path, "top level", json::value_t::array);
    for (size_t i = 0; i < g.size(); ++i) {
      const std::string where = "graph_rules[" + std::to_string(i) + "]";
      if (!g[i].is_string() || !kGraphRules.count(g[i].get<std::string>()))
        fail(path, where, "unknown graph rule " + g[i].dump() + " (known: sum_distributes)");
      r.graph_rules.push_back(g[i]);
    }
  }
}

// The placeholders a text uses: "${x}" (a number the statement gives) and
// "${value:f}" / "${grad:x}" (a fact of the reference at the same numbers).
void check_placeholders(const std::string& text, const Rubric& r, const std::string& path, const std::string& where) {
  static const std::regex ph(R"(\$\{([^}]*)\})");
  static const std::regex fact(R"((value|grad):[A-Za-z_][A-Za-z0-9_.]*)");
  for (std::sregex_iterator it(text.begin(), text.end(), ph), end; it != end; ++it) {
    const std::string inner = (*it)[1];
    if (std::regex_match(inner, fact)) continue;
    bool known = false;
    for (const auto& [name, _] : r.variants.given) known |= name == inner;
    if (!known)
      fail(path, where, "\"${" + inner + "}\" names no number the variants give and no fact (${value:T}, ${grad:T})");
  }
}

// "variants": the numbers the statement gives, each with the lesson's value
// first, and the starter's lines that show them.
void parse_variants(const json& j, const std::string& path, Rubric& r) {
  if (!j.contains("variants")) return;
  const json& v = field(j, "variants", path, "top level", json::value_t::object);
  for (const auto& [k, _] : v.items())
    if (k != "given" && k != "starter") fail(path, "variants", "unknown field \"" + k + "\" (known: given, starter)");
  const json& given = field(v, "given", path, "variants", json::value_t::object);
  if (given.empty()) fail(path, "variants.given", "must give at least one number");
  for (const auto& [name, values] : given.items()) {
    const std::string at = "variants.given." + name;
    if (!std::regex_match(name, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
      fail(path, at, "a number's name must be an identifier, found \"" + name + "\"");
    if (!values.is_array() || values.empty()) fail(path, at, "must list the lesson's value first, then the others");
    std::vector<double> list;
    for (const auto& x : values) {
      if (!x.is_number()) fail(path, at, "must hold numbers only, found " + x.dump());
      if (std::find(list.begin(), list.end(), x.get<double>()) != list.end())
        fail(path, at, x.dump() + " is listed twice");
      list.push_back(x.get<double>());
    }
    r.variants.given.emplace_back(name, std::move(list));
  }
  if (v.contains("starter")) {
    const json& lines = field(v, "starter", path, "variants", json::value_t::array);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string at = "variants.starter[" + std::to_string(i) + "]";
      if (!lines[i].is_string() || lines[i].get<std::string>().find("${") == std::string::npos)
        fail(path, at, "must be a line of the starter with ${...} where its numbers stand");
      check_placeholders(lines[i], r, path, at);
      r.variants.starter.push_back(lines[i]);
    }
  }
}

// The probes the harness runs after the exercise; their ids, for the checks
// and diagnoses that name them.
std::set<std::string> parse_probes(const json& j, const std::string& path, Rubric& r) {
  std::set<std::string> probe_ids;
  if (j.contains("probes")) {
    const json& ps = field(j, "probes", path, "top level", json::value_t::array);
    for (size_t i = 0; i < ps.size(); ++i) {
      const std::string where = "probes[" + std::to_string(i) + "]";
      if (!ps[i].is_object()) fail(path, where, "must be an object, found " + type_name(ps[i]));
      const std::string id = string_field(ps[i], "id", path, where);
      const std::string kind = string_field(ps[i], "kind", path, where);
      if (!kProbeKinds.count(kind))
        fail(path, where + ".kind", "unknown probe kind \"" + kind + "\" (known: backward, inplace, gradcheck, call, walk)");
      if (kind == "gradcheck" || kind == "call" || kind == "walk") string_field(ps[i], "function", path, where);
      else string_field(ps[i], "tensor", path, where);
      if (kind == "call" && ps[i].contains("rewrite_output") && !ps[i]["rewrite_output"].is_boolean())
        fail(path, where + ".rewrite_output", "must be true or false, found " + type_name(ps[i]["rewrite_output"]));
      if (kind == "call") {
        const json& in = field(ps[i], "inputs", path, where, json::value_t::array);
        if (in.empty() || in.size() > 16) fail(path, where + ".inputs", "must hold 1 to 16 inputs (nested lists of numbers)");
      }
      if (kind == "walk") {
        const json& gs = field(ps[i], "graphs", path, where, json::value_t::array);
        if (gs.empty()) fail(path, where + ".graphs", "must name at least one graph");
        for (const auto& g : gs)
          if (!g.is_string() || !kWalkGraphs.count(g.get<std::string>()))
            fail(path, where + ".graphs", "unknown graph " + g.dump() +
                                              " (known: unused-input, deep-chain, three-inputs, leaf)");
        // Graphs made up for each program: their walk is rendered from
        // "line", which must say where each node's name goes.
        if (ps[i].contains("random")) {
          const json& n = ps[i]["random"];
          if (!n.is_number_integer() || n.get<int64_t>() < 0 || n.get<int64_t>() > 8)
            fail(path, where + ".random", "must be 0 to 8 graphs (a whole number), found " + n.dump());
          const std::string line = string_field(ps[i], "line", path, where);
          if (line.find("${name}") == std::string::npos)
            fail(path, where + ".line", "must say where the node's name goes with ${name} (and may use ${depth}, ${indent}), found \"" + line + "\"");
        }
      }
      if (!probe_ids.insert(id).second) fail(path, where + ".id", "probe id \"" + id + "\" is used twice");
    }
    r.probes = ps;
  }
  return probe_ids;
}

// The fields a check of its kind may have, each of its type.
void check_kind_fields(const json& c, const Check& ch, const std::set<std::string>& probe_ids, const std::string& path,
                       const std::string& at) {
  if (c.contains("tensor")) string_field(c, "tensor", path, at);
  if (c.contains("source")) string_field(c, "source", path, at);
  if (c.contains("from")) string_field(c, "from", path, at);
  if (c.contains("on")) string_field(c, "on", path, at);
  if (c.contains("walked")) string_field(c, "walked", path, at);
  if (c.contains("changed_through")) string_field(c, "changed_through", path, at);
  if (c.contains("through")) {
    const json& ops = field(c, "through", path, at, json::value_t::array);
    for (const auto& o : ops)
      if (!o.is_string()) fail(path, at + ".through", "must hold op names (\"detach\", \"clone\"), found " + type_name(o));
  }
  if (c.contains("label")) string_field(c, "label", path, at);
  if (c.contains("contains")) string_field(c, "contains", path, at);
  if (c.contains("labels")) {
    const json& ls = field(c, "labels", path, at, json::value_t::array);
    for (const auto& l : ls)
      if (!l.is_string()) fail(path, at + ".labels", "must hold strings, found " + type_name(l));
  }
  if (c.contains("at_backward")) field(c, "at_backward", path, at, json::value_t::boolean);
  if (c.contains("same_node")) field(c, "same_node", path, at, json::value_t::boolean);
  if (c.contains("root")) field(c, "root", path, at, json::value_t::boolean);
  if (c.contains("curvature") && !(c["curvature"].is_boolean() || c["curvature"] == "own"))
    fail(path, at + ".curvature", "must be true, false or \"own\" (the leaf's own block of the Hessian), found " +
                                      c["curvature"].dump());
  if (c.contains("fields")) {
    static const std::set<std::string> known = {"values", "requires_grad", "is_leaf", "retains_grad",
                                                "grad_fn", "version", "shape", "dtype"};
    const json& fs = field(c, "fields", path, at, json::value_t::array);
    if (fs.empty()) fail(path, at + ".fields", "must name at least one field");
    for (const auto& f : fs)
      if (!f.is_string() || !known.count(f.get<std::string>()))
        fail(path, at + ".fields", "unknown field " + f.dump() +
                                       " (known: values, requires_grad, is_leaf, retains_grad, grad_fn, version, shape, dtype)");
  }
  if (c.contains("accept")) {
    const json& a = field(c, "accept", path, at, json::value_t::array);
    for (const auto& n : a)
      if (!n.is_string()) fail(path, at + ".accept", "must hold grad_fn names, found " + type_name(n));
  }
  if (c.contains("probe")) {
    const std::string p = string_field(c, "probe", path, at);
    if (!probe_ids.count(p)) fail(path, at + ".probe", "no probe has the id \"" + p + "\"");
  }
  if (c.contains("expect") && ch.kind == "probe") {
    const std::string e = string_field(c, "expect", path, at);
    if (e != "ok" && e != "error") fail(path, at + ".expect", "must be \"ok\" or \"error\"");
  }
}

// One check: what every check has (id, kind, name, points, hint,
// visibility, tolerance), then its kind's own fields.
Check parse_check(const json& c, size_t i, bool one_element_is_scalar, const std::set<std::string>& probe_ids,
                  std::set<std::string>& ids, const std::string& path) {
  const std::string where = "checks[" + std::to_string(i) + "]";
  if (!c.is_object()) fail(path, where, "must be an object, found " + type_name(c));
  Check ch;
  ch.tol.one_element_is_scalar = one_element_is_scalar;
  ch.id = string_field(c, "id", path, where);
  const std::string at = where + " (\"" + ch.id + "\")";
  if (!std::regex_match(ch.id, std::regex("[a-z0-9][a-z0-9_.-]*")))
    fail(path, at + ".id", "must be lower-case letters, digits, '-', '_' or '.'");
  if (!ids.insert(ch.id).second) fail(path, at + ".id", "check id is used twice");
  ch.kind = string_field(c, "kind", path, at);
  auto spec = kinds().find(ch.kind);
  if (spec == kinds().end()) {
    std::string known;
    for (const auto& k : check_kinds()) known += (known.empty() ? "" : ", ") + k;
    fail(path, at + ".kind", "unknown check kind \"" + ch.kind + "\" (known: " + known + ")");
  }
  ch.name = string_field(c, "name", path, at);
  ch.points = c.contains("points") ? field(c, "points", path, at, json::value_t::number_float).get<double>() : 1;
  if (ch.points < 0) fail(path, at + ".points", "must not be negative");
  if (c.contains("hint")) ch.hint = string_field(c, "hint", path, at);
  if (c.contains("visibility")) {
    const std::string v = string_field(c, "visibility", path, at);
    if (v != "visible" && v != "hidden") fail(path, at + ".visibility", "must be \"visible\" or \"hidden\"");
    ch.hidden = v == "hidden";
  }
  if (c.contains("tolerance")) {
    const json& t = field(c, "tolerance", path, at, json::value_t::object);
    for (const auto& [k, _] : t.items())
      if (k != "rtol" && k != "atol") fail(path, at + ".tolerance", "unknown field \"" + k + "\"");
    for (const char* k : {"rtol", "atol"})
      if (t.contains(k) && (!t[k].is_number() || t[k].get<double>() < 0))
        fail(path, at + ".tolerance." + k, "must be a number of at least 0");
    ch.tol.rtol = t.value("rtol", ch.tol.rtol);
    ch.tol.atol = t.value("atol", ch.tol.atol);
  }
  for (const auto& k : spec->second.required)
    if (!c.contains(k)) fail(path, at, "a \"" + ch.kind + "\" check needs the field \"" + k + "\"");
  for (const auto& [k, _] : c.items()) {
    bool known = kCommon.count(k) > 0;
    for (const auto& f : spec->second.required) known |= f == k;
    for (const auto& f : spec->second.optional) known |= f == k;
    if (!known) fail(path, at, "unknown field \"" + k + "\" for a \"" + ch.kind + "\" check");
  }
  check_kind_fields(c, ch, probe_ids, path, at);
  ch.spec = c;
  return ch;
}
}  // namespace

Rubric parse_rubric(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, "top level", "must be a JSON object, found " + type_name(j));
  static const std::set<std::string> top = {"rubric", "exercise", "title", "function", "limits", "alternatives",
                                            "graph_rules", "one_element_is_scalar", "probes", "diagnoses", "checks",
                                            "hidden_checks", "custom_functions", "variants"};
  for (const auto& [k, _] : j.items())
    if (!top.count(k)) fail(path, "top level", "unknown field \"" + k + "\"");
  Rubric r;
  r.path = path;
  if (field(j, "rubric", path, "top level", json::value_t::number_float).get<double>() != 1)
    fail(path, "rubric", "this grader reads rubric format 1, found " + j["rubric"].dump());
  r.exercise = string_field(j, "exercise", path, "top level");
  r.title = string_field(j, "title", path, "top level");
  r.function = string_field(j, "function", path, "top level");
  if (j.contains("hidden_checks")) {  // a student release's rubric: what it left out
    const json& h = field(j, "hidden_checks", path, "top level", json::value_t::object);
    r.hidden_count = field(h, "count", path, "hidden_checks", json::value_t::number_float).get<int>();
    r.hidden_points = field(h, "points", path, "hidden_checks", json::value_t::number_float).get<double>();
  }
  if (!std::regex_match(r.function, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
    fail(path, "function", "must be a C++ identifier, found \"" + r.function + "\"");
  parse_limits(j, path, r);
  parse_alternatives(j, path, r);
  parse_graph_rules(j, path, r);
  parse_variants(j, path, r);
  r.custom_functions = j.contains("custom_functions") &&
                       field(j, "custom_functions", path, "top level", json::value_t::boolean).get<bool>();
  const std::set<std::string> probe_ids = parse_probes(j, path, r);

  const json& cs = field(j, "checks", path, "top level", json::value_t::array);
  if (cs.empty()) fail(path, "checks", "a rubric needs at least one check");
  const bool one_element_is_scalar =
      j.contains("one_element_is_scalar") &&
      field(j, "one_element_is_scalar", path, "top level", json::value_t::boolean).get<bool>();
  std::set<std::string> ids;
  for (size_t i = 0; i < cs.size(); ++i)
    r.checks.push_back(parse_check(cs[i], i, one_element_is_scalar, probe_ids, ids, path));
  parse_diagnoses(j, r, probe_ids, path);
  for (const Check& c : r.checks) r.curvature |= c.spec.value("curvature", json(false)) != json(false);
  check_placeholders(r.title, r, path, "title");
  for (size_t i = 0; i < r.checks.size(); ++i) {
    check_placeholders(r.checks[i].name, r, path, "checks[" + std::to_string(i) + "].name");
    check_placeholders(r.checks[i].hint, r, path, "checks[" + std::to_string(i) + "].hint");
  }
  for (size_t i = 0; i < r.diagnoses.size(); ++i)
    check_placeholders(r.diagnoses[i].hint, r, path, "diagnoses[" + std::to_string(i) + "].hint");
  return r;
}

Rubric load_rubric(const std::string& path) {
  auto text = read_file(path);
  if (!text) throw RubricError(path + ": cannot read the rubric (does the file exist?)");
  json j;
  try {
    j = json::parse(*text);
  } catch (const json::parse_error& e) {
    throw RubricError(path + ": not valid JSON: " + e.what());
  }
  return parse_rubric(j, path);
}

}  // namespace grader

#include "judge/snapshot.h"
#include "common/compat.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

namespace grader {
namespace {

constexpr const char* kAccumulate = "torch::autograd::AccumulateGrad";

// Thrown inside the checks, caught once at the top: the first thing wrong.
struct Refusal {
  std::string message;
};

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw Refusal{(where.empty() ? "the top level" : where) + ": " + what};
}

// A student's string in a message: quoted, escaped, cut short.
std::string quoted(const std::string& s) {
  constexpr size_t kShown = 60;
  if (s.size() <= kShown) return json(s).dump();
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return json(s.substr(0, cut)).dump() + "… (" + std::to_string(s.size()) + " bytes)";
}

// A value in a message, without dumping a container that may be huge.
std::string brief(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::string: return "the string " + quoted(v.get_ref<const std::string&>());
    case json::value_t::array: return "an array of " + std::to_string(v.size());
    case json::value_t::object: return "an object of " + std::to_string(v.size()) + " keys";
    default: return v.dump();
  }
}

std::string field(const std::string& at, const std::string& key) { return at.empty() ? key : at + "." + key; }
std::string entry(const std::string& at, const std::string& key) { return at + "[" + quoted(key) + "]"; }
std::string item(const std::string& at, size_t i) { return at + "[" + std::to_string(i) + "]"; }

GRADLAB_NO_DANGLING const std::string& string_of(const json& v, const std::string& at, size_t max = kMaxNameBytes) {
  if (!v.is_string()) refuse(at, "expected a string, found " + brief(v));
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() > max) refuse(at, "a string of " + std::to_string(s.size()) + " bytes (at most " + std::to_string(max) + ")");
  return s;
}

bool boolean(const json& v, const std::string& at) {
  if (!v.is_boolean()) refuse(at, "expected true or false, found " + brief(v));
  return v.get<bool>();
}

int64_t count(const json& v, const std::string& at) {
  if (!v.is_number_integer() || (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0))
    refuse(at, "expected a non-negative integer, found " + brief(v));
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) refuse(at, v.dump() + " is beyond int64");
  return v.get<int64_t>();
}

// A number as the harness writes one: finite, or one of the three strings
// that stand for what JSON cannot hold.
void number(const json& v, const std::string& at) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) refuse(at, "a number that is not finite");
  if (v.is_number()) return;
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "nan" || s == "inf" || s == "-inf") return;
  }
  refuse(at, "expected a number (or \"nan\", \"inf\", \"-inf\"), found " + brief(v));
}

GRADLAB_NO_DANGLING const json& object(const json& v, const std::string& at) {
  if (!v.is_object()) refuse(at, "expected an object, found " + brief(v));
  return v;
}

GRADLAB_NO_DANGLING const json& array(const json& v, const std::string& at, size_t max) {
  if (!v.is_array()) refuse(at, "expected an array, found " + brief(v));
  if (v.size() > max) refuse(at, std::to_string(v.size()) + " entries (at most " + std::to_string(max) + ")");
  return v;
}

// An object holds only the keys the harness writes, and those it always writes.
struct Key {
  const char* name;
  bool required;
};
void keys(const json& o, const std::string& at, std::initializer_list<Key> allowed) {
  for (const auto& [k, v] : o.items()) {
    bool known = false;
    for (const Key& a : allowed) known |= k == a.name;
    if (!known) {
      std::string list;
      for (const Key& a : allowed) list += (list.empty() ? "" : ", ") + std::string(a.name);
      refuse(at, "unknown key " + quoted(k) + " (the harness writes " + list + ")");
    }
  }
  for (const Key& a : allowed)
    if (a.required && !o.contains(a.name)) refuse(at, "the key \"" + std::string(a.name) + "\" is missing");
}

// A shape: its dimensions, and their product when it is within bounds.
int64_t shape(const json& v, const std::string& at) {
  array(v, at, kMaxDims);
  int64_t product = 1;
  bool empty = false;
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t d = count(v[i], item(at, i));
    if (d == 0) empty = true;
    else if (product <= kMaxElements) product = d > kMaxElements / product ? kMaxElements + 1 : product * d;
  }
  if (empty) return 0;
  if (product > kMaxElements)
    refuse(at, "the shape " + (v.size() <= 8 ? v.dump() : "of " + std::to_string(v.size()) + " dimensions") +
                   " holds more than " + std::to_string(kMaxElements) + " elements, more than the program's memory could");
  return product;
}

// Values for a shape: all of them, or the first kMaxValuesSent when there are more.
void values(const json& v, int64_t elements, const std::string& at) {
  array(v, at, kMaxValuesSent);
  const size_t want = static_cast<size_t>(std::min<int64_t>(elements, kMaxValuesSent));
  if (v.size() != want)
    refuse(at, std::to_string(v.size()) + " values for a shape of " + std::to_string(elements) + " elements (expected " +
                   std::to_string(want) + ")");
  for (size_t i = 0; i < v.size(); ++i) number(v[i], item(at, i));
}

// A tensor as describe() writes it.
void tensor(const json& t, const std::string& at) {
  object(t, at);
  if (!t.contains("defined")) refuse(at, "the key \"defined\" is missing");
  if (!boolean(t["defined"], field(at, "defined"))) {
    keys(t, at, {{"defined", true}});
    return;
  }
  keys(t, at,
       {{"defined", true}, {"shape", true}, {"dtype", true}, {"device", true}, {"requires_grad", true},
        {"is_leaf", true}, {"retains_grad", true}, {"grad_fn", true}, {"version", true}, {"values", true},
        {"values_truncated", false}, {"grad", true}});
  const int64_t n = shape(t["shape"], field(at, "shape"));
  values(t["values"], n, field(at, "values"));
  if (t.contains("values_truncated") && !(boolean(t["values_truncated"], field(at, "values_truncated")) && n > int64_t(kMaxValuesSent)))
    refuse(field(at, "values_truncated"), "present, but all " + std::to_string(n) + " values were sent");
  if (!t.contains("values_truncated") && n > int64_t(kMaxValuesSent))
    refuse(at, std::to_string(n) + " elements, but \"values_truncated\" is missing");
  string_of(t["dtype"], field(at, "dtype"));
  string_of(t["device"], field(at, "device"));
  for (const char* k : {"requires_grad", "is_leaf", "retains_grad"}) boolean(t[k], field(at, k));
  if (!t["grad_fn"].is_null()) string_of(t["grad_fn"], field(at, "grad_fn"));
  if (!t["version"].is_null()) count(t["version"], field(at, "version"));  // null: an inference tensor has none
  const json& g = t["grad"];
  if (g.is_null()) return;
  const std::string gat = field(at, "grad");
  object(g, gat);
  keys(g, gat, {{"shape", true}, {"values", true}});
  values(g["values"], shape(g["shape"], field(gat, "shape")), field(gat, "values"));
}

// Node ids are "n0", "n1", ... in the order the harness lists them.
std::string id_of(size_t i) { return "n" + std::to_string(i); }

// The node an edge names, or -1 when there is none.
long node_index(const std::string& id, size_t nodes) {
  if (id.size() < 2 || id.size() > 12 || id[0] != 'n' || id.find_first_not_of("0123456789", 1) != std::string::npos ||
      (id[1] == '0' && id.size() > 2))
    return -1;
  const unsigned long long k = std::stoull(id.substr(1));
  return k < nodes ? static_cast<long>(k) : -1;
}

// One node of a graph (number i of n): its id, name, shape and tensors, and
// its edges, returned as the indices of the nodes they lead to.
std::vector<size_t> graph_node(const json& g, size_t i, const json& tensors, const std::string& at) {
  const size_t n = g.size();
  const std::string nat = item(at, i);
  const json& node = object(g[i], nat);
  keys(node, nat, {{"id", true}, {"name", true}, {"shape", false}, {"tensors", true}, {"next", true}});
  const std::string& id = string_of(node["id"], field(nat, "id"));
  if (id != id_of(i)) {
    for (size_t j = 0; j < i; ++j)
      if (g[j]["id"] == json(id)) refuse(field(nat, "id"), "the node " + quoted(id) + " is listed twice (first as node " + std::to_string(j) + ")");
    refuse(field(nat, "id"), "expected \"" + id_of(i) + "\" (nodes are numbered in order), found " + quoted(id));
  }
  const std::string& name = string_of(node["name"], field(nat, "name"));
  if (node.contains("shape")) {
    if (name != kAccumulate) refuse(field(nat, "shape"), "only a leaf's node (" + std::string(kAccumulate) + ") has a shape");
    shape(node["shape"], field(nat, "shape"));
  }
  const json& names = array(node["tensors"], field(nat, "tensors"), kMaxEntries);
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& t = string_of(names[k], item(field(nat, "tensors"), k));
    if (!tensors.contains(t)) refuse(item(field(nat, "tensors"), k), quoted(t) + " is not a named tensor of this result");
  }
  const json& edges = array(node["next"], field(nat, "next"), kMaxGraphNodes * 16);
  if (name == kAccumulate && !edges.empty())
    refuse(field(nat, "next"), "a leaf's node (" + std::string(kAccumulate) + ") has no inputs, found " + std::to_string(edges.size()));
  std::vector<size_t> next;
  for (size_t k = 0; k < edges.size(); ++k) {
    const std::string eat = item(field(nat, "next"), k);
    const json& e = array(edges[k], eat, 2);
    if (e.size() != 2) refuse(eat, "expected [node id or null, input number], found an array of " + std::to_string(e.size()));
    count(e[1], item(eat, 1));
    if (e[0].is_null()) continue;
    const std::string& to = string_of(e[0], item(eat, 0));
    const long j = node_index(to, n);
    if (j < 0) refuse(eat, "an edge to " + quoted(to) + ", but the graph has no such node (it has n0 to n" + std::to_string(n - 1) + ")");
    next.push_back(static_cast<size_t>(j));
  }
  return next;
}

// The graph's shape: every node reached from the root n0, no cycle, no path
// deeper than the limit. Explicit stacks, since the depth is the student's
// to choose; Kahn's order from the root finds the cycles and the longest
// path in one pass.
void graph_shape(const std::vector<std::vector<size_t>>& next, const std::string& at) {
  const size_t n = next.size();
  std::vector<char> reached(n, 0);
  std::vector<size_t> todo = {0};
  reached[0] = 1;
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    for (size_t j : next[i])
      if (!reached[j]) reached[j] = 1, todo.push_back(j);
  }
  for (size_t i = 0; i < n; ++i)
    if (!reached[i]) refuse(item(at, i), "the node " + id_of(i) + " cannot be reached from the root n0");
  std::vector<size_t> incoming(n, 0), depth(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j : next[i]) ++incoming[j];
  if (incoming[0]) refuse(at, "an edge leads back to the root n0: the graph has a cycle");
  std::vector<size_t> ready = {0};
  size_t ordered = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++ordered;
    for (size_t j : next[i]) {
      depth[j] = std::max(depth[j], depth[i] + 1);
      if (depth[j] > kMaxGraphDepth)
        refuse(at, "a path of more than " + std::to_string(kMaxGraphDepth) + " nodes from the root (at " + id_of(j) +
                       "): does a loop keep adding to one graph? (detach(), or .item() for a number)");
      if (--incoming[j] == 0) ready.push_back(j);
    }
  }
  if (ordered != n) {
    for (size_t i = 0; i < n; ++i)
      if (incoming[i]) refuse(at, "the graph has a cycle (through " + id_of(i) + ")");
  }
}

// One backward graph: its size within the limits, then each node, then its shape.
void graph(const json& g, const json& tensors, const std::string& at, size_t& total) {
  if (!g.is_array()) refuse(at, "expected an array of nodes, found " + brief(g));
  if (g.size() > kMaxGraphNodes)
    refuse(at, std::to_string(g.size()) + " nodes (at most " + std::to_string(kMaxGraphNodes) +
                   "): does a loop keep adding to one graph? (detach(), or .item() for a number)");
  if (g.empty()) refuse(at, "a graph without nodes (the harness writes a graph only for a tensor with a grad_fn)");
  total += g.size();
  if (total > kMaxSnapshotNodes) refuse(at, "more than " + std::to_string(kMaxSnapshotNodes) + " graph nodes in all");
  std::vector<std::vector<size_t>> next(g.size());
  for (size_t i = 0; i < g.size(); ++i) next[i] = graph_node(g, i, tensors, at);
  graph_shape(next, at);
}

void record(const json& r, const std::string& at) {
  object(r, at);
  if (!r.contains("kind")) refuse(at, "the key \"kind\" is missing");
  const std::string& kind = string_of(r["kind"], field(at, "kind"));
  if (kind == "snapshot") {
    keys(r, at, {{"kind", true}, {"label", true}, {"tensor", true}});
    tensor(r["tensor"], field(at, "tensor"));
  } else if (kind == "value") {
    keys(r, at, {{"kind", true}, {"label", true}, {"value", true}});
    number(r["value"], field(at, "value"));
  } else if (kind == "error") {
    keys(r, at, {{"kind", true}, {"label", true}, {"message", true}});
    string_of(r["message"], field(at, "message"), kMaxTextBytes);
  } else if (kind == "no_error") {
    keys(r, at, {{"kind", true}, {"label", true}});
  } else {
    refuse(field(at, "kind"), "unknown kind " + quoted(kind) + " (snapshot, value, error or no_error)");
  }
  string_of(r["label"], field(at, "label"));
}

// Numbers, nested as a tensor's input is written, within the bounds.
void nested_numbers(const json& v, const std::string& at, size_t depth) {
  if (depth > kMaxDims) refuse(at, "nested more than " + std::to_string(kMaxDims) + " deep");
  if (!v.is_array()) return number(v, at);
  array(v, at, kMaxValuesSent);
  for (size_t i = 0; i < v.size(); ++i) nested_numbers(v[i], item(at, i), depth + 1);
}

// One case of a probe of the program's own function (harness/probes.h).
void probe_case(const json& c, const std::string& at) {
  object(c, at);
  keys(c, at, {{"input", false}, {"values", false}, {"shape", false}, {"grad_output", false}, {"grad", false},
               {"graph", false}, {"expression", false}, {"output", false}, {"error", false}, {"grad_fn", false},
               {"seed", false}, {"rewritten", false}, {"nodes", false}, {"backward_nodes", false},
               {"backward_ops_run", false}});
  if (c.contains("seed")) count(c["seed"], field(at, "seed"));
  for (const char* k : {"nodes", "backward_nodes", "backward_ops_run"})
    if (c.contains(k)) count(c[k], field(at, k));
  if (c.contains("input")) nested_numbers(c["input"], field(at, "input"), 0);
  for (const char* k : {"values", "grad_output", "grad", "rewritten"})
    if (c.contains(k) && !c[k].is_null()) {
      const json& a = array(c[k], field(at, k), kMaxValuesSent);
      for (size_t i = 0; i < a.size(); ++i) number(a[i], item(field(at, k), i));
    }
  if (c.contains("shape")) shape(c["shape"], field(at, "shape"));
  for (const char* k : {"graph", "expression"})
    if (c.contains(k)) string_of(c[k], field(at, k));
  if (c.contains("grad_fn") && !c["grad_fn"].is_null()) string_of(c["grad_fn"], field(at, "grad_fn"));
  for (const char* k : {"output", "error"})
    if (c.contains(k)) string_of(c[k], field(at, k), kMaxTextBytes);
}

void probe(const json& p, const std::string& at) {
  object(p, at);
  keys(p, at, {{"ok", true}, {"error", false}, {"max_abs_error", false}, {"inputs", false}, {"outputs", false}, {"after", false},
               {"cases", false}, {"grad_fn", false}});
  if (p.contains("cases")) {
    const json& cs = array(p["cases"], field(at, "cases"), 64);
    for (size_t i = 0; i < cs.size(); ++i) probe_case(cs[i], item(field(at, "cases"), i));
  }
  boolean(p["ok"], field(at, "ok"));
  if (p.contains("error")) string_of(p["error"], field(at, "error"), kMaxTextBytes);
  if (p.contains("max_abs_error")) number(p["max_abs_error"], field(at, "max_abs_error"));
  if (p.contains("grad_fn") && !p["grad_fn"].is_null()) string_of(p["grad_fn"], field(at, "grad_fn"));
  for (const char* k : {"inputs", "outputs"})
    if (p.contains(k)) count(p[k], field(at, k));
  if (!p.contains("after")) return;
  const std::string aat = field(at, "after");
  object(p["after"], aat);
  if (p["after"].size() > kMaxEntries) refuse(aat, std::to_string(p["after"].size()) + " tensors (at most " + std::to_string(kMaxEntries) + ")");
  for (const auto& [name, t] : p["after"].items()) {
    if (name.size() > kMaxNameBytes) refuse(aat, "the name " + quoted(name) + " is longer than " + std::to_string(kMaxNameBytes) + " bytes");
    if (!t.is_null()) tensor(t, entry(aat, name));
  }
}

// An object whose keys are names: bounded in number and length.
GRADLAB_NO_DANGLING const json& named_map(const json& v, const std::string& at) {
  object(v, at);
  if (v.size() > kMaxEntries) refuse(at, std::to_string(v.size()) + " entries (at most " + std::to_string(kMaxEntries) + ")");
  for (const auto& [k, x] : v.items())
    if (k.size() > kMaxNameBytes) refuse(at, "the name " + quoted(k) + " is longer than " + std::to_string(kMaxNameBytes) + " bytes");
  return v;
}

void document(const json& s, const std::string& nonce) {
  if (!s.is_object()) throw Refusal{"the result is not a JSON object but " + brief(s)};
  if (!s.contains("nonce") || !s["nonce"].is_string() || s["nonce"].get_ref<const std::string&>() != nonce)
    throw Refusal{"the result does not carry this run's token"};
  keys(s, "", {{"nonce", true}, {"status", true}, {"message", false}, {"trace", false}, {"tensors", false},
               {"graphs", false}, {"records", false}, {"probes", false}, {"warnings", true}, {"usage", true},
               {"tape_chain", false}});
  if (s.contains("tape_chain")) string_of(s["tape_chain"], "tape_chain", 64);
  const std::string& status = string_of(s["status"], "status");
  if (status != "ok" && status != "exception" && status != "out_of_memory")
    refuse("status", "unknown status " + quoted(status) + " (ok, exception or out_of_memory)");
  if (status == "ok") {
    if (s.contains("message")) refuse("message", "present, but the status is \"ok\"");
    for (const char* k : {"tensors", "graphs", "records", "probes"})
      if (!s.contains(k)) refuse("", "the key \"" + std::string(k) + "\" is missing (the status is \"ok\")");
  } else {
    if (!s.contains("message")) refuse("", "the key \"message\" is missing (the status is " + quoted(status) + ")");
    string_of(s["message"], "message", kMaxTextBytes);
  }
  // Where the exception was thrown: offsets into the program, at most 16.
  if (s.contains("trace")) {
    if (status != "exception") refuse("trace", "present, but the status is " + quoted(status));
    if (!s["trace"].is_array() || s["trace"].size() > 16) refuse("trace", "expected at most 16 offsets, found " + brief(s["trace"]));
    for (size_t i = 0; i < s["trace"].size(); ++i) count(s["trace"][i], "trace[" + std::to_string(i) + "]");
  }
  static const json none = json::object();
  const json& tensors = s.contains("tensors") ? named_map(s["tensors"], "tensors") : none;
  for (const auto& [name, t] : tensors.items()) tensor(t, entry("tensors", name));
  if (s.contains("graphs")) {
    size_t total = 0;
    for (const auto& [name, g] : named_map(s["graphs"], "graphs").items()) {
      if (!tensors.contains(name)) refuse(entry("graphs", name), "a graph for " + quoted(name) + ", which is not a named tensor");
      graph(g, tensors, entry("graphs", name), total);
    }
  }
  if (s.contains("records")) {
    const json& rs = array(s["records"], "records", kMaxEntries);
    for (size_t i = 0; i < rs.size(); ++i) record(rs[i], item("records", i));
  }
  if (s.contains("probes"))
    for (const auto& [id, p] : named_map(s["probes"], "probes").items()) probe(p, entry("probes", id));
  const json& ws = array(s["warnings"], "warnings", kMaxEntries);
  for (size_t i = 0; i < ws.size(); ++i) {
    const std::string at = item("warnings", i);
    object(ws[i], at);
    keys(ws[i], at, {{"message", true}, {"during", true}});
    string_of(ws[i]["message"], field(at, "message"), kMaxTextBytes);
    string_of(ws[i]["during"], field(at, "during"));
  }
  const json& u = object(s["usage"], "usage");
  keys(u, "usage", {{"cpu_seconds", true}, {"peak_memory_kb", true}});
  if (!u["cpu_seconds"].is_number() || !(u["cpu_seconds"].get<double>() >= 0) || !std::isfinite(u["cpu_seconds"].get<double>()))
    refuse("usage.cpu_seconds", "expected a non-negative number, found " + brief(u["cpu_seconds"]));
  count(u["peak_memory_kb"], "usage.peak_memory_kb");
}

}  // namespace

size_t json_nesting(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string check_snapshot(const json& doc, const std::string& nonce) {
  try {
    document(doc, nonce);
  } catch (const Refusal& r) {
    return r.message;
  }
  return "";
}

Snapshot read_snapshot(std::string_view text, const std::string& nonce) {
  Snapshot s;
  if (text.size() > kMaxSnapshotBytes) {
    s.error = "the result is " + std::to_string(text.size()) + " bytes long (at most " + std::to_string(kMaxSnapshotBytes) + ")";
    return s;
  }
  // nlohmann's parser recurses once per bracket: the depth is bounded first.
  if (const size_t d = json_nesting(text); d > kMaxSnapshotNesting) {
    s.error = "the result nests brackets " + std::to_string(d) + " deep (at most " + std::to_string(kMaxSnapshotNesting) + ")";
    return s;
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    s.error = std::string("the result is not valid JSON (") + e.what() + ")";
    return s;
  }
  s.error = check_snapshot(doc, nonce);
  if (s.ok()) s.doc = std::move(doc);
  return s;
}

}  // namespace grader

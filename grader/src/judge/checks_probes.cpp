// The checks of the program's own functions on inputs it has not seen: a
// probe of kind "call" (a function of a tensor) or "walk" (a walker of
// backward graphs) ran it after the exercise on the grader's inputs
// (grader/harness/probes.h), and the reference's ran on the same ones. Each
// case must come out as the reference's did; the first that does not is
// named with its input, so the student can try it.
#include <algorithm>

#include "../../harness/random_graphs.h"
#include "judge/checks_internal.h"

namespace grader::check_detail {

namespace {

std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() <= 120 ? s : s.substr(0, 120) + "…";
}

std::string values_text(const json& v) { return v.is_array() || v.is_null() ? cut_values(v) : shown(v); }

}  // namespace

std::string node_text(const json& node) { return node.is_string() ? node.get<std::string>() : std::string("no node (no graph)"); }

// A function handed to the lab whose result another node made than the
// reference's: the same numbers by another computation (torch::sigmoid where
// the exercise asks for its own Function) test that computation, not the
// exercise's.
std::string node_differs(const std::string& fn, const std::string& where, const json& mine, const json& ref) {
  return where + ", " + fn + "'s result was made by " + node_text(mine) + " where the exercise's is made by " +
         node_text(ref) + ": the function handed to the lab must compute as the exercise asks, with its own code";
}

namespace {

// Where one case of a function of a tensor differs ("" where it does not).
std::string call_differs(const json& mine, const json& ref, const Tolerance& tol, const std::string& fn, bool same_node,
                         json& found) {
  const std::string on = fn + "(" + shown(ref.value("input", json())) + ")";
  if (mine.contains("error")) {
    found = on + ": " + mine.value("error", "");
    return "on the grader's input " + shown(ref.value("input", json())) + ", " + fn + " " + mine.value("error", "");
  }
  if (mine.value("shape", json()) != ref.value("shape", json()) || !close(mine.value("values", json()), ref["values"], tol)) {
    found = on + " = " + values_text(mine.value("values", json()));
    return "on the grader's input " + shown(ref["input"]) + ", " + fn + " gives " + values_text(mine.value("values", json())) +
           " where the exercise's gives " + values_text(ref["values"]) +
           ": it must be right on every input it is given, not only on the statement's";
  }
  if (same_node && ref.contains("grad_fn") && mine.value("grad_fn", json()) != ref["grad_fn"]) {
    found = on + " made by " + node_text(mine.value("grad_fn", json()));
    return node_differs(fn, "on the grader's input " + shown(ref["input"]), mine.value("grad_fn", json()), ref["grad_fn"]);
  }
  // What a call made or ran, as the harness counts it on gradlab's engine
  // (LibTorch's harness counts nothing): a count the exercise's does not
  // have says the derivative was handed to autograd.
  struct Count {
    const char* key;
    bool backward;  // counted around the backward, not the call
    const char *did, *does, *what, *why;
  };
  static const Count counts[] = {
      {"nodes", false, "made", "makes", "autograd nodes",
       "its forward recorded a graph of its own (grad mode switched back on inside forward), whose built-in backward "
       "its own backward can hand the derivative to; the Function's backward must compute it from the saved output"},
      {"backward_nodes", true, "made", "makes", "autograd nodes",
       "it switched grad mode on and handed the derivative to autograd (a built-in op's node); the Function's backward "
       "must compute it itself, from the output its forward saved"},
      {"backward_ops_run", true, "ran", "runs", "built-in op nodes",
       "it handed the derivative to a built-in op's node (its saved result set to the output); the Function's backward "
       "must compute it itself, from the output its forward saved"},
  };
  for (const Count& k : counts) {
    if (!ref.contains(k.key) || !mine.contains(k.key) || mine[k.key] == ref[k.key]) continue;
    const std::string n = mine[k.key].dump(), what = std::string(" ") + k.what;
    found = on + (k.backward ? ": its backward " : " ") + k.did + " " + n + what;
    return "on the grader's input " + shown(ref["input"]) + ", " + (k.backward ? fn + "'s backward" : "calling " + fn) + " " +
           k.did + " " + n + what + " where the exercise's " + k.does + " " + ref[k.key].dump() + ": " + k.why;
  }
  const json& rg = ref.value("grad", json());
  const json& mg = mine.value("grad", json());
  if (rg.is_null() && mg.is_null()) return "";
  if (rg.is_null() != mg.is_null() || !close(mg, rg, tol)) {
    found = "its gradient on " + shown(ref["input"]) + " = " + values_text(mg);
    if (ref.contains("rewritten") && !ref["rewritten"].is_null())
      return "on the grader's input " + shown(ref["input"]) + ", with the output's values changed to " +
             values_text(ref["rewritten"]) + " before backward (as a backward that reads the output its forward saved "
             "sees them) and the gradient of the output " + values_text(ref.value("grad_output", json())) +
             ", backward gives " + values_text(mg) + " where the exercise's gives " + values_text(rg) +
             ": backward must compute from the output forward saved (not from the input or the forward again), "
             "times the incoming gradient";
    return "on the grader's input " + shown(ref["input"]) + ", with the gradient of the output " +
           values_text(ref.value("grad_output", json())) + " (not all ones), backward gives " + values_text(mg) +
           " where the exercise's gives " + values_text(rg) +
           ": the gradient must follow the input and the incoming gradient on every input";
  }
  return "";
}

// Where one case of a walker differs ("" where it does not).
std::string walk_differs(const json& mine, const json& ref, const std::string& fn, json& found) {
  const std::string graph = "the grader's graph " + ref.value("expression", ref.value("graph", ""));
  const std::string a = normalise_output(mine.value("output", "")), b = normalise_output(ref.value("output", ""));
  if (mine.contains("error")) {
    found = fn + " " + mine.value("error", "");
    const std::string error = mine.value("error", "");
    const bool again = error.find("walked the same graph again") != std::string::npos;
    return "on " + graph + ", " + fn + " " + error +
           (a.empty() || again ? std::string()
                               : " after printing " + std::to_string(std::count(a.begin(), a.end(), '\n') + 1) + " lines");
  }
  if (a == b) return "";
  found = a.empty() ? json("nothing printed") : json(a);
  return "on " + graph + ", " + fn + " printed " + (a.empty() ? "nothing" : "other lines") + ": " +
         (b.empty() ? "it should print nothing" : first_difference(a, b)) +
         "; the walk must be right on any graph it is handed";
}

// What a walk prints on a graph, as the probe's "line" says each node's line
// reads (${depth}, ${indent}: as many spaces, ${name}): the node, then each
// next edge's function one level deeper; a null one prints nothing.
void render_walk(const std::shared_ptr<torch::autograd::Node>& node, int depth, const std::string& line, std::string& out) {
  if (node == nullptr) return;  // (a null edge: nothing printed)
  std::string l = line;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"${depth}", std::to_string(depth)},
                                   {"${indent}", std::string(static_cast<size_t>(depth), ' ')}, {"${name}", node->name()}})
    for (size_t at = 0; (at = l.find(key, at)) != std::string::npos; at += value.size()) l.replace(at, key.size(), value);
  out += l + "\n";
  for (const auto& e : node->next_edges()) render_walk(e.function, depth + 1, line, out);
}

// The case a walk on a made-up graph must give: the graph the grader asked
// for (its seed, not the one the program says), walked as "line" says.
json made_up_case(const json& probe, int64_t seed) {
  const lab::probes::graphs::Built g = lab::probes::graphs::random_graph(static_cast<uint64_t>(seed));
  std::string out;
  render_walk(g.root.grad_fn(), 0, probe.value("line", ""), out);
  return {{"graph", "random"}, {"seed", seed}, {"expression", g.expression}, {"output", out}};
}

}  // namespace

Outcome check_probe_cases(const Check& c, const Rubric& rubric, const json& student, const json& reference) {
  const std::string id = c.spec["probe"];
  if (!reference.contains("probes") || !reference["probes"].contains(id))
    rubric_bug(c, "the reference has no outcome for probe \"" + id + "\"");
  const json& rp = reference["probes"][id];
  if (!rp.contains("cases")) rubric_bug(c, "the reference's probe \"" + id + "\" failed: " + rp.value("error", ""));
  const json sp = student.contains("probes") && student["probes"].contains(id) ? student["probes"][id] : json();
  Outcome o;
  const json& rc = rp["cases"];
  o.expected = std::to_string(rc.size()) + " cases as the exercise's own";
  if (sp.is_null()) {
    o.found = "the probe did not run";
    o.unreached = true;
    return o;
  }
  if (!sp.contains("cases")) {
    o.found = "error: " + sp.value("error", "");
    o.message = sp.value("error", "the probe could not run");
    return o;
  }
  const json& sc = sp["cases"];
  std::string fn;
  json probe;
  for (const auto& p : rubric.probes)
    if (p.value("id", "") == id) fn = p.value("function", ""), probe = p;
  if (fn.empty()) fn = "the function";
  int64_t made_up = 0;
  for (size_t i = 0; i < rc.size(); ++i) {
    if (i >= sc.size()) {
      o.found = std::to_string(sc.size()) + " cases";
      o.message = "the probe stopped after " + std::to_string(sc.size()) + " of " + std::to_string(rc.size()) + " cases";
      return o;
    }
    json ref = rc[i];
    if (ref.value("graph", "") == "random") {
      // The reference's walk of its own made-up graph proves "line" right;
      // the student's is held to the graph the grader asked it.
      if (!rp.contains("seed") || !sp.contains("seed")) rubric_bug(c, "the probe "" + id + "" made up graphs the grader did not ask for");
      const json mine = made_up_case(probe, rp["seed"].get<int64_t>() + made_up);
      if (normalise_output(mine["output"]) != normalise_output(ref.value("output", "")))
        rubric_bug(c, "the probe "" + id + ""'s line " + probe.value("line", json()).dump() +
                          " does not give what the reference's walker printed on " + ref.value("expression", "") + ": " +
                          first_difference(normalise_output(mine["output"]), normalise_output(ref.value("output", ""))));
      ref = made_up_case(probe, sp["seed"].get<int64_t>() + made_up++);
    }
    json found;
    o.message = ref.contains("graph") ? walk_differs(sc[i], ref, fn, found)
                                      : call_differs(sc[i], ref, c.tol, fn, c.spec.value("same_node", false), found);
    if (!o.message.empty()) {
      o.found = found;
      return o;
    }
  }
  o.pass = true;
  o.found = o.expected;
  return o;
}

}  // namespace grader::check_detail

// Backward graphs as the harness writes them: nodes in breadth-first order
// from the root, each with its grad_fn name, the named tensors it stands for,
// and its next edges ([node id or null, input_nr]).
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "judge/checks.h"
#include "judge/normal_form.h"

namespace grader {
namespace {

constexpr const char* kAccumulate = "torch::autograd::AccumulateGrad";

std::map<std::string, const json*> index(const json& nodes) {
  std::map<std::string, const json*> m;
  for (const auto& n : nodes) m[n.value("id", "")] = &n;
  return m;
}

std::string label(const json& n) {
  const json& t = n["tensors"];
  if (n.value("name", "") == kAccumulate) return t.empty() ? "AccumulateGrad" : t[0].get<std::string>();
  return n.value("name", "");
}

}  // namespace

std::string graph_expression(const json& nodes) {
  if (!nodes.is_array() || nodes.empty()) return "no graph";
  auto by_id = index(nodes);
  std::set<std::string> shown;
  std::string out;
  // Depth first with an explicit stack of the nodes whose inputs are being
  // written (a graph's depth is the student's to choose), and a budget on
  // the text: past it, the expression ends in "…".
  struct Open {
    const json* node;
    size_t edge;
  };
  std::vector<Open> open;
  static const json none = json::array();
  auto enter = [&](const std::string& id) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      out += "?";
      return;
    }
    const json& n = *it->second;
    const json& tensors = n.contains("tensors") && n["tensors"].is_array() ? n["tensors"] : none;
    const std::string first = !tensors.empty() && tensors[0].is_string() ? tensors[0].get<std::string>() : "";
    std::string head = label(n);
    if (n.value("name", "") == kAccumulate) {
      out += head;
      return;
    }
    if (!first.empty()) head = first + "=" + head;
    // A node reached twice is spelled out once; later mentions use its name.
    if (!shown.insert(id).second) {
      out += first.empty() ? "…" + n.value("name", "") : first;
      return;
    }
    out += head + "(";
    open.push_back({&n, 0});
  };
  enter(nodes[0].value("id", ""));
  while (!open.empty()) {
    const json& n = *open.back().node;
    const json& next = n.contains("next") && n["next"].is_array() ? n["next"] : none;
    const size_t k = open.back().edge++;
    if (k >= next.size()) {
      out += ")";
      open.pop_back();
      continue;
    }
    if (out.size() > kMaxShownText) {
      out += ", …";
      out.append(open.size(), ')');
      break;
    }
    if (k) out += ", ";
    const json& e = next[k];
    if (!e.is_array() || e.empty() || e[0].is_null()) out += "None";
    else enter(e[0].is_string() ? e[0].get<std::string>() : "");
  }
  return out;
}

GraphDiff compare_graphs(const json& student, const json& reference, const Rubric& rubric,
                         const json& student_tensors, const json& reference_tensors) {
  GraphDiff d;
  if (!student.is_array() || student.empty() || !reference.is_array() || reference.empty()) {
    d.differences.push_back("there is no graph to compare");
    return d;
  }
  if (same_normal_form(student, student_tensors, reference, reference_tensors, rubric)) return d;
  auto s_by = index(student), r_by = index(reference);
  std::map<std::string, std::string> matched;  // reference id -> student id
  auto differ = [&](const std::string& where, const std::string& what, const std::string& sid, const std::string& rid) {
    d.differences.push_back(where + ": " + what);
    if (!sid.empty()) d.student_nodes.push_back(sid);
    if (!rid.empty()) d.reference_nodes.push_back(rid);
  };

  // Walks both graphs from the root in step. Where the two nodes have the
  // same name, inputs are compared position by position; where they are
  // accepted alternatives (x*x for x.pow(2)), the inputs are compared as
  // lists of distinct nodes, since x*x reaches x twice and pow once.
  std::function<void(const std::vector<json>&, const std::vector<json>&, const std::string&, const std::string&)>
      compare_inputs;
  // Each swap may double the work below it; graphs in exercises are small,
  // and past this many tries the order is simply taken as it is.
  constexpr int kMaxSwaps = 64;
  int swaps = 0;
  std::function<void(const std::string&, const std::string&, const std::string&)> walk =
      [&](const std::string& sid, const std::string& rid, const std::string& where) {
        auto seen = matched.find(rid);
        if (seen != matched.end()) {
          if (seen->second != sid)
            differ(where, "the reference reuses one node here, the submission has two different ones", sid, rid);
          return;
        }
        matched[rid] = sid;
        const json& s = *s_by.at(sid);
        const json& r = *r_by.at(rid);
        const std::string sn = s.value("name", ""), rn = r.value("name", "");
        if (!rubric.equivalent(sn, rn)) {
          differ(where, "expected " + label(r) + ", found " + label(s), sid, rid);
          return;
        }
        // A named intermediate (q = p + y) must be that node in the
        // submission too, not a look-alike computed separately.
        if (rn != kAccumulate && !r["tensors"].empty()) {
          const std::string want = r["tensors"][0];
          bool has = false;
          for (const auto& t : s["tensors"]) has |= t == want;
          if (!has)
            differ(where, "this " + sn + " should be the tensor " + want + ", but " + want +
                              " is not part of this graph (it was computed separately, or changed in place later)",
                   sid, rid);
        }
        if (rn == kAccumulate) {
          const json& want = r["tensors"];
          const json& got = s["tensors"];
          if (!want.empty() && (got.empty() || got[0] != want[0]))
            differ(where, "expected the leaf " + want[0].get<std::string>() + ", found " + label(s), sid, rid);
          return;
        }
        auto inputs = [&](const json& n) {
          std::vector<json> v;
          for (const auto& e : n["next"]) v.push_back(e[0]);
          if (sn != rn) {  // alternatives: distinct inputs only
            std::vector<json> u;
            for (const auto& x : v) {
              bool dup = false;
              for (const auto& y : u) dup |= !x.is_null() && x == y;
              if (!dup) u.push_back(x);
            }
            v = u;
          }
          return v;
        };
        auto si = inputs(s), ri = inputs(r);
        const std::string here = where + " → " + label(r);
        if (si.size() != ri.size()) {
          // Name each side's own node: through alternatives they may differ.
          differ(here, "the reference's " + label(r) + " has " + std::to_string(ri.size()) + " distinct input(s), " +
                           "the submission's " + label(s) + " " + std::to_string(si.size()),
                 sid, rid);
          return;
        }
        // a + b and a * b compute the same whatever the order of their
        // operands, and so do their gradients: when the inputs do not match
        // in order, try them the other way round and keep the closer match.
        if ((rn == "AddBackward0" || rn == "MulBackward0") && sn == rn && ri.size() == 2 && ++swaps < kMaxSwaps) {
          const auto matched0 = matched;
          const GraphDiff d0 = d;
          compare_inputs(si, ri, sid, here);
          if (d.differences.size() == d0.differences.size()) return;
          auto straight = std::make_pair(matched, d);
          matched = matched0, d = d0;
          std::swap(si[0], si[1]);
          compare_inputs(si, ri, sid, here);
          if (d.differences.size() >= straight.second.differences.size()) std::tie(matched, d) = straight;
          return;
        }
        compare_inputs(si, ri, sid, here);
      };
  compare_inputs = [&](const std::vector<json>& si, const std::vector<json>& ri, const std::string& sid,
                       const std::string& here) {
        for (size_t k = 0; k < ri.size(); ++k) {
          const std::string at = here + " input " + std::to_string(k);
          if (ri[k].is_null() && si[k].is_null()) continue;
          if (ri[k].is_null()) {
            differ(at, "expected no gradient to flow (None), found " + label(*s_by.at(si[k].get<std::string>())),
                   si[k].get<std::string>(), "");
          } else if (si[k].is_null()) {
            differ(at, "expected " + label(*r_by.at(ri[k].get<std::string>())) +
                           ", found None (that input does not require grad)",
                   sid, ri[k].get<std::string>());
          } else {
            walk(si[k].get<std::string>(), ri[k].get<std::string>(), at);
          }
        }
      };
  walk(student[0].value("id", ""), reference[0].value("id", ""), "root");
  return d;
}

namespace {

// The named tensors that appear on a graph, as the snapshot described them:
// only what the pictures and their alt text use.
json tensors_on(const json& nodes, const json& snapshot) {
  json out = json::object();
  if (!snapshot.contains("tensors") || !snapshot["tensors"].is_object()) return out;
  const json& all = snapshot["tensors"];
  for (const auto& n : nodes)
    if (n.is_object() && n.contains("tensors") && n["tensors"].is_array())
      for (const auto& t : n["tensors"]) {
        if (!t.is_string() || !all.contains(t.get<std::string>())) continue;
        const json& d = all[t.get<std::string>()];
        json brief = json::object();
        for (const char* k : {"shape", "requires_grad", "is_leaf", "retains_grad"})
          if (d.is_object() && d.contains(k)) brief[k] = d[k];
        out[t.get<std::string>()] = brief;
      }
  return out;
}

const json& graph_named(const json& snapshot, const std::string& name) {
  static const json none = nullptr;
  if (!snapshot.contains("graphs") || !snapshot["graphs"].is_object() || !snapshot["graphs"].contains(name))
    return none;
  const json& g = snapshot["graphs"][name];
  return g.is_array() && !g.empty() ? g : none;
}

}  // namespace

std::vector<GraphView> graph_views(const Rubric& rubric, const std::vector<CheckResult>& results, const json& student,
                                   const json& reference) {
  std::vector<GraphView> out;
  std::set<std::string> shown;
  auto add = [&](const std::string& name, GraphView v) {
    if (out.size() >= kMaxGraphViews || !shown.insert(name).second) return;
    v.tensor = name;
    v.student = graph_named(student, name);
    if (v.student.is_null()) return;
    v.student_tensors = tensors_on(v.student, student);
    out.push_back(std::move(v));
  };
  // First the graphs the rubric checks, in its order; beside a failed one
  // the reference's, unless the check is hidden (that would give it away).
  for (size_t i = 0; i < rubric.checks.size() && i < results.size(); ++i) {
    const Check& c = rubric.checks[i];
    if (c.kind != "graph") continue;
    const std::string name = c.spec.value("tensor", "");
    GraphView v;
    v.check_id = c.id;
    const json& sg = graph_named(student, name);
    const json& rg = graph_named(reference, name);
    if (results[i].status == CheckStatus::Failed && !c.hidden && !sg.is_null() && !rg.is_null()) {
      GraphDiff d = compare_graphs(sg, rg, rubric, student.value("tensors", json()), reference.value("tensors", json()));
      v.reference = rg;
      v.reference_tensors = tensors_on(rg, reference);
      v.student_marked = std::move(d.student_nodes);
      v.reference_marked = std::move(d.reference_nodes);
      v.differences = std::move(d.differences);
    }
    add(name, std::move(v));
  }
  // Then each graph no other named graph contains (y inside loss is drawn
  // as part of loss), by name.
  if (!student.contains("graphs") || !student["graphs"].is_object()) return out;
  const json& graphs = student["graphs"];
  for (const auto& [name, g] : graphs.items()) {
    bool inside = false;
    for (const auto& [other, og] : graphs.items()) {
      if (other == name || !og.is_array()) continue;
      for (size_t k = 0; k < og.size() && !inside; ++k) {
        const json& n = og[k];
        if (!n.is_object() || !n.contains("tensors") || !n["tensors"].is_array()) continue;
        for (const auto& t : n["tensors"]) {
          if (t != name) continue;
          // Two names on one root (an alias): the first name draws it.
          inside = k > 0 || other < name;
        }
      }
      if (inside) break;
    }
    if (!inside) add(name, GraphView{});
  }
  return out;
}

}  // namespace grader

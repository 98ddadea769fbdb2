#include "judge/facts.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <vector>

#include "common/files.h"
#include "common/sha256.h"
#include "judge/variants.h"

namespace grader {
namespace {

constexpr int kFactsVersion = 1;

// Copies snapshot[section][key] into out[section][key] when it is there.
void keep(json& out, const json& snapshot, const std::string& section, const std::string& key) {
  if (snapshot.contains(section) && snapshot[section].is_object() && snapshot[section].contains(key))
    out[section][key] = snapshot[section][key];
}

// Every tensor name a recorded graph mentions (the graph checks compare
// where named tensors stand, so they read those tensors' facts too).
void names_in_graph(const json& nodes, std::set<std::string>& names) {
  if (!nodes.is_array()) return;
  for (const auto& n : nodes)
    if (n.is_object() && n.contains("tensors") && n["tensors"].is_array())
      for (const auto& t : n["tensors"])
        if (t.is_string()) names.insert(t.get<std::string>());
}

std::string where(const std::string& path) { return path.empty() ? "the document" : path; }

}  // namespace

std::string solution_key(const std::optional<std::string>& text) { return text ? sha256_hex(*text) : ""; }

std::string solution_file_key(const std::string& path) { return solution_key(path.empty() ? std::nullopt : read_file(path)); }

std::vector<Shadow> shadows_of(const Rubric& rubric) {
  std::vector<Shadow> out;
  for (const Check& c : rubric.checks) {
    if (c.kind == "derives_from") out.push_back({c.id, c.spec["source"], false, c.spec["tensor"]});
    if (c.kind == "updated_from_grad") out.push_back({c.id, c.spec["tensor"], true, c.spec["tensor"]});
    if (c.kind == "snapshots" && c.spec.contains("source"))
      out.push_back({c.id, c.spec["source"], false, "", c.spec["labels"].get<std::vector<std::string>>()});
  }
  return out;
}

std::string replay_key(const Rubric& rubric) {
  json shadows = json::array();
  for (const Shadow& s : shadows_of(rubric)) shadows.push_back({s.id, s.source, s.grads, s.observe, s.records});
  const json asked = {{"probes", rubric.probes}, {"shadows", shadows}, {"curvature", rubric.curvature},
                      {"own_functions", rubric.custom_functions}};
  return sha256_hex(asked.dump()).substr(0, 16);
}

json facts_document(const Rubric& rubric, const json& snapshot, const std::string& solution_sha256,
                    bool visible_only, const std::optional<std::string>& starter_source, int variant) {
  json body = visible_only ? visible_facts(rubric, snapshot) : snapshot;
  body.erase("nonce");
  body.erase("usage");
  // How the replay judged the reference's own run: not a fact of the exercise.
  body.erase("computation");
  body.erase("tape_chain");
  // Of the provenance, what a student's run is held to: how each snapshot
  // came to be (a gradient a backward wrote, or not, and from what start),
  // and how many backward passes ran before each record (since the last one,
  // and in all); the routes behind the updates' gradients.
  body.erase("provenance");
  if (snapshot.contains("provenance") && snapshot["provenance"].is_object()) {
    json records = snapshot["provenance"].value("records", json::object());
    json kept = json::object();
    // The graphs behind the backward roots, only for the labels a check
    // holds to them (they show the reference's computation).
    std::set<std::string> root_graph_labels;
    for (const Check& c : rubric.checks)
      if (c.kind == "snapshots" && c.spec.value("root_graph", false) && !(visible_only && c.hidden))
        for (const auto& l : c.spec.value("labels", json::array())) root_graph_labels.insert(l.get<std::string>());
    for (const auto& r : body.value("records", json::array())) {
      const std::string label = r.value("label", "");
      if (!records.contains(label)) continue;
      for (const char* k : {"grads", "seeds", "backward_passes", "after_backwards", "grad_owner", "error_from_leaf"})
        if (records[label].contains(k)) kept[label][k] = records[label][k];
      if (root_graph_labels.count(label) && records[label].contains("root_graphs"))
        kept[label]["root_graphs"] = records[label]["root_graphs"];
    }
    if (!kept.empty()) body["provenance"] = {{"records", kept}};
    // And how each named tensor's gradient was written: how its backward started.
    const json tensors = snapshot["provenance"].value("tensors", json::object());
    // And what each detach() and clone() on the way to a named tensor took.
    for (const auto& [name, p] : tensors.items())
      if (p.contains("through_inputs")) body["provenance"]["tensors"][name]["through_inputs"] = p["through_inputs"];
    for (const auto& [name, p] : tensors.items())
      if (p.value("grad", "") == "backward" && p.contains("seed")) {
        body["provenance"]["tensors"][name] = {{"grad", "backward"}, {"seed", p["seed"]}};
        if (p.contains("root") && p["root"].is_string()) body["provenance"]["tensors"][name]["root"] = p["root"];
        if (p.contains("earlier_roots")) body["provenance"]["tensors"][name]["earlier_roots"] = p["earlier_roots"];
      }
    // And the route of the backward behind each in-place update's gradient,
    // and how many passes that gradient had added up.
    for (const auto& [name, p] : tensors.items()) {
      json routes = json::array();
      bool any = false;
      for (const auto& u : p.value("updates", json::array())) {
        routes.push_back({{"grad_route", u.value("grad_route", "")}, {"grad_passes", u.value("grad_passes", 0)}});
        any |= !routes.back()["grad_route"].get<std::string>().empty();
      }
      if (any) body["provenance"]["tensors"][name]["updates"] = routes;
    }
    // And the shadow replays' answers (replay.h), for the checks it keeps.
    const json shadows = snapshot["provenance"].value("shadows", json::object());
    for (const Check& c : rubric.checks)
      if (shadows.contains(c.id) && !(visible_only && c.hidden)) body["provenance"]["shadows"][c.id] = shadows[c.id];
  }
  json doc = {{"facts", kFactsVersion}, {"exercise", rubric.exercise}, {"replay", replay_key(rubric)}};
  if (!solution_sha256.empty()) doc["solution_sha256"] = solution_sha256;
  if (!rubric.variants.empty()) doc["given"] = given_at(rubric, variant);
  doc["visible_only"] = visible_only;
  if (starter_source) doc["starter"] = starter_record(*starter_source);
  doc["snapshot"] = std::move(body);
  return doc;
}

std::optional<StarterBlanks> recorded_starter(const std::string& path) {
  const auto text = read_file(path);
  if (!text) return std::nullopt;
  const json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc.contains("starter")) return std::nullopt;
  return read_starter_record(doc["starter"]);
}

std::string starter_difference(const std::string& path, const std::optional<std::string>& starter_source) {
  if (!starter_source) return "";  // no starter file: nothing to hold the record to
  const auto text = read_file(path);
  const json doc = text ? json::parse(*text, nullptr, false) : json();
  if (!doc.is_object() || !doc.contains("starter")) return path + " holds no record of the starter's blanks";
  if (doc["starter"].value("sha256", "") != sha256_hex(*starter_source))
    return path + " was recorded from another version of the starter (exercises/" + doc.value("exercise", "") + ".cpp)";
  return "";
}

json visible_facts(const Rubric& rubric, const json& snapshot) {
  json out = {{"status", snapshot.value("status", "ok")}, {"tensors", json::object()}, {"graphs", json::object()},
              {"records", json::array()}, {"probes", json::object()}, {"warnings", json::array()}};
  std::set<std::string> tensors, labels;
  for (const Check& c : rubric.checks) {
    if (c.hidden) continue;
    const std::string t = c.spec.value("tensor", "");
    if (!t.empty()) tensors.insert(t);
    if (c.kind == "graph") {
      keep(out, snapshot, "graphs", t);
      if (snapshot.contains("graphs") && snapshot["graphs"].contains(t)) names_in_graph(snapshot["graphs"][t], tensors);
    }
    if (c.spec.contains("probe")) keep(out, snapshot, "probes", c.spec["probe"].get<std::string>());
    if (c.spec.contains("label")) labels.insert(c.spec["label"].get<std::string>());
    for (const auto& l : c.spec.value("labels", json::array())) labels.insert(l.get<std::string>());
    if (c.kind == "stdout") out["stdout"] = snapshot.value("stdout", "");
  }
  for (const auto& t : tensors) keep(out, snapshot, "tensors", t);
  for (const auto& r : snapshot.value("records", json::array()))
    if (labels.count(r.value("label", ""))) out["records"].push_back(r);
  return out;
}

std::optional<json> read_facts(const std::string& path, const Rubric& rubric, const std::string& solution_sha256,
                               std::string& why, int variant) {
  const auto text = read_file(path);
  if (!text) {
    why = "there is no " + path;
    return std::nullopt;
  }
  json doc;
  try {
    doc = json::parse(*text);
  } catch (const std::exception& e) {
    why = path + " is not JSON (" + e.what() + ")";
    return std::nullopt;
  }
  if (!doc.is_object() || doc.value("facts", 0) != kFactsVersion || !doc.contains("snapshot") ||
      !doc["snapshot"].is_object()) {
    why = path + " is not a version-" + std::to_string(kFactsVersion) + " facts document";
    return std::nullopt;
  }
  if (doc.value("exercise", "") != rubric.exercise) {
    why = path + " holds the facts of " + doc.value("exercise", std::string("?")) + ", not " + rubric.exercise;
    return std::nullopt;
  }
  if (doc.value("replay", "") != replay_key(rubric)) {
    why = path + " was recorded for other probes or route questions than the rubric's (the rubric changed since)";
    return std::nullopt;
  }
  if (!rubric.variants.empty() && doc.value("given", json()) != given_at(rubric, variant)) {
    why = path + " was recorded at other numbers than variant " + std::to_string(variant) + "'s";
    return std::nullopt;
  }
  if (!solution_sha256.empty() && doc.value("solution_sha256", "") != solution_sha256) {
    why = path + " was recorded from another version of the solution";
    return std::nullopt;
  }
  return std::move(doc["snapshot"]);
}

std::string facts_difference(const json& a, const json& b) {
  // An explicit stack: documents are the course's own, but stay iterative
  // like every other walk over snapshots.
  std::vector<std::tuple<const json*, const json*, std::string>> todo = {{&a, &b, ""}};
  while (!todo.empty()) {
    auto [x, y, path] = todo.back();
    todo.pop_back();
    if (x->is_number() && y->is_number()) {
      const double p = x->get<double>(), q = y->get<double>();
      if (!(p == q || std::fabs(p - q) <= 1e-6 + 1e-5 * std::max(std::fabs(p), std::fabs(q))))
        return where(path) + ": " + x->dump() + " recorded, " + y->dump() + " now";
    } else if (x->type() != y->type()) {
      return where(path) + ": " + std::string(x->type_name()) + " recorded, " + y->type_name() + " now";
    } else if (x->is_object()) {
      for (const auto& [k, _] : x->items())
        if (!y->contains(k)) return where(path) + ": \"" + k + "\" recorded, gone now";
      std::vector<std::tuple<const json*, const json*, std::string>> children;
      for (const auto& [k, v] : y->items()) {
        if (!x->contains(k)) return where(path) + ": \"" + k + "\" is new";
        children.emplace_back(&(*x)[k], &v, path + "/" + k);
      }
      todo.insert(todo.end(), children.rbegin(), children.rend());  // the first key is compared first
    } else if (x->is_array()) {
      if (x->size() != y->size())
        return where(path) + ": " + std::to_string(x->size()) + " entries recorded, " + std::to_string(y->size()) + " now";
      for (size_t i = x->size(); i-- > 0;) todo.emplace_back(&(*x)[i], &(*y)[i], path + "/" + std::to_string(i));
    } else if (*x != *y) {
      return where(path) + ": " + x->dump() + " recorded, " + y->dump() + " now";
    }
  }
  return "";
}

}  // namespace grader

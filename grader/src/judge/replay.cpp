#include "judge/replay.h"

#include <gradlab/tape.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "judge/replayer.h"

namespace grader {
namespace {

namespace facts = lab::facts;
using replay::Failure;
using replay::Replayer;
using replay::cut;
using replay::kMaxSeconds;
using replay::kMaxTensorBytes;
using torch::Tensor;

// Two numbers as the harness writes them, equal within what the engine on
// another device (or another summation order) may differ by.
bool same_number(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || std::abs(x - y) <= 1e-6 + 1e-5 * std::abs(y);
  }
  return a == b;
}

// Where `claimed` and `computed` (tensor descriptions, graphs, records)
// differ: the first field, or "" when they agree. The device is not compared
// (the replay runs on the CPU).
std::string first_difference(const json& claimed, const json& computed, const std::string& at, json& c_out, json& r_out) {
  if (claimed.is_object() && computed.is_object()) {
    for (const auto& [k, v] : computed.items()) {
      if (k == "device") continue;
      const std::string where = at.empty() ? k : at + "." + k;
      if (!claimed.contains(k)) {
        c_out = "nothing", r_out = v;
        return where;
      }
      std::string d = first_difference(claimed.at(k), v, where, c_out, r_out);
      if (!d.empty()) return d;
    }
    for (const auto& [k, v] : claimed.items())
      if (!computed.contains(k) && k != "unverified") {
        c_out = v, r_out = "nothing";
        return at.empty() ? k : at + "." + k;
      }
    return "";
  }
  if (claimed.is_array() && computed.is_array()) {
    if (claimed.size() != computed.size()) {
      c_out = claimed, r_out = computed;
      return at.empty() ? "length" : at;
    }
    for (size_t i = 0; i < claimed.size(); ++i) {
      json c, r;
      if (!first_difference(claimed[i], computed[i], at, c, r).empty()) {
        c_out = claimed, r_out = computed;
        return at;
      }
    }
    return "";
  }
  if (same_number(claimed, computed)) return "";
  c_out = claimed, r_out = computed;
  return at;
}

// Every top-level field that differs is a mismatch of its own: a check reads
// one field, and a harmless difference in another (a version bumped on
// purpose) must not stand in for the one it reads.
void compare(const std::string& what, const json& claimed, const json& computed, std::vector<Mismatch>& out) {
  if (!claimed.is_object() || !computed.is_object()) {
    json c, r;
    const std::string field = first_difference(claimed, computed, "", c, r);
    if (!field.empty()) out.push_back({what, field, cut(c.dump()), cut(r.dump())});
    return;
  }
  for (const auto& [k, v] : computed.items()) {
    if (k == "device") continue;
    json c, r;
    const std::string field = claimed.contains(k) ? first_difference(claimed.at(k), v, k, c, r) : k;
    if (!claimed.contains(k)) c = "nothing", r = v;
    if (!field.empty()) out.push_back({what, field, cut(c.dump()), cut(r.dump())});
  }
  for (const auto& [k, v] : claimed.items())
    if (!computed.contains(k) && k != "unverified") out.push_back({what, k, cut(v.dump()), "nothing"});
}

// Holds the program's claims against the replay's facts; what the replay
// could not vouch for is left as the program claimed it.
void compare_all(const json& claimed, Replayer& r, Verified& v, bool own_functions) {
  json& doc = v.doc;
  // What only the program's own Function vouches for, in an exercise that
  // asks for none: refused, not taken as claimed.
  auto refuse = [&](const std::string& what, const std::string& field) {
    v.mismatches.push_back({what, field, "its own account", kThroughOwnFunction});
  };
  const json no_object = json::object();
  const json& ct = claimed.contains("tensors") ? claimed["tensors"] : no_object;
  for (const auto& [name, t] : ct.items())
    if (!doc["tensors"].contains(name)) v.mismatches.push_back({"tensor " + name, "name", "named", "never named"});
  for (auto& [name, t] : doc["tensors"].items()) {
    if (!ct.contains(name)) {
      v.mismatches.push_back({"tensor " + name, "name", "not in the result", "named"});
      continue;
    }
    if (r.tainted_names.count(name)) {
      // Past a custom Function the replay knows the values (its forward was
      // taped) but not the graph the program's node makes: the values are
      // held to the replay, the rest is the program's account.
      json claimed_part = json::object(), computed_part = json::object();
      for (const char* k : {"defined", "shape", "dtype", "values"}) {
        if (ct[name].contains(k)) claimed_part[k] = ct[name][k];
        if (t.contains(k)) computed_part[k] = t[k];
      }
      compare("tensor " + name, claimed_part, computed_part, v.mismatches);
      if (!own_functions) refuse("tensor " + name, "name");
      t = ct[name];
      continue;
    }
    bool upstream = false;
    for (const auto& [n, x] : r.named) upstream |= n == name && r.vouched_by_program(x);
    if (r.grads_tainted && upstream && ct[name].contains("grad")) {
      if (!own_functions) refuse("tensor " + name, "grad");
      t["grad"] = ct[name]["grad"];
    }
    compare("tensor " + name, ct[name], t, v.mismatches);
  }
  const json& cg = claimed.contains("graphs") ? claimed["graphs"] : no_object;
  for (auto& [name, g] : doc["graphs"].items()) {
    if (r.tainted_names.count(name)) continue;
    if (!cg.contains(name) || cg[name] != g) v.mismatches.push_back({"tensor " + name, "graph", cg.contains(name) ? "another graph" : "none", "its computation's graph"});
  }
  for (const auto& [name, g] : cg.items())
    if (r.tainted_names.count(name)) doc["graphs"][name] = g;
  const json& cr = claimed.contains("records") ? claimed["records"] : json::array();
  json& rr = doc["records"];
  for (size_t i = 0; i < std::max(cr.size(), rr.size()); ++i) {
    if (i >= cr.size() || i >= rr.size()) {
      const json& extra = i < cr.size() ? cr[i] : rr[i];
      v.mismatches.push_back({"record \"" + extra.value("label", std::string()) + "\"", "records",
                              std::to_string(cr.size()) + " records", std::to_string(rr.size()) + " records"});
      continue;
    }
    if (rr[i].value("unverified", false)) {
      if (!own_functions) refuse("record \"" + rr[i].value("label", std::string()) + "\"", "records");
      rr[i] = cr[i];
      continue;
    }
    compare("record \"" + rr[i].value("label", std::string()) + "\"", cr[i], rr[i], v.mismatches);
  }
  if (doc.contains("probes") && claimed.contains("probes"))
    for (auto& [id, p] : doc["probes"].items()) {
      if (!claimed["probes"].contains(id)) continue;
      compare("probe " + id, claimed["probes"][id], p, v.mismatches);
    }
}

}  // namespace

Channel split_channel(std::string_view text) {
  const size_t cut_at = text.rfind('\n');
  if (cut_at == std::string_view::npos) return {{}, text};
  return {text.substr(0, cut_at + 1), text.substr(cut_at + 1)};
}

namespace {

// Every event of the tape, in order, within the replay's time; each as it
// was parsed is kept in `events`, for the shadow replays to read again.
void replay_lines(Replayer& r, std::string_view tape, std::chrono::steady_clock::time_point started,
                  std::vector<json>& events) {
  size_t from = 0, line_no = 0;
  while (from < tape.size()) {
    const size_t end = tape.find('\n', from);
    const std::string_view line = tape.substr(from, end - from);
    from = end == std::string_view::npos ? tape.size() : end + 1;
    ++line_no;
    if (line_no > gradlab::tape::kMaxEvents + 1) throw Failure{"the tape is longer than any program may write"};
    try {
      events.push_back(json::parse(line));
      r.event(events.back());
    } catch (const Failure&) {
      throw;
    } catch (const std::exception& e) {
      throw Failure{"the tape could not be replayed (line " + std::to_string(line_no) + "): " + cut(e.what())};
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > kMaxSeconds)
      throw Failure{"the program's computation took the grader too long to check"};
  }
}

// One shadow replay of the tape's events (parsed by the base replay) with
// `perturb`, or why it could not run.
std::optional<std::string> replay_shadow(Replayer& s, const std::vector<json>& events,
                                         std::chrono::steady_clock::time_point started) {
  try {
    for (const json& e : events) {
      s.event(e);
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > kMaxSeconds)
        throw Failure{"the program's computation took the grader too long to check"};
    }
  } catch (const Failure& f) {
    return f.why;
  } catch (const std::exception& e) {
    return cut(e.what());
  }
  return std::nullopt;
}

// The answer to one shadow question (replay.h). Other values of a tensor: one
// replay, and what `observe` holds at the end. Other gradients: one replay
// per step the tensor took (an in-place update after a gradient it was
// given; at most kMaxSteps of them, spread evenly), each changing that
// step's gradient alone and reading the tensor right after the update; so a
// step is judged on its own, not on where the other steps led.
constexpr int kMaxSteps = 8;

// What the records of `labels` hold, in order: a number, or a tensor's values.
// (Each value or snapshot record is also numbered among those two kinds:
// Replayer::record_sources.)
struct Labelled {
  size_t at;      // in records
  int numbered;   // among the value and snapshot records; -1: another kind
};
std::vector<Labelled> records_labelled(const json& records, const std::vector<std::string>& labels) {
  std::vector<Labelled> out;
  int numbered = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string kind = records[i].value("kind", "");
    const bool counted = kind == "value" || kind == "snapshot";
    if (std::find(labels.begin(), labels.end(), records[i].value("label", "")) != labels.end())
      out.push_back({i, counted ? numbered : -1});
    numbered += counted;
  }
  return out;
}

json record_numbers(const json& r) {
  if (r.contains("value")) return r["value"];
  if (r.contains("tensor")) return r["tensor"].value("values", json());
  return nullptr;
}

// The records shadow: for each record of the labels (at most kMaxSteps,
// spread evenly), one replay that gives other values to the version of the
// source that record was computed from (the source as it stood then, after
// its in-place updates; or, updated out of place, the tensor it was then),
// and what that record holds there. A record that was not computed from the
// source at all holds null; a number typed in, or the source multiplied
// away, holds what it held.
json records_answer(const Shadow& q, const Replayer& base, const std::vector<json>& events,
                    std::chrono::steady_clock::time_point started) {
  const Tensor* source = nullptr;
  for (const auto& [n, t] : base.named)
    if (n == q.source && t.defined()) source = &t;
  if (!source) return {{"failed", q.source + " was never named"}};
  const std::set<const gradlab::TensorImpl*> versions = base.versions_of(*source);
  const std::vector<Labelled> mine = records_labelled(base.records, q.records);
  const int given = static_cast<int>(mine.size()), asked = std::min(given, kMaxSteps);
  json out(static_cast<size_t>(given), nullptr);
  for (int i = 0; i < asked; ++i) {
    const int k = asked == given ? i : static_cast<int>(int64_t{i} * (given - 1) / (asked - 1));
    const Labelled& rec = mine[static_cast<size_t>(k)];
    if (rec.numbered < 0 || static_cast<size_t>(rec.numbered) >= base.record_sources.size()) continue;
    const gradlab::TensorImpl* then = nullptr;
    Replayer::Then when;
    for (const auto& [impl, t] : base.record_sources[static_cast<size_t>(rec.numbered)])
      if (versions.count(impl) && (!then || t.made > when.made)) then = impl, when = t;
    if (!then) continue;  // not computed from the source
    Replayer s;
    s.perturb.tensor = base.id_of(then);
    s.perturb.after_changes = when.changes;
    s.items_of_values = &base.value_items;
    if (auto why = replay_shadow(s, events, started)) return {{"failed", *why}};
    if (rec.at < s.records.size()) out[static_cast<size_t>(k)] = record_numbers(s.records[rec.at]);
  }
  return {{"records", out}};
}

json shadow_answer(const Shadow& q, const Replayer& base, const std::vector<json>& events,
                   std::chrono::steady_clock::time_point started) {
  if (!q.records.empty()) return records_answer(q, base, events, started);
  auto id = base.named_ids.find(q.source);
  if (id == base.named_ids.end()) return {{"failed", q.source + " was never named"}};
  if (!q.grads) {
    Replayer s;
    s.perturb.tensor = id->second;
    if (auto why = replay_shadow(s, events, started)) return {{"failed", *why}};
    for (const auto& [n, t] : s.named)
      if (n == q.observe) return {{"values", t.defined() ? facts::values_of(t) : json(nullptr)}};
    return {{"failed", q.observe + " was never named"}};
  }
  std::vector<int> taken;
  for (const auto& [n, t] : base.named)
    if (n == q.source && t.defined()) {
      auto w = base.steps.find(t.unsafeGetTensorImpl());
      taken = w == base.steps.end() ? std::vector<int>{} : w->second;
    }
  const int given = static_cast<int>(taken.size());
  json steps = json::array();
  const int asked = std::min(given, kMaxSteps);
  for (int i = 0; i < asked; ++i) {
    const int step = asked == given ? i : static_cast<int>(int64_t{i} * (given - 1) / (asked - 1));
    Replayer s;
    s.perturb.grad_of = id->second;
    s.perturb.grad_write = taken[static_cast<size_t>(step)];
    if (auto why = replay_shadow(s, events, started)) return {{"failed", *why}};
    steps.push_back({{"step", step + 1}, {"values", s.observed}});
  }
  return {{"taken", given}, {"steps", steps}};
}

}  // namespace

Verified verify(std::string_view tape, const json& claimed, const json& probes, const std::string& key,
                const std::vector<Shadow>& shadows, bool own_functions, bool curvature) {
  if (const char* dump = std::getenv("GRADLAB_DEBUG_TAPE")) {
    FILE* f = std::fopen(dump, "w");
    if (f) std::fwrite(tape.data(), 1, tape.size(), f), std::fclose(f);
  }
  Verified v;
  v.doc = claimed;
  Replayer r;
  r.probe_curvature = curvature;
  const auto started = std::chrono::steady_clock::now();
  // The grader's own tensors are small: the bound stays for the process.
  gradlab::tape::detail::g_storage_limit = kMaxTensorBytes;
  json provenance;
  try {
    if (!key.empty()) {
      gradlab::tape::Chain chain(key);
      for (size_t from = 0; from < tape.size();) {  // line by line, as the engine chained them
        const size_t end = tape.find('\n', from);
        chain.add(tape.substr(from, end - from));
        chain.add("\n");
        from = end == std::string_view::npos ? tape.size() : end + 1;
      }
      if (claimed.value("tape_chain", std::string()) != chain.hex())
        throw Failure{"the op tape on the channel is not the one the engine wrote: lines were added, changed or "
                      "left out (something in the program wrote to the grader's channel)"};
    }
    std::vector<json> events;
    replay_lines(r, tape, started, events);
    // The facts as the harness writes them, from the replay's tensors.
    json tensors = json::object(), graphs = json::object();
    for (const auto& [name, t] : r.named) {
      tensors[name] = facts::describe(t);
      if (t.defined() && t.grad_fn()) graphs[name] = facts::graph_of(t, r.named);
    }
    json probes_out = json::object();
    if (claimed.value("status", "") == "ok")
      for (const auto& p : probes) {
        const std::string id = p.at("id");
        json out;
        // A probe of a tensor the replay could not follow: the program's answer.
        if (r.tainted_names.count(p.value("tensor", std::string()))) {
          probes_out[id] = claimed.contains("probes") ? claimed["probes"].value(id, json()) : json();
          continue;
        }
        try {
          out = facts::state_probe(r.named, p);
        } catch (const std::exception& e) {
          out = {{"ok", false}, {"error", facts::error_text(e)}};
        }
        if (out.is_null()) {  // a probe of the program's own functions (gradcheck): its own answer
          out = claimed.at("probes").value(id, json());
        } else {
          for (const auto& name : p.value("after", std::vector<std::string>{})) {
            const Tensor* t = nullptr;
            for (const auto& [n, x] : r.named)
              if (n == name) t = &x;
            out["after"][name] = t ? facts::describe(*t) : json(nullptr);
          }
        }
        probes_out[id] = out;
      }
    v.doc["tensors"] = tensors;
    v.doc["graphs"] = graphs;
    v.doc["records"] = r.records;
    if (claimed.contains("probes")) v.doc["probes"] = probes_out;
    provenance = r.provenance();
    for (const Shadow& q : shadows)
      if (!q.records.empty() || !r.tainted_names.count(q.observe)) provenance["shadows"][q.id] = shadow_answer(q, r, events, started);
    r.check_values();
    v.replayed = true;
  } catch (const Failure& f) {
    v.failure = f.why;
  } catch (const std::exception& e) {
    v.failure = "the tape could not be replayed: " + cut(e.what());
  }
  v.mismatches = std::move(r.problems);
  v.unverified = std::move(r.unverified);
  if (r.grads_tainted)
    v.unverified.push_back("gradients from a backward through that part of the graph");
  if (v.replayed) {
    compare_all(claimed, r, v, own_functions);
    v.doc["provenance"] = provenance;
  }
  return v;
}

}  // namespace grader

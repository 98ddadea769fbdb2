// The checks of how results were computed: each reads the provenance the
// replay of the program's op tape gave (replay.h), never the program's own
// account; and the rules every check follows once the replay contradicts a
// fact it reads.
#include <algorithm>
#include <set>

#include "judge/checks_internal.h"
#include "judge/replay_route.h"
#include "judge/replay.h"

namespace grader::check_detail {

namespace {
// The facts a check reads, as the replay names them ("tensor x",
// "record \"label\"", "probe id").
std::vector<std::string> facts_read(const Check& c) {
  std::vector<std::string> out;
  const std::string name = c.spec.value("tensor", "");
  if (!name.empty()) out.push_back("tensor " + name);
  if (c.spec.contains("label") && c.spec["label"].is_string()) out.push_back("record \"" + c.spec["label"].get<std::string>() + "\"");
  if (c.spec.contains("labels"))
    for (const auto& l : c.spec["labels"])
      if (l.is_string()) out.push_back("record \"" + l.get<std::string>() + "\"");
  if (c.spec.contains("probe") && c.spec["probe"].is_string()) out.push_back("probe " + c.spec["probe"].get<std::string>());
  if (c.spec.contains("grad_of") && c.spec["grad_of"].is_string()) out.push_back("tensor " + c.spec["grad_of"].get<std::string>());
  return out;
}

}  // namespace

// Whether the replay of the program's op tape (replay.h) contradicts a fact
// the check reads, or could not be done: then nothing about it is believed.
bool contradicted(const Check& c, const json& student, Outcome& o) {
  if (!student.contains("computation")) return false;
  const json& comp = student["computation"];
  if (comp.contains("failure")) {
    o.message = "the grader could not check the program's computation: " + comp["failure"].get<std::string>();
    o.found = nullptr;
    return true;
  }
  const std::vector<std::string> reads = facts_read(c);
  // Of a tensor, a check reads one field (its kind's); of a record or a
  // probe, all of it. A forged field leaves the others the replay's own.
  const std::string field = c.kind == "value" ? "values" : c.kind;
  for (const auto& m : comp.value("mismatches", json::array())) {
    const std::string what = m.value("what", ""), f = m.value("field", "");
    if (std::find(reads.begin(), reads.end(), what) == reads.end()) continue;
    if (what.rfind("tensor ", 0) == 0 && f != "name" && f != field && f.rfind(field + ".", 0) != 0) continue;
    const std::string computed = m.value("computed", "");
    if (f == "value" && computed.rfind("no item()", 0) == 0)
      o.message = "the number recorded as " + what.substr(7) + " (" + m.value("claimed", "") +
                  ") is not one the exercise's tensors gave (" + computed + "): typed in, or worked out beside them";
    else if (computed == kThroughOwnFunction)
      o.message = (f == "grad" ? what + "'s gradient came " : what + " was computed ") + computed +
                  ": what its backward gives is the program's own word, and the grader takes nobody's word for a "
                  "result (custom Functions are exercise 13's subject)";
    else if (f == "message" && computed.rfind("no op", 0) == 0)
      o.message = "the program threw this error itself (\"" + m.value("claimed", "") +
                  "\"): no operation it called raised it, so autograd's behaviour was not shown";
    else
      o.message = "the program's results do not match its computation: " + what + " (" + f + ") is claimed as " +
                  m.value("claimed", "") + ", its computation gives " + computed;
    o.found = m.value("claimed", "");
    return true;
  }
  return false;
}

const json* provenance_of(const json& student, const std::string& name) {
  if (!student.contains("provenance")) return nullptr;
  const json& p = student["provenance"];
  if (!p.contains("tensors") || !p["tensors"].contains(name)) return nullptr;
  return &p["tensors"][name];
}

namespace {

bool holds(const json& list, const std::string& s) {
  if (!list.is_array()) return false;
  for (const auto& x : list)
    if (x == s) return true;
  return false;
}

std::string listed(const json& list) {
  std::string out;
  for (const auto& x : list) out += (out.empty() ? "" : ", ") + x.get<std::string>();
  return out.empty() ? "none" : out;
}

// The factories: a tensor they made holds numbers the program wrote down.
bool factory(const std::string& op) {
  static const std::set<std::string> k = {"tensor", "zeros", "ones", "full", "scalar_tensor", "arange", "linspace",
                                          "eye", "empty", "empty_like", "zeros_like", "ones_like", "full_like",
                                          "new_empty", "new_zeros", "new_ones", "new_full", "from_blob", "given"};
  return k.count(op) > 0;
}

const char* kNoProvenance = "the grader has no record of how it was made (the program's computation was not replayed)";

}  // namespace

std::string cut_values(const json& values) {
  if (!values.is_array()) return "nothing";
  std::string s = "[";
  for (size_t i = 0; i < values.size() && i < 6; ++i) s += (i ? ", " : "") + format_number(values[i]);
  return s + (values.size() > 6 ? ", …]" : "]");
}

const json* record_route(const json& run, const std::string& label) {
  if (!run.contains("provenance") || !run["provenance"].contains("records")) return nullptr;
  const json& r = run["provenance"]["records"];
  return r.contains(label) ? &r[label] : nullptr;
}

namespace {

// The answers a shadow replay (replay.h) gave for check `c`: the named tensor
// `observe` after its source was given the grader's own values. When the
// reference's answer is known and the student's is not the same, why not, in
// the student's words: the numbers did not follow the source.
const json* shadow_answer(const Check& c, const json& run) {
  if (!run.contains("provenance") || !run["provenance"].contains("shadows")) return nullptr;
  const json& s = run["provenance"]["shadows"];
  return s.contains(c.id) ? &s[c.id] : nullptr;
}

// A shadow runs the computation again from other numbers: what summation
// order changes may grow on the way, so the tolerance is wider.
Tolerance shadow_tolerance(const Check& c) {
  Tolerance tol = c.tol;
  tol.rtol = std::max(tol.rtol, 1e-4), tol.atol = std::max(tol.atol, 1e-5);
  return tol;
}

std::string shadow_differs(const Check& c, const json& student, const json& reference, const std::string& observe,
                           const std::string& source, bool grads, json& found) {
  const json* ref = shadow_answer(c, reference);
  if (!ref || ref->contains("failed")) return "";  // facts recorded before shadows: lineage alone
  const json* mine = shadow_answer(c, student);
  if (!mine) return "";  // the replay left it as the program's own (a custom Function)
  // Where the program's own numbers are already wrong, the value checks say
  // so; the shadow asks only how right numbers were reached.
  const json* t = named(student, observe);
  const json* r = named(reference, observe);
  if (!t || !r || !close(t->value("values", json()), r->value("values", json()), c.tol)) return "";
  const std::string from = grads ? source + ".grad" : source;
  if (mine->contains("failed"))
    return "the grader could not rerun the program's computation with other values of " + from + ": " +
           mine->value("failed", "");
  const Tolerance tol = shadow_tolerance(c);
  const std::string why = grads ? "a step typed in, or a gradient multiplied away, is not a step from " + from
                                : "numbers typed in, or " + from + " multiplied away, are not computed from " + from;
  if (!grads) {
    if (close((*mine)["values"], (*ref)["values"], tol)) return "";
    found = observe + " with other values of " + source + ": " + cut_values((*mine)["values"]);
    return "with other values of " + source + " (the grader's own), " + observe + " holds " +
           cut_values((*mine)["values"]) + " where the exercise's computation gives " + cut_values((*ref)["values"]) +
           ": " + observe + " does not follow " + source + " (" + why + ")";
  }
  const int want = ref->value("taken", 0), got = mine->value("taken", 0);
  if (want != got) {
    found = std::to_string(got) + (got == 1 ? " step" : " steps") + " from a fresh gradient";
    return source + " was updated in place after a fresh gradient (from backward or autograd::grad) " +
           std::to_string(got) + (got == 1 ? " time" : " times") + " where the exercise does it " + std::to_string(want) +
           ": each step of gradient descent is a new gradient, then an update from it";
  }
  const json& ms = (*mine)["steps"];
  const json& rs = (*ref)["steps"];
  for (size_t i = 0; i < rs.size() && i < ms.size(); ++i) {
    const json& m = ms[i]["values"];
    const json& e = rs[i]["values"];
    if (m.is_null() && e.is_null()) continue;
    if (!m.is_null() && !e.is_null() && close(m, e, tol)) continue;
    const std::string k = std::to_string(rs[i].value("step", 0));
    found = observe + " after step " + k + ", its gradient changed: " + (m.is_null() ? "no update" : cut_values(m));
    return "when the grader gave the gradient of step " + k + " other values, the update left " + source + " at " +
           (m.is_null() ? std::string("nothing") : cut_values(m)) + " where a step from it gives " +
           (e.is_null() ? std::string("nothing") : cut_values(e)) + ": " + source + "'s update does not follow " +
           from + " (" + why + ")";
  }
  return "";
}

}  // namespace

// Called once the records match the reference's: the shadow asks only how
// right numbers were reached.
std::string snapshots_shadow_differs(const Check& c, const json& student, const json& reference, json& found) {
  const json* ref = shadow_answer(c, reference);
  if (!ref || !ref->contains("records")) return "";  // facts recorded before this shadow: lineage alone
  const json* mine = shadow_answer(c, student);
  if (!mine) return "";
  const std::string source = c.spec["source"];
  if (mine->contains("failed"))
    return "the grader could not rerun the program's computation with other values of " + source + ": " +
           mine->value("failed", "");
  const json& m = (*mine)["records"];
  const json& r = (*ref)["records"];
  const Tolerance tol = shadow_tolerance(c);
  // The records' names, as check_snapshots tells them apart: "loss" #2.
  std::vector<std::string> who;
  const json labels = c.spec["labels"];
  for (const auto& rec : reference.value("records", json::array()))
    if (std::find(labels.begin(), labels.end(), rec.value("label", "")) != labels.end())
      who.push_back(rec.value("label", ""));
  auto name_of = [&](size_t i) {
    if (i >= who.size()) return std::string("record ") + std::to_string(i + 1);
    const auto same = std::count(who.begin(), who.end(), who[i]);
    const auto nth = std::count(who.begin(), who.begin() + static_cast<long>(i) + 1, who[i]);
    return "\"" + who[i] + "\"" + (same > 1 ? " #" + std::to_string(nth) : "");
  };
  for (size_t i = 0; i < r.size(); ++i) {
    const json got = i < m.size() ? m[i] : json(nullptr);
    if (got.is_null() && r[i].is_null()) continue;  // not asked, or from the source in neither
    const json want = r[i].is_array() ? r[i] : json::array({r[i]});
    const json have = got.is_array() ? got : json::array({got});
    if (!got.is_null() && close(have, want, tol)) continue;
    if (got.is_null()) {
      found = name_of(i) + " does not come from " + source;
      return name_of(i) + " was not computed from " + source + ", where the exercise's is";
    }
    found = name_of(i) + " with other values of " + source + ": " + cut_values(have);
    return "with other values of " + source + " (the grader's own), " + name_of(i) + " is " + cut_values(have) +
           " where the exercise's computation gives " + cut_values(want) + ": the recorded numbers do not follow " +
           source + " (numbers typed in, or " + source + " multiplied away, are not computed from " + source + ")";
  }
  return "";
}

namespace {

// Where the reference's `op` (a detach) took a result computed from `source`
// (fake = G_w·z, then fake.detach()), the program's must too: not only
// `source` itself (G_w.detach(), the fake rebuilt from it). Where the
// reference's took `source` itself (x.detach()), any is accepted. (A clone's
// place on the way is a spelling: x.clone().detach() is a copy as well.)
bool applied_to_source_itself(const std::string& op, const std::string& source, const json& mine, const json* ref) {
  auto kinds = [&](const json& p) {
    std::set<std::string> k;
    for (const auto& t : p.value("through_inputs", json::object()).value(op, json::array()))
      k.insert(t.value("is", json()) == source ? "itself" : holds(t.value("from", json::array()), source) ? "computed" : "other");
    return k;
  };
  if (!ref || !kinds(*ref).count("computed") || kinds(*ref).count("itself")) return false;
  const auto m = kinds(mine);
  return m.count("itself") && !m.count("computed");
}

}  // namespace

Outcome check_derives_from(const Check& c, const std::string& name, const json& student, const json& reference) {
  const std::string source = c.spec["source"];
  const json through = c.spec.value("through", json::array());
  Outcome o;
  o.expected = name + " computed from " + source + (through.empty() ? "" : " through " + listed(through));
  const json* p = provenance_of(student, name);
  if (!p || !p->contains("from")) {
    o.message = name + ": " + kNoProvenance;
    return o;
  }
  const std::string made_by = p->value("made_by", "");
  o.found = "made by " + made_by + " from " + listed((*p)["from"]);
  if (!holds((*p)["from"], source) || name == source) {
    bool stepped = false, by_number = false;  // changed in place from other tensors, or by C++ numbers
    for (const auto& u : p->value("updates", json::array()))
      stepped |= !u.value("by_number", true), by_number |= u.value("by_number", false);
    if (by_number && !stepped && p->contains("grad") && name != source)  // a parameter stepped in C++
      o.message = name + " does not follow " + source + ": its in-place updates were by plain C++ numbers (from item(), "
                  "say), which the grader cannot follow back to " + source + "; keep the step in tensors";
    else if (stepped && name != source)
      o.message = name + " does not follow " + source + ": neither its first value nor its in-place updates (" +
                  std::to_string((*p)["updates"].size()) + ") were computed from " + source +
                  " (a gradient from a backward of a tensor that never read " + source + " does not)";
    else
      o.message = factory(made_by) ? name + " does not come from " + source + ": it was made by torch::" + made_by +
                                       " from numbers written into the program"
                                 : name + " does not come from " + source + ": its computation never reads " + source;
    return o;
  }
  for (const auto& op : through)
    if (!holds((*p)["ops"], op.get<std::string>())) {
      o.message = name + " comes from " + source + ", but not through " + op.get<std::string>() + "()";
      o.found = "ops on the way: " + listed((*p)["ops"]);
      return o;
    } else if (op == "detach" && applied_to_source_itself("detach", source, *p, provenance_of(reference, name))) {
      o.message = name + " comes from " + source + " through " + op.get<std::string>() + "(), but the " +
                  op.get<std::string>() + "() took " + source + " itself, where the exercise's takes a result computed from " +
                  source + ": a result computed again from a detached " + source + " is not the one the exercise detaches";
      o.found = op.get<std::string>() + "() of " + source + " itself";
      return o;
    }
  o.message = shadow_differs(c, student, reference, name, source, false, o.found);
  o.pass = o.message.empty();
  return o;
}

Outcome check_updated_from_grad(const Check& c, const std::string& name, const json& student, const json& reference) {
  Outcome o;
  o.expected = name + " changed in place from " + name + ".grad under no_grad";
  const json* p = provenance_of(student, name);
  if (!p) {
    o.message = name + ": " + kNoProvenance;
    return o;
  }
  const json updates = p->value("updates", json::array());
  if (updates.empty()) {
    o.found = "never changed in place";
    o.message = name + " was never changed in place: the exercise asks for an update of " + name + " itself";
    return o;
  }
  const json* rp = provenance_of(reference, name);
  const json ref_updates = rp ? rp->value("updates", json::array()) : json::array();
  // How each step came about is held to the reference's (its backward's
  // curvature, how many passes its gradient added up) where the parameter
  // ended right: where it did not, the value checks say so, and an honest
  // mistake (gradients never zeroed) is not charged twice.
  const json *mine_t = named(student, name), *ref_t = named(reference, name);
  const bool numbers_right = mine_t && ref_t && close(mine_t->value("values", json()), ref_t->value("values", json()), c.tol);
  for (size_t k = 0; k < updates.size(); ++k) {
    const json& u = updates[k];
    const std::string op = u.value("op", "");
    // The gradient it stepped from came from a backward that took another
    // route than the reference's: a stand-in Σ w·g built to give it.
    const std::string route = u.value("grad_route", ""),
                      want = k < ref_updates.size() ? ref_updates[k].value("grad_route", "") : std::string();
    // With "from": that backward started from the named loss (or a
    // restatement of it), as the loss was when the backward ran.
    const std::string from = c.spec.value("from", "");
    const json root = u.value("grad_root", json());
    if (u.value("from_own_grad", false) && !from.empty() && root.is_object() && !named(student, from) &&
        target_unnamed(student, from, "that " + name + "'s step follows a backward from " + from, o))
      return o;
    if (u.value("from_own_grad", false) && !from.empty() && named(student, from) && root.is_object() &&
        !root_is(root.value("name", json()), root.value("restates", json()), from)) {
      const std::string r = root["name"].is_string() ? root["name"].get<std::string>() : std::string("an unnamed tensor");
      o.found = op + " from a gradient a backward from " + r + " wrote";
      o.message = name + " was changed in place (" + op + ") from " + name + ".grad, but the backward that wrote it started from " +
                  r + ", where the exercise's step follows a backward from " + from;
      return o;
    }
    if (u.value("from_own_grad", false) && !route.empty() && !want.empty() &&
        !replay::routes_agree(route, want, numbers_right ? curvature_asked(c) : replay::Curvature::Off,
                              replay::OffPoint::Compare)) {
      o.found = op + " from a gradient whose backward went through " + route_words(route);
      o.message = name + " was changed in place (" + op + ") from " + name + ".grad, but the backward that wrote it reached " +
                  name + " through " + route_mismatch(route, want, name) + ": the step must come from the loss's own backward";
      return o;
    }
    // The step read a gradient that added up another number of backward
    // passes than the reference's: the loss's gradient reached by a pass
    // that cancels what was left in .grad, never zeroed (red team 13).
    const int passes = u.value("grad_passes", 0), want_passes = k < ref_updates.size() ? ref_updates[k].value("grad_passes", 0) : 0;
    if (numbers_right && u.value("from_own_grad", false) && passes > 0 && want_passes > 0 && passes != want_passes) {
      o.found = op + " from " + name + ".grad holding " + std::to_string(passes) + " backward passes added up";
      o.message = name + " was changed in place (" + op + ") from " + name + ".grad holding " + std::to_string(passes) +
                  " backward passes added up since it was last zeroed, where the exercise's step reads " +
                  std::to_string(want_passes) + ": zero the gradients before each step's backward";
      return o;
    }
    if (!u.value("no_grad", false)) {
      o.found = op + " with grad mode on";
      o.message = name + " was changed in place (" + op + ") with grad mode on: the update belongs under torch::NoGradGuard";
      return o;
    }
    // Where the statement asks for the guard, a way around it (w.data(),
    // w.detach()) records nothing either, but is not what was asked.
    if (c.spec.value("under_no_grad", false) && !u.value("grad_mode_off", false)) {
      o.found = op + " through data() or a detached alias, with grad mode on";
      o.message = name + " was changed in place (" + op + ") through data() or a detached alias (" + name +
                  ".detach()) with grad mode on: that records nothing, but the statement asks for the update under "
                  "torch::NoGradGuard";
      return o;
    }
    if (!u.value("from_own_grad", false) && u.value("by_number", false)) {
      o.found = op + " by a plain number";
      o.message = name + " was changed in place (" + op + ") by a plain C++ number, not by a tensor: the grader follows " +
                  "tensor operations, so a step worked out in C++ (from " + name + ".grad().item(), say) is not one it " +
                  "can see come from " + name + ".grad; keep the step in tensors: " + name + " -= lr * " + name + ".grad()";
      return o;
    }
    if (const std::string how = u.value("grad_how", ""); u.value("from_own_grad", false) && !how.empty() && how != "backward") {
      o.found = op + " from " + name + ".grad, which was " + how;
      o.message = name + " was changed in place (" + op + ") from " + name + ".grad, but that gradient was " + how +
                  ", not written by a backward: a gradient worked out by a formula is not autograd's";
      return o;
    }
    if (!u.value("from_own_grad", false)) {
      o.found = op + " from numbers that do not come from " + name + ".grad";
      o.message = name + " was changed in place (" + op + ") from numbers that do not come from " + name +
                  ".grad: an update typed in, or computed beside autograd, is not a gradient step";
      return o;
    }
  }
  o.found = std::to_string(updates.size()) + " in-place updates from " + name + ".grad under no_grad";
  o.message = shadow_differs(c, student, reference, name, name, true, o.found);
  o.pass = o.message.empty();
  return o;
}

Outcome check_made_under_no_grad(const std::string& name, const json& student) {
  Outcome o;
  o.expected = name + " computed with grad mode off (torch::NoGradGuard)";
  const json* p = provenance_of(student, name);
  if (!p || !p->contains("made_by")) {
    o.message = name + ": " + kNoProvenance;
    return o;
  }
  const std::string made_by = p->value("made_by", "");
  if (p->value("no_grad", false) && !factory(made_by) && p->value("built_graph", false)) {
    o.found = "made by " + made_by + " under no_grad, from a graph built with grad mode on";
    o.message = name + "'s last op ran under no_grad, but it was computed from results recorded with grad mode on (a "
                "graph was built, then cut with detach() or copied): compute all of it inside the NoGradGuard block";
    return o;
  }
  if (p->value("no_grad", false) && !factory(made_by) && p->value("grad_mode_on_param", false)) {
    o.found = "made by " + made_by + " under no_grad, from ops on the parameters with grad mode on";
    o.message = name + "'s last op ran under no_grad, but ops before it ran on the parameters with grad mode on "
                "(switching a parameter's requires_grad off records no graph, but it is not no_grad): compute all of it "
                "inside the NoGradGuard block";
    return o;
  }
  if (p->value("no_grad", false) && !factory(made_by)) {
    o.pass = true;
    o.found = "made by " + made_by + " under no_grad";
    return o;
  }
  o.found = "made by " + made_by + (p->value("no_grad", false) ? " under no_grad" : " with grad mode on");
  o.message = made_by == "detach" ? name + " was cut from the graph with detach(), not computed under torch::NoGradGuard"
              : factory(made_by)  ? name + " was made by torch::" + made_by + " from numbers written into the program"
                                  : name + " was computed with grad mode on (its last op, " + made_by + ", was recorded)";
  return o;
}

// The record's attempt ran a backward through a graph that an earlier
// backward had gone through and retain_graph had kept.
Outcome check_reuses_graph(const Check& c, const json& student) {
  const std::string label = c.spec["label"];
  Outcome o;
  o.expected = "a backward through the graph retain_graph kept";
  const json* routes = student.contains("provenance") && student["provenance"].contains("records")
                           ? &student["provenance"]["records"] : nullptr;
  if (!routes || !routes->contains(label)) {
    o.message = "nothing was recorded under \"" + label + "\" that the grader could replay";
    o.unreached = true;
    return o;
  }
  const json& r = (*routes)[label];
  const int passes = r.value("backward_passes", 0);
  // An attempt's body, where the record is an attempt's: a kept graph gone
  // through again before it began is not what the attempt did.
  if (r.contains("reused_in_attempt") ? r.value("reused_in_attempt", false) : r.value("reused_retained_graph", false)) {
    // With "on": the graph gone through again is that tensor's (or a
    // restatement's), not a throwaway's kept beside it.
    const std::string on = c.spec.value("on", "");
    bool theirs = on.empty();
    for (const auto& root : r.value("reused_roots", json::array()))
      theirs |= root.is_object() && root_is(root.value("name", json()), root.value("restates", json()), on);
    o.pass = theirs;
    o.found = theirs ? "a backward through a retained graph" : "a backward through another tensor's retained graph";
    if (!theirs)
      o.message = "the backward before \"" + label + "\" went again through a graph retain_graph kept, but not " + on +
                  "'s: the second backward must go through the graph of " + on + " that the first one kept";
    return o;
  }
  o.found = passes == 0 ? "no backward pass" : "backward passes through graphs built afresh";
  o.message = passes == 0 ? "no backward ran before \"" + label + "\" was recorded"
                          : "the backward before \"" + label +
                                "\" went through a graph built again, not through the one the first backward kept: "
                                "a second backward through the same graph needs retain_graph=true on the first";
  return o;
}

// An error check with "on": the op that raised the error read a tensor
// computed from that named tensor. The same error provoked on a throwaway
// tensor shows the rule, not that the exercise's computation meets it.
bool error_raised_elsewhere(const Check& c, const json& student, const json& reference, Outcome& o) {
  const std::string on = c.spec.value("on", "");
  // A backward of the named leaf itself (w.backward() on a 3×3 parameter)
  // raises the error the exercise provokes through a result computed from
  // it: the rule shown on the parameter alone, not on the computation.
  const std::string label = c.spec["label"].get<std::string>();
  const json* mine = on.empty() ? nullptr : record_route(student, label);
  const json* want = on.empty() ? nullptr : record_route(reference, label);
  if (mine && want && mine->value("error_from_leaf", false) && want->contains("error_from_leaf") &&
      !want->value("error_from_leaf", false) && named(student, on)) {
    o.found = "raised by a backward from a leaf";
    o.message = "the error was raised by a backward that starts from a leaf (" + on +
                " itself, or another tensor no op made), where the exercise's starts from a result computed from " + on;
    return true;
  }
  if (!on.empty() && record_route(student, label) && !named(student, on))
    return target_unnamed(student, on, "that the error was about " + on, o);
  const json* r = on.empty() ? nullptr : record_route(student, label);
  if (!r || !r->contains("error_from") || holds((*r)["error_from"], on)) return false;
  o.found = "raised by an op on " + ((*r)["error_from"].empty() ? std::string("tensors none of the exercise's names came from")
                                                                : listed((*r)["error_from"]));
  o.message = "the error was raised by an op on tensors that do not come from " + on +
              ": provoked on a throwaway tensor, it shows the rule, not that " + on + "'s computation meets it";
  return true;
}

// A value check with "changed_through": the named tensor's values were
// changed in place through that other tensor (an alias over its memory).
bool changed_elsewhere(const Check& c, const std::string& name, const json& student, Outcome& o) {
  const std::string through = c.spec.value("changed_through", "");
  const json* p = through.empty() ? nullptr : provenance_of(student, name);
  if (!p) return false;
  std::string ops;
  for (const auto& u : p->value("updates", json::array())) {
    if (holds(u.value("through", json::array()), through)) return false;
    ops += (ops.empty() ? "" : ", ") + u.value("op", std::string()) + " through " + listed(u.value("through", json::array()));
  }
  o.found = ops.empty() ? "never changed in place" : ops;
  o.message = ops.empty() ? name + " was never changed in place, so " + through + " did not change it"
                          : name + " was changed in place (" + ops + "), never through " + through +
                                ": the exercise shows that a change made through " + through + " reaches " + name;
  return true;
}

}  // namespace grader::check_detail

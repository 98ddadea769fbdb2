// The routes every gradient a grad or snapshots check reads is held to, from
// the replay's provenance (replay.h): set or changed by hand, or written by a
// backward that started elsewhere than the reference's (another root, shape
// or seed), reached the tensor through other ops, or added up another number
// of passes; and when each snapshot was taken.
#include <set>
#include <string>

#include "judge/checks_internal.h"
#include "judge/normal_form.h"
#include "judge/replay.h"
#include "judge/replay_route.h"

namespace grader::check_detail {

bool root_is(const json& name, const json& restates, const std::string& from) {
  return name == from || restates == from;
}

std::string route_words(const std::string& route) {
  const std::string ops = route.substr(0, route.find('@'));
  return ops == "X" ? std::string("no op on the way (a stand-in built to give the gradient)") : "the ops " + ops;
}

std::string route_mismatch(const std::string& mine, const std::string& ref, const std::string& x) {
  if (mine.substr(0, mine.find('@')) != ref.substr(0, ref.find('@')))
    return route_words(mine) + ", where the exercise's goes through " + route_words(ref) + " (X is " + x + ")";
  if (mine.find('@') == std::string::npos)
    return "the same ops as the exercise's, but the grader could not differentiate its root twice to see "
           "which function of " + x + " it is (an op with no second derivative, or a graph past the grader's limits)";
  return "the same ops as the exercise's, but its root is another function of " + x +
         " (it curves otherwise: a stand-in built to give the same gradient at this point only)";
}

namespace {

bool scalar_root(const json& seed) {
  int64_t n = 1;
  for (const auto& d : seed.value("root", json::array())) n *= d.get<int64_t>();
  return n == 1;
}

// How a backward started (replayer.cpp's seed_of), in words.
std::string start_text(const json& seed) {
  std::string root = "a scalar";
  if (!scalar_root(seed)) {
    root.clear();
    for (const auto& d : seed["root"]) root += (root.empty() ? "" : "×") + std::to_string(d.get<int64_t>());
    root = "a " + root + " tensor";
  }
  if (!seed.value("given", false)) return "from " + root + " with no gradient given (seeded with 1)";
  if (seed.value("ones", false)) return "from " + root + " seeded with a gradient of ones";
  return "from " + root + " seeded with " + cut_values(seed["values"]);
}

// Whether two backward passes started alike: from a scalar or from a tensor
// of the same shape, seeded with ones (given or not) or with the same numbers.
bool same_start(const json& a, const json& b) {
  if (scalar_root(a) != scalar_root(b)) return false;
  if (!scalar_root(a) && a["root"] != b["root"]) return false;
  if (a.value("ones", false) != b.value("ones", false)) return false;
  return a.value("ones", false) || a.value("values", json()) == b.value("values", json());
}

// A gradient from a backward whose root, when it ran, reached the tensor by
// another route than the reference's (replayer.cpp's Route: the ops on the
// way, spellings aside): a stand-in Σ w·g with g worked out by hand, or a
// stand-in given the root's name.
// With the numbers wrong too, it is a wrong formula, said as such: nothing
// was built to give the same gradient.
bool rooted_elsewise(const json& mine, const json& ref, const std::string& what, Outcome& o, std::string& hint,
                     replay::Curvature curvature, bool numbers_right) {
  const std::string m = mine.value("route", ""), r = ref.value("route", "");
  if (m.empty() || r.empty() || replay::routes_agree(m, r, curvature)) return false;
  o.found = "a backward that reached it through " + route_words(m);
  o.message = what + " was written by a backward that reached it through " + route_mismatch(m, r, "the tensor") +
              (numbers_right ? ": another computation with the same gradient is not the exercise's backward"
                             : ": the result it came from is computed otherwise than the statement says");
  hint = numbers_right ? "Call backward() on the result the statement names, computed as it says, not on another "
                         "expression built to give the same gradient."
                       : "Compute the result with the ops the statement gives (compare your formula with it, op by op), "
                         "then call backward() on it.";
  return true;
}

std::string passes_text(int n) {
  return n == 1 ? "one backward pass alone" : std::to_string(n) + " backward passes added up";
}

// A gradient that adds up another number of backward passes than the
// reference's: the accumulated numbers of three passes from one pass on a
// root scaled by 3, or one pass's from three never zeroed in between.
bool added_up_elsewise(const json& mine, const json& ref, const std::string& what, Outcome& o, std::string& hint) {
  const int m = mine.value("passes", 0), r = ref.value("passes", 0);
  if (m == 0 || r == 0 || m == r) return false;
  o.found = what + " holds " + passes_text(m);
  o.message = what + " holds " + passes_text(m) + " (since it was last zeroed or set), where the exercise's holds " +
              passes_text(r) + ": the same numbers reached another way do not show how gradients accumulate";
  hint = r > m ? "Let the gradients add up: run the backward passes one after another without zeroing in between, "
                 "each from the result itself (not from a result scaled to give the total)."
               : "Zero the gradient (grad().zero_()) before each backward pass whose gradient should stand alone.";
  return true;
}

// A gradient a backward wrote, from a start the reference's backward did not
// take: the right numbers from a seed that cancels what was left in .grad.
bool started_elsewhere(const json& mine, const json& ref, const std::string& what, Outcome& o, std::string& hint,
                       replay::Curvature curvature, bool numbers_right) {
  if (!mine.is_object() || !ref.is_object()) return false;
  if (same_start(mine, ref))
    return rooted_elsewise(mine, ref, what, o, hint, curvature, numbers_right) ||
           added_up_elsewise(mine, ref, what, o, hint);
  o.found = "a backward " + start_text(mine);
  o.message = what + " was written by a backward " + start_text(mine) + ", where the exercise's backward starts " +
              start_text(ref);
  hint = !scalar_root(ref) ? "Call backward on the tensor itself, with torch::ones_like(it) as its gradient."
         : ref.value("given", false) ? "Start backward from the scalar the exercise names, with the gradient it gives."
                                     : "Call backward() on the scalar result with no argument: it starts from 1. A gradient that "
                                       "is not 1 scales what backward writes (and one of 0 writes nothing new).";
  return true;
}

}  // namespace

// Whether a check's curvature (rubric "curvature") holds its gradient to the
// reference's function: only where the numbers were right. A stand-in is
// built to give the right numbers; wrong numbers from the same ops are an
// honest wrong formula, which the numbers already say (its curvature differs
// too, and calling it a stand-in would blame the student for what they did
// not do).
static replay::Curvature curvature_counts(const Check& c, const Outcome& o) {
  return o.pass ? curvature_asked(c) : replay::Curvature::Off;
}

// A gradient must be autograd's work: the replay knows how each named
// tensor's .grad came to be (replay.cpp's provenance). A check of it fails
// when the program set or changed it by hand, when the backward that wrote it
// started elsewhere than the reference's, or (with "from") from another root
// than the rubric asks.
bool grad_route_wrong(const Check& c, const std::string& name, const json& student, const json& reference, Outcome& o,
                      std::string& hint) {
  const json* found = provenance_of(student, name);
  if (!found || !found->contains("grad")) return false;
  const json& p = *found;
  const std::string how = p.value("grad", "");
  if (how.rfind("set by hand", 0) == 0 || how.rfind("changed by hand", 0) == 0) {
    o.message = name + ".grad was " + how + ", not written by a backward";
    hint = "Let autograd compute it: build the result from " + name +
           " with tensor operations and call backward() on the result; " + name + ".grad is then filled in.";
    return true;
  }
  const json* ref = provenance_of(reference, name);
  if (how == kResetAfterBackward && !(ref && ref->value("grad", "") == how)) {
    o.message = name + ".grad was written by a backward and then reset by hand (" + name +
                ".mutable_grad() = {}): what backward keeps there is what the check asks about";
    o.found = "a gradient written by a backward, then reset by hand";
    hint = "Leave " + name + "'s gradient as backward leaves it; only leaves and tensors you called retain_grad() on "
           "keep one.";
    return true;
  }
  const std::string from = c.spec.value("from", "");
  if (how == "backward" && !from.empty() && p.contains("root") &&
      !root_is(p["root"], p.value("root_restates", json()), from)) {
    o.message = name + ".grad was written by a backward from " +
                (p["root"].is_string() ? p["root"].get<std::string>() : std::string("an unnamed tensor")) +
                ", where the exercise asks for one from " + from;
    hint = "Call " + from + ".backward() (and no backward from another tensor) before reading " + name + ".grad.";
    return true;
  }
  // Where the reference's gradient adds up passes from named roots, the
  // program's must come from the same ones: c's 2 from c.backward() and f's
  // is not the 1 from e and the 1 from f the exercise shows.
  if (how == "backward" && !from.empty() && ref && ref->contains("earlier_roots") &&
      p.value("earlier_roots", json::array()) != (*ref)["earlier_roots"]) {
    auto listed_roots = [](const json& roots) {
      std::string s;
      for (const auto& r : roots) s += (s.empty() ? "" : ", ") + (r.is_string() ? r.get<std::string>() : std::string("an unnamed tensor"));
      return s.empty() ? std::string("none") : s;
    };
    o.message = name + ".grad adds up earlier backward passes from " + listed_roots(p.value("earlier_roots", json::array())) +
                " before the one from " + from + ", where the exercise's come from " + listed_roots((*ref)["earlier_roots"]);
    o.found = "earlier passes from " + listed_roots(p.value("earlier_roots", json::array()));
    hint = "Run each backward the statement asks for, from the tensor it names, and no other.";
    return true;
  }
  if (how == "backward" && ref && ref->value("grad", "") == "backward")
    return started_elsewhere(p.value("seed", json()), ref->value("seed", json()), name + ".grad", o, hint,
                             curvature_counts(c, o), o.pass);
  return false;
}
namespace {

// The snapshots' routes a run's provenance holds for `label` ("grads"), or
// how the backward passes that wrote them started ("seeds"): a list each.
json snapshot_routes(const json& run, const std::string& label, const char* what = "grads") {
  const json* r = record_route(run, label);
  return r ? r->value(what, json::array()) : json::array();
}

// The i-th snapshot of `label` holds the .grad of another tensor than the
// reference's: a copy of the parameter made a leaf of its own takes the
// backward passes (and is never zeroed), the parameter itself does not.
bool grad_of_another(const json& student, const json& reference, const std::string& label, size_t i, Outcome& o,
                     std::string& hint) {
  const json want = snapshot_routes(reference, label, "grad_owner"), got = snapshot_routes(student, label, "grad_owner");
  if (i >= want.size() || !want[i].is_string() || i >= got.size() || got[i] == want[i]) return false;
  const std::string owner = want[i].get<std::string>();
  if (!named(student, owner)) {
    hint.clear();
    return target_unnamed(student, owner, "whose gradient the snapshot \"" + label + "\" holds", o);
  }
  o.found = got[i].is_string() ? got[i].get<std::string>() + ".grad" : std::string("the .grad of an unnamed tensor");
  o.message = "the snapshot \"" + label + "\" holds " + o.found.get<std::string>() + ", where the exercise's holds " +
              owner + ".grad: the backward passes and the zeroing the exercise shows must happen to " + owner + " itself";
  hint = "Snapshot " + owner + ".grad() itself, after the backward passes on " + owner +
         " (not on a copy of it made a leaf of its own).";
  return true;
}

// A snapshots check with "from": the i-th snapshot's gradient was written by
// a backward from that named tensor (or a restatement of it), not from a
// stand-in with the same gradient.
bool root_elsewhere(const Check& c, const json& student, const json& roots, size_t i, const std::string& what, Outcome& o,
                    std::string& hint) {
  const std::string from = c.spec.value("from", "");
  if (from.empty() || i >= roots.size() || !roots[i].is_object()) return false;
  if (!named(student, from)) return target_unnamed(student, from, "that " + what + " came from a backward from " + from, o);
  const json& r = roots[i];
  if (root_is(r.value("name", json()), r.value("restates", json()), from)) return false;
  const std::string root = r["name"].is_string() ? r["name"].get<std::string>() : std::string("an unnamed tensor");
  o.found = "a backward from " + root;
  o.message = what + " was written by a backward from " + root + ", where the exercise asks for one from " + from;
  hint = "Call " + from + ".backward() (and no backward from another tensor) before the snapshot.";
  return true;
}

}  // namespace

// With "root_graph": the backward that wrote the i-th snapshot of `label`
// started from a graph of the reference's normal form (the sum of 10 − d,
// however spelled), where the statement names no tensor to hold it to with
// "from". A stand-in that feeds a hand-worked gradient through w, such as
// (w.mm(I) * G).sum(), reaches w through a route alike and is linear as the
// loss is, so neither the route nor its curvature tells it (red team 13).
bool root_graph_differs(const Rubric& rubric, const Check& c, const json& student, const json& reference,
                        const std::string& label, size_t i, Outcome& o, std::string& hint) {
  // Only where the numbers are right: wrong ones are the value check's to
  // explain (a mean for a sum gives a ninth of the gradient).
  if (!c.spec.value("root_graph", false) || !o.pass) return false;
  const json mine = snapshot_routes(student, label, "root_graphs"), want = snapshot_routes(reference, label, "root_graphs");
  if (i >= mine.size() || i >= want.size() || !want[i].is_object()) return false;
  // The names the reference's graph uses, and the root's shape: names the
  // program added are not the question, and after an exception the names
  // given at the end are missing (nothing to compare then).
  json ref_graph = want[i].value("graph", json::array()), ref_tensors = json::object();
  std::set<std::string> names;
  for (const auto& n : ref_graph)
    for (const auto& t : n.value("tensors", json::array())) names.insert(t.get<std::string>());
  names.erase(kBackwardRoot);
  for (const auto& n : names) {
    if (!named(student, n)) return false;
    ref_tensors[n] = *named(reference, n);
  }
  ref_tensors[kBackwardRoot] = {{"shape", want[i].value("shape", json::array())}};
  json my_graph = mine[i].is_object() ? mine[i].value("graph", json::array()) : json::array(), my_tensors = ref_tensors;
  for (auto& n : my_graph) {
    json kept = json::array();
    for (const auto& t : n.value("tensors", json::array()))
      if (t == kBackwardRoot || names.count(t.get<std::string>())) kept.push_back(t);
    n["tensors"] = kept;
  }
  for (const auto& n : names) my_tensors[n] = *named(student, n);
  if (mine[i].is_object()) my_tensors[kBackwardRoot] = {{"shape", mine[i].value("shape", json::array())}};
  if (!my_graph.empty() && same_normal_form(my_graph, my_tensors, ref_graph, ref_tensors, rubric)) return false;
  const std::string what = "the gradient in the snapshot \"" + label + "\"";
  auto text = [&](const json& graph, const json& tensors) {
    std::string t = normal_form_text(graph, tensors, rubric);
    const std::string tag = std::string(kBackwardRoot) + "=";
    if (t.rfind(tag, 0) == 0) t.erase(0, tag.size());  // the root is the one the message speaks of
    return t;
  };
  const std::string from = my_graph.empty() ? std::string("no graph") : text(my_graph, my_tensors);
  o.found = "a backward from " + from;
  o.message = what + " was written by a backward from " + from + ", where the exercise's starts from " +
              text(ref_graph, ref_tensors) +
              ": the same gradient reached through another computation is not the one the statement asks for";
  hint = "Call backward() on the result the statement describes, computed as it says.";
  return true;
}

// A snapshots check with "at_backward": each record taken after as many
// backward passes as the reference's ("a before backward" before any).
bool snapshot_taken_elsewhen(const Check& c, const json& student, const json& reference, Outcome& o) {
  if (!c.spec.value("at_backward", false) || !student.contains("provenance")) return false;
  auto passes = [](const json& run, const std::string& label) {
    const json* r = record_route(run, label);
    return r ? r->value("after_backwards", json::array()) : json::array();
  };
  for (const auto& l : c.spec.value("labels", json::array())) {
    const std::string label = l.get<std::string>();
    const json mine = passes(student, label), ref = passes(reference, label);
    for (size_t i = 0; i < ref.size() && i < mine.size(); ++i) {
      if (mine[i] == ref[i]) continue;
      const int m = mine[i].get<int>(), r = ref[i].get<int>();
      auto count = [](int n) { return n == 0 ? std::string("before any backward pass") : "after " + std::to_string(n) + (n == 1 ? " backward pass" : " backward passes"); };
      o.found = "\"" + label + "\" " + count(m);
      o.message = "the snapshot \"" + label + "\" was taken " + count(m) + ", where the exercise takes it " + count(r) +
                  ": the same flags at another moment do not show what the exercise asks";
      return true;
    }
  }
  return false;
}

// A snapshot of a gradient the program set or changed by hand, or of
// numbers where the reference snapshots a gradient a backward wrote.
bool snapshot_route_wrong(const Rubric& rubric, const Check& c, const json& student, const json& reference, Outcome& o,
                          std::string& hint) {
  for (const auto& l : c.spec.value("labels", json::array())) {
    const std::string label = l.get<std::string>();
    const json mine = snapshot_routes(student, label), ref = snapshot_routes(reference, label);
    // "No gradient" because the program erased the one a backward wrote
    // (G_w.mutable_grad() = {} after a D step that was not detached).
    for (size_t i = 0; i < mine.size() && i < ref.size(); ++i)
      if (mine[i] == kResetAfterBackward && ref[i] != kResetAfterBackward) {
        o.message = "the snapshot \"" + label + "\" holds no gradient because the program reset one a backward had "
                    "written (mutable_grad() = {}): what the backward leaves there is what the check asks about";
        o.found = "a gradient written by a backward, then reset by hand";
        hint = "Leave the gradient as the backward leaves it; to keep a backward from writing one, detach what it "
               "must not reach.";
        return true;
      }
    for (size_t i = 0; i < ref.size() && student.contains("provenance"); ++i) {
      if (ref[i] != "backward") continue;
      if (i >= mine.size()) break;  // no such snapshot: the check says it is missing, not how it came to be
      const json got = mine[i];
      if (got == "backward") {
        if (grad_of_another(student, reference, label, i, o, hint)) return true;
        if (root_elsewhere(c, student, snapshot_routes(student, label, "roots"), i, "the gradient in the snapshot \"" + label + "\"", o, hint))
          return true;
        const json seeds = snapshot_routes(student, label, "seeds"), want = snapshot_routes(reference, label, "seeds");
        if (i < seeds.size() && i < want.size() &&
            started_elsewhere(seeds[i], want[i], "the gradient in the snapshot \"" + label + "\"", o, hint,
                              curvature_counts(c, o), o.pass))
          return true;
        if (root_graph_differs(rubric, c, student, reference, label, i, o, hint)) return true;
        continue;
      }
      o.message = "the snapshot \"" + label + "\" holds " +
                  (got.is_string() ? "a gradient that was " + got.get<std::string>()
                                   : std::string("numbers that are no tensor's gradient")) +
                  ", where the exercise snapshots a gradient as a backward wrote it";
      hint = "Snapshot the parameter's own .grad(), right after the backward() that wrote it, not numbers worked out "
             "beside autograd.";
      return true;
    }
  }
  if (!student.contains("provenance") || !student["provenance"].contains("records")) return false;
  const json& routes = student["provenance"]["records"];
  for (const auto& l : c.spec.value("labels", json::array())) {
    const std::string label = l.get<std::string>();
    if (!routes.contains(label) || !routes[label].contains("grad")) continue;
    const std::string how = routes[label]["grad"].get<std::string>();
    if (how.rfind("set by hand", 0) != 0 && how.rfind("changed by hand", 0) != 0) continue;
    o.message = "the snapshot \"" + label + "\" holds a gradient that was " + how + ", not written by a backward";
    hint = "Let backward() write the gradient, and snapshot it as it left the backward pass.";
    return true;
  }
  return false;
}

}  // namespace grader::check_detail

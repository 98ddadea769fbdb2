// The checks of what the program recorded along the way, by label: its
// snapshots, the errors it provoked or avoided in lab.attempt, and the
// probes the harness ran after it (checks_probes.cpp has those run on the
// grader's own inputs). checks.cpp dispatches to them.
#include <set>
#include <string>

#include "judge/checks_internal.h"

namespace grader::check_detail {

// The labels the program recorded that the exercise never uses, said after a
// snapshot that is missing: a label spelled or numbered otherwise
// ("accumulate 0" for "accumulate 1") is the likelier cause than the work.
std::string unknown_labels(const json& student, const json& reference) {
  std::set<std::string> known, unknown;
  for (const auto& r : reference.value("records", json::array())) known.insert(r.value("label", ""));
  for (const auto& r : student.value("records", json::array()))
    if (!known.count(r.value("label", ""))) unknown.insert(r.value("label", ""));
  if (unknown.empty()) return "";
  std::string out;
  size_t shown = 0;
  for (const std::string& l : unknown)
    if (shown++ < 3) out += (out.empty() ? "" : ", ") + ("\"" + l + "\"");
  if (unknown.size() > 3) out += " and " + std::to_string(unknown.size() - 3) + " more";
  return "; the program recorded " + out + ", which the exercise does not name: check the labels' spelling and numbering";
}

Outcome check_snapshots(const Check& c, const json& student, const json& reference) {
  std::set<std::string> labels;
  for (const auto& l : c.spec["labels"]) labels.insert(l.get<std::string>());
  std::vector<std::string> fields = {"values"};
  if (c.spec.contains("fields")) fields = c.spec["fields"].get<std::vector<std::string>>();
  auto pick = [&](const json& snap) {
    std::vector<const json*> out;
    if (snap.contains("records"))
      for (const auto& r : snap["records"])
        if (labels.count(r.value("label", ""))) out.push_back(&r);
    return out;
  };
  auto s = pick(student), r = pick(reference);
  if (r.empty()) rubric_bug(c, "the reference recorded none of the labels");
  Outcome o;
  o.expected = json::array();
  o.found = json::array();
  for (const json* x : r) o.expected.push_back(x->value("label", "") + ": " + record_text(x, fields));
  for (const json* x : s) o.found.push_back(x->value("label", "") + ": " + record_text(x, fields));
  if (s.size() != r.size()) {
    o.message = std::to_string(s.size()) + " of these snapshots " + (s.size() == 1 ? "was" : "were") +
                " recorded, expected " + std::to_string(r.size()) + unknown_labels(student, reference);
    o.unreached = s.size() < r.size();
    return o;
  }
  o.pass = true;
  for (size_t i = 0; i < s.size() && o.pass; ++i) {
    const json& a = *s[i];
    const json& b = *r[i];
    // A label recorded once per iteration ("loss") is told apart by its count.
    size_t same = 0, nth = 0;
    for (size_t k = 0; k < r.size(); ++k)
      if (r[k]->value("label", "") == b.value("label", "")) same++, nth += k <= i;
    const std::string who = "\"" + a.value("label", "") + "\"" + (same > 1 ? " #" + std::to_string(nth) : "");
    if (a.value("label", "") != b.value("label", "")) {
      o.pass = false;
      o.message = "snapshot " + std::to_string(i + 1) + " is \"" + a.value("label", "") + "\", expected \"" +
                  b.value("label", "") + "\"";
    } else if (a.value("kind", "") != b.value("kind", "")) {
      o.pass = false;
      o.message = who + " recorded a " + a.value("kind", "") + ", expected a " + b.value("kind", "");
    } else if (a["kind"] == "value") {
      o.pass = close(json::array({a["value"]}), json::array({b["value"]}), c.tol);
      if (!o.pass) o.message = who + " is " + format_number(a["value"]) + ", expected " + format_number(b["value"]);
    } else if (a["kind"] == "snapshot") {
      const json& ta = a["tensor"];
      const json& tb = b["tensor"];
      if (ta.value("defined", false) != tb.value("defined", false)) {
        o.pass = false;
        o.message = who + " recorded " +
                    (ta.value("defined", false) ? "a tensor where the reference's is undefined"
                                                : "an undefined tensor (no value assigned yet, or no gradient yet, when it was taken)");
      } else if (ta.value("defined", false)) {
        for (const auto& f : fields) {
          const bool equal = f == "values" ? (ta["shape"] == tb["shape"] || (c.tol.one_element_is_scalar && one_element_for_scalar(ta["shape"], tb["shape"]))) &&
                                             close(ta["values"], tb["values"], c.tol)
                                           : ta.value(f, json()) == tb.value(f, json());
          if (equal) continue;
          o.pass = false;
          o.message = who + " " +
                      (f == "values" ? std::string("has other values than the reference's")
                                     : "has " + field_text(ta, f) + ", expected " + field_text(tb, f));
          break;
        }
      }
    }
    if (!o.pass && o.message.empty()) o.message = who + " differs";
  }
  if (o.pass && snapshot_taken_elsewhen(c, student, reference, o)) o.pass = false;
  if (o.pass && c.spec.contains("source")) {
    o.message = snapshots_shadow_differs(c, student, reference, o.found);
    o.pass = o.message.empty();
  }
  return o;
}

Outcome check_error(const Check& c, const json& student, const json& reference) {
  const std::string label = c.spec["label"];
  std::string want;
  if (c.spec.contains("contains")) {
    want = c.spec["contains"];
  } else {
    const json* r = record(reference, label);
    if (!r || r->value("kind", "") != "error") rubric_bug(c, "the reference recorded no error under \"" + label + "\"");
    want = first_line(r->value("message", ""));
  }
  const json* s = record(student, label);
  Outcome o;
  o.expected = "error: " + want;
  o.found = record_text(s);
  if (!s) {
    o.message = "nothing was recorded under \"" + label + "\" (lab.attempt(\"" + label + "\", ...))";
    o.unreached = true;
  } else if (s->value("kind", "") != "error") {
    o.message = "\"" + label + "\" finished without the error";
  } else {
    o.pass = s->value("message", "").find(want) != std::string::npos;
    if (!o.pass) o.message = "a different error was raised";
    if (o.pass && error_raised_elsewhere(c, student, reference, o)) o.pass = false;
  }
  return o;
}

namespace {
// How many backward passes the replay saw run in the attempt recorded as
// `label` (its body; a record of no attempt: since the record before it), or
// -1 when the run has no replay of it.
int backward_passes(const json& run, const std::string& label) {
  const json* r = record_route(run, label);
  return !r ? -1 : r->contains("attempt_passes") ? r->value("attempt_passes", -1) : r->value("backward_passes", -1);
}
}  // namespace

Outcome check_no_error(const Check& c, const json& student, const json& reference) {
  const std::string label = c.spec["label"];
  const json* s = record(student, label);
  Outcome o{false, "no error", record_text(s), ""};
  if (!s) o.message = "nothing was recorded under \"" + label + "\" (lab.attempt(\"" + label + "\", ...))";
  o.unreached = !s;
  if (s) o.pass = s->value("kind", "") == "no_error";
  // Finishing without an error counts when the attempt did the work: where
  // the reference's attempt ran a backward, one that ran none did nothing.
  const int want = backward_passes(reference, label), did = backward_passes(student, label);
  if (o.pass && want > 0 && did == 0) {
    o.pass = false;
    o.found = "no error, and no backward";
    o.message = "\"" + label + "\" finished without an error, but no backward ran in it: the exercise's runs " +
                std::to_string(want) + (want == 1 ? " backward pass" : " backward passes") +
                " there, and an attempt that does nothing raises nothing";
  }
  return o;
}

Outcome check_probe(const Check& c, const json& student, const json& reference) {
  const std::string id = c.spec["probe"];
  if (!reference.contains("probes") || !reference["probes"].contains(id))
    rubric_bug(c, "the reference has no outcome for probe \"" + id + "\"");
  const json& rp = reference["probes"][id];
  const json sp = student.contains("probes") && student["probes"].contains(id) ? student["probes"][id] : json();
  const bool want_error = c.spec["expect"] == "error";
  std::string want = c.spec.value("contains", want_error ? first_line(rp.value("error", "")) : "");
  Outcome o;
  o.expected = want_error ? "error: " + want : "no error";
  if (sp.is_null()) {
    o.found = "the probe did not run";
    o.unreached = true;
    return o;
  }
  o.found = sp.value("ok", false) ? "no error" : "error: " + first_line(sp.value("error", ""));
  o.pass = want_error ? (!sp.value("ok", false) && sp.value("error", "").find(want) != std::string::npos)
                      : sp.value("ok", false);
  if (o.pass && c.spec.contains("grad_of")) {
    const std::string name = c.spec["grad_of"];
    const json& a = sp.contains("after") && sp["after"].contains(name) ? sp["after"][name] : json();
    const json& b = rp.contains("after") && rp["after"].contains(name) ? rp["after"][name] : json();
    if (b.is_null()) rubric_bug(c, "the reference's probe has no state for \"" + name + "\"");
    if (a.is_null()) {
      o.pass = false;
      o.message = missing_name(name);
      o.unreached = true;
    } else {
      Outcome g = check_grad(c, name, a, &b, /*backward_ran=*/true, on_another_graph(student, name));
      o.pass = g.pass;
      o.expected = name + ".grad() = " + g.expected.get<std::string>();
      o.found = name + ".grad() = " + g.found.get<std::string>();
      o.message = g.message;
    }
  }
  return o;
}

Outcome check_gradcheck(const Check& c, const json& student, const json& reference) {
  const std::string id = c.spec["probe"];
  const json sp = student.contains("probes") && student["probes"].contains(id) ? student["probes"][id] : json();
  Outcome o{false, "analytical gradient = numerical gradient", json(), ""};
  if (sp.is_null()) {
    o.found = "the check did not run";
    o.unreached = true;
  } else if (sp.contains("error")) {
    o.found = "error: " + first_line(sp.value("error", ""));
  } else {
    o.pass = sp.value("ok", false);
    o.found = "largest difference " + format_number(sp.value("max_abs_error", json(0)));
    const json rp = reference.contains("probes") && reference["probes"].contains(id) ? reference["probes"][id] : json();
    if (c.spec.value("same_node", false) && rp.contains("grad_fn") && sp.value("grad_fn", json()) != rp["grad_fn"]) {
      o.pass = false;
      o.found = "made by " + node_text(sp.value("grad_fn", json()));
      o.message = node_differs("the function", "on the grader's random input", sp.value("grad_fn", json()), rp["grad_fn"]);
    }
  }
  return o;
}

Outcome walk_printed_elsewhere(const Check& c, const json& student, Outcome o) {
  const std::string of = c.spec.value("walked", "");
  const json* p = of.empty() ? nullptr : provenance_of(student, of);
  if (!p || !p->contains("walked")) return o;
  const int64_t nodes = (*p)["walked"].value("nodes", int64_t{0}), read = (*p)["walked"].value("names_read", int64_t{0});
  if (nodes == 0 || read == nodes) return o;
  o.pass = false;
  o.found = "the names of " + std::to_string(read) + " of " + of + "'s " + std::to_string(nodes) + " nodes read";
  o.message = "the output reads as a walk of " + of + "'s graph, but the program read the names of " +
              (read == 0 ? std::string("none") : std::to_string(read)) + " of its " + std::to_string(nodes) +
              " nodes: the lines were typed, or printed from another graph";
  return o;
}

}  // namespace grader::check_detail

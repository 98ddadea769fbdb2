// Rubric diagnoses (rubric.h): a failed check whose mistake the student's
// recorded facts recognise gets the hint that names that mistake.
#include <set>

#include "judge/checks.h"
#include "judge/checks_internal.h"

namespace grader {
namespace {

// Whether one of a diagnosis's conditions holds on the student's facts.
bool holds(const json& c, const json& student, const std::vector<CheckResult>& results) {
  if (c.contains("probe")) {
    const json& probes = student.value("probes", json::object());
    const std::string id = c["probe"];
    return probes.contains(id) && probes[id].value("ok", false) == c["ok"].get<bool>();
  }
  if (c.contains("record")) {  // how many backward passes ran since the record before it (the replay's)
    const json* r = check_detail::record_route(student, c["record"].get<std::string>());
    return r && r->value("backward_passes", -1) == c["backward_passes"].get<int>();
  }
  if (c.contains("check")) {
    for (const auto& r : results)
      if (r.id == c["check"].get<std::string>()) return name(r.status) == c["status"].get<std::string>();
    return false;
  }
  const json* t = named(student, c["tensor"]);
  if (!t) return false;
  const std::string f = c["field"];
  if (f == "grad_defined") return json(t->contains("grad") && !(*t)["grad"].is_null()) == c["equals"];
  return t->contains(f) && (*t)[f] == c["equals"];
}

}  // namespace

void diagnose(const Rubric& rubric, const json& student, std::vector<CheckResult>& results) {
  std::set<std::string> done;
  for (const auto& d : rubric.diagnoses) {
    if (done.count(d.check)) continue;
    bool all = true;
    for (const auto& c : d.when) all = all && holds(c, student, results);
    if (!all) continue;
    for (auto& r : results)
      if (r.id == d.check && r.status == CheckStatus::Failed) {
        r.hint = d.hint;
        done.insert(d.check);
      }
  }
}

}  // namespace grader

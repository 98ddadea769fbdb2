// Hand-made grading results for the report writers' tests: checks of each
// status, and text a hostile submission could print or throw (markup, a
// CDATA end, control characters, bytes that are not UTF-8).
#pragma once
#include <string>

#include "reports/result.h"

namespace samples {

inline const std::string kHostile =
    std::string("</failure>]]></pre><script>alert('x')</script> & \"q\" \x01\x1b[31m bad:\xff\xfe end");

// A check worth `max` points: full marks when passed; otherwise with a why,
// a hint, and expected/found values that name it.
inline grader::CheckResult check(const std::string& id, grader::CheckStatus status, double max, bool hidden = false) {
  grader::CheckResult c;
  c.id = id, c.name = "check " + id, c.kind = "value", c.status = status, c.max = max, c.hidden = hidden;
  c.points = status == grader::CheckStatus::Passed ? max : 0;
  if (status != grader::CheckStatus::Passed) c.message = "why " + id, c.hint = "hint " + id, c.expected = "expected " + id, c.found = "found " + id;
  return c;
}

}  // namespace samples

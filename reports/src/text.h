// What the line-oriented formats (JUnit, Gradescope) say about one check and
// about the run, in plain text, so both say it the same way.
#pragma once
#include <string>

#include "reports/result.h"

namespace reports {

// "expected … / found … / why … / hint …" for a failed check; for a hidden
// check only that it failed.
std::string check_text(const grader::CheckResult& c);

// Why no check ran: the compiler's diagnostics, or how the run ended, with
// its output (each capped, with an explicit marker when cut).
std::string run_text(const grader::Result& r);

// Seconds with three decimals, as JUnit readers expect: "0.412".
std::string seconds3(double s);

}  // namespace reports

// The terminal view of a result: one line per check, what was expected and
// found for a failure with its hint (a hidden check shows only that it
// failed), the total, and where the reports went. Colour only on a terminal.
#pragma once
#include <ostream>
#include <string>

#include "source/blanks.h"
#include "reports/result.h"

namespace grader {

struct Style {
  bool colour = false;
  std::string green() const { return colour ? "\033[32m" : ""; }
  std::string red() const { return colour ? "\033[31m" : ""; }
  std::string yellow() const { return colour ? "\033[33m" : ""; }
  std::string dim() const { return colour ? "\033[2m" : ""; }
  std::string bold() const { return colour ? "\033[1m" : ""; }
  std::string reset() const { return colour ? "\033[0m" : ""; }
};

// Colour when stdout is a terminal and NO_COLOR is not set.
Style terminal_style();

// The exercise's starter as the console knows it: its blanks as recorded
// with the facts (nullopt: not recorded, and then only a blank without code
// reads as empty).
struct Starter {
  std::optional<StarterBlanks> recorded;
};

// `starter`: null when no blank can be empty (grading the solution); else
// used to tell an untouched starter, or blanks left empty, from the
// student's work.
void print_result(std::ostream& os, const Result& r, const Style& st, const std::string& report_dir,
                  const Starter* starter = nullptr);

}  // namespace grader

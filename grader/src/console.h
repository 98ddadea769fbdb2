// The terminal view of a result: one line per check, what was expected and
// found for a failure with its hint (a hidden check shows only that it
// failed), the total, and where the reports went. Colour only on a terminal.
#pragma once
#include <ostream>
#include <string>

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

// `starter`: the course's starter file for the exercise ("" when unknown),
// to tell an untouched starter from a student's work.
void print_result(std::ostream& os, const Result& r, const Style& st, const std::string& report_dir,
                  const std::string& starter = "");

}  // namespace grader

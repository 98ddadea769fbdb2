// A compiler's output, said so that a student can act on it: the first error
// first, at the student's own file:line (even when GCC found it deep inside
// a template in a header), the line of code it is about, the candidates of a
// failed overload without their header paths, and a count of the rest. The
// whole output stays in the report.
#pragma once
#include <string>
#include <vector>

#include "reports/result.h"

namespace grader {

struct CompileError {
  int line = 0, column = 0;     // in the student's file; 0 when GCC named none
  std::string message;          // GCC's, without its location
  std::string inside;           // the header it was found in, when not the student's file
  std::vector<std::string> excerpt;     // GCC's "  11 |   code" lines for the student's line
  std::vector<std::string> candidates;  // a failed overload's candidates: signature — why not
};

struct CompileSummary {
  std::vector<CompileError> errors;  // in GCC's order; the first is the one to fix first
  size_t total_lines = 0;
};

// `student_file` is the path GCC was given for the student's file; its
// text, when given, supplies the line of code for an error GCC found in a
// header (it quotes the header's line, not the student's).
CompileSummary summarize_compile(const std::string& diagnostics, const std::string& student_file,
                                 const std::string& source = "");

// The Python habits (source/python_habits.h) on the lines the compiler
// refused, each with its hint.
std::vector<CompileHint> compile_hints(const std::string& diagnostics, const std::string& student_file,
                                       const std::string& source);

// Line `line` of `source` as GCC quotes code, "    6 |   m[x] = 1;", or ""
// when the source has no such line.
std::string source_line(const std::string& source, int line);

// The summary as the console prints it: a few lines, indented by `indent`.
std::string compile_summary_text(const CompileSummary& s, const std::string& student_file, size_t max_errors = 3);

}  // namespace grader

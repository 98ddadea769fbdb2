#include "course/github.h"

#include "compile/diagnostics.h"
#include "reports/escape.h"

namespace grader {
namespace {

// Workflow commands end at a newline and split properties at ',' and ':':
// GitHub's own escapes (%25, %0D, %0A, %3A, %2C) keep a student's text inside.
std::string command_text(const std::string& s, bool property) {
  std::string out;
  for (char c : reports::visible(s)) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else if (property && c == ':') out += "%3A";
    else if (property && c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

std::string command(const std::string& file, int line, int col, const std::string& title, const std::string& message) {
  std::string s = "::error file=" + command_text(file, true);
  if (line > 0) s += ",line=" + std::to_string(line);
  if (line > 0 && col > 0) s += ",col=" + std::to_string(col);
  return s + ",title=" + command_text(title, true) + "::" + command_text(message, false) + "\n";
}

// Text inside a Markdown table cell: one line, nothing read as Markdown or HTML.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : reports::visible(s, false)) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (std::string("\\`*_[]|#!~").find(c) != std::string::npos) out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

}  // namespace

std::string github_annotations(const Result& r, const std::string& source) {
  std::string out;
  if (r.verdict == Verdict::CompileError) {
    const CompileSummary s = summarize_compile(r.compile.diagnostics, r.submission, source);
    for (size_t i = 0; i < s.errors.size() && i < 3; ++i)
      out += command(r.submission, s.errors[i].line, s.errors[i].column, "does not compile", s.errors[i].message);
    if (s.errors.empty()) out += command(r.submission, 0, 0, "does not compile", r.compile.diagnostics.substr(0, 2000));
    return out;
  }
  if (r.verdict == Verdict::RuntimeError) return command(r.submission, r.run.line, 0, name(r.run.status), r.run.message);
  for (const auto& c : r.checks) {
    if (c.status != CheckStatus::Failed) continue;
    std::string m = c.hidden ? "a hidden check failed" : c.message;
    if (!c.hidden && !c.hint.empty()) m += (m.empty() ? "" : " ") + std::string("Hint: ") + c.hint;
    out += command(r.submission, 0, 0, shown_name(c) + " (0/" + points(c.max) + ")", m.empty() ? "failed" : m);
  }
  return out;
}

std::string github_summary(const Result& r) {
  std::string s = "### " + cell(r.exercise) + " · " + cell(r.title) + "\n\n**" + points(r.score) + "/" +
                  points(r.max_score) + "** · " + cell(name(r.verdict)) + " · " + cell(r.submission) + "\n\n";
  if (r.verdict == Verdict::CompileError) s += "The file does not compile: the errors are annotated on its lines.\n\n";
  if (r.verdict == Verdict::RuntimeError) s += "The program did not finish: " + cell(r.run.message) + "\n\n";
  s += "| | check | points | why |\n|---|---|---|---|\n";
  for (const auto& c : r.checks) {
    const char* mark = c.status == CheckStatus::Passed ? "✅" : c.status == CheckStatus::Failed ? "❌" : "⏭️";
    s += std::string("| ") + mark + " | " + cell(shown_name(c)) + " | " + points(c.points) + "/" + points(c.max) + " | " +
         cell(c.status == CheckStatus::Passed || c.hidden ? "" : c.message) + " |\n";
  }
  return s + "\nThe full report (report.html, with the graphs) is this run's artifact.\n";
}

}  // namespace grader

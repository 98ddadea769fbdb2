#include "text.h"

#include <cstdio>

namespace reports {
namespace {

// Reports are read in CI logs and LMS pages: a few kilobytes of output say
// what happened; the whole stream is in report.json.
constexpr size_t kMaxShown = 4000;

std::string capped(const std::string& s) {
  if (s.size() <= kMaxShown) return s;
  return s.substr(0, kMaxShown) + "\n[… " + std::to_string(s.size() - kMaxShown) + " more bytes cut; see report.json]";
}

}  // namespace

std::string check_text(const grader::CheckResult& c) {
  if (c.status == grader::CheckStatus::Passed) return "";
  if (c.hidden) return "hidden check: " + grader::name(c.status);
  std::string s;
  auto line = [&](const char* label, const std::string& v) {
    if (!v.empty()) s += std::string(label) + v + "\n";
  };
  line("expected   ", grader::display_text(c.expected, 11));
  line("found      ", grader::display_text(c.found, 11));
  line("why        ", c.message);
  line("hint       ", c.hint);
  return s;
}

std::string run_text(const grader::Result& r) {
  if (r.verdict == grader::Verdict::CompileError) {
    std::string s = "The file does not compile.\n";
    for (const auto& h : r.compile.hints) s += "hint (line " + std::to_string(h.line) + "): " + h.hint + "\n";
    return s + capped(r.compile.diagnostics);
  }
  if (r.verdict == grader::Verdict::RuntimeError) {
    std::string s = "The program did not finish (" + grader::name(r.run.status) + "): " + r.run.message + "\n";
    if (!r.run.stderr_text.empty()) s += "stderr:\n" + capped(r.run.stderr_text);
    return s;
  }
  return "";
}

std::string seconds3(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s < 0 ? 0.0 : s);
  return buf;
}

}  // namespace reports

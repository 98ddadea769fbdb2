#include "grade/console.h"
#include "judge/variants.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "source/blanks.h"
#include "compile/diagnostics.h"
#include "common/files.h"
#include "reports/escape.h"

namespace grader {
namespace {

// The last lines of a long text, with an explicit marker for what was cut.
// What of a run's output the terminal is shown: a line up to this many
// characters, and this much in all. The report keeps the whole (capped) text;
// a program's one 700 KB line does not flood the student's terminal.
constexpr size_t kEchoLineChars = 200;
constexpr size_t kEchoBytes = 64 << 10;

// `line` cut after kEchoLineChars characters (UTF-8 sequences kept whole).
std::string cut_line(const std::string& line) {
  size_t chars = 0, i = 0;
  for (; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++chars > kEchoLineChars) break;
  if (i >= line.size()) return line;
  size_t rest = 0;
  for (size_t j = i; j < line.size(); ++j) rest += (static_cast<unsigned char>(line[j]) & 0xC0) != 0x80;
  return line.substr(0, i) + " [… " + std::to_string(rest) + " more characters …]";
}

// The last `lines` lines of a run's output, control bytes made visible, each
// cut to kEchoLineChars, at most kEchoBytes in all.
std::string tail(const std::string& s, size_t lines) {
  std::vector<std::string> all;
  std::istringstream in(reports::visible(s));
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  if (all.size() > lines) out += "    [… " + std::to_string(all.size() - lines) + " earlier lines not shown …]\n";
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    const std::string shown = "    " + cut_line(all[i]) + "\n";
    if (out.size() + shown.size() > kEchoBytes) {
      out += "    [… the rest is in the report …]\n";
      break;
    }
    out += shown;
  }
  return out;
}

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Where an exception came from: the student's file:line and that line.
void print_line(std::ostream& os, const std::string& file, int line, const Style& st) {
  os << "  at " << st.bold() << reports::visible(file, false) << ":" << line << st.reset() << "\n";
  const std::string quoted = source_line(read_file(file).value_or(""), line);
  if (!quoted.empty()) os << st.dim() << "  " << reports::visible(quoted) << st.reset() << "\n";
}

// Blank i as the starter's record has it (null: not recorded). Only called
// where the file has as many blanks as the record.
const StarterBlanks::One* starter_blank(const Starter& starter, size_t i) {
  return starter.recorded ? &starter.recorded->blanks[i] : nullptr;
}

// An untouched starter: what goes in each blank, instead of every check
// failing for the same reason.
void print_blanks(std::ostream& os, const Result& r, const std::vector<Blank>& blanks, const Starter& starter,
                  const Style& st) {
  os << "  Nothing to grade yet: the " << (blanks.size() == 1 ? "blank" : std::to_string(blanks.size()) + " blanks")
     << " between START CODE HERE and END CODE HERE " << (blanks.size() == 1 ? "is" : "are") << " still empty.\n";
  os << "  What goes in " << (blanks.size() == 1 ? "it" : "them") << ":\n";
  size_t shown = 0;
  for (size_t i = 0; i < blanks.size(); ++i) {
    const auto said = prompts(blanks[i], starter_blank(starter, i));
    if (said.empty()) os << "    line " << blanks[i].start_line + 1 << "  (write your code here)\n";
    for (const auto& [line, text] : said) {
      if (++shown > 12) break;
      os << "    line " << line << std::string(line < 10 ? 2 : line < 100 ? 1 : 0, ' ') << "  "
         << reports::visible(text) << "\n";
    }
  }
  os << st.dim() << "  Fill them in, then run ./grade " << r.exercise
     << " again: the report lists every check and its hint." << st.reset() << "\n\n";
}

// Some blanks filled and some not: the empty ones named, after the checks,
// since a check failing there may only mean the blank is still to write.
void print_empty_blanks(std::ostream& os, const std::vector<Blank>& blanks, const std::vector<bool>& empty,
                        const Starter& starter, const Style& st) {
  for (size_t i = 0; i < blanks.size(); ++i) {
    if (!empty[i]) continue;
    const auto said = prompts(blanks[i], starter_blank(starter, i));
    os << st.yellow() << "  still empty" << st.reset() << ": the blank at line " << blanks[i].start_line
       << (said.empty() ? std::string() : " (" + reports::visible(said.front().second) + ")") << "\n";
  }
}

// Each check with its points; a failed visible one with what was expected,
// what was found, why and a hint; then the warnings the code raised.
void print_checks(std::ostream& os, const Result& r, const Style& st) {
  for (const auto& c : r.checks) {
    const bool ok = c.status == CheckStatus::Passed;
    const std::string mark = ok ? st.green() + "✓" + st.reset() : st.red() + "✗" + st.reset();
    const std::string name = c.hidden && !ok ? "hidden check " + c.id : c.name;
    const std::string pts = points(c.points) + "/" + points(c.max);
    // The points stay in their column: a name too long for it ends its
    // line, and the points go below, in the column.
    const size_t w = display_width(name);
    os << "  " << mark << " " << name << (w < 56 ? std::string(56 - w, ' ') : "\n" + std::string(60, ' ')) << pts << "\n";
    if (ok || c.hidden) continue;
    if (!c.expected.is_null()) os << st.dim() << "      expected  " << st.reset() << reports::visible(display_text(c.expected, 16)) << "\n";
    if (!c.found.is_null()) os << st.dim() << "      found     " << st.reset() << reports::visible(display_text(c.found, 16)) << "\n";
    if (!c.message.empty()) os << st.dim() << "      why       " << st.reset() << reports::visible(c.message) << "\n";
    if (!c.hint.empty()) os << st.yellow() << "      hint      " << st.reset() << reports::visible(c.hint) << "\n";
  }
  if (!r.warnings.empty()) {
    os << "\n" << st.yellow() << "  warnings raised by the code:" << st.reset() << "\n";
    for (const auto& w : r.warnings) os << "    " << reports::visible(w.value("message", "")) << "\n";
  }
  os << "\n";
}

}  // namespace

Style terminal_style() {
  Style s;
  const char* no = std::getenv("NO_COLOR");
  s.colour = isatty(STDOUT_FILENO) && !(no && *no);
  return s;
}

void print_result(std::ostream& os, const Result& r, const Style& st, const std::string& report_dir,
                  const Starter* starter) {
  // Read from the file's content, wherever it is: the default path is the
  // starter's own, and a copy elsewhere must read the same.
  const std::vector<Blank> blanks = !starter || r.verdict == Verdict::CompileError
                                        ? std::vector<Blank>{}
                                        : find_blanks(read_file(r.submission).value_or(""));
  const StarterBlanks* recorded = starter && starter->recorded ? &*starter->recorded : nullptr;
  const bool paired = !recorded || recorded->blanks.size() == blanks.size();
  const std::vector<bool> empty = paired ? empty_blanks(blanks, recorded) : std::vector<bool>(blanks.size(), false);
  const bool all_empty = r.verdict != Verdict::Passed && untouched(blanks, recorded);
  os << st.bold() << r.exercise << st.reset() << " · " << r.title << "\n" << st.dim() << reports::visible(r.submission, false) << st.reset()
     << "\n";
  if (r.variant > 0)
    os << st.dim() << "graded at your numbers (variant " << r.variant << "): " << given_text(r.given) << st.reset() << "\n";
  os << "\n";
  if (r.verdict == Verdict::CompileError) {
    os << st.red() << "✗ does not compile" << st.reset() << "\n";
    // The first error first, at the student's line; the whole output is in
    // the report. Output the summary cannot read (the linker's) is shown
    // as it came.
    const auto source = read_file(r.submission);
    const CompileSummary sum = summarize_compile(r.compile.diagnostics, r.submission, source.value_or(""));
    for (const auto& h : r.compile.hints)
      os << st.yellow() << "  hint" << st.reset() << " (line " << h.line << "): " << reports::visible(h.hint) << "\n";
    if (sum.errors.empty()) {
      os << tail(r.compile.diagnostics, 40) << "\n";
    } else {
      os << compile_summary_text(sum, r.submission);
      os << st.dim() << "  (the compiler's whole output, " << sum.total_lines << " lines, is in the report)" << st.reset()
         << "\n\n";
    }
  } else if (all_empty) {
    print_blanks(os, r, blanks, *starter, st);
  } else if (r.verdict == Verdict::RuntimeError) {
    os << st.red() << "✗ the program did not finish" << st.reset() << ": " << reports::visible(r.run.message) << "\n";
    if (r.run.line > 0) print_line(os, r.submission, r.run.line, st);
    if (!r.run.stderr_text.empty()) os << st.dim() << "  its error output:" << st.reset() << "\n" << tail(r.run.stderr_text, 15);
    if (!r.run.stdout_text.empty()) os << st.dim() << "  its output:" << st.reset() << "\n" << tail(r.run.stdout_text, 10);
    os << "\n";
    // An exception: what was done before it was still checked and scored.
    if (scored_before_exception(r)) {
      os << st.dim() << "  checked on what it had done before the exception:" << st.reset() << "\n";
      print_checks(os, r, st);
    }
  } else {
    print_checks(os, r, st);
  }
  if (!all_empty && r.verdict != Verdict::Passed && !blanks.empty()) print_empty_blanks(os, blanks, empty, *starter, st);
  // What the grade could not check against the program's replayed computation.
  const auto& comp = r.run.computation;
  if (comp.recorded && !comp.replayed && !comp.note.empty()) os << st.dim() << "note: " << comp.note << st.reset() << "\n";
  for (const auto& u : comp.unverified)
    os << st.dim() << "note: not checked against a replay, taken as the program's own: " << u << st.reset() << "\n";
  int failed = 0;
  for (const auto& c : r.checks) failed += c.status != CheckStatus::Passed;
  const std::string colour = r.verdict == Verdict::Passed ? st.green() : st.red();
  os << colour << st.bold() << "score " << points(r.score) << "/" << points(r.max_score) << st.reset();
  if (all_empty) os << " — the blanks are empty";
  else if (r.verdict == Verdict::Passed) os << " — every check passed";
  else if (r.verdict == Verdict::Failed) os << " — " << failed << " of " << r.checks.size() << " checks failed";
  else if (r.verdict == Verdict::CompileError) os << " — does not compile";
  else os << " — " << r.run.status;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f", r.total_seconds);
  os << st.dim() << " · " << secs << " s" << st.reset() << "\n";
  if (!report_dir.empty())
    os << st.dim() << "report: " << report_dir << "/report.html" << st.reset() << " (open it in a browser; report.json"
       << " and the graph pictures are beside it)\n";
}

}  // namespace grader

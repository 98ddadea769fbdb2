// Reading GCC's and clang's diagnostics (see diagnostics.h). Both write one
// located line per message, "FILE:LINE:COL: KIND: TEXT", then the source
// excerpt: GCC's "  11 |   code" and "     |   ^~~", clang's bare line of
// code and its caret. Where an error inside a header came from, GCC says
// before the error ("In instantiation of …", "FILE:LINE:COL:   required from
// here"), clang after it ("FILE:LINE:COL: note: in instantiation of …
// requested here"). A failed overload's candidates: GCC's "candidate: ‘sig’"
// note and its reason on a note of its own; clang's reason on the candidate's
// note, and the signature as the excerpt below it.
#include "compile/diagnostics.h"

#include <regex>
#include <sstream>

#include "reports/escape.h"
#include "source/python_habits.h"

namespace grader {
namespace {

struct Located {
  std::string file;
  int line = 0, column = 0;
  std::string kind, text;  // kind: error, fatal error, warning, note, or "" (context)
};

bool parse_located(const std::string& l, Located& out) {
  static const std::regex re(R"(^(.+?):(\d+):(\d+): (?:(fatal error|error|warning|note): )?(.*)$)");
  std::smatch m;
  if (!std::regex_match(l, m, re)) return false;
  out.file = m[1];
  out.line = std::stoi(m[2]);
  out.column = std::stoi(m[3]);
  out.kind = m[4];
  out.text = m[5];
  return true;
}

bool is_excerpt(const std::string& l) {
  static const std::regex re(R"(^\s*(\d+)? \|.*$)");
  return std::regex_match(l, re);
}

// The student's code speaks of torch::Tensor; gradlab's namespace is what
// torch:: is an alias of, and only confuses.
std::string in_torch_words(std::string s) {
  for (size_t at; (at = s.find("gradlab::")) != std::string::npos;) s.replace(at, 9, "torch::");
  return s;
}

// A declaration quoted by clang below a candidate, without its body.
std::string declaration(std::string code) {
  code.erase(0, code.find_first_not_of(" \t"));
  if (const size_t end = code.find_first_of("{;"); end != std::string::npos) code.erase(end);
  while (!code.empty() && code.back() == ' ') code.pop_back();
  for (const char* word : {"inline ", "static "})
    if (code.rfind(word, 0) == 0) code.erase(0, std::string(word).size());
  return code;
}

// The part of a "candidate: ‘sig’" note between GCC's quotes.
std::string between_quotes(const std::string& s) {
  const std::string open = "‘", close = "’";
  const size_t a = s.find(open);
  const size_t b = a == std::string::npos ? a : s.rfind(close);
  if (a == std::string::npos || b == std::string::npos || b <= a) return s;
  return s.substr(a + open.size(), b - a - open.size());
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

CompileSummary summarize_compile(const std::string& diagnostics, const std::string& student_file,
                                 const std::string& source) {
  CompileSummary s;
  std::vector<std::string> lines;
  std::istringstream in(diagnostics);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  s.total_lines = lines.size();

  // The student's line most recently named as context ("required from
  // here", "In function …" carry none), for an error found in a header.
  Located context;
  CompileError* open = nullptr;  // the error whose notes are being read
  bool excerpt_open = false;
  std::string clang_reason;  // a clang candidate's reason, waiting for its declaration below
  for (size_t i = 0; i < lines.size(); ++i) {
    Located loc;
    if (!parse_located(lines[i], loc)) {
      if (excerpt_open && open && is_excerpt(lines[i]) && open->excerpt.size() < 6) open->excerpt.push_back(lines[i]);
      else excerpt_open = false;
      if (!clang_reason.empty() && open)
        open->candidates.push_back(in_torch_words(declaration(lines[i])) + " — " + in_torch_words(clang_reason));
      clang_reason.clear();
      continue;
    }
    excerpt_open = false;
    clang_reason.clear();
    const bool mine = loc.file == student_file;
    if (loc.kind.empty()) {  // context: "required from here"
      if (mine) context = loc;
      continue;
    }
    if (loc.kind == "error" || loc.kind == "fatal error") {
      CompileError e;
      e.message = in_torch_words(loc.text);
      if (mine) {
        e.line = loc.line, e.column = loc.column;
        excerpt_open = true;
      } else {
        e.inside = base_name(loc.file);
        if (context.line) e.line = context.line, e.column = context.column;
      }
      s.errors.push_back(std::move(e));
      open = &s.errors.back();
      context = Located{};
      continue;
    }
    if (loc.kind == "note" && open) {
      // clang: the student's line behind an error inside a header follows it.
      if (mine && !open->line && !open->inside.empty()) open->line = loc.line, open->column = loc.column;
      const size_t not_viable = loc.text.find("not viable: ");
      if (loc.text.rfind("candidate", 0) == 0 && not_viable != std::string::npos) {
        if (open->candidates.size() < 6) clang_reason = loc.text.substr(not_viable + 12);
      } else if (loc.text.rfind("candidate", 0) == 0 && open->candidates.size() < 6) {
        // GCC: "candidate: ‘sig’" then, on its own note line, why it did not fit.
        open->candidates.push_back(in_torch_words(between_quotes(loc.text)));
      } else if (!open->candidates.empty() && loc.text.find("no known conversion") != std::string::npos) {
        std::string why = loc.text;
        while (!why.empty() && why.front() == ' ') why.erase(0, 1);
        if (open->candidates.back().find(" — ") == std::string::npos)
          open->candidates.back() += " — " + in_torch_words(why);
      }
    }
  }
  // The student's own line, GCC-style, where GCC quoted a header's.
  for (auto& e : s.errors)
    if (e.excerpt.empty())
      if (std::string l = source_line(source, e.line); !l.empty()) e.excerpt.push_back(l);
  return s;
}

std::string source_line(const std::string& source, int line) {
  if (line <= 0) return "";
  std::istringstream in(source);
  std::string text;
  int n = 0;
  while (n < line && std::getline(in, text)) ++n;
  if (n < line) return "";
  const std::string num = std::to_string(line);
  return std::string(num.size() < 5 ? 5 - num.size() : 0, ' ') + num + " | " + text;
}

std::string compile_summary_text(const CompileSummary& s, const std::string& student_file, size_t max_errors) {
  std::string out;
  if (s.errors.empty()) return out;
  const std::string file = reports::visible(student_file, false);
  for (size_t k = 0; k < s.errors.size() && k < max_errors; ++k) {
    const CompileError& e = s.errors[k];
    std::string where = file;
    if (e.line) where += ":" + std::to_string(e.line) + ":" + std::to_string(e.column);
    out += (k ? "  then " : "  ") + where + ": error: " + reports::visible(e.message) + "\n";
    if (!e.inside.empty())
      out += "      (found inside " + reports::visible(e.inside) +
             (e.line ? ", a header your line uses" : ", a header") + ")\n";
    if (k == 0) {
      for (const auto& x : e.excerpt) out += "  " + reports::visible(x) + "\n";
      if (!e.candidates.empty()) {
        out += "      the versions that exist:\n";
        for (size_t c = 0; c < e.candidates.size() && c < 4; ++c)
          out += "        " + reports::visible(e.candidates[c]) + "\n";
      }
    }
  }
  if (s.errors.size() > max_errors)
    out += "  and " + std::to_string(s.errors.size() - max_errors) + " more error(s)\n";
  return out;
}

std::vector<CompileHint> compile_hints(const std::string& diagnostics, const std::string& student_file,
                                       const std::string& source) {
  std::vector<int> lines;
  for (const auto& e : summarize_compile(diagnostics, student_file, source).errors)
    if (e.line > 0) lines.push_back(e.line);
  std::vector<CompileHint> out;
  for (auto& h : python_habits(source, lines)) out.push_back({h.line, std::move(h.hint)});
  return out;
}

}  // namespace grader

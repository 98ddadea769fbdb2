// report.html: the page a student opens after `./grade exerciseN`. One file
// that works offline and without JavaScript: the stylesheet is inlined, the
// graph pictures are embedded as data: URLs (and written beside it as PNGs).
// Every piece of text passes through xml_text; values that change from run
// to run or from machine to machine (times, memory, the compiler, the
// isolation) carry data-volatile, so tests can normalise them.
#include <cstdio>

#include "html_style.h"
#include "reports/escape.h"
#include "reports/graphs.h"
#include "reports/writer.h"
#include "text.h"

namespace reports {
namespace {

using grader::CheckResult;
using grader::Result;

// Output shown on the page; report.json keeps what the grader kept.
constexpr size_t kMaxOutputShown = 20000;
// Graphs are drawn at 144 dpi and shown at 120 (torchviz's 10-point labels
// are small at 96), so they stay crisp on dense screens.
constexpr int kGraphDpi = 144, kShownDpi = 120;

std::string h(std::string_view s) { return xml_text(s); }

std::string volatile_value(const std::string& v) { return "<span data-volatile>" + h(v) + "</span>"; }

std::string fixed(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string verdict_text(grader::Verdict v) {
  switch (v) {
    case grader::Verdict::Passed: return "✓ Passed";
    case grader::Verdict::Failed: return "✗ Failed";
    case grader::Verdict::CompileError: return "✗ Does not compile";
    case grader::Verdict::RuntimeError: return "✗ Did not finish";
    case grader::Verdict::Missing: return "✗ Not handed in";
    case grader::Verdict::InternalError: return "The grader failed";
    case grader::Verdict::SharedFile: return "– Held: a file shared with another student";
  }
  return grader::name(v);
}

std::string verdict_class(grader::Verdict v) {
  return v == grader::Verdict::Passed ? "verdict-passed" : v == grader::Verdict::Failed ? "verdict-failed" : "verdict-error";
}

std::string status_text(grader::CheckStatus s) {
  switch (s) {
    case grader::CheckStatus::Passed: return "✓ passed";
    case grader::CheckStatus::Failed: return "✗ failed";
    case grader::CheckStatus::NotRun: return "– not run";
  }
  return grader::name(s);
}

// The first line of the compiler's output that says "error", the one a
// student should read first.
std::string first_error(const std::string& diagnostics) {
  size_t at = 0;
  while (at < diagnostics.size()) {
    const size_t end = diagnostics.find('\n', at);
    const std::string line = diagnostics.substr(at, end == std::string::npos ? std::string::npos : end - at);
    // "file:4:3: error: …" or "fatal error: …"; not a path that merely contains "error".
    if (line.find(" error: ") != std::string::npos) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

// A console block: the text capped, with the cut said in words.
std::string console(const std::string& text, bool cut_at_source) {
  std::string body = text;
  std::string note;
  if (body.size() > kMaxOutputShown) {
    note = "[… " + std::to_string(body.size() - kMaxOutputShown) + " more bytes not shown here; report.json has them]";
    body.resize(kMaxOutputShown);
  } else if (cut_at_source) {
    note = "[… the program printed more: the grader stopped reading at its output limit]";
  }
  std::string out = "<pre class=\"console\">" + h(body);
  if (!note.empty()) out += (body.empty() || body.back() == '\n' ? "" : "\n") + std::string("<span class=\"cut\">") + h(note) + "</span>";
  return out + "</pre>\n";
}

std::string header(const Result& r) {
  size_t passed = 0;
  for (const auto& c : r.checks) passed += c.status == grader::CheckStatus::Passed;
  const double pct = r.max_score > 0 ? 100.0 * r.score / r.max_score : 0;
  std::string s = "<header class=\"card\">\n<p class=\"eyebrow\">gradlab report</p>\n";
  s += "<h1>" + h(r.exercise) + (r.title.empty() ? "" : " <span class=\"sub\">" + h(r.title) + "</span>") + "</h1>\n";
  s += "<div class=\"summary\">\n<p class=\"verdict " + verdict_class(r.verdict) + "\" id=\"verdict\">" +
       h(verdict_text(r.verdict)) + "</p>\n";
  s += "<p class=\"score\" id=\"score\"><strong>" + h(grader::points(r.score)) + "</strong> / " +
       h(grader::points(r.max_score)) + " points</p>\n";
  s += "<div class=\"meter\" aria-hidden=\"true\"><span style=\"width:" + fixed(pct, "%.0f") + "%\"></span></div>\n</div>\n";

  std::string lede;
  if (r.verdict == grader::Verdict::CompileError) {
    const std::string e = first_error(r.compile.diagnostics);
    lede = "The file does not compile, so no check could run." +
           (e.empty() ? std::string() : " The compiler's first error: <code>" + h(e) + "</code>.") +
           (r.compile.hints.empty() ? std::string()
                                    : " Hint (line " + std::to_string(r.compile.hints[0].line) + "): " +
                                          h(r.compile.hints[0].hint) + ".") +
           " The full diagnostics are <a href=\"#run\">below</a>.";
  } else if (grader::scored_before_exception(r)) {
    lede = "An exception ended the run" +
           (r.run.line > 0 ? " at line " + std::to_string(r.run.line) : std::string()) + ": " + h(r.run.message) +
           " The checks below were scored on what the program had done before it; " + std::to_string(passed) + " of " +
           std::to_string(r.checks.size()) + " passed.";
  } else if (r.verdict == grader::Verdict::SharedFile) {
    lede = "Not graded: " + h(r.run.message);
  } else if (r.verdict == grader::Verdict::RuntimeError) {
    lede = "The program did not finish, so no check could run: " + h(r.run.message) +
           " Its output is <a href=\"#run\">below</a>.";
  } else {
    lede = std::to_string(passed) + " of " + std::to_string(r.checks.size()) + " checks passed." +
           (r.verdict == grader::Verdict::Passed ? " Well done." : " Each failed check below says what was expected, what was found and why.");
  }
  s += "<p class=\"lede\">" + lede + "</p>\n<dl class=\"facts\">\n";
  auto fact = [&](const std::string& k, const std::string& v_html) { s += "<dt>" + h(k) + "</dt><dd>" + v_html + "</dd>\n"; };
  fact("Submission", "<code>" + h(r.submission) + "</code>");
  fact("SHA-256", "<code>" + h(r.submission_sha256) + "</code>");
  fact("Graded", volatile_value(r.created));
  fact("Engine", h(r.engine));
  fact("Compiler", volatile_value(r.compiler));
  fact("Device", h(r.gpu.empty() ? r.device : r.device + " (" + r.gpu + ")"));
  return s + "</dl>\n</header>\n";
}

std::string value_block(const grader::json& v) {
  return "<pre class=\"value\">" + h(grader::display_text(v, 0)) + "</pre>";
}

// `why_not_run` is false when the page says once, above, why no check ran.
std::string check_item(const CheckResult& c, size_t index, const std::string& graph_anchor, bool why_not_run) {
  const std::string name = grader::shown_name(c);
  std::string s = "<li class=\"check check-" + h(grader::name(c.status)) + "\" id=\"check-" + std::to_string(index + 1) + "\">\n";
  s += "<div class=\"check-head\"><span class=\"status status-" + h(grader::name(c.status)) + "\">" + h(status_text(c.status)) +
       "</span><span class=\"check-name\">" + h(name) + "</span><span class=\"points\">" + h(grader::points(c.points)) +
       " / " + h(grader::points(c.max)) + "</span></div>\n";
  if (c.status == grader::CheckStatus::Passed || (c.status == grader::CheckStatus::NotRun && !why_not_run)) return s + "</li>\n";
  s += "<div class=\"detail\">\n";
  if (c.hidden) {
    s += "<p class=\"why\">This check is hidden: it shows only whether it passed.</p>\n</div>\n</li>\n";
    return s;
  }
  if (c.status == grader::CheckStatus::NotRun) return s + "<p class=\"why\">" + h(c.message) + "</p>\n</div>\n</li>\n";
  s += "<dl>";
  if (!c.expected.is_null()) s += "<dt>Expected</dt><dd>" + value_block(c.expected) + "</dd>";
  if (!c.found.is_null()) s += "<dt>Found</dt><dd>" + value_block(c.found) + "</dd>";
  if (!c.message.empty()) s += "<dt>Why</dt><dd class=\"why\">" + h(c.message) + "</dd>";
  s += "</dl>\n";
  if (!c.hint.empty()) s += "<p class=\"hint\"><strong>Hint:</strong> " + h(c.hint) + "</p>\n";
  if (!graph_anchor.empty())
    s += "<p><a href=\"#" + graph_anchor + "\">See your graph beside the reference's</a></p>\n";
  return s + "</div>\n</li>\n";
}

std::string checks_section(const Result& r, const std::vector<std::string>& graph_anchor_of_check) {
  size_t passed = 0, failed = 0;
  for (const auto& c : r.checks) (c.status == grader::CheckStatus::Passed ? passed : failed) += 1;
  std::string s = "<section class=\"card\" id=\"checks\" aria-labelledby=\"checks-title\">\n<h2 id=\"checks-title\">Checks "
                  "<span class=\"sub\">" + std::to_string(passed) + " passed, " + std::to_string(failed) +
                  " not passed</span></h2>\n<ol class=\"checks\">\n";
  const bool said_above = (r.verdict == grader::Verdict::CompileError || r.verdict == grader::Verdict::RuntimeError) && !grader::scored_before_exception(r);
  for (size_t i = 0; i < r.checks.size(); ++i) s += check_item(r.checks[i], i, graph_anchor_of_check[i], !said_above);
  return s + "</ol>\n</section>\n";
}

struct Drawn {
  std::string file, anchor;
  Picture picture;
  std::string skipped;  // why there is no picture
};

std::string graph_figure(const grader::GraphView& g, const Drawn& d) {
  std::string s = "<figure id=\"" + d.anchor + "\">\n<h3>" + h(g.tensor);
  if (!g.reference.is_null())
    s += " <span class=\"sub\">yours beside the reference: " + std::to_string(g.differences.size()) + " " +
         (g.differences.size() == 1 ? "difference" : "differences") + "</span>";
  s += "</h3>\n";
  if (!d.picture.png.empty()) {
    s += "<img src=\"data:image/png;base64," + base64(d.picture.png) + "\" width=\"" +
         std::to_string(d.picture.width * kShownDpi / kGraphDpi) + "\" height=\"" +
         std::to_string(d.picture.height * kShownDpi / kGraphDpi) + "\" alt=\"" + h(graph_alt(g)) + "\">\n";
  } else {
    s += "<p class=\"why\">" + h(d.skipped) + " In words: " + h(graph_alt(g)) + "</p>\n";
  }
  s += "<figcaption>";
  if (!g.differences.empty()) {
    s += "What differs (outlined in red and marked “≠ differs”):<ul class=\"differences\">";
    for (const auto& x : g.differences) s += "<li>" + h(x) + "</li>";
    s += "</ul>";
  }
  if (!d.picture.png.empty()) s += "Also saved as <code>" + h(d.file) + "</code>. ";
  s += "</figcaption>\n<details><summary>The graph as DOT text (for Graphviz or torchviz users)</summary>" +
       std::string("<pre class=\"value\">") + h(graph_dot(g)) + "</pre></details>\n</figure>\n";
  return s;
}

std::string graphs_section(const Result& r, const std::vector<Drawn>& drawn) {
  if (r.graphs.empty()) return "";
  std::string s = "<section class=\"card\" id=\"graphs\" aria-labelledby=\"graphs-title\">\n<h2 id=\"graphs-title\">"
                  "Backward graphs</h2>\n<p class=\"legend\">Drawn as torchviz draws them: the tensor the graph starts "
                  "from in green<span class=\"swatch\" style=\"background:#caff70\"></span>, leaves that require "
                  "grad in blue with their shape<span class=\"swatch\" style=\"background:#add8e6\"></span>, "
                  "operations in grey<span class=\"swatch\" style=\"background:#d3d3d3\"></span>. Arrows run the "
                  "way gradients flow back: from each input to what it was used for.</p>\n";
  for (size_t i = 0; i < r.graphs.size(); ++i) s += graph_figure(r.graphs[i], drawn[i]);
  return s + "</section>\n";
}

std::string run_section(const Result& r) {
  std::string s = "<section class=\"card\" id=\"run\" aria-labelledby=\"run-title\">\n<h2 id=\"run-title\">"
                  "Compiling and running</h2>\n";
  if (!r.compile.ok) {
    s += "<h3>The compiler's diagnostics</h3>\n" + console(r.compile.diagnostics, false);
  } else {
    s += "<p>Compiled" + volatile_value(r.compile.cached ? " (unchanged since the last run: reused)" : "") + ".</p>\n";
    if (!r.compile.diagnostics.empty()) s += "<h3>Compiler warnings</h3>\n" + console(r.compile.diagnostics, false);
  }
  if (r.run.status == grader::RunStatus::NotRun) return s + "</section>\n";
  s += "<dl class=\"facts\">\n";
  auto fact = [&](const std::string& k, const std::string& v_html) { s += "<dt>" + h(k) + "</dt><dd>" + v_html + "</dd>\n"; };
  fact("Run", "<span class=\"tag\">" + h(grader::name(r.run.status)) + "</span>" + (r.run.message.empty() ? "" : " " + h(r.run.message)));
  if (r.run.signal) fact("Signal", h(std::to_string(r.run.signal)));
  else fact("Exit code", h(std::to_string(r.run.exit_code)));
  fact("Wall time", volatile_value(fixed(r.run.wall_seconds, "%.3f s")));
  fact("CPU time", volatile_value(fixed(r.run.cpu_seconds, "%.3f s")));
  fact("Peak memory", volatile_value(std::to_string(r.run.peak_memory_kb / 1024) + " MiB"));
  fact("Isolation", volatile_value(r.run.isolation == "bubblewrap"
                                       ? "bubblewrap namespaces, an unprivileged uid, seccomp and resource limits"
                                       : "the fallback fence: Landlock, an unprivileged uid, seccomp and resource limits "
                                         "(not namespace-isolated)"));
  if (r.run.computation.recorded) {
    const auto& c = r.run.computation;
    std::string v = c.replayed ? "replayed from its op tape; the checks read the replay"
                  : !c.failure.empty() ? "could not be replayed: " + c.failure
                                       : c.note;
    if (c.mismatches > 0) v += " (" + std::to_string(c.mismatches) + " claims contradicted)";
    for (const auto& u : c.unverified) v += "; unverified: " + u;
    fact("Computation", h(v));
  }
  s += "</dl>\n";
  if (!r.warnings.empty()) {
    s += "<h3>Warnings</h3>\n<ul>";
    for (const auto& w : r.warnings) {
      const std::string m = w.is_object() ? w.value("message", std::string()) : w.dump();
      const std::string during = w.is_object() ? w.value("during", std::string()) : "";
      s += "<li><code>" + h(m) + "</code>" + (during.empty() ? "" : " <span class=\"sub\">(during " + h(during) + ")</span>") + "</li>";
    }
    s += "</ul>\n";
  }
  s += "<h3>Output (stdout)</h3>\n";
  s += r.run.stdout_text.empty() && !r.run.stdout_truncated ? "<p class=\"sub\">Nothing was printed.</p>\n"
                                                            : console(r.run.stdout_text, r.run.stdout_truncated);
  if (!r.run.stderr_text.empty() || r.run.stderr_truncated)
    s += "<h3>Errors (stderr)</h3>\n" + console(r.run.stderr_text, r.run.stderr_truncated);
  return s + "</section>\n";
}

class HtmlWriter : public Writer {
 public:
  std::string format() const override { return "html"; }
  std::string file_name() const override { return "report.html"; }

  explicit HtmlWriter(std::string picture_cache) : picture_cache_(std::move(picture_cache)) {}
  std::string render(const Result& r) const override { return page(r, draw(r)); }

  std::vector<OutputFile> files(const Result& r) const override {
    const auto drawn = draw(r);
    std::vector<OutputFile> out{{file_name(), page(r, drawn)}};
    for (const auto& d : drawn)
      if (!d.picture.png.empty()) out.push_back({d.file, d.picture.png});
    return out;
  }

 private:
  std::string picture_cache_;

  std::vector<Drawn> draw(const Result& r) const {
    std::vector<Drawn> drawn;
    const auto names = graph_file_names(r.graphs);
    for (size_t i = 0; i < r.graphs.size(); ++i) {
      Drawn d;
      d.file = names[i];
      d.anchor = "graph-" + std::to_string(i + 1);
      const size_t n = node_count(r.graphs[i]), e = edge_count(r.graphs[i]);
      if (n > kMaxDrawnNodes) {
        d.skipped = "This graph has " + std::to_string(n) + " nodes, too many to draw legibly (the limit is " +
                    std::to_string(kMaxDrawnNodes) + ").";
      } else if (e > kMaxDrawnEdges) {
        d.skipped = "This graph has " + std::to_string(e) + " edges, too many to draw legibly (the limit is " +
                    std::to_string(kMaxDrawnEdges) + ").";
      } else {
        d.picture = render_png(graph_dot(r.graphs[i]), kGraphDpi, picture_cache_);
        if (d.picture.png.empty()) d.skipped = "The picture could not be drawn: " + d.picture.error + ".";
      }
      drawn.push_back(std::move(d));
    }
    return drawn;
  }

  static std::string page(const Result& r, const std::vector<Drawn>& drawn) {
    // Each graph check that has a side-by-side picture links to it.
    std::vector<std::string> anchor_of_check(r.checks.size());
    for (size_t g = 0; g < r.graphs.size(); ++g)
      if (!r.graphs[g].reference.is_null())
        for (size_t i = 0; i < r.checks.size(); ++i)
          if (r.checks[i].id == r.graphs[g].check_id) anchor_of_check[i] = drawn[g].anchor;

    std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    h(r.exercise + ": " + grader::points(r.score) + "/" + grader::points(r.max_score) + " — gradlab report") +
                    "</title>\n<style>\n" + stylesheet() + "</style>\n</head>\n<body>\n<main>\n";
    s += header(r);
    s += checks_section(r, anchor_of_check);
    s += graphs_section(r, drawn);
    s += run_section(r);
    s += "<footer>gradlab report format " + std::to_string(kReportVersion) +
         " · every detail is also in report.json beside this page</footer>\n</main>\n</body>\n</html>\n";
    return s;
  }
};

}  // namespace

std::unique_ptr<Writer> html_writer(const std::string& picture_cache) {
  return std::make_unique<HtmlWriter>(picture_cache);
}

}  // namespace reports

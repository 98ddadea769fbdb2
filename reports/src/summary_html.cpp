// summary.html: the class at a glance for the instructor. Self-contained like
// report.html (its stylesheet, no script); the distributions are inline SVG
// bar charts, each with a text alternative and the numbers in a table.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "class_stats.h"
#include "html_style.h"
#include "reports/escape.h"
#include "reports/gradebook.h"

namespace reports {
namespace {

std::string h(std::string_view s) { return xml_text(s); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// A link to a student's report: each path segment percent-encoded.
std::string href(const std::string& path) {
  std::string out;
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || std::string_view("-_.~/").find(static_cast<char>(ch)) != std::string_view::npos) {
      out += static_cast<char>(ch);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return h(out);
}

std::string bin_label(int b) {
  return b == kBins - 1 ? "full marks" : std::to_string(b * 10) + "–" + std::to_string(b * 10 + 10) + "%";
}

// Eleven bars (a tenth of the points each, then full marks), the count over
// each and the range under it.
std::string histogram_svg(const std::vector<int>& bins, const std::string& what) {
  int top = 1;
  for (int v : bins) top = std::max(top, v);
  const int w = 560, hgt = 200, base = 170, bar = 40, gap = 8;
  std::string desc = what + ": ";
  for (int b = 0; b < kBins; ++b)
    desc += (b ? ", " : "") + std::to_string(bins[static_cast<size_t>(b)]) + " in " + bin_label(b);
  std::string s = "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(hgt) +
                  "\" role=\"img\" aria-label=\"" + h(desc) + "\"><title>" + h(desc) + "</title>\n";
  s += "<line x1=\"0\" y1=\"" + std::to_string(base) + "\" x2=\"" + std::to_string(w) + "\" y2=\"" +
       std::to_string(base) + "\" stroke=\"#59636e\"/>\n";
  for (int b = 0; b < kBins; ++b) {
    const int v = bins[static_cast<size_t>(b)];
    const int x = gap / 2 + b * (bar + gap + 2);
    const int height = v * 140 / top;
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(base - height) + "\" width=\"" +
         std::to_string(bar) + "\" height=\"" + std::to_string(height) + "\" fill=\"#1a7f37\"/>";
    s += "<text x=\"" + std::to_string(x + bar / 2) + "\" y=\"" + std::to_string(base - height - 5) +
         "\" text-anchor=\"middle\" font-size=\"13\" fill=\"#1f2328\">" + std::to_string(v) + "</text>";
    s += "<text x=\"" + std::to_string(x + bar / 2) + "\" y=\"" + std::to_string(base + 18) +
         "\" text-anchor=\"middle\" font-size=\"11\" fill=\"#59636e\">" + (b == kBins - 1 ? "100%" : std::to_string(b * 10) + "%") + "</text>\n";
  }
  return s + "</svg>\n";
}

std::string verdict_cells(const json& verdicts) {
  std::string s;
  for (const char* v : {"passed", "failed", "compile_error", "runtime_error", "internal_error"})
    s += "<td>" + std::to_string(verdicts.value(v, 0)) + "</td>";
  return s;
}

// Which fence held the class's code, said where an instructor looks first.
std::string fence_sentence(const ClassResults& c) {
  const std::map<std::string, int> fences = class_fences(c);
  if (fences.empty()) return "No student code ran.";
  std::string s;
  for (const auto& [f, n] : fences)
    s += std::string(s.empty() ? "" : "; ") +
         (f == "fallback" ? "the fallback fence (Landlock, an unprivileged uid, seccomp and limits: containers "
                            "without user namespaces)"
          : f == "bubblewrap" ? "bubblewrap's namespaces"
                              : f) +
         " (" + std::to_string(n) + (n == 1 ? " run)" : " runs)");
  return "Student code ran in " + h(s) + ".";
}

std::string page_head(const ClassResults& c) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         h("Class summary: " + std::to_string(c.students.size()) + " students — gradlab") + "</title>\n<style>\n" +
         stylesheet() +
         "table{border-collapse:collapse;width:100%;font-size:.9rem;margin:.5rem 0 1rem}"
         "th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d1d9e0;vertical-align:top}"
         "th{color:var(--muted-fg);font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
         ".chart{width:100%;max-width:36rem;height:auto;display:block}"
         ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(22rem,100%),1fr));gap:1rem}"
         // A table wider than a phone scrolls in its own box, never the page.
         ".wide{overflow-x:auto;max-width:100%}"
         ".students a{margin-right:.5rem}\n</style>\n</head>\n<body>\n<main>\n";
}

// The LMS files this class got (class_files.cpp writes only those that fit it).
std::string lms_exports(const ClassResults& c) {
  if (c.layout == "canvas")
    return std::string(c.canvas_refused() ? "" : " (and for Canvas's import in <code>canvas.csv</code>)") +
           "; each student's reports for Canvas's &ldquo;Re-Upload Submissions&rdquo; in <code>feedback-canvas.zip</code>";
  if (c.layout == "moodle")
    return " (and for Moodle's grading worksheet in <code>moodle.csv</code>); each student's reports for Moodle's "
           "feedback files in <code>feedback-moodle.zip</code>";
  return c.canvas_refused() ? " (and for Moodle in <code>moodle.csv</code>)"
                            : " (and for import into Canvas and Moodle in <code>canvas.csv</code> and <code>moodle.csv</code>)";
}

// The class in numbers: totals, where the grades are, the fence, the histogram.
std::string header_card(const ClassResults& c) {
  const TotalStats t = total_stats(c);
  std::string s = "<header class=\"card\">\n<p class=\"eyebrow\">gradlab class summary</p>\n<h1>" +
                  std::to_string(c.students.size()) + (c.students.size() == 1 ? " student, " : " students, ") +
                  std::to_string(c.exercises.size()) + (c.exercises.size() == 1 ? " exercise" : " exercises") + "</h1>\n<p class=\"lede\" id=\"totals\">Mean total " + h(num(t.mean)) + " of " +
                  h(num(c.max_total())) + " points, median " + h(num(t.median)) + " (over the " +
                  std::to_string(t.totals.size()) +
                  " who handed in something). The grades are in <code>gradebook.csv</code>" + lms_exports(c) +
                  ", every check of every student in <code>checks.csv</code>.</p>\n";
  s += "<p id=\"fence\">" + fence_sentence(c) + (c.layout.empty() ? "" : " Submissions read as " + h(c.layout) + ".") +
       "</p>\n";
  return s + "<h2>Total scores</h2>\n" + histogram_svg(t.histogram, "Students by total score") + "</header>\n";
}

std::string most_failed_card(const ClassResults& c) {
  std::string s = "<section class=\"card\" id=\"failed\" aria-labelledby=\"failed-title\">\n<h2 id=\"failed-title\">"
                  "The most failed checks <span class=\"sub\">the class's common mistakes</span></h2>\n";
  const auto failed = most_failed(c);
  if (failed.empty()) return s + "<p>No check failed.</p>\n</section>\n";
  s += "<div class=\"wide\"><table><thead><tr><th>exercise</th><th>check</th><th class=\"n\">students</th><th>who (their reports)</th>"
       "</tr></thead><tbody>\n";
  for (const auto& f : failed) {
    s += "<tr><td>" + h(f.exercise) + "</td><td>" + h(f.name) + " <span class=\"sub\">(" + h(f.check) +
         ")</span></td><td class=\"n\">" + std::to_string(f.students.size()) + "</td><td class=\"students\">";
    for (const auto& st : f.students) {
      const ClassEntry* x = c.find(st, f.exercise);
      s += "<a href=\"" + href(x ? x->report : "") + "\">" + h(st) + "</a> ";
    }
    s += "</td></tr>\n";
  }
  return s + "</tbody></table></div>\n</section>\n";
}

// Who is left out of the numbers, and why: no file, or a shard not merged.
std::string left_out_cards(const ClassResults& c) {
  std::string s;
  const std::vector<std::string> nothing = c.nothing_handed_in();
  if (!nothing.empty()) {
    s += "<section class=\"card\" id=\"nothing\" aria-labelledby=\"nothing-title\">\n<h2 id=\"nothing-title\">"
         "No submission <span class=\"sub\">" + std::to_string(nothing.size()) +
         " students handed in no exercise file: left out of the statistics</span></h2>\n<p class=\"students\">";
    for (const auto& st : nothing) {
      const Identity& i = c.identity(st);
      s += "<span>" + h(st) + (i.name.empty() || i.name == st ? "" : " (" + h(i.name) + ")") + "</span>; ";
    }
    s += "</p>\n</section>\n";
  }
  std::string held_list;
  int held_count = 0;
  for (const auto& st : c.students)
    for (const auto& e : c.exercises)
      if (held(c.find(st, e.id))) held_list += "<span>" + h(st) + " · " + h(e.id) + "</span>; ", ++held_count;
  if (held_count > 0)
    s += "<section class=\"card\" id=\"held\" role=\"alert\" aria-labelledby=\"held-title\">\n<h2 id=\"held-title\">"
         "Held for you <span class=\"sub\">" + std::to_string(held_count) +
         " files are one file under two students' names (hard links): not graded, no score, no total, until you "
         "decide whose work it is</span></h2>\n<p class=\"students\">" + held_list + "</p>\n</section>\n";
  if (!c.missing_shards.empty()) {
    // Said before any number: every statistic below leaves these students out.
    std::string list;
    for (int k : c.missing_shards) list += (list.empty() ? "" : ", ") + std::to_string(k);
    s += "<section class=\"card\" id=\"missing-shards\" role=\"alert\">\n<h2>Part of the class is missing</h2>\n<p>"
         "This gradebook was merged without shard" + std::string(c.missing_shards.size() > 1 ? "s " : " ") + list +
         " of " + std::to_string(c.shards) + " (<code>grade merge --allow-partial</code>): their students are not "
         "listed, and the statistics leave them out.</p>\n</section>\n";
  }
  return s;
}

std::string similarity_card(const ClassResults& c) {
  if (c.similarity_threshold <= 0) return "";
  std::string s = "<section class=\"card\" id=\"similarity\" aria-labelledby=\"similarity-title\">\n"
                  "<h2 id=\"similarity-title\">Similar submissions <span class=\"sub\">at least " +
                  std::to_string(c.similarity_threshold) +
                  "% shared beyond the starter (sim_c++): worth a look, not a verdict</span></h2>\n";
  if (c.similar.empty()) return s + "<p>No pair of submissions reaches the threshold.</p>\n</section>\n";
  s += "<div class=\"wide\"><table><thead><tr><th>exercise</th><th>students</th><th class=\"n\">shared</th><th>side by side</th></tr>"
       "</thead><tbody>\n";
  for (const auto& p : c.similar)
    s += "<tr><td>" + h(p.exercise) + "</td><td>" + h(p.a) + " · " + h(p.b) + "</td><td class=\"n\">" +
         std::to_string(p.percent) + "%</td><td><a href=\"" + href(p.page) + "\">compare</a></td></tr>\n";
  return s + "</tbody></table></div>\n</section>\n";
}

// The LMS's points possible against the rubrics' total: a mismatch would put
// scores above (or below) what the LMS expects, so it is said first.
std::string points_card(const ClassResults& c) {
  if (!c.points_mismatch()) return "";
  const std::string both = "Canvas's points possible for <b>" + h(c.lms_points->column) + "</b> (the roster) is " +
                           h(grader::points(c.lms_points->possible)) + "; the rubrics total " +
                           h(grader::points(c.max_total())) + ".";
  return "<section class=\"card\" id=\"points\" role=\"alert\">\n<h2>Points possible differ</h2>\n<p>" + both +
         (c.lms_points->accepted
              ? " canvas.csv was written anyway, as asked (<code>--accept-points-mismatch</code>): check the scores "
                "before you import them."
              : " canvas.csv was <b>not</b> written. Change the rubric or the assignment so that they agree, or pass "
                "<code>--accept-points-mismatch</code> to export anyway.") +
         "</p>\n</section>\n";
}

// Every score that moved since the last run on this folder, before any
// statistic: a rerun after a rubric edit must not change grades unseen.
std::string changes_card(const ClassResults& c) {
  if (c.changes.empty()) return "";
  std::string s = "<section class=\"card\" id=\"changes\" role=\"alert\" aria-labelledby=\"changes-title\">\n"
                  "<h2 id=\"changes-title\">Changed since the last run <span class=\"sub\">" +
                  std::to_string(c.changes.size()) + (c.changes.size() == 1 ? " score" : " scores") +
                  " differ from what this folder held before</span></h2>\n<div class=\"wide\"><table><thead><tr><th>student</th>"
                  "<th>exercise</th><th class=\"n\">before</th><th class=\"n\">now</th><th>why</th></tr></thead>"
                  "<tbody>\n";
  const auto cell = [](const std::optional<double>& v, const std::string& status) {
    if (!v) return std::string("none");
    return h(grader::points(*v)) + (ran_to_its_end(status) ? "" : " (" + h(status) + ")");
  };
  for (const auto& x : c.changes) {
    s += "<tr><td>" + h(x.student) + "</td><td>" + h(x.exercise) + "</td><td class=\"n\">" +
         cell(x.before, x.before_status) + "</td><td class=\"n\">" + cell(x.after, x.after_status) + "</td><td>" +
         h(change_reasons(x)) + "</td></tr>\n";
  }
  return s + "</tbody></table></div>\n</section>\n";
}

// Refused entries first: a student whose file was a link has no score, and must hear why.
std::string intake_card(const ClassResults& c) {
  if (c.intake.empty()) return "";
  std::string s = "<section class=\"card\" id=\"intake\" aria-labelledby=\"intake-title\">\n<h2 id=\"intake-title\">"
                  "Entries not graded or worth a look <span class=\"sub\">SUBMISSIONS as it was read</span></h2>\n"
                  "<div class=\"wide\"><table><thead><tr><th>entry</th><th>taken</th><th>why</th></tr></thead><tbody>\n";
  for (const auto& n : c.intake)
    s += "<tr><td><code>" + h(n.entry) + "</code></td><td>" + (n.refused ? "refused" : "graded") + "</td><td>" +
         h(n.reason) + "</td></tr>\n";
  return s + "</tbody></table></div>\n</section>\n";
}

// A row of numbers per exercise, then a histogram each.
std::string exercises_card(const ClassResults& c) {
  std::string s = "<section class=\"card\" id=\"exercises\" aria-labelledby=\"exercises-title\">\n"
                  "<h2 id=\"exercises-title\">Exercises</h2>\n<div class=\"wide\"><table><thead><tr><th>exercise</th>"
                  "<th class=\"n\">submitted</th><th class=\"n\">missing</th><th class=\"n\">mean</th>"
                  "<th class=\"n\">median</th><th class=\"n\">max</th><th>passed</th><th>failed</th>"
                  "<th>does not compile</th><th>did not finish</th><th>grader error</th></tr></thead><tbody>\n";
  std::string charts = "<div class=\"grid\">\n";
  for (const auto& e : c.exercises) {
    const ExerciseStats x = exercise_stats(c, e);
    s += "<tr><td>" + h(e.id) + " <span class=\"sub\">" + h(e.title) + "</span></td><td class=\"n\">" +
         std::to_string(x.scores.size()) + "</td><td class=\"n\">" + std::to_string(x.missing) +
         "</td><td class=\"n\">" + h(num(x.mean)) + "</td><td class=\"n\">" + h(num(x.median)) +
         "</td><td class=\"n\">" + h(num(e.max_score)) + "</td>" + verdict_cells(x.verdicts) + "</tr>\n";
    charts += "<figure><h3>" + h(e.id) + "</h3>" + histogram_svg(x.histogram, e.id + ": students by score") +
              "</figure>\n";
  }
  return s + "</tbody></table></div>\n" + charts + "</div>\n</section>\n";
}

// Every student's scores, each a link to that report with its verdict when
// it did not run to the end, and the total (none for a student who handed in
// nothing or whose file is held: as in the CSV files).
std::string students_card(const ClassResults& c) {
  std::string s = "<section class=\"card\" id=\"students\" aria-labelledby=\"students-title\">\n"
                  "<h2 id=\"students-title\">Students</h2>\n<div class=\"wide\"><table><thead><tr><th>student</th>";
  for (const auto& e : c.exercises) s += "<th class=\"n\">" + h(e.id) + "</th>";
  s += "<th class=\"n\">total</th></tr></thead><tbody>\n";
  for (const auto& st : c.students) {
    const Identity& i = c.identity(st);
    s += "<tr><td>" + h(st) + (i.name.empty() || i.name == st ? "" : " <span class=\"sub\">" + h(i.name) + "</span>") +
         "</td>";
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      const std::string status = gradebook_status(x);
      std::string cell = "–";
      const auto at = c.submitted.find({st, e.id});
      const std::string when = at == c.submitted.end() ? "" : " title=\"handed in " + h(at->second) + "\"";
      if (x && !held(x))
        cell = "<a href=\"" + href(x->report) + "\"" + when + ">" + h(grader::points(x->score)) + "</a>" +
               (ran_to_its_end(status) ? "" : " <span class=\"sub\">" + h(status) + "</span>") +
               (c.is_late(st, e.id) ? " <span class=\"sub\">late</span>" : "");
      else if (x)
        cell = "<span class=\"sub\">held</span>";
      s += "<td class=\"n\">" + cell + "</td>";
    }
    const std::string total = total_cell(c, st);
    s += "<td class=\"n\">" + (total.empty() ? std::string("–") : h(total)) + "</td></tr>\n";
  }
  return s + "</tbody></table></div>\n</section>\n";
}

}  // namespace

std::string summary_html(const ClassResults& c) {
  return page_head(c) + header_card(c) + points_card(c) + changes_card(c) + most_failed_card(c) + left_out_cards(c) +
         similarity_card(c) + intake_card(c) + exercises_card(c) + students_card(c) +
         "<footer>gradlab class summary · summary.json has the same numbers</footer>\n</main>\n</body>\n</html>\n";
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// One file as numbered lines; a line whose text (blanks aside) the other
// file also has is marked.
std::string code_column(const std::string& who, const std::vector<std::string>& lines, const std::vector<std::string>& other) {
  std::set<std::string> theirs;
  for (const auto& l : other) theirs.insert(without_blanks(l));
  std::string s = "<section class=\"card\"><h2>" + h(who) + "</h2>\n<pre>";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string key = without_blanks(lines[i]);
    const bool shared = !key.empty() && theirs.count(key);
    char num[32];
    std::snprintf(num, sizeof num, "%4zu ", i + 1);
    s += std::string(shared ? "<mark>" : "<span>") + num + h(visible(lines[i], false)) + (shared ? "</mark>" : "</span>") + "\n";
  }
  return s + "</pre></section>\n";
}

}  // namespace

std::string similarity_html(const SimilarPair& p, const std::string& text_a, const std::string& text_b) {
  const auto a = split_lines(text_a), b = split_lines(text_b);
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                  h(p.exercise + ": " + p.a + " and " + p.b + " — gradlab") + "</title>\n<style>\n" + stylesheet() +
                  ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}pre{overflow-x:auto;font-size:.8rem}"
                  "mark{background:#fff1b8;color:inherit;display:block}pre span{display:block}\n</style>\n</head>\n"
                  "<body>\n<main>\n";
  s += "<header class=\"card\">\n<p class=\"eyebrow\">gradlab similarity</p>\n<h1>" + h(p.exercise) + ": " + h(p.a) +
       " and " + h(p.b) + "</h1>\n<p>" + std::to_string(p.percent) +
       "% of one consists of the other's material, as sim_c++ counts it (tokens, so renamed names still match), "
       "after the starter's lines were left out. Marked lines appear in both files. This is a reason to look, not a "
       "verdict: short exercises leave little room to differ.</p>\n</header>\n<div class=\"pair\">\n";
  s += code_column(p.a, a, b) + code_column(p.b, b, a);
  return s + "</div>\n</main>\n</body>\n</html>\n";
}

}  // namespace reports

#include "course/release.h"
#include "course/pl_questions.h"
#include "course/personalise.h"
#include "judge/variants.h"
#include "common/exit_codes.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "config.h"
#include "judge/facts.h"
#include "common/files.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

// What of the course goes to students, besides the rubrics and facts
// written here. Everything else (solutions/, tests/, bench/, the course's
// CI) stays with the instructor: tests/ and bench/ are full of the course's
// own graphs, spelled as the solutions spell them.
const std::vector<std::string> kShipped = {"CMakeLists.txt", "cmake", "engine", "grader", "reports", "scripts",
                                           "grade", ".gitignore", ".devcontainer"};
// Inside what ships, what is for instructors only. grader/release/ holds
// the student's README, run-tests and tests, put in place below.
const std::set<std::string> kInstructorOnly = {"grader/batch", "grader/ci", "grader/release"};
const char* kMarker = ".gradlab-release";

std::string normalise(const std::string& line) {
  static const std::regex blanks("\\s+");
  std::string s = std::regex_replace(line, blanks, " ");
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool carries_content(const std::string& n) {
  if (n.empty() || n.rfind("//", 0) == 0 || n.rfind("#include", 0) == 0) return false;
  return std::any_of(n.begin(), n.end(), [](unsigned char c) { return std::isalnum(c); });
}

// Copies a file or folder, in name order, keeping the executable bit;
// links are not followed (a course has none; a link out would ship its target).
void copy_tree(const fs::path& from, const fs::path& to, const std::string& rel) {
  if (kInstructorOnly.count(rel)) return;
  std::error_code ec;
  const auto st = fs::symlink_status(from, ec);
  if (fs::is_directory(st)) {
    fs::create_directories(to);
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(from)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) copy_tree(e, to / e.filename(), rel + "/" + e.filename().string());
  } else if (fs::is_regular_file(st)) {
    fs::create_directories(to.parent_path());
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    fs::permissions(to, st.permissions());
  }
}

}  // namespace

json public_rubric(const json& rubric) {
  json out = rubric;
  std::set<std::string> hidden;
  json checks = json::array();
  double points = 0;
  for (const auto& c : rubric.value("checks", json::array())) {
    if (c.value("visibility", "visible") == "hidden") {
      hidden.insert(c.value("id", ""));
      points += c.value("points", 1.0);
    } else {
      checks.push_back(c);
    }
  }
  out["checks"] = checks;
  if (rubric.contains("diagnoses")) {
    json kept = json::array();
    for (const auto& d : rubric["diagnoses"]) {
      bool names_hidden = hidden.count(d.value("check", ""));
      for (const auto& w : d.value("when", json::array())) names_hidden |= w.contains("check") && hidden.count(w.value("check", ""));
      if (!names_hidden) kept.push_back(d);
    }
    out["diagnoses"] = kept;
  }
  if (!hidden.empty()) out["hidden_checks"] = {{"count", hidden.size()}, {"points", points}};
  return out;
}

std::vector<std::string> answer_lines(const Course& course) {
  std::set<std::string> starter, answers;
  for (const auto& e : course.exercises())
    for (const auto& l : lines_of(read_file(course.starter_path(e)).value_or(""))) starter.insert(normalise(l));
  for (const auto& e : course.exercises())
    for (const auto& l : lines_of(read_file(course.solution_path(e)).value_or(""))) {
      const std::string n = normalise(l);
      if (carries_content(n) && !starter.count(n)) answers.insert(n);
    }
  return {answers.begin(), answers.end()};
}

std::vector<std::string> find_answers(const std::string& tree, const std::vector<std::string>& answers) {
  const std::set<std::string> wanted(answers.begin(), answers.end());
  std::vector<std::string> found;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(tree))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const auto lines = lines_of(read_file(f.string()).value_or(""));
    for (size_t i = 0; i < lines.size(); ++i)
      if (wanted.count(normalise(lines[i])))
        found.push_back(fs::relative(f, tree).string() + ":" + std::to_string(i + 1) + ": " + normalise(lines[i]));
  }
  return found;
}

namespace {

// The course's code and the rubrics with their facts, into `dest`: the
// public ones for students, or the full ones (hidden checks and all their
// facts) for an autograder. Never a solution.
// The reference's facts at each variant the release hands out (personalise.h).
struct VariantFacts {
  std::string exercise;
  int variant;
  json snapshot;
};

void write_course(const Course& course, const fs::path& dest, const std::vector<std::pair<std::string, json>>& facts,
                  const std::vector<VariantFacts>& variants, int count, bool full) {
  const fs::path root = course.root;
  std::error_code ec;
  for (const auto& top : kShipped)
    if (fs::exists(root / top, ec)) copy_tree(root / top, dest / top, top);
  // exercises/README.md is the instructors' (rubrics, fixtures, grade check):
  // students get their own, which speaks of nothing they do not have.
  if (fs::exists(root / "exercises" / ".clangd", ec))
    copy_tree(root / "exercises" / ".clangd", dest / "exercises" / ".clangd", "");
  copy_tree(root / "grader" / "release" / "exercises-README.md", dest / "exercises" / "README.md", "");
  for (const auto& [e, snapshot] : facts) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    const json text = read_json_file(course.rubric_path(e));
    copy_tree(course.starter_path(e), dest / "exercises" / (e + ".cpp"), "");
    write_text(dest / "rubrics" / (e + ".rubric.json"), (full ? text : public_rubric(text)).dump(2) + "\n");
    write_text(dest / "rubrics" / (e + ".facts.json"), facts_document(rubric, snapshot, "", !full, read_file(course.starter_path(e))).dump(1) + "\n");
  }
  for (const auto& [e, v, snapshot] : variants)
    write_text(dest / "rubrics" / "variants" / (e + ".v" + std::to_string(v) + ".facts.json"),
               facts_document(load_rubric(course.rubric_path(e)), snapshot, "", !full, read_file(course.starter_path(e)), v)
                       .dump(1) + "\n");
  if (count > 0) write_text(dest / "rubrics" / "variants.json", json({{"count", count}}).dump() + "\n");
  write_text(dest / kMarker, std::string("a ") + (full ? "autograder's copy" : "student release") +
                                 " of a gradlab course, written by `grade release`\n");
}

void write_assignment(const fs::path& file, const std::vector<std::string>& assignment) {
  if (assignment.empty()) return;
  std::string text = "# The exercises this assignment asks for, one per line: a missing file scores 0.\n";
  for (const auto& e : assignment) text += e + "\n";
  write_text(file, text);
}

// DIR/autograder/: Gradescope's zip, PrairieLearn's image, GitHub Classroom's workflow.
void write_autograders(const Course& course, const fs::path& dir, const std::vector<std::pair<std::string, json>>& facts,
                       const std::vector<VariantFacts>& variants, int count, const std::vector<std::string>& assignment) {
  const fs::path tmpl = fs::path(course.root) / "grader" / "release";
  // Gradescope unpacks the zip into /autograder/source: the course's tree,
  // with setup.sh and run_autograder at its root.
  const fs::path gs = dir / "gradescope", stage = gs / "zip";
  write_course(course, stage, facts, variants, count, true);
  write_assignment(stage / "ASSIGNMENT", assignment);
  for (const auto& f : {"setup.sh", "run_autograder"}) copy_tree(tmpl / "gradescope" / f, stage / f, "");
  std::vector<std::string> entries;
  for (const auto& e : fs::recursive_directory_iterator(stage))
    if (e.is_regular_file()) entries.push_back(fs::relative(e.path(), stage).string());
  std::sort(entries.begin(), entries.end());
  std::string list;
  for (const auto& e : entries) list += e + "\n";
  write_text(gs / "files.txt", list);
  // A fixed time on every entry: the same course gives the same zip.
  const std::string cmd = "cd '" + stage.string() + "' && '" GRADLAB_CMAKE "' -E tar cf ../autograder.zip --format=zip "
                          "\"--mtime=2000-01-01 00:00:00 UTC\" --files-from=../files.txt";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("could not zip " + stage.string() + " (" + cmd + ")");
  fs::remove_all(stage);
  fs::remove(gs / "files.txt");
  // PrairieLearn: a Docker build context.
  const fs::path pl = dir / "prairielearn";
  write_course(course, pl / "source", facts, variants, count, true);
  write_assignment(pl / "source" / "ASSIGNMENT", assignment);
  for (const auto& f : {"Dockerfile", "pl-grade"}) copy_tree(tmpl / "prairielearn" / f, pl / f, "");
  // And a question per exercise, showing each student their own variant.
  write_pl_questions(course, pl, count, [&](const std::string& e, int v) -> json {
    if (v == 0) {
      for (const auto& [name, snapshot] : facts)
        if (name == e) return snapshot;
    }
    for (const auto& f : variants)
      if (f.exercise == e && f.variant == v) return f.snapshot;
    throw std::runtime_error("no recorded facts for " + e + " at variant " + std::to_string(v));
  });
  // GitHub Classroom: the workflow for the students' repository.
  copy_tree(tmpl / "github-classroom", dir / "github-classroom", "");
}

// The reference run at each of the `count` variants of every exercise that has them.
std::vector<VariantFacts> variant_facts(const Course& course, const GradeRequest& base, int count) {
  std::vector<VariantFacts> out;
  if (count <= 0) return out;
  for (const auto& e : course.exercises()) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    if (rubric.variants.empty()) continue;
    if (variant_capacity(rubric) < count)
      throw VariantError(e + "'s numbers allow " + std::to_string(variant_capacity(rubric)) + " variants, not " +
                         std::to_string(count) + ": list more values under \"variants\" in its rubric");
    for (int v = 1; v <= count; ++v) out.push_back({e, v, reference_facts(course, e, rubric, v, base)});
  }
  return out;
}

}  // namespace

int release_course(std::ostream& os, const Course& course, const std::string& out,
                   const std::vector<std::string>& assignment, const GradeRequest& base, int variants, const Style& st) {
  if (course.is_release()) {
    os << "grade release: " << course.root << " is itself a release; release from the course's own tree\n";
    return kExitUsage;
  }
  const fs::path root = course.root, student = fs::path(out) / "student", autograder = fs::path(out) / "autograder";
  std::error_code ec;
  // A folder that holds something else is never emptied: only what this
  // command wrote (its marker) is replaced.
  for (const fs::path& d : {student, autograder})
    if (fs::exists(d, ec) && !fs::is_empty(d, ec) && !fs::exists(d / kMarker, ec)) {
      os << "grade release: " << d.string() << " is not empty and was not written by grade release; choose another --out\n";
      return kExitUsage;
    }
  // Every exercise's facts must hold for its solution as it is now.
  std::vector<std::pair<std::string, json>> facts;
  for (const auto& e : course.exercises()) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    std::string why;
    auto snap = read_facts(course.facts_path(e), rubric, solution_file_key(course.solution_path(e)), why);
    if (snap) why = starter_difference(course.facts_path(e), read_file(course.starter_path(e)));
    if (!snap || !why.empty()) {
      os << "grade release: " << e << ": " << why << ". Run `grade record " << e << "` first.\n";
      return kExitFailed;
    }
    facts.emplace_back(e, std::move(*snap));
  }
  std::vector<VariantFacts> vfacts;
  try {
    vfacts = variant_facts(course, base, variants);
  } catch (const std::exception& e) {
    os << "grade release: --variants " << variants << ": " << e.what() << "\n";
    return kExitFailed;
  }
  fs::remove_all(student, ec);
  fs::remove_all(autograder, ec);
  write_course(course, student, facts, vfacts, variants, false);
  // The student's README, test command and tests.
  const fs::path tmpl = root / "grader" / "release";
  for (const auto& f : {"README.md", "run-tests", "tests/CMakeLists.txt", "tests/release_test.sh"})
    copy_tree(tmpl / f, student / f, "");
  write_autograders(course, autograder, facts, vfacts, variants, assignment);
  write_text(autograder / kMarker, "autograders for a gradlab course, written by `grade release`\n");

  // Paranoia: no line of a solution may have come along, to students or
  // into an autograder (which students can sometimes read).
  const auto answers = answer_lines(course);
  auto leaks = find_answers(student.string(), answers);
  for (auto& l : find_answers(autograder.string(), answers)) leaks.push_back("autograder/" + l);
  if (!leaks.empty()) {
    os << st.red() << "grade release: the release would hand out lines of the solutions:" << st.reset() << "\n";
    for (size_t i = 0; i < leaks.size() && i < 20; ++i) os << "  " << leaks[i] << "\n";
    fs::remove_all(student, ec);
    fs::remove_all(autograder, ec);
    return kExitFailed;
  }
  size_t hidden = 0;
  for (const auto& [e, _] : facts) hidden += public_rubric(read_json_file(course.rubric_path(e))).value("hidden_checks", json::object()).value("count", 0);
  os << st.green() << "✓ " << st.reset() << student.string() << ": for students: " << facts.size()
     << " exercises, their public rubrics (" << hidden << " hidden checks left out) and recorded facts; no solution, "
     << "fixture or hidden check\n"
     << st.green() << "✓ " << st.reset() << autograder.string()
     << ": gradescope/autograder.zip, prairielearn/ (Dockerfile), github-classroom/ (workflow)\n";
  if (variants > 0)
    os << st.green() << "✓ " << st.reset() << variants << " variants of each exercise that has them (" << vfacts.size()
       << " recorded): a student runs `./grade personalise THEIR_EMAIL` for their own numbers, and the autograders "
       << "grade each submission at its author's\n";
  return kExitPassed;
}

}  // namespace grader

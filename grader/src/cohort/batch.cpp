#include "cohort/batch.h"
#include "common/exit_codes.h"
#include "judge/facts.h"
#include "cohort/similarity.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "compile/build.h"
#include "cohort/class_files.h"
#include "config.h"
#include "judge/checks.h"
#include "common/files.h"
#include "cohort/intake.h"
#include "cohort/roster.h"
#include "course/personalise.h"
#include "reports/escape.h"
#include "reports/gradebook.h"
#include "reports/writer.h"
#include "cohort/score_changes.h"
#include "common/sha256.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

struct Task {
  std::string student, exercise, file, key;  // file: the student's file as reports name it
  const IntakeFile* src;
  GradeParts parts;  // what the key is made of, part by part (score_changes.h)
  int variant = 0;   // the student's numbers (personalise.h)
};

class Progress {
 public:
  Progress(std::ostream& os, size_t total, bool live) : os_(os), total_(total), live_(live) {}

  void done() {
    std::lock_guard<std::mutex> lock(m_);
    ++count_;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const bool due = live_ ? elapsed - last_ >= 0.1 : elapsed - last_ >= 5 || count_ * 10 / total_ != (count_ - 1) * 10 / total_;
    if (!due && count_ != total_) return;
    last_ = elapsed;
    const double rate = elapsed > 0 ? static_cast<double>(count_) / elapsed : 0;
    const double eta = rate > 0 ? static_cast<double>(total_ - count_) / rate : 0;
    char line[160];
    if (live_) {
      const size_t width = 30, filled = count_ * width / total_;
      std::string bar;
      for (size_t i = 0; i < width; ++i) bar += i < filled ? "█" : "░";
      std::snprintf(line, sizeof line, "\r\033[K%s %zu/%zu · %.1f/s · ETA %.0f s", bar.c_str(), count_, total_, rate, eta);
      os_ << line << (count_ == total_ ? "\n" : "") << std::flush;
    } else {
      std::snprintf(line, sizeof line, "graded %zu/%zu (%.1f/s, ETA %.0f s)\n", count_, total_, rate, eta);
      os_ << line << std::flush;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& os_;
  size_t total_, count_ = 0;
  bool live_;
  std::mutex m_;
  Clock::time_point start_ = Clock::now();
  double last_ = -1;
};

std::vector<std::string> subfolders(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (!n.empty() && n[0] != '.' && e.is_directory(ec)) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// --similarity: the pairs, and a side-by-side page for each under
// OUT/similarity/EXERCISE/.
void flag_similar(const Course& course, const GradeRequest& base, const Intake& intake, const BatchOptions& opt,
                  reports::ClassResults& c, std::string& why) {
  std::map<std::string, std::vector<Submitted>> by_exercise;
  std::map<std::string, std::string> starters, texts;
  for (const IntakeFile& f : intake.files) {
    if (f.too_large || !f.bad_archive.empty()) continue;
    by_exercise[f.exercise].push_back({f.student, f.text});
    texts[f.exercise + "/" + f.student] = f.text;
    // What every student was given, and what every correct answer says
    // (the reference's lines): sharing those is no sign of copying.
    starters[f.exercise] = read_file(course.starter_path(f.exercise)).value_or("") + "\n" +
                           read_file(course.solution_path(f.exercise)).value_or("");
  }
  c.similarity_threshold = opt.similarity;
  c.similar = similar_pairs(by_exercise, starters, opt.similarity, base.isolate, why);
  for (auto& p : c.similar) {
    p.page = "similarity/" + p.exercise + "/" + p.a + "--" + p.b + ".html";
    const fs::path page = fs::path(opt.out) / p.page;
    std::error_code ec;
    fs::create_directories(page.parent_path(), ec);
    const std::string err = write_file_atomic(
        page.string(), reports::similarity_html(p, texts[p.exercise + "/" + p.a], texts[p.exercise + "/" + p.b]));
    if (!err.empty()) why = err;
  }
}

// What shards of one class must agree on: a merge of shards read with
// another layout or roster, or written with other CSV options, would be a
// gradebook of two classes.
json grading_options(const BatchOptions& opt) {
  std::string exercises;
  for (const auto& e : opt.exercises) exercises += (exercises.empty() ? "" : ",") + e;
  return {{"layout", opt.layout},
          {"roster", opt.roster.empty() ? std::string() : sha256_hex(read_file(opt.roster).value_or(""))},
          {"exercises", exercises},
          {"bom", opt.bom},
          {"lms_assignment", opt.lms_assignment}};
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& s) {
  const size_t slash = s.find('/');
  size_t a = 0, b = 0;
  int k = 0, n = 0;
  try {
    k = std::stoi(s.substr(0, slash), &a);
    n = std::stoi(s.substr(slash + 1), &b);
  } catch (const std::exception&) {
    throw std::invalid_argument("--shard wants K/N, such as 2/5 (shard 2 of 5), not \"" + s + "\"");
  }
  if (slash == std::string::npos || a != slash || b != s.size() - slash - 1 || n < 1 || k < 1 || k > n)
    throw std::invalid_argument("--shard wants K/N with 1 <= K <= N, such as 2/5, not \"" + s + "\"");
  return {k, n};
}

int shard_of(const std::string& student, int shards) {
  const std::string h = sha256_hex(student);
  return static_cast<int>(std::stoull(h.substr(0, 12), nullptr, 16) % static_cast<unsigned long long>(shards)) + 1;
}

namespace {

// An exercise's rubric, read once, and the fingerprint of everything its
// grades depend on (grader, rubric, solution, facts): part of each key.
struct ExerciseInfo {
  Rubric rubric;
  std::string fingerprint;
  GradeParts parts;  // the fingerprint's parts: grader, rubric, solution, facts
};

std::map<std::string, ExerciseInfo> read_exercises(const Course& course, const GradeRequest& base,
                                                   const std::vector<std::string>& exercises) {
  std::map<std::string, ExerciseInfo> info;
  const std::string grader_id = std::string("gradlab ") + GRADLAB_VERSION + "\n" + compiler_id(base.engine) + "\n" + base.engine +
                                (base.device == "cpu" ? "" : "\n" + base.device);
  for (const auto& e : exercises) {
    const std::string rubric_text = read_file(course.rubric_path(e)).value_or("");
    if (rubric_text.empty()) throw std::invalid_argument("no exercise \"" + e + "\" in the course");
    const std::string solution = read_file(course.solution_path(e)).value_or("");
    const std::string facts = read_file(course.facts_path(e)).value_or("");
    info[e] = {load_rubric(course.rubric_path(e)),
               sha256_hex(grader_id + "\n" + rubric_text + "\n" + solution + "\n" + facts),
               {{"grader", sha256_hex(grader_id)},
                {"rubric", sha256_hex(rubric_text)},
                {"solution", sha256_hex(solution)},
                {"facts", sha256_hex(facts)}}};
  }
  return info;
}

// What this run is to do: the shard's students and files, the files whose
// results are not current (todo), and for --regrade the scores before.
struct BatchPlan {
  Intake intake;
  std::vector<Task> tasks;  // point into intake.files
  std::set<std::string> used;  // exercises someone handed in
  std::vector<const Task*> todo;
  // What the out folder held for the files graded again, or dropped: the
  // scores a rerun may change, which it then lists (score_changes.h).
  std::map<std::pair<std::string, std::string>, Before> before;
  std::optional<LmsColumn> lms;  // canvas.csv's column in the roster, when it has one
};

// A student's variant of an exercise: from the e-mail the roster or the LMS
// gives, else their login, else their folder's name (personalise.h).
int variant_of(const Course& course, const Intake& intake, const IntakeFile& f, const Rubric& rubric) {
  if (rubric.variants.empty()) return 0;
  const auto at = intake.identities.find(f.student);
  const reports::Identity who = at == intake.identities.end() ? reports::Identity{} : at->second;
  const std::string key = !who.email.empty() ? who.email : !who.login.empty() ? who.login : f.student;
  return student_variant(course, key);
}

void take_in(const Course& course, const BatchOptions& opt, const std::vector<std::string>& exercises,
             std::map<std::string, ExerciseInfo>& info, BatchPlan& plan) {
  // Regular files only, no link followed, at most 1 MiB each (intake.h); the rest is listed.
  IntakeOptions io;
  io.layout = parse_layout(opt.layout);
  std::vector<reports::Identity> roster;
  if (!opt.roster.empty()) {
    roster = read_roster(opt.roster);
    io.roster = &roster;
  }
  plan.intake = take_submissions(
      opt.submissions, exercises, [&](const std::string& s) { return shard_of(s, opt.shards) == opt.shard; }, io);
  for (const IntakeFile& f : plan.intake.files) {
    std::string content = !f.bad_archive.empty() ? "bad archive: " + f.bad_archive
                          : f.too_large          ? "too large: " + std::to_string(f.size)
                                                 : f.text;
    for (const auto& other : f.shared_with) content += "\nshared with " + other;  // unlinked later: graded then
    GradeParts parts = info[f.exercise].parts;
    parts.emplace_back("file", sha256_hex(content));
    const int variant = variant_of(course, plan.intake, f, info[f.exercise].rubric);
    if (variant > 0) {  // the same file at other numbers is another grade
      content += "\nvariant " + std::to_string(variant);
      parts.emplace_back("variant", std::to_string(variant));
    }
    plan.tasks.push_back({f.student, f.exercise, f.shown, sha256_hex(info[f.exercise].fingerprint + "\n" + content), &f,
                          std::move(parts), variant});
    plan.used.insert(f.exercise);
  }
}

// What an earlier run left: results still current are kept (resume); folders
// of students or files that are gone are removed.
void resume(const BatchOptions& opt, BatchPlan& plan) {
  std::error_code ec;
  const std::vector<std::string>& students = plan.intake.students;
  fs::create_directories(fs::path(opt.out) / "students", ec);
  if (ec) throw std::runtime_error("cannot create " + opt.out + ": " + ec.message());
  const std::set<std::string> present(students.begin(), students.end());
  std::set<std::pair<std::string, std::string>> wanted;
  for (const auto& t : plan.tasks) wanted.insert({t.student, t.exercise});
  const auto drop = [&](const std::string& s, const std::string& e) {
    if (const auto b = read_before(slot(opt.out, s, e))) plan.before[{s, e}] = *b;
    fs::remove_all(slot(opt.out, s, e), ec);
  };
  for (const auto& s : subfolders(fs::path(opt.out) / "students")) {
    for (const auto& e : subfolders(fs::path(opt.out) / "students" / s))
      if (!wanted.count({s, e})) drop(s, e);
    if (!present.count(s)) fs::remove_all(fs::path(opt.out) / "students" / s, ec);
  }
  for (const auto& s : students) fs::create_directories(fs::path(opt.out) / "students" / s, ec);
  for (const auto& t : plan.tasks) {
    const fs::path dir = slot(opt.out, t.student, t.exercise);
    if (!opt.regrade && read_file((dir / kKeyFile).string()).value_or("") == t.key) continue;
    if (const auto b = read_before(dir.string())) plan.before[{t.student, t.exercise}] = *b;
    fs::remove(dir / kKeyFile, ec);
    plan.todo.push_back(&t);
  }
}

void log_plan(const BatchOptions& opt, const BatchPlan& plan, std::ostream& log) {
  const Intake& intake = plan.intake;
  log << "grade batch: " << intake.students.size() << " students, " << plan.tasks.size() << " submissions";
  if (intake.layout != "folders") log << " (read as a " << intake.layout << " download)";
  if (opt.shards > 1) log << " (shard " << opt.shard << "/" << opt.shards << ")";
  log << "; " << plan.tasks.size() - plan.todo.size() << " already graded, " << plan.todo.size() << " to grade with "
      << opt.jobs << (opt.jobs == 1 ? " job" : " jobs") << "\n";
  if (intake.files.empty() && !intake.notes.empty())
    log << "grade batch: warning: no exercise file was found in " << opt.submissions << " (read as " << intake.layout
        << "), though it holds entries (listed at the end): is --layout right, or --exercises?\n";
}

// Each reference solution whose facts are not recorded is built and run once,
// before the students: otherwise the first workers would all build it at once.
void prepare_references(const Course& course, const GradeRequest& base, std::map<std::string, ExerciseInfo>& info,
                        const std::vector<const Task*>& todo, int jobs) {
  std::vector<std::string> refs;
  for (const Task* t : todo)
    if (std::find(refs.begin(), refs.end(), t->exercise) == refs.end()) refs.push_back(t->exercise);
  std::mutex fail_m;
  std::string fatal;
  parallel_for(refs.size(), jobs, [&](size_t i) {
    GradeRequest req = base;
    course.set_reference(refs[i], req);
    try {
      std::string why;
      const Rubric& rubric = info[refs[i]].rubric;
      if (!read_facts(req.facts, rubric, solution_file_key(req.solution), why)) run_reference(rubric, req);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(fail_m);
      fatal += "the reference solution of " + refs[i] + " cannot be graded: " + e.what() + "\n";
    }
  });
  if (!fatal.empty()) throw InternalError(fatal);
}

// One distinct file, graded; `copy` is the private copy the compiler saw
// (empty for a file too large to be read), `error` the grader's own failure.
Result grade_file(const Course& course, const GradeRequest& base, const ExerciseInfo& ex, const IntakeFile& f,
                  int variant, std::string& copy, std::string& error) {
  Result r;
  if (!f.shared_with.empty()) {  // held for a person: never compiled, never scored
    const Rubric& rubric = ex.rubric;
    std::string others;
    for (const auto& o : f.shared_with) others += (others.empty() ? "" : ", ") + o;
    r.exercise = rubric.exercise, r.title = rubric.title, r.max_score = rubric.max_points();
    r.verdict = Verdict::SharedFile;
    r.run.message = "this file is the same file as " + others +
                    " (a hard link: one file under two students' names). It is held, not graded, for every student "
                    "who shares it, until a person decides whose work it is.";
    r.checks = not_run(rubric, "held: the file is shared with another student's");
    r.engine = base.engine, r.compiler = compiler_id(base.engine), r.device = base.device;
    return r;
  }
  if (f.too_large || !f.bad_archive.empty()) {  // the student's verdict: never read whole, never compiled
    const Rubric& rubric = ex.rubric;
    r.exercise = rubric.exercise, r.title = rubric.title, r.max_score = rubric.max_points();
    r.verdict = Verdict::CompileError;
    r.compile.diagnostics = too_large_message(f);
    r.checks = not_run(rubric, f.too_large ? "the file is too large to be graded" : "the archive could not be opened");
    r.engine = base.engine, r.compiler = compiler_id(base.engine), r.device = base.device;
    return r;
  }
  // What is compiled is a private copy: the student cannot change or swap it
  // between the reading and the compiling.
  GradeRequest req = base;
  copy = req.submission = private_copy((fs::path(base.cache_dir) / "intake").string(), f, error);
  if (copy.empty()) throw InternalError(error);
  req.variant = variant;
  course.set_reference(f.exercise, req);
  return grade(ex.rubric, req);
}

// Writes one student's reports and key (or the error that stopped them).
std::string file_result(const BatchOptions& opt, const Task& t, const Result& r, const std::string& copy,
                        std::string err, const std::vector<std::unique_ptr<reports::Writer>>& writers) {
  const std::string dir = slot(opt.out, t.student, t.exercise);
  if (err.empty()) {
    Result mine = r;
    mine.submission = t.file;
    // The compiler saw the private copy; the student reads their own file's name.
    for (size_t at; !copy.empty() && (at = mine.compile.diagnostics.find(copy)) != std::string::npos;)
      mine.compile.diagnostics.replace(at, copy.size(), t.file);
    err = write_reports(dir, mine, writers);
  }
  if (err.empty()) err = write_parts(dir, t.parts);
  if (err.empty()) err = write_file_atomic((fs::path(dir) / kKeyFile).string(), t.key);
  std::error_code ec;
  if (err.empty()) {
    fs::remove(fs::path(dir) / kErrorFile, ec);
  } else {
    fs::create_directories(dir, ec);
    write_file_atomic((fs::path(dir) / kErrorFile).string(), err + "\n");
  }
  return err;
}

// Identical files of one exercise are graded once (the key covers the
// content), in parallel; returns what could not be graded, sorted.
std::vector<std::string> grade_all(const Course& course, const GradeRequest& base, const BatchOptions& opt,
                                   std::map<std::string, ExerciseInfo>& info, const std::vector<const Task*>& todo,
                                   std::ostream& log) {
  std::map<std::string, std::vector<const Task*>> groups;
  std::vector<std::string> order;
  for (const Task* t : todo) {
    if (!groups.count(t->key)) order.push_back(t->key);
    groups[t->key].push_back(t);
  }
  std::vector<std::unique_ptr<reports::Writer>> writers;
  writers.push_back(reports::json_writer());
  writers.push_back(reports::html_writer(picture_cache(base.cache_dir)));
  Progress progress(log, std::max<size_t>(todo.size(), 1), opt.live_progress);
  std::mutex problems_m;
  std::vector<std::string> problems;
  parallel_for(order.size(), opt.jobs, [&](size_t i) {
    const auto& group = groups[order[i]];
    Result r;
    std::string error, copy;
    try {
      r = grade_file(course, base, info[group[0]->exercise], *group[0]->src, group[0]->variant, copy, error);
    } catch (const std::exception& e) {
      error = e.what();
    }
    for (const Task* t : group) {
      const std::string err = file_result(opt, *t, r, copy, error, writers);
      if (!err.empty()) {
        std::lock_guard<std::mutex> lock(problems_m);
        problems.push_back(t->student + " " + t->exercise + ": " + err);
      }
      progress.done();
    }
  });
  std::sort(problems.begin(), problems.end());
  return problems;
}

// The class's files (gradebook, exports, summary) from every student's
// reports, this run's and earlier ones'.
reports::ClassResults summarise(const Course& course, const GradeRequest& base, const BatchOptions& opt,
                                const std::vector<std::string>& exercises, std::map<std::string, ExerciseInfo>& info,
                                const BatchPlan& plan, std::ostream& log) {
  std::vector<reports::ClassExercise> ex;
  for (const auto& e : exercises)
    if (plan.used.count(e) || opt.exercises.size()) ex.push_back({e, info[e].rubric.title, info[e].rubric.max_points()});
  reports::ClassResults c = collect(opt.out, plan.intake.students, ex);
  c.intake = plan.intake.notes;
  c.shards = opt.shards;
  c.identities = plan.intake.identities;
  c.layout = plan.intake.layout;
  c.csv_bom = opt.bom;
  c.lms_assignment = opt.lms_assignment;
  for (const IntakeFile& f : plan.intake.files)
    if (f.late) c.late.insert({f.student, f.exercise});
  for (const IntakeFile& f : plan.intake.files) {
    c.lms_entries[{f.student, f.exercise}] = f.lms_entry;
    if (!f.submitted.empty()) c.submitted[{f.student, f.exercise}] = f.submitted;
  }
  if (plan.lms && plan.lms->points_possible)
    c.lms_points = reports::ClassResults::LmsPoints{plan.lms->name, *plan.lms->points_possible, opt.accept_points_mismatch};
  std::map<std::pair<std::string, std::string>, GradeParts> parts_now;
  for (const Task& t : plan.tasks) parts_now[{t.student, t.exercise}] = t.parts;
  c.changes = score_changes(plan.before, parts_now, c, opt.regrade);
  if (opt.similarity > 0) {
    std::string why;
    flag_similar(course, base, plan.intake, opt, c, why);
    if (!why.empty()) log << "grade batch: --similarity: " << why << "\n";
  }
  const std::string werr = write_class_files(opt.out, c, {opt.shard}, grading_options(opt));
  if (!werr.empty()) throw std::runtime_error(werr);
  return c;
}

// Every score this run changed (old → new, and why); a run that regraded
// everything also says when nothing moved.
void log_changes(const reports::ClassResults& c, const BatchOptions& opt, const BatchPlan& plan, std::ostream& log) {
  if (!c.changes.empty()) log << "scores that changed since the last run on " << opt.out << ":\n";
  for (const auto& x : c.changes) {
    const auto cell = [](const std::optional<double>& v, const std::string& status) {
      return !v ? std::string("none") : points(*v) + (reports::ran_to_its_end(status) ? "" : " " + status);
    };
    log << "  " << reports::visible(x.student, false) << " " << x.exercise << ": " << cell(x.before, x.before_status)
        << " → " << cell(x.after, x.after_status) << " (" << reports::change_reasons(x) << ")\n";
  }
  if (!opt.regrade || !c.changes.empty()) return;
  log << (plan.before.empty() ? "nothing was graded here before: no scores to compare\n" : "no score changed\n");
}

}  // namespace

// plan, prune, grade, summarise.
int run_batch(const Course& course, const GradeRequest& base, const BatchOptions& options, std::ostream& log) {
  BatchOptions opt = options;
  const std::vector<std::string> exercises = opt.exercises.empty() ? course.exercises() : opt.exercises;
  std::map<std::string, ExerciseInfo> info = read_exercises(course, base, exercises);
  BatchPlan plan;
  // canvas.csv's column: the one named, else the roster's one assignment column.
  if (!opt.roster.empty()) plan.lms = lms_column(opt.roster, opt.lms_assignment);
  if (opt.lms_assignment.empty()) {
    opt.lms_assignment = plan.lms ? plan.lms->name : "gradlab";
    if (plan.lms)
      log << "grade batch: canvas.csv's column is the roster's one assignment column, \""
          << reports::visible(plan.lms->name, false) << "\" (--lms-assignment names another)\n";
  }
  take_in(course, opt, exercises, info, plan);
  resume(opt, plan);
  log_plan(opt, plan, log);
  prepare_references(course, base, info, plan.todo, opt.jobs);
  const std::vector<std::string> problems = grade_all(course, base, opt, info, plan.todo, log);
  const reports::ClassResults c = summarise(course, base, opt, exercises, info, plan, log);
  log_changes(c, opt, plan, log);
  for (const auto& n : plan.intake.notes)
    log << (n.refused ? "refused " : "flagged ") << reports::visible(n.entry, false) << ": "
        << reports::visible(n.reason, false) << "\n";
  report_nothing_handed_in(c, log);
  report_points(c, log);
  for (const auto& p : problems) log << "could not grade " << reports::visible(p, false) << "\n";
  log << "gradebook: " << (fs::path(opt.out) / "gradebook.csv").string() << "\nsummary:   "
      << (fs::path(opt.out) / "summary.html").string() << "\n";
  return !problems.empty() ? kExitInternal : c.canvas_refused() ? kExitFailed : 0;
}

void parallel_for(size_t n, int jobs, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  for (int j = 1; j < jobs && static_cast<size_t>(j) < n; ++j) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace grader

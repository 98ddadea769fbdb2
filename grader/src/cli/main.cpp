// grade: the command students, instructors and CI run.
//   grade exercise3 [FILE]      grade a file (default: exercises/exercise3.cpp)
//   grade list                  the exercises and your last results
//   grade check                 solutions score full marks, fixtures get their verdicts
//   grade batch SUBMISSIONS     a whole class: reports, gradebook.csv, summary.html
//   grade merge OUT...          the outputs of sharded batches as one
// Exit codes: 0 every check passed, 1 some failed, 2 does not compile,
// 3 runtime failure, 64 usage error, 69 no GPU for --device cuda, 70 internal error.
#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <cstdlib>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "cli/autograde.h"
#include "common/exit_codes.h"
#include "judge/facts.h"
#include "cohort/batch.h"
#include "compile/build.h"
#include "config.h"
#include "grade/console.h"
#include "course/course.h"
#include "common/files.h"
#include "course/github.h"
#include "grade/grade.h"
#include "gradlab/types.h"
#include "reports/result.h"
#include "reports/writer.h"
#include "fence/sandbox.h"
#include "fence/staging.h"
#include "course/release.h"
#include "cli/suggest.h"
#include "judge/variants.h"
#include "course/personalise.h"

namespace {

using namespace grader;
namespace fs = std::filesystem;

const char* kExitCodes =
    "Exit codes:\n"
    "  0   every check passed\n"
    "  1   some checks failed (grade check: some solution or fixture is wrong)\n"
    "  2   the file does not compile\n"
    "  3   the program did not finish: crash, uncaught exception, time, memory or output limit\n"
    "  64  usage error (unknown exercise, missing file, bad option)\n"
    "  69  --device cuda, but no CUDA device is available\n"
    "  70  internal error (a broken rubric or reference solution, an unwritable cache)\n";

// How grade ends early, CLI11's way: the failure's kind is its exit code.
// A usage error is said with the pointer to --help; the others as they are.
struct Stop : std::runtime_error {
  int code;
  bool usage_hint;
  Stop(const std::string& msg, int c, bool hint) : std::runtime_error(msg), code(c), usage_hint(hint) {}
};
Stop usage_error(const std::string& msg) { return {msg, kExitUsage, true}; }

// After CLI11's "The following argument(s) was/were not expected: --jnuit":
// the option each one was probably meant to be.
void suggest_options(const CLI::App& app, const std::string& what) {
  const std::string marker = "not expected: ";
  const size_t at = what.find(marker);
  if (at == std::string::npos) return;
  std::vector<std::string> known;
  std::vector<const CLI::App*> apps = {&app};
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) apps.push_back(sub);
  for (const auto* a : apps)
    for (const auto* opt : a->get_options())
      for (const auto& name : opt->get_lnames()) known.push_back("--" + name);
  std::istringstream words(what.substr(at + marker.size()));
  for (std::string w; words >> w;) {
    if (w.rfind("-", 0) != 0) continue;
    const std::string name = w.substr(0, w.find('='));
    const std::string best = closest(name, known);
    if (!best.empty()) std::cerr << "grade: did you mean " << best << " (not " << name << ")?\n";
  }
}

// "a,b,,c" -> a, b, c.
std::vector<std::string> split_csv(const std::string& csv) {
  std::vector<std::string> out;
  for (size_t at = 0; at < csv.size();) {
    const size_t comma = std::min(csv.find(',', at), csv.size());
    if (comma > at) out.push_back(csv.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// The first of `names` the course has no rubric for, said with the closest
// name it has; "" when it has them all.
std::string unknown_exercise(const Course& course, const std::vector<std::string>& names) {
  for (const auto& e : names)
    if (!fs::exists(course.rubric_path(e))) {
      const std::string best = closest(e, course.exercises());
      return "no exercise \"" + e + "\" in the course" + (best.empty() ? "" : ": did you mean " + best + "?");
    }
  return "";
}

// Returns once the file's text differs from what it is now. Polls: editors
// save by writing in place or by renaming a new file over the old one, and
// the text itself is compared, so a save that changes nothing waits on.
void wait_for_change(const std::string& path) {
  const auto before = read_file(path);
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const auto now = read_file(path);
    if (!now || now == before) continue;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the rest of the save
    return;
  }
}


// Everything the command line can say; one field per option.
struct Options {
  std::string exercise, file, out_dir, cache_dir = default_cache_dir(), device = "cpu", engine = "gradlab";
  std::string course_dir = installed_course().root;
  bool solution = false, as_json = false, no_colour = false, no_isolation = false, junit = false, gradescope = false,
       watch = false, github = false;
  int check_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int check_variants = 20;
  std::vector<std::string> record_only;
  std::string release_assignment;
  AutogradeRequest areq;
  std::string platform = "gradescope", assignment_csv;
  BatchOptions bopt;
  std::string exercises_csv, shard = "1/1";
  std::vector<std::string> merge_inputs;
  bool allow_partial = false;
  int variant = -1;  // -1: the one the file's first line names, else the lesson's
  int release_variants = 0;
  std::string who;   // personalise: the student's e-mail or login
  std::string metadata;  // autograde: Gradescope's submission_metadata.json
  std::string pl_data;   // autograde: PrairieLearn's data.json
};

struct Subcommands {
  CLI::App *list, *check, *record, *release, *autograde, *batch, *merge, *personalise;
};

void add_grading_options(CLI::App& app, Options& o) {
  if (const char* c = std::getenv("GRADLAB_COURSE"); c && *c) o.course_dir = c;
  app.add_option("exercise", o.exercise, "the exercise to grade, e.g. exercise3");
  app.add_option("file", o.file, "the file to grade (default: exercises/EXERCISE.cpp, found from the current folder up)");
  app.add_flag("--solution", o.solution, "grade the reference solution instead (for instructors)");
  app.add_flag("--json", o.as_json, "print the result as JSON on stdout instead of the summary");
  app.add_flag("--watch", o.watch, "grade again each time the file is saved (Ctrl-C stops)");
  app.add_option("--out", o.out_dir, "folder for the reports (default: gradlab-reports/EXERCISE beside exercises/)");
  app.add_flag("--junit", o.junit, "also write junit.xml (one testcase per check) into the report folder");
  app.add_flag("--gradescope", o.gradescope, "also write Gradescope's results.json into the report folder");
  app.add_flag("--github", o.github, "inside GitHub Actions: annotate the file's lines (::error commands) and append "
                                     "the score and checks to the job summary ($GITHUB_STEP_SUMMARY)");
  app.add_option("--variant", o.variant, "grade at the numbers of this variant (0: the lesson's; default: the one "
                                         "the file's first line names, as `grade release --variants` writes it)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--cache", o.cache_dir, "the compile cache (default: $GRADLAB_CACHE or ~/.cache/gradlab)");
  app.add_option("--device", o.device, "cpu, or cuda to make CUDA the default device")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--engine", o.engine, "gradlab, or libtorch to build against Debian's LibTorch")
      ->check(CLI::IsMember({"gradlab", "libtorch"}));
  app.add_option("--course", o.course_dir, "the course folder holding solutions/ and tests/fixtures/ (default: "
                                           "$GRADLAB_COURSE, else the one gradlab was built from)");
  app.add_flag("--no-color", o.no_colour, "no colour even on a terminal (NO_COLOR=1 does the same)");
  app.add_flag("--no-isolation", o.no_isolation,
               "use the fallback fence (Landlock, an unprivileged uid, seccomp and limits) instead of bubblewrap's "
               "namespaces, as in containers that forbid them (it is used by itself where namespaces cannot be made)");
  app.fallthrough();  // subcommands inherit it: `grade check --cache DIR` works like `grade --cache DIR check`
}

Subcommands add_course_commands(CLI::App& app, Options& o) {
  Subcommands c{};
  c.list = app.add_subcommand("list", "the exercises, their titles and your last result");
  c.check = app.add_subcommand("check", "for the course's CI: every solution scores full marks and every fixture "
                                        "under tests/fixtures/ gets exactly the verdict it names");
  c.check->add_option("--jobs,-j", o.check_jobs, "files graded at once (default: the number of cores)")
      ->check(CLI::Range(1, 256));
  c.check->add_option("--variants", o.check_variants,
                      "variants of each exercise proven: the solution scores full marks at each, a classmate's "
                      "copy does not (default: 20, as many as `grade release --variants` hands out by default)")
      ->check(CLI::Range(0, 10000));
  c.record = app.add_subcommand("record", "for instructors: run each solution and write the facts its checks read "
                                          "beside its rubric (solutions/EXERCISE.facts.json), so grading builds "
                                          "no reference; `grade check` says when they are stale");
  c.record->add_option("exercises", o.record_only, "which exercises (default: all)");
  c.release = app.add_subcommand("release", "for instructors: write a student release of the course into "
                                            "--out DIR: DIR/student/ (no solution, fixture or hidden check) and "
                                            "DIR/autograder/ (Gradescope, PrairieLearn, GitHub Classroom)");
  c.release->add_option("--assignment", o.release_assignment, "the exercises the autograders expect, comma-separated "
                                                              "(a missing file scores 0; default: whatever is submitted)");
  c.release->add_option("--variants", o.release_variants, "hand each student numbers of their own: record the "
                                                          "reference at this many variants of every exercise whose "
                                                          "rubric has \"variants\" (e.g. 20; default 0, the lesson's "
                                                          "numbers for everyone)")
      ->check(CLI::Range(0, 1000));
  c.personalise = app.add_subcommand("personalise", "for students of a course with variants: write your own numbers "
                                                    "into your exercise files' statements (blanks and code stay)");
  c.personalise->alias("personalize");
  c.personalise->add_option("who", o.who, "your e-mail address as the course knows it (or your login where it has "
                                          "no e-mail); --variant N picks a variant by number instead");
  c.autograde = app.add_subcommand("autograde", "for autograding platforms: grade every exercise file found "
                                                "under SUBMISSION with the full rubrics and write the platform's "
                                                "results.json into --out");
  c.autograde->add_option("submission", o.areq.submission, "the folder holding the submission")->required();
  c.autograde->add_option("--platform", o.platform, "gradescope or prairielearn")
      ->check(CLI::IsMember({"gradescope", "prairielearn"}));
  c.autograde->add_option("--student", o.areq.student, "who submitted (their e-mail, else login), for a course "
                                                       "with variants: the file is graded at their numbers");
  c.autograde->add_option("--metadata", o.metadata, "Gradescope's submission_metadata.json: the submitter's e-mail "
                                                    "is read from it (instead of --student)");
  c.autograde->add_option("--pl-data", o.pl_data, "PrairieLearn's data.json: the variant its question chose "
                                                  "(params.gradlab_variant) is read from it");
  c.autograde->add_option("--assignment", o.assignment_csv, "the exercises the assignment asks for, comma-separated "
                                                            "(a missing one scores 0; default: those submitted)");
  return c;
}

void add_class_commands(CLI::App& app, Options& o, Subcommands& c) {
  BatchOptions& b = o.bopt;
  b.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.batch = app.add_subcommand("batch", "grade a whole class: SUBMISSIONS holds one folder per student with their "
                                        "exerciseN.cpp files, or an LMS's download as it comes (Canvas, Moodle, "
                                        "Gradescope, GitHub Classroom clones); resumable, each identical file is "
                                        "graded once, and a rerun lists every score it changed");
  c.batch->add_option("submissions", b.submissions, "a folder per student, or the LMS's download (see --layout)")
      ->required();
  c.batch->add_option("--exercises", o.exercises_csv, "which exercises, comma-separated (default: all the course has)");
  c.batch->add_option("--jobs,-j", b.jobs, "submissions graded at once (default: the number of cores)")
      ->check(CLI::Range(1, 256));
  c.batch->add_flag("--regrade", b.regrade, "grade everything again, even what is graded and unchanged, and say "
                                            "which scores changed");
  c.batch->add_option("--similarity", b.similarity, "also compare each exercise's submissions with sim_c++ (Debian's "
                                                    "similarity-tester) and list in the summary the pairs sharing at "
                                                    "least this percent beyond the starter (e.g. 80): for a person to "
                                                    "look at, never a verdict")
      ->check(CLI::Range(1, 100));
  c.batch->add_option("--layout", b.layout, "how SUBMISSIONS is laid out: folders (one per student), canvas, moodle, "
                                            "gradescope (its Export Submissions), github-classroom (a clone per "
                                            "student), or auto (default: recognised from the names)")
      ->check(CLI::IsMember({"auto", "folders", "canvas", "moodle", "gradescope", "github-classroom"}));
  c.batch->add_option("--roster", b.roster, "a CSV of the class (columns such as id,name,login,email,section, or an "
                                            "LMS's export): everyone on it gets a row, those who handed in nothing "
                                            "too, and their identity columns")
      ->check(CLI::ExistingFile);
  c.batch->add_flag("--bom", b.bom, "start the CSV files with a UTF-8 byte order mark, so that Excel shows accents");
  c.batch->add_option("--lms-assignment", b.lms_assignment, "the name of canvas.csv's assignment column (Canvas's "
                                                            "own, such as \"Homework 3 (1234)\"; default: the "
                                                            "--roster's one column named so, else gradlab)");
  c.batch->add_flag("--accept-points-mismatch", b.accept_points_mismatch,
                    "write canvas.csv even when the roster's Points Possible for its column differ from the rubrics' "
                    "total (otherwise it is not written, and the exit code is 1)");
  c.batch->add_option("--shard", o.shard, "K/N: grade only the K-th of N shares of the students (for job arrays; "
                                          "combine with `grade merge`)");
  c.merge = app.add_subcommand("merge", "combine the --out folders of sharded `grade batch` runs into one "
                                        "gradebook and summary (into --out)");
  c.merge->add_option("folders", o.merge_inputs, "the shards' output folders")->required();
  c.merge->add_flag("--allow-partial", o.allow_partial,
                    "merge even when some shards are missing (the summary says which)");
}

// Before anything is built: a run that cannot happen on the GPU must not end
// as a CPU run that looks like one.
void require_device(const Options& o) {
  if (o.device != "cuda") return;
  if (o.engine == "libtorch")
    throw usage_error("--device cuda grades with gradlab's engine; LibTorch from Debian is a CPU build");
  if (gradlab::cuda_device_count() == 0)
    throw Stop("--device cuda, but " + (gradlab::cuda_built() ? "no CUDA GPU is available here (" + gradlab::cuda_status() + ")"
                                                              : std::string("this build of gradlab has no CUDA backend (CMake found no CUDA toolkit)")) +
                   ". Grade on the CPU: leave out --device.",
               kExitNoDevice, false);
}

// Untrusted code runs only inside a fence: namespaces, or the fallback where
// they cannot be made. A machine that can build neither is told what to do.
void require_fence(const GradeRequest& base) {
  const FenceChoice fence = choose_fence(base.isolate);
  if (!fence.ok)
    throw Stop("no sandbox can be built here, so no student code is compiled or run: " + fence.why_not + ".",
               kExitNoDevice, false);
  // A root grader's fallback binds nothing: the leased uid reads the headers
  // and the library by their own paths, so they must lie where anyone may pass.
  if (geteuid() == 0 && fence.fence == Fence::Fallback)
    for (const auto& p : tool_paths(base.engine))
      if (!p.empty() && fs::exists(p) && !reachable_by_anyone(p))
        throw Stop("no sandbox can be built here, so no student code is compiled or run: bubblewrap cannot create "
                   "namespaces here, and the fallback fence runs the compiler as an unprivileged uid, which cannot "
                   "reach " + p + " (a folder on its path is private to its owner, as /root is). Move the course "
                   "under a folder anyone may traverse, or grade where bubblewrap can create namespaces.",
                   kExitNoDevice, false);
  // Said once here, not only in the reports: whoever runs the grader should
  // know which fence holds the students' code.
  if (base.isolate && fence.fence == Fence::Fallback)
    std::cerr << "grade: note: bubblewrap cannot create namespaces here, so student code runs in the fallback "
                 "fence (an unprivileged uid, Landlock, seccomp and limits; see grader/SECURITY.md)\n";
}

void require_exercises(const Course& course, const std::vector<std::string>& names) {
  if (auto bad = unknown_exercise(course, names); !bad.empty()) throw usage_error(bad);
}

int autograde_command(const Course& course, const GradeRequest& base, Options& o) {
  if (o.out_dir.empty()) throw usage_error("grade autograde needs --out DIR, where results.json goes");
  if (!fs::is_directory(o.areq.submission)) throw usage_error("no such folder: " + o.areq.submission);
  o.areq.exercises = split_csv(o.assignment_csv);
  require_exercises(course, o.areq.exercises);
  o.areq.out = o.out_dir;
  o.areq.platform = o.platform == "prairielearn" ? Platform::PrairieLearn : Platform::Gradescope;
  if (!o.metadata.empty() && o.areq.student.empty()) o.areq.student = gradescope_submitter(o.metadata);
  if (!o.pl_data.empty()) o.areq.variant = prairielearn_variant(o.pl_data);
  if (o.areq.variant > variant_count(course))
    throw usage_error("variant " + std::to_string(o.areq.variant) + " (from " + o.pl_data + ") is past the " +
                      std::to_string(variant_count(course)) + " this course hands out");
  if (variant_count(course) > 0 && o.areq.student.empty() && o.areq.variant < 0)
    std::cerr << "grade autograde: this course hands out variants, but who submitted is not known (no --student, "
                 "no e-mail in --metadata, no params.gradlab_variant in --pl-data): graded at the lesson's numbers\n";
  return autograde(std::cerr, course, base, o.areq);
}

int release_command(const Course& course, const Options& o, const Style& st) {
  if (o.out_dir.empty()) throw usage_error("grade release needs --out DIR, the folder to write the release into");
  require_exercises(course, split_csv(o.release_assignment));
  GradeRequest base;
  base.cache_dir = o.cache_dir;
  base.isolate = !o.no_isolation;
  if (o.release_variants > 0) require_fence(base);  // the reference solutions run, at each variant
  return release_course(std::cout, course, o.out_dir, split_csv(o.release_assignment), base, o.release_variants, st);
}

int personalise_command(const Course& course, const GradeRequest& base, const Options& o, const Style& st) {
  if (o.who.empty() && o.variant < 0)
    throw usage_error("grade personalise needs your e-mail address (or login), e.g. grade personalise ada@example.edu");
  if (!o.who.empty() && o.variant >= 0) throw usage_error("grade personalise: give your e-mail or --variant N, not both");
  return personalise(std::cout, course, base, o.who, o.variant, st);
}

// batch and merge reject what they are given (a shard that is not K/N,
// shards of different runs) with std::invalid_argument: a usage error.
template <class F>
int as_usage(F&& run) {
  try {
    return run();
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
}

int batch_command(const Course& course, const GradeRequest& base, Options& o) {
  BatchOptions& b = o.bopt;
  as_usage([&] {
    std::tie(b.shard, b.shards) = parse_shard(o.shard);
    return 0;
  });
  b.exercises = split_csv(o.exercises_csv);
  require_exercises(course, b.exercises);
  if (!fs::is_directory(b.submissions)) throw usage_error("no such folder: " + b.submissions);
  b.out = o.out_dir.empty() ? "gradlab-batch" : o.out_dir;
  b.live_progress = isatty(STDERR_FILENO) && !std::getenv("CI");
  return as_usage([&] { return run_batch(course, base, b, std::cerr); });
}

int merge_command(const Options& o) {
  if (o.out_dir.empty()) throw usage_error("grade merge needs --out DIR, the folder to merge into");
  for (const auto& in : o.merge_inputs)
    if (!fs::is_directory(in)) throw usage_error("no such folder: " + in);
  return as_usage([&] { return merge_batches(o.merge_inputs, o.out_dir, o.allow_partial, std::cerr); });
}

// The file to grade, and its rubric: the exercise named on the command line.
Rubric exercise_rubric(const Course& course, const Options& o, GradeRequest& req) {
  if (o.exercise.empty()) throw usage_error("which exercise? e.g. `grade exercise3` (`grade list` shows them all)");
  if (o.engine == "libtorch" && !libtorch_available())
    throw Stop("--engine libtorch needs Debian's LibTorch, which this build did not find. Install it "
               "(sudo apt-get install -y libtorch-dev), then run ./grade again so that it reconfigures.",
               kExitUsage, false);
  const std::string rubric_path = course.rubric_path(o.exercise);
  if (!fs::exists(rubric_path)) {
    std::string known;
    for (const auto& e : course.exercises()) known += " " + e;
    const std::string best = closest(o.exercise, course.exercises());
    throw usage_error("no exercise \"" + o.exercise + "\"" + (best.empty() ? "" : ": did you mean " + best + "?") +
                      " (known:" + known + ")");
  }
  Rubric rubric = load_rubric(rubric_path);
  if (o.solution && course.is_release())
    throw usage_error("--solution: this is a student release of the course, which has no solutions");
  req.submission = o.solution ? course.solution_path(o.exercise) : !o.file.empty() ? o.file : find_submission(course, o.exercise);
  if (!fs::is_regular_file(req.submission)) throw usage_error("no such file: " + req.submission);
  req.variant = o.variant >= 0 ? o.variant : variant_in(read_file(req.submission).value_or(""));
  if (req.variant > variant_capacity(rubric))
    throw usage_error(o.exercise + " has no variant " + std::to_string(req.variant) + " (" +
                      (rubric.variants.empty() ? std::string("its numbers are the lesson's only")
                                               : "it has variants 1 to " + std::to_string(variant_capacity(rubric))) +
                      "; 0 is the lesson's)");
  course.set_reference(o.exercise, req);
  return rubric;
}

// --github: the file's lines annotated, and the job summary.
void write_github(const Result& r, const std::string& submission) {
  std::cout << github_annotations(r, read_file(submission).value_or(""));
  const char* summary = std::getenv("GITHUB_STEP_SUMMARY");
  if (summary && *summary) {
    std::ofstream(summary, std::ios::app) << github_summary(r);
  } else {
    std::cerr << "grade: --github: GITHUB_STEP_SUMMARY is not set (not inside GitHub Actions?), so there is no "
                 "job summary to write\n";
  }
}

int grade_once(const Course& course, const Rubric& rubric, const GradeRequest& req, const Options& o, const Style& st) {
  Result r = grade(rubric, req);
  const std::string dir = o.out_dir.empty() ? default_report_dir(req.submission, o.exercise) : o.out_dir;
  std::vector<std::unique_ptr<reports::Writer>> writers;
  writers.push_back(reports::json_writer());
  writers.push_back(reports::html_writer(picture_cache(req.cache_dir)));
  if (o.junit) writers.push_back(reports::junit_writer());
  if (o.gradescope) writers.push_back(reports::gradescope_writer());
  const std::string werr = write_reports(dir, r, writers);
  if (o.as_json) {
    std::cout << reports::json_writer()->render(r);
  } else {
    const Starter starter{recorded_starter(course.facts_path(o.exercise))};
    print_result(std::cout, r, st, werr.empty() ? dir : "", o.solution ? nullptr : &starter);
    if (rubric.hidden_count > 0)
      std::cout << st.dim() << "and " << rubric.hidden_count << " hidden check" << (rubric.hidden_count > 1 ? "s" : "")
                << " (" << points(rubric.hidden_points) << " point" << (rubric.hidden_points == 1 ? "" : "s")
                << ") that " << (rubric.hidden_count > 1 ? "run" : "runs") << " when you submit" << st.reset() << "\n";
  }
  if (!werr.empty()) std::cerr << "grade: " << werr << "\n";
  if (o.github) write_github(r, req.submission);
  std::cout.flush();
  return exit_code_for(r);
}

int grade_command(const Course& course, const GradeRequest& base, const Options& o, const Style& st) {
  GradeRequest req = base;
  const Rubric rubric = exercise_rubric(course, o, req);
  if (!o.watch) return grade_once(course, rubric, req, o, st);
  for (;;) {
    grade_once(course, rubric, req, o, st);
    std::cout << st.dim() << "watching " << req.submission << ": save it to grade again (Ctrl-C stops)" << st.reset()
              << std::endl;
    wait_for_change(req.submission);
    std::cout << "\n";
  }
}

int run(const Subcommands& c, Options& o) {
  Style st = terminal_style();
  if (o.no_colour) st.colour = false;
  const Course course{o.course_dir};
  GradeRequest base;
  base.cache_dir = o.cache_dir;
  base.isolate = !o.no_isolation;
  base.engine = o.engine;
  base.device = o.device;
  require_device(o);
  if (!*c.list && !*c.merge && !*c.release) require_fence(base);
  if (*c.list) return list_exercises(std::cout, course, st);
  if (*c.check)
    return check_course(std::cout, course, base, o.check_jobs, o.check_variants, o.junit ? (o.out_dir.empty() ? "." : o.out_dir) : "", st);
  if (*c.autograde) return autograde_command(course, base, o);
  if (*c.release) return release_command(course, o, st);
  if (*c.personalise) return personalise_command(course, base, o, st);
  if (*c.record) {
    require_exercises(course, o.record_only);
    return record_facts(std::cout, course, base, o.record_only, st);
  }
  if (*c.batch) return batch_command(course, base, o);
  if (*c.merge) return merge_command(o);
  return grade_command(course, base, o, st);
}

}  // namespace

// Each subcommand's own help ends with the options of `grade` it takes (they
// may follow the subcommand, as the README writes them) and its own exit
// codes: a class's run does not end the way one file's grading does.
void add_footers(const Subcommands& c) {
  const std::string usage = "  64  usage error (a bad option, a missing folder, a malformed roster or shard)\n";
  const std::string internal = "  70  internal error (the grader could not do its work; it says what)\n";
  c.check->footer("Also takes: --jobs N, --variants N, --junit with --out DIR (check-EXERCISE.xml), --course, --cache, "
                  "--no-isolation\n\nExit codes:\n  0   every solution, starter and fixture is as declared\n"
                  "  1   some solution or fixture is not, or some facts are stale (each is named)\n" + usage + internal);
  c.record->footer("Also takes: --course, --cache, --no-isolation\n\nExit codes:\n  0   the facts are written\n" +
                   usage + internal);
  c.release->footer("Also takes: --out DIR (required), --course, --cache and --no-isolation (for --variants)\n\nExit codes:\n  0   the release is written\n"
                    "  1   refused: some facts are stale, or a line of a solution would be handed out\n" + usage +
                    internal);
  c.personalise->footer("Also takes: --variant N (instead of WHO), --course, --cache\n\nExit codes:\n  0   the files "
                        "show your numbers\n  1   some file could not be changed (each is named)\n" + usage + internal);
  c.autograde->footer("Also takes: --out DIR (required: results.json goes there), --course, --cache, "
                      "--no-isolation\n\nExit codes:\n  0   results.json is written, whatever the scores\n" + usage +
                      internal);
  c.batch->footer("Also takes: --out DIR (default: gradlab-batch), --course, --cache, --no-isolation\n\nExit codes:\n"
                  "  0   every submission was graded, whatever its verdict\n"
                  "  1   canvas.csv was not written: the roster's points possible differ from the rubrics' total\n" +
                  usage + "  70  some submission could not be graded (each is named)\n");
  c.merge->footer("Also takes: --out DIR (required)\n\nExit codes:\n  0   the class files are written\n"
                  "  1   canvas.csv was not written: the roster's points possible differ from the rubrics' total\n"
                  "  64  usage error (a shard missing without --allow-partial, shards of different runs)\n" + internal);
}

int main(int argc, char** argv) {
  CLI::App app{"gradlab's grader: compiles an exercise against the engine, runs it isolated, checks it.", "grade"};
  app.footer(kExitCodes);
  app.set_version_flag("--version", std::string("gradlab ") + GRADLAB_VERSION);
  Options o;
  add_grading_options(app, o);
  Subcommands c = add_course_commands(app, o);
  add_class_commands(app, o, c);
  add_footers(c);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0) suggest_options(app, e.what());
    return code == 0 ? 0 : kExitUsage;
  }
  // The one error path: each kind of failure to its exit code.
  try {
    return run(c, o);
  } catch (const Stop& e) {
    std::cerr << "grade: " << e.what() << "\n" << (e.usage_hint ? "(run `grade --help` for the usage)\n" : "");
    return e.code;
  } catch (const RubricError& e) {
    std::cerr << "grade: malformed rubric: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {  // InternalError among them
    std::cerr << "grade: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

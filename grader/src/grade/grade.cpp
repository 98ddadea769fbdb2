#include "grade/grade.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <future>
#include <random>

#include "compile/build.h"
#include "judge/checks.h"
#include "compile/diagnostics.h"
#include "judge/runtime_hints.h"
#include "source/python_habits.h"  // with_cpp_spelling
#include "judge/replay.h"
#include "judge/facts.h"
#include "judge/variants.h"
#include "grade/replay_fence.h"
#include "config.h"
#include "common/files.h"
#include "gradlab/types.h"
#include "fence/sandbox.h"
#include "common/sha256.h"
#include "judge/snapshot.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

std::string nonce() {
  std::random_device rd;
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", rd());
    s += buf;
  }
  return s;
}

// "2 s", "0.5 s": a limit as the rubric wrote it.
std::string seconds(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", v);
  return buf;
}

std::string signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (segmentation fault: a read or write through a bad pointer or past an array's end)";
    case SIGABRT: return "SIGABRT (abort: a failed assert, or std::terminate after an exception escaped)";
    case SIGFPE: return "SIGFPE (arithmetic error, such as an integer division by zero)";
    case SIGBUS: return "SIGBUS (bus error: a bad memory access)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGKILL: return "SIGKILL";
    default: return std::string("signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
}

struct Run {
  RunInfo info;
  json snapshot;                  // when info.status == RunStatus::Ok
  std::vector<uint64_t> trace;    // where an escaped exception was thrown: offsets into the program
};


// The program's result with its facts replaced by the replay's of its tape
// (`taped`: built against gradlab's engine, which writes one).
void replace_with_replay(json& snap, std::string_view tape, const Rubric& rubric, bool taped, const std::string& token) {
  if (!taped) {
    snap["computation"] = {{"replayed", false}, {"mismatches", json::array()}, {"unverified", json::array()},
                           {"note", "built against LibTorch, which keeps no op tape: the results are the program's own"}};
    return;
  }
  // In a child process with limits of its own: the tape is the student's word (replay_fence.h).
  FencedReplay v = replay_fenced(tape, snap, rubric.probes, token, shadows_of(rubric), rubric.custom_functions,
                                 rubric.curvature);
  snap = std::move(v.doc);
  snap["computation"] = std::move(v.computation);
}

// The seed of the graphs the walk probes make up for a program: from the
// sha256 of its source, so the same file is asked the same graphs (whatever
// grader built it), another file other ones, and no file can know its own
// before it is written.
int64_t graphs_seed(const std::string& source_sha256) {
  return source_sha256.size() >= 7 ? static_cast<int64_t>(std::stoull(source_sha256.substr(0, 7), nullptr, 16)) : 0;
}

bool makes_up_graphs(const json& probe) { return probe.value("kind", "") == "walk" && probe.value("random", 0) > 0; }

// The rubric's probes as the program is asked them: each walk probe that
// makes up graphs with this program's seed.
json probes_asked(const json& probes, int64_t seed) {
  json asked = probes;
  for (auto& p : asked)
    if (makes_up_graphs(p)) p["seed"] = seed;
  return asked;
}

// The grader's own word on which graphs it asked, beside the program's
// answer (a program cannot claim a "seed": its snapshot would be refused).
void note_seeds(json& snap, const json& probes, int64_t seed) {
  if (!snap.is_object() || !snap.contains("probes") || !snap["probes"].is_object()) return;
  for (const auto& p : probes) {
    const std::string id = p.value("id", "");
    if (makes_up_graphs(p) && snap["probes"].contains(id) && snap["probes"][id].is_object()) snap["probes"][id]["seed"] = seed;
  }
}

Run run_program(const BuildOutcome& built, const Rubric& rubric, const Limits& limits, bool isolate,
                const std::string& device, bool taped, const json& given) {
  const std::string& program = built.program;
  Run run;
  const std::string token = nonce();
  const int64_t seed = graphs_seed(built.source_sha256);
  const json request = {{"probes", probes_asked(rubric.probes, seed)}, {"device", device}, {"given", given}};
  SandboxSpec spec;
  spec.program = program;
  spec.request = request.dump();
  spec.nonce = token;
  spec.limits = limits;
  spec.isolate = isolate;
  spec.gpu = device == "cuda";
  SandboxOutcome o = run_sandboxed(spec);
  RunInfo& r = run.info;
  r.exit_code = o.exit_code;
  r.signal = o.signal;
  r.wall_seconds = o.wall_seconds;
  r.cpu_seconds = o.cpu_seconds;
  r.peak_memory_kb = o.peak_memory_kb;
  r.stdout_text = o.out;
  r.stderr_text = o.err;
  r.stdout_truncated = o.out_truncated;
  r.stderr_truncated = o.err_truncated;
  r.isolation = o.isolation;
  const Limits& L = limits;

  if (!o.failure.empty()) {
    r.status = RunStatus::SandboxError;
    r.message = o.failure;
    return run;
  }
  // The whole document is checked before anything reads it (snapshot.h):
  // what a forged one holds never reaches the checks nor the verdict.
  json snap;
  std::string bad;
  const Channel channel = split_channel(o.channel);
  if (!channel.result.empty()) {
    Snapshot read = read_snapshot(channel.result, token);
    bad = std::move(read.error);
    snap = std::move(read.doc);
  }
  if (snap.is_object()) {
    const json& u = snap["usage"];
    if (u["cpu_seconds"].get<double>() > r.cpu_seconds) r.cpu_seconds = u["cpu_seconds"].get<double>();
    if (u["peak_memory_kb"].get<long>() > r.peak_memory_kb) r.peak_memory_kb = u["peak_memory_kb"].get<long>();
  }
  const bool near_memory_limit = o.peak_memory_kb > (L.memory_mb << 10) * 9 / 10;
  if (o.timed_out) {
    r.status = RunStatus::Timeout;
    r.message = "stopped after " + seconds(L.wall_seconds) +
                " of wall-clock time (the limit): an endless loop, or waiting for input?";
  } else if (o.output_limit) {
    r.status = RunStatus::OutputLimit;
    r.message = "stopped after printing more than " + std::to_string(L.output_kb) +
                " KiB: exercises print little, so this is probably printing inside an endless loop";
  } else if (o.disk_limit) {
    r.status = RunStatus::OutputLimit;  // output written to files rather than printed
    r.message = "stopped after writing more than " + std::to_string(kWorkFolderBytes >> 20) + " MiB or " +
                std::to_string(kWorkFolderEntries) +
                " files (or folders 64 deep) to its working folder: exercises write no files, so this is probably "
                "writing inside an endless loop";
    // Memory before CPU: paging in the last gigabyte costs CPU time too.
  } else if ((snap.is_object() && snap.value("status", "") == "out_of_memory") || (o.signal && near_memory_limit)) {
    r.status = RunStatus::MemoryLimit;
    r.message = "ran out of memory: it may use at most " + std::to_string(L.memory_mb) +
                " MiB; is something growing without end?";
  // Past the limit however it ended: SIGXCPU at the soft limit can be
  // ignored, and a program that then finished before the hard limit's
  // SIGKILL ran 2.87 s against 2 (resource red team 6). (A tick's slack: the
  // kernel counts the limit in ticks.)
  } else if (o.signal == SIGXCPU || (o.signal == SIGKILL && o.cpu_seconds >= L.cpu_seconds) ||
             o.cpu_seconds > L.cpu_seconds + 0.05) {
    r.status = RunStatus::CpuLimit;
    r.message = "stopped after " + seconds(L.cpu_seconds) +
                " of CPU time (the limit): an endless loop, or far too much work?";
  } else if (o.signal) {
    r.status = RunStatus::Crashed;
    r.message = "crashed with " + signal_text(o.signal);
  } else if (channel.result.empty()) {
    r.status = RunStatus::Crashed;
    r.message = "the program ended (exit code " + std::to_string(o.exit_code) +
                ") before the grader could read its results: does the code call exit() or std::quick_exit()?";
  } else if (!bad.empty()) {
    r.status = RunStatus::BadSnapshot;
    r.message = "the grader could not trust the program's result: " + bad;
  } else if (snap["status"] != "ok") {
    r.status = RunStatus::Exception;
    r.message = "an exception escaped from " + rubric.function + "(): " + snap.value("message", std::string());
    if (const std::string hint = runtime_hint(snap.value("message", std::string())); !hint.empty())
      r.message += " Hint: " + hint;
    for (const auto& o : snap.value("trace", json::array())) run.trace.push_back(o.get<uint64_t>());
    // What the program had done before it threw is still its work: the
    // checks read it (partial credit); probes never ran, so theirs fail.
    if (snap["status"] == "exception") {
      snap["stdout"] = o.out;
      replace_with_replay(snap, channel.tape, rubric, taped, token);
      note_seeds(snap, rubric.probes, seed);
      run.snapshot = std::move(snap);
    }
  } else if (o.exit_code != 0) {
    r.status = RunStatus::Crashed;
    r.message = "the program exited with code " + std::to_string(o.exit_code);
  } else {
    r.status = RunStatus::Ok;
    snap["stdout"] = o.out;
    replace_with_replay(snap, channel.tape, rubric, taped, token);
    note_seeds(snap, rubric.probes, seed);
    run.snapshot = std::move(snap);
  }
  return run;
}

// On the GPU, PyTorch prints a tensor as tensor([...], device='cuda:0'); the
// reference's output, made on the CPU, has no such mark. Output checks
// compare what is printed apart from it (the report keeps the real output).
json without_device_marks(json snap) {
  const std::string in = snap.value("stdout", ""), mark = ", device='cuda:0'";
  std::string out;
  size_t from = 0;
  for (size_t at; (at = in.find(mark, from)) != std::string::npos; from = at + mark.size()) out.append(in, from, at - from);
  snap["stdout"] = out.append(in, from);
  return snap;
}

// The reference solution's snapshot, cached beside its program: it changes
// only when the solution, the toolchain or the probes change.
// The reference always runs on the CPU: its values are the course's, and a
// run on the GPU is judged against them within the rubric's tolerances.
// This grader's build, as a cache key: the snapshot is the replay's work as
// much as the program's, so another grader (another replay) runs it again.
const std::string& grader_build() {
  static const std::string id = [] {
    struct stat st{};
    if (stat("/proc/self/exe", &st) != 0) return std::string("unknown");
    return std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return id;
}

json reference_snapshot(const BuildOutcome& b, const Rubric& rubric, bool isolate, const json& given) {
  const fs::path cached = fs::path(b.program).parent_path() /
                          ("snapshot-" + replay_key(rubric) + "-" + sha256_hex(grader_build() + given.dump()).substr(0, 12) + ".json");
  if (auto text = read_file(cached.string())) {
    try {
      return json::parse(*text);
    } catch (const std::exception&) {
      // a damaged cache entry: run again
    }
  }
  Run ref = run_program(b, rubric, rubric.limits, isolate, "cpu", /*taped=*/true, given);
  if (ref.info.status != RunStatus::Ok)
    throw InternalError("the reference solution did not run cleanly (" + name(ref.info.status) + "): " + ref.info.message +
                        (ref.info.stderr_text.empty() ? "" : "\n" + ref.info.stderr_text));
  write_file_atomic(cached.string(), ref.snapshot.dump());  // a cache: failing to keep it costs only time
  return ref.snapshot;
}


// PyTorch's messages name Python spellings (retain_graph=True): wherever a
// result shows one, the C++ spelling goes beside it.
void spell_for_cpp(Result& res) {
  auto spell = [](json& v) {
    if (v.is_string()) v = with_cpp_spelling(v.get<std::string>());
    if (v.is_array())
      for (auto& e : v)
        if (e.is_string()) e = with_cpp_spelling(e.get<std::string>());
  };
  res.run.message = with_cpp_spelling(res.run.message);
  for (auto& c : res.checks) {
    spell(c.expected);
    spell(c.found);
    c.message = with_cpp_spelling(c.message);
  }
  for (auto& w : res.warnings)
    if (w.is_object() && w.contains("message")) spell(w["message"]);
}

// Where an exception stopped the run, as the checks say it: the file's
// name and the line ("exercise3.cpp:15"), or "an exception" where the line
// is not known.
std::string stop_place(const RunInfo& run, const std::string& submission) {
  return run.line > 0 ? fs::path(submission).filename().string() + ":" + std::to_string(run.line) : "an exception";
}

// The failed check an escaped exception adds: no points of its own (the
// checks it kept from running lose theirs), its message and the student's line.
CheckResult exception_check(const RunInfo& run, const std::string& submission) {
  CheckResult c;
  c.id = "exception";
  c.name = "runs to the end without an exception";
  c.kind = "run";
  c.status = CheckStatus::Failed;
  c.expected = "no exception";
  const std::string where =
      run.line > 0 ? fs::path(submission).filename().string() + ":" + std::to_string(run.line) : std::string();
  c.found = where.empty() ? run.message : run.message + " (at " + where + ")";
  c.message = "the run stopped here" + (where.empty() ? std::string() : ", at " + where) +
              "; the checks above were scored on what the program had done before it, and those that needed the "
              "rest of it say \"not reached\"";
  return c;
}

}  // namespace

namespace {

// What a result says of its context before anything is built.
Result describe(const Rubric& rubric, const GradeRequest& req) {
  Result res;
  res.created = utc_now();
  res.host = host_name();
  res.exercise = rubric.exercise;
  res.title = rubric.title;
  res.submission = req.submission;
  res.submission_sha256 = sha256_hex(read_file(req.submission).value_or(""));
  res.max_score = rubric.max_points();
  res.engine = req.engine == "libtorch" ? "LibTorch (Debian libtorch-dev)" : std::string("gradlab ") + GRADLAB_VERSION;
  res.compiler = compiler_id(req.engine);
  res.device = req.device;
  if (req.device == "cuda") res.gpu = gradlab::cuda_device_name(0);
  return res;
}

// The student's program, and what it is compared with: recorded facts when
// they were recorded for this rubric (and this solution, where the course
// has it), so that only the student's file is built; otherwise the reference
// solution, built beside it.
struct Builds {
  BuildOutcome student, reference;
  std::optional<json> facts;
};

Builds build_both(const Rubric& rubric, const GradeRequest& req) {
  Builds b;
  const auto solution_text = req.solution.empty() ? std::nullopt : read_file(req.solution);
  std::string why_not;
  if (!req.facts.empty()) b.facts = read_facts(req.facts, rubric, solution_key(solution_text), why_not, req.variant);
  if (!b.facts && !solution_text)
    throw InternalError("no reference to grade " + rubric.exercise + " against: " +
                        (req.facts.empty() ? "no solution at " + req.solution : why_not) +
                        ". The course's instructor records the facts with `grade record` and releases it again.");
  std::future<BuildOutcome> ref_build;
  if (!b.facts)
    ref_build = std::async(std::launch::async, [&] {
      return build_program({req.solution, rubric.function, req.cache_dir, "gradlab", /*guarded=*/false, req.isolate});
    });
  b.student = build_program({req.submission, rubric.function, req.cache_dir, req.engine, true, req.isolate});
  if (!b.facts) {
    b.reference = ref_build.get();
    if (!b.reference.failure.empty()) throw InternalError(b.reference.failure);
    if (!b.reference.ok)
      throw InternalError("the reference solution " + req.solution + " does not compile:\n" + b.reference.diagnostics);
  }
  if (!b.student.failure.empty()) throw InternalError(b.student.failure);
  return b;
}

// The rubric's limits, and what the device or the library adds to them.
Limits run_limits(const Rubric& rubric, const GradeRequest& req) {
  Limits limits = rubric.limits;
  // Starting CUDA (driver, context, module loading) is not the student's
  // time: a run on the GPU gets that much more.
  if (req.device == "cuda") limits.cpu_seconds += 2, limits.wall_seconds += 5;
  // LibTorch maps several hundred MiB of libraries and thread pools before
  // main(): its address-space limit has to be larger.
  if (req.engine == "libtorch") limits.memory_mb = std::max(limits.memory_mb, 8192L);
  return limits;
}

// Where the program's inputs are not the statement's numbers (a tensor named
// like a number the statement gives, holding another value: the lesson's
// numbers in a variant's file, or a typo), what to say: "" when they agree.
std::string numbers_note(const json& given, const json& student, int variant) {
  std::string note;
  for (const auto& [name, want] : given.items()) {
    const json* t = student.contains("tensors") && student["tensors"].contains(name) ? &student["tensors"][name] : nullptr;
    if (!t || !t->contains("values") || !(*t)["values"].is_array() || (*t)["values"].size() != 1 ||
        !(*t)["values"][0].is_number())
      continue;
    const double got = (*t)["values"][0].get<double>(), w = want.get<double>();
    const Tolerance tol;  // the rubrics' default
    if (std::fabs(got - w) <= tol.atol + tol.rtol * std::fabs(w)) continue;
    note += (note.empty() ? "" : ", ") + name + " is " + number_text(got) + " where the statement gives " + number_text(w);
  }
  if (note.empty()) return "";
  return note + (variant > 0 ? " (your numbers are variant " + std::to_string(variant) + "'s: see the first lines of your file)"
                             : "") + ". Start from the statement's numbers.";
}

// The checks on the student's facts, and the score and verdict they make.
void check_and_score(Result& res, const Rubric& rubric, const GradeRequest& req, const json& student,
                     const json& reference, bool partial) {
  res.warnings = student.value("warnings", json::array());
  try {
    res.checks = evaluate(rubric, req.device == "cuda" ? without_device_marks(student) : student, reference,
                          partial ? stop_place(res.run, res.submission) : "");
  } catch (const std::logic_error& e) {
    throw InternalError(rubric.path + ": " + e.what());
  }
  res.graphs = graph_views(rubric, res.checks, student, reference);
  if (const std::string note = numbers_note(res.given, student, res.variant); !note.empty())
    for (auto& c : res.checks)
      if (c.status == CheckStatus::Failed && (c.kind == "value" || c.kind == "grad" || c.kind == "snapshots"))
        c.hint = note + (c.hint.empty() ? "" : " " + c.hint);
  if (partial) res.checks.push_back(exception_check(res.run, res.submission));
  bool all = true;
  for (const auto& c : res.checks) {
    res.score += c.points;
    all &= c.status == CheckStatus::Passed;
  }
  res.verdict = partial ? Verdict::RuntimeError : all ? Verdict::Passed : Verdict::Failed;
}

}  // namespace

// LibTorch writes no op tape, so a build against it cannot answer the checks
// that read the computation: they are left out of its grade, and its report
// says which. The other checks are the same as on gradlab's engine.
Rubric answerable(const Rubric& rubric, const GradeRequest& req, std::vector<std::string>& left_out) {
  if (req.engine != "libtorch") return rubric;
  Rubric r = rubric;
  r.checks.clear();
  for (const Check& c : rubric.checks)
    if (reads_computation(c.kind)) left_out.push_back(c.id);
    else r.checks.push_back(c);
  return r;
}

std::string left_out_note(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id;
  return "the checks of how results were computed (the op tape's: " + s +
         ") run only on gradlab's engine and are not part of this grade";
}

// The rubric as this grade shows it: at the request's variant, its names
// and hints filled from the reference's facts at the same numbers.
Rubric at_variant(const Rubric& rubric, const GradeRequest& req, const json& given, const json& reference) {
  try {
    return filled(rubric, given, reference);
  } catch (const VariantError& e) {
    throw InternalError(rubric.path + ": " + e.what() + " (variant " + std::to_string(req.variant) + ")");
  }
}

Result grade(const Rubric& full_rubric, const GradeRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> left_out;
  json given;
  try {
    given = given_at(full_rubric, req.variant);
  } catch (const VariantError& e) {
    throw InternalError(e.what());
  }
  const Rubric unfilled = answerable(full_rubric, req, left_out);
  Builds b = build_both(unfilled, req);
  // The reference runs first only when its snapshot is neither recorded nor cached yet.
  const json reference = b.facts ? std::move(*b.facts) : reference_snapshot(b.reference, unfilled, req.isolate, given);
  const Rubric rubric = at_variant(unfilled, req, given, reference);
  Result res = describe(rubric, req);
  res.variant = req.variant;
  res.given = given;
  res.compile.ok = b.student.ok;
  res.compile.cached = b.student.cached;
  res.compile.seconds = b.student.seconds;
  res.compile.diagnostics = b.student.diagnostics;
  auto done = [&] {
    spell_for_cpp(res);
    res.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return res;
  };
  if (!b.student.ok) {
    res.verdict = Verdict::CompileError;
    res.compile.hints = b.student.hints;
    res.checks = not_run(rubric, "the file does not compile");
    return done();
  }
  Run student = run_program(b.student, rubric, run_limits(rubric, req), req.isolate, req.device,
                            /*taped=*/req.engine != "libtorch", given);
  res.run = student.info;
  res.run.line = student_line(b.student, student.trace);
  // An escaped exception ends the run, not the grading: the facts recorded
  // before it are checked and scored, and the exception is a failed check
  // of its own (when nothing was named before it, there is nothing to score).
  // Anything else that stops a run (a crash, a limit) leaves nothing
  // trustworthy to check.
  const json& snap = student.snapshot;
  const bool partial = student.info.status == RunStatus::Exception && snap.is_object() &&
                       (!snap.value("tensors", json::object()).empty() || !snap.value("records", json::array()).empty());
  if (student.info.status != RunStatus::Ok && !partial) {
    res.verdict = Verdict::RuntimeError;
    res.checks = not_run(rubric, "the program did not finish: " + student.info.message);
    return done();
  }
  if (snap.is_object() && snap.contains("computation")) {
    const json& c = snap["computation"];
    auto& rc = res.run.computation;
    rc.recorded = true;
    rc.replayed = c.value("replayed", false);
    rc.failure = c.value("failure", "");
    rc.note = c.value("note", "");
    rc.mismatches = c.value("mismatches", json::array()).size();
    rc.unverified = c.value("unverified", std::vector<std::string>{});
  }
  if (!left_out.empty()) {
    auto& rc = res.run.computation;
    rc.recorded = true;
    rc.note += (rc.note.empty() ? "" : "; ") + left_out_note(left_out);
  }
  check_and_score(res, rubric, req, snap, reference, partial);
  return done();
}

json run_reference(const Rubric& rubric, const GradeRequest& req) {
  const BuildOutcome rb =
      build_program({req.solution, rubric.function, req.cache_dir, "gradlab", /*guarded=*/false, req.isolate});
  if (!rb.failure.empty()) throw InternalError(rb.failure);
  if (!rb.ok) throw InternalError("the reference solution " + req.solution + " does not compile:\n" + rb.diagnostics);
  try {
    return reference_snapshot(rb, rubric, req.isolate, given_at(rubric, req.variant));
  } catch (const VariantError& e) {
    throw InternalError(e.what());
  }
}

// Now, as report.json's "created" has it: 2026-11-22T09:41:07Z.
std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char host[256] = {};
  return gethostname(host, sizeof host - 1) == 0 ? host : "";
}

}  // namespace grader

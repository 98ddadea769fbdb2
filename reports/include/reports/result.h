// The result model: what grading one submission produced. The console
// printer, `--json` and the report writers all read this; none of them
// decides anything.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

using json = nlohmann::ordered_json;

// The outcomes are types; their words ("passed", "compile_error", ...) are
// written only where a format needs them (report.json, the console, the
// platforms' files), by name() below.

// What became of a submission.
enum class Verdict {
  Passed,        // every check passed
  Failed,        // some checks failed
  CompileError,  // it did not compile (or link, or broke the grader's rules)
  RuntimeError,  // it did not finish: RunInfo::status says how
  // Only where a whole submission is graded (autograding platforms): an
  // exercise with no file, and one the grader itself failed on.
  Missing,
  InternalError,
  // Only in a batch: the file shares its inode (a hard link) with another
  // student's file. Not graded, and no score, until a person decides whose
  // work it is.
  SharedFile,
};

// What became of one check.
enum class CheckStatus {
  Passed,
  Failed,
  NotRun,  // the program did not get that far
};

// How the program's run ended.
enum class RunStatus {
  Ok,
  Exception,     // an uncaught exception
  Crashed,       // a signal, or an exit without its facts
  Timeout,       // the wall-clock limit
  CpuLimit,
  MemoryLimit,
  OutputLimit,
  BadSnapshot,   // facts the grader refused to read
  SandboxError,  // the fence could not be built: the grader's problem
  NotRun,
};

// The word report.json's schema uses for each.
const std::string& name(Verdict v);
const std::string& name(CheckStatus s);
const std::string& name(RunStatus s);
// The outcome a word names, or nothing for a word that names none (where
// report.json is read back: the JSON mapping would take any unknown word for
// the first value, Passed).
std::optional<Verdict> verdict_named(std::string_view word);
std::optional<RunStatus> run_status_named(std::string_view word);
// In JSON they are their words too (a comparison with a rubric's "status"
// compares words), never nlohmann's default of the enum's number.
NLOHMANN_JSON_SERIALIZE_ENUM(Verdict, {{Verdict::Passed, "passed"},
                                       {Verdict::Failed, "failed"},
                                       {Verdict::CompileError, "compile_error"},
                                       {Verdict::RuntimeError, "runtime_error"},
                                       {Verdict::Missing, "missing"},
                                       {Verdict::InternalError, "internal_error"},
                                       {Verdict::SharedFile, "shared_file"}})
NLOHMANN_JSON_SERIALIZE_ENUM(CheckStatus, {{CheckStatus::Passed, "passed"},
                                           {CheckStatus::Failed, "failed"},
                                           {CheckStatus::NotRun, "not_run"}})
NLOHMANN_JSON_SERIALIZE_ENUM(RunStatus, {{RunStatus::Ok, "ok"},
                                         {RunStatus::Exception, "exception"},
                                         {RunStatus::Crashed, "crashed"},
                                         {RunStatus::Timeout, "timeout"},
                                         {RunStatus::CpuLimit, "cpu_limit"},
                                         {RunStatus::MemoryLimit, "memory_limit"},
                                         {RunStatus::OutputLimit, "output_limit"},
                                         {RunStatus::BadSnapshot, "bad_snapshot"},
                                         {RunStatus::SandboxError, "sandbox_error"},
                                         {RunStatus::NotRun, "not_run"}})
inline std::ostream& operator<<(std::ostream& os, Verdict v) { return os << name(v); }
inline std::ostream& operator<<(std::ostream& os, CheckStatus s) { return os << name(s); }
inline std::ostream& operator<<(std::ostream& os, RunStatus s) { return os << name(s); }

struct CheckResult {
  std::string id, name, kind;
  double points = 0, max = 0;
  CheckStatus status = CheckStatus::NotRun;
  json expected, found;  // display strings, or null
  std::string message, hint;
  bool hidden = false;
};

// A line of the student's that the compiler refused, read as a habit
// brought from Python (x.requires_grad = true, x**2), and what to write.
struct CompileHint {
  int line = 0;
  std::string hint;
};

struct CompileInfo {
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string diagnostics;  // the compiler's and linker's output, paths as the student wrote them
  std::vector<CompileHint> hints;  // said above the compiler's text
};

struct RunInfo {
  RunStatus status = RunStatus::NotRun;
  std::string message;
  int exit_code = -1;
  int signal = 0;
  double wall_seconds = 0, cpu_seconds = 0;
  long peak_memory_kb = 0;
  std::string stdout_text, stderr_text;
  bool stdout_truncated = false, stderr_truncated = false;
  std::string isolation;  // the fence it ran in: "bubblewrap" or "fallback"
  int line = 0;  // for an escaped exception, the student's line it came from (0: unknown)
  // What the grader's replay of the program's op tape made of it.
  struct Computation {
    bool recorded = false;  // the run produced a result to check against its tape
    bool replayed = false;  // the tape replayed to its end: the checks read the replay's facts
    std::string failure;    // why it could not be replayed (every check reading facts then failed)
    std::string note;       // why nothing was replayed (a LibTorch build keeps no tape)
    size_t mismatches = 0;  // claims the replay contradicted
    std::vector<std::string> unverified;  // what stayed the program's own account
  } computation;
};

// A backward graph the reports draw. `student` (and `reference`) are node
// lists as the harness writes them: breadth first from the root, each node
// {id, name, tensors, next[, shape]}. The reference is there only beside a
// failed graph check that is not hidden, with the nodes that differ marked.
struct GraphView {
  std::string tensor;    // the named tensor at its root
  std::string check_id;  // the graph check about it, or ""
  json student = nullptr, reference = nullptr;
  std::vector<std::string> student_marked, reference_marked;  // node ids
  std::vector<std::string> differences;
  // The named tensors on each graph as the harness described them (shape,
  // is_leaf, retains_grad, ...), for labels and alt text.
  json student_tensors = json::object(), reference_tensors = json::object();
};

struct Result {
  std::string exercise, title, submission, submission_sha256;
  int variant = 0;             // the student's numbers: 0, the lesson's (variants.h)
  json given = json::object(); // and what the statement gives at them
  Verdict verdict = Verdict::Failed;
  double score = 0, max_score = 0;
  std::vector<CheckResult> checks;
  CompileInfo compile;
  RunInfo run;
  json warnings = json::array();
  std::vector<GraphView> graphs;  // drawn in report.html and as PNGs
  std::string engine, compiler, device = "cpu";
  std::string gpu;  // the GPU's name when device is "cuda" (e.g. "NVIDIA H100 80GB HBM3")
  double total_seconds = 0;
  std::string created;  // when it was graded, ISO 8601 UTC (volatile)
  std::string host;     // the machine that graded it (volatile; JUnit's hostname)
};

// A run an escaped exception ended, checked all the same on what the program
// had done before it (partial credit): its checks are scored, not "not_run".
bool scored_before_exception(const Result& r);
// The result as report.json's schema has it (reports/report.schema.json).
json to_json(const Result& r);
// "3", "2.5": points without trailing zeros (console, reports, grade check).
std::string points(double p);

// A check's expected or found value as display text: a string as it is, an
// array (a sequence of snapshots) one element per line, each continuation
// line indented by `indent` spaces so it lines up under the first.
std::string display_text(const json& v, size_t indent);

// A check's name as reports show it: a hidden check's name could give the
// answer away, so it is shown by its id.
std::string shown_name(const CheckResult& c);

// The run limit a run status stands for ("wall_time", "cpu_time", "memory",
// "output"), or "" when the run ended for another reason.
std::string limit_hit(RunStatus s);

}  // namespace grader

// The result model: what grading one submission produced. The console
// printer, `--json` and the report writers all read this; none of them
// decides anything.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace grader {

using json = nlohmann::ordered_json;

struct CheckResult {
  std::string id, name, kind;
  double points = 0, max = 0;
  std::string status;  // "passed", "failed", or "not_run" (the program did not get that far)
  json expected, found;  // display strings, or null
  std::string message, hint;
  bool hidden = false;
};

struct CompileInfo {
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string diagnostics;  // the compiler's and linker's output, paths as the student wrote them
};

struct RunInfo {
  // "ok", "exception", "crashed", "timeout", "cpu_limit", "memory_limit",
  // "output_limit", "bad_snapshot", "sandbox_error" or "not_run".
  std::string status = "not_run";
  std::string message;
  int exit_code = -1;
  int signal = 0;
  double wall_seconds = 0, cpu_seconds = 0;
  long peak_memory_kb = 0;
  std::string stdout_text, stderr_text;
  bool stdout_truncated = false, stderr_truncated = false;
  std::string isolation;  // the fence it ran in: "bubblewrap" or "fallback"
  int line = 0;  // for an escaped exception, the student's line it came from (0: unknown)
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
  // "passed" (every check), "failed" (some checks), "compile_error", "runtime_error".
  std::string verdict;
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

// The documented exit codes.
enum ExitCode : int {
  kExitPassed = 0,
  kExitFailed = 1,
  kExitCompileError = 2,
  kExitRuntimeError = 3,
  kExitUsage = 64,
  kExitNoDevice = 69,
  kExitInternal = 70,
};

int exit_code_for(const Result& r);
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
std::string limit_hit(const std::string& run_status);

}  // namespace grader

#include "reports/result.h"

#include <algorithm>
#include <cstdio>

namespace grader {

int exit_code_for(const Result& r) {
  if (r.verdict == "passed") return kExitPassed;
  if (r.verdict == "compile_error") return kExitCompileError;
  if (r.verdict == "runtime_error") return kExitRuntimeError;
  return kExitFailed;
}

std::string points(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

std::string display_text(const json& v, size_t indent) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : "\n" + std::string(indent, ' ')) + display_text(e, indent);
    return s;
  }
  return v.is_null() ? "" : v.dump();
}

std::string shown_name(const CheckResult& c) { return c.hidden ? "hidden check " + c.id : c.name; }

bool scored_before_exception(const Result& r) {
  return r.verdict == "runtime_error" && r.run.status == "exception" &&
         std::any_of(r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.status != "not_run"; });
}

std::string limit_hit(const std::string& status) {
  if (status == "timeout") return "wall_time";
  if (status == "cpu_limit") return "cpu_time";
  if (status == "memory_limit") return "memory";
  if (status == "output_limit") return "output";
  return "";
}

// Field order is fixed here, so the same result always prints the same bytes.
json to_json(const Result& r) {
  json j;
  j["report_version"] = 1;
  j["exercise"] = r.exercise;
  j["title"] = r.title;
  j["submission"] = {{"file", r.submission}, {"sha256", r.submission_sha256}};
  j["verdict"] = r.verdict;
  j["score"] = r.score;
  j["max_score"] = r.max_score;
  json checks = json::array();
  for (const auto& c : r.checks) {
    json cj;
    cj["id"] = c.id;
    cj["name"] = c.name;
    cj["kind"] = c.kind;
    cj["points"] = c.points;
    cj["max"] = c.max;
    cj["status"] = c.status;
    cj["visibility"] = c.hidden ? "hidden" : "visible";
    // A hidden check tells only that it passed or failed.
    cj["expected"] = c.hidden ? json(nullptr) : c.expected;
    cj["found"] = c.hidden ? json(nullptr) : c.found;
    cj["message"] = c.hidden ? "" : c.message;
    cj["hint"] = c.hidden || c.status == "passed" ? "" : c.hint;
    checks.push_back(cj);
  }
  j["checks"] = checks;
  j["compile"] = {{"ok", r.compile.ok}, {"cached", r.compile.cached}, {"seconds", r.compile.seconds},
                  {"diagnostics", r.compile.diagnostics}};
  j["run"] = {{"status", r.run.status},
              {"message", r.run.message},
              {"exit_code", r.run.exit_code},
              {"signal", r.run.signal},
              {"timed_out", r.run.status == "timeout" || r.run.status == "cpu_limit"},
              {"limit_hit", limit_hit(r.run.status).empty() ? json(nullptr) : json(limit_hit(r.run.status))},
              {"wall_seconds", r.run.wall_seconds},
              {"cpu_seconds", r.run.cpu_seconds},
              {"peak_memory_kb", r.run.peak_memory_kb},
              {"isolation", r.run.isolation},
              {"stdout", r.run.stdout_text},
              {"stdout_truncated", r.run.stdout_truncated},
              {"stderr", r.run.stderr_text},
              {"stderr_truncated", r.run.stderr_truncated}};
  if (r.run.line > 0) j["run"]["line"] = r.run.line;  // only when known: most runs have none
  j["warnings"] = r.warnings;
  j["engine"] = r.engine;
  j["compiler"] = r.compiler;
  j["device"] = r.device;
  j["gpu"] = r.gpu.empty() ? json(nullptr) : json(r.gpu);
  j["seconds"] = r.total_seconds;
  j["created"] = r.created;
  return j;
}

}  // namespace grader

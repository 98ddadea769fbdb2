#include "reports/result.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace grader {

namespace {
// The words, in the enum's order, from the one list of them (result.h's JSON mapping).
template <class E, size_t N>
std::array<std::string, N> words_of() {
  std::array<std::string, N> w;
  for (size_t i = 0; i < N; ++i) w[i] = json(static_cast<E>(i)).get<std::string>();
  return w;
}
}  // namespace

const std::string& name(Verdict v) {
  static const auto words = words_of<Verdict, 7>();
  return words.at(static_cast<size_t>(v));
}

const std::string& name(CheckStatus s) {
  static const auto words = words_of<CheckStatus, 3>();
  return words.at(static_cast<size_t>(s));
}

const std::string& name(RunStatus s) {
  static const auto words = words_of<RunStatus, 10>();
  return words.at(static_cast<size_t>(s));
}

namespace {
template <class E, size_t N>
std::optional<E> named(std::string_view word, const std::array<std::string, N>& words) {
  for (size_t i = 0; i < N; ++i)
    if (words[i] == word) return static_cast<E>(i);
  return std::nullopt;
}
}  // namespace

std::optional<Verdict> verdict_named(std::string_view word) {
  static const auto words = words_of<Verdict, 7>();
  return named<Verdict>(word, words);
}

std::optional<RunStatus> run_status_named(std::string_view word) {
  static const auto words = words_of<RunStatus, 10>();
  return named<RunStatus>(word, words);
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
  return r.verdict == Verdict::RuntimeError && r.run.status == RunStatus::Exception &&
         std::any_of(r.checks.begin(), r.checks.end(),
                     [](const CheckResult& c) { return c.status != CheckStatus::NotRun; });
}

std::string limit_hit(RunStatus s) {
  switch (s) {
    case RunStatus::Timeout: return "wall_time";
    case RunStatus::CpuLimit: return "cpu_time";
    case RunStatus::MemoryLimit: return "memory";
    case RunStatus::OutputLimit: return "output";
    default: return "";
  }
}

// Field order is fixed here, so the same result always prints the same bytes.
json to_json(const Result& r) {
  json j;
  j["report_version"] = 1;
  j["exercise"] = r.exercise;
  j["title"] = r.title;
  j["submission"] = {{"file", r.submission}, {"sha256", r.submission_sha256}};
  if (r.variant > 0) j["submission"]["variant"] = {{"number", r.variant}, {"given", r.given}};
  j["verdict"] = name(r.verdict);
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
    cj["status"] = name(c.status);
    cj["visibility"] = c.hidden ? "hidden" : "visible";
    // A hidden check tells only that it passed or failed.
    cj["expected"] = c.hidden ? json(nullptr) : c.expected;
    cj["found"] = c.hidden ? json(nullptr) : c.found;
    cj["message"] = c.hidden ? "" : c.message;
    cj["hint"] = c.hidden || c.status == CheckStatus::Passed ? "" : c.hint;
    checks.push_back(cj);
  }
  j["checks"] = checks;
  json hints = json::array();
  for (const auto& h : r.compile.hints) hints.push_back({{"line", h.line}, {"hint", h.hint}});
  j["compile"] = {{"ok", r.compile.ok}, {"cached", r.compile.cached}, {"seconds", r.compile.seconds},
                  {"diagnostics", r.compile.diagnostics}, {"hints", hints}};
  j["run"] = {{"status", name(r.run.status)},
              {"message", r.run.message},
              {"exit_code", r.run.exit_code},
              {"signal", r.run.signal},
              {"timed_out", r.run.status == RunStatus::Timeout || r.run.status == RunStatus::CpuLimit},
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
  if (r.run.computation.recorded) {
    const auto& c = r.run.computation;
    j["run"]["computation"] = {{"replayed", c.replayed},
                               {"mismatches", c.mismatches},
                               {"unverified", c.unverified},
                               {"failure", c.failure.empty() ? json(nullptr) : json(c.failure)},
                               {"note", c.note.empty() ? json(nullptr) : json(c.note)}};
  }
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

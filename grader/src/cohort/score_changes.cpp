#include "cohort/score_changes.h"

#include <filesystem>

#include "cohort/class_files.h"
#include "common/files.h"

namespace grader {
namespace fs = std::filesystem;

namespace {
constexpr const char* kPartsFile = ".parts";
}  // namespace

std::optional<Before> read_before(const std::string& dir) {
  const json r = read_json_or_null(fs::path(dir) / "report.json");
  if (!r.is_object()) return std::nullopt;
  const reports::ClassEntry e = reports::entry_from_report(r, "");
  Before b{e.score, reports::gradebook_status(&e), {}};
  const json p = read_json_or_null(fs::path(dir) / kPartsFile);
  if (p.is_array())
    for (const json& x : p)
      if (x.is_array() && x.size() == 2 && x[0].is_string() && x[1].is_string())
        b.parts.emplace_back(x[0].get<std::string>(), x[1].get<std::string>());
  return b;
}

std::string write_parts(const std::string& dir, const GradeParts& parts) {
  json j = json::array();
  for (const auto& [part, sha] : parts) j.push_back({part, sha});
  return write_file_atomic((fs::path(dir) / kPartsFile).string(), j.dump() + "\n");
}

namespace {

// The parts that differ; an earlier run that kept no parts says nothing.
std::vector<std::string> differing(const GradeParts& was, const GradeParts& is) {
  std::vector<std::string> why;
  for (const auto& [part, sha] : is)
    for (const auto& [old_part, old_sha] : was)
      if (old_part == part && old_sha != sha) why.push_back(part);
  return why;
}

}  // namespace

std::vector<reports::ScoreChange> score_changes(
    const std::map<std::pair<std::string, std::string>, Before>& before,
    const std::map<std::pair<std::string, std::string>, GradeParts>& parts_now, const reports::ClassResults& now,
    bool regraded) {
  std::vector<reports::ScoreChange> out;
  for (const auto& [k, b] : before) {
    const reports::ClassEntry* x = now.find(k.first, k.second);
    reports::ScoreChange c{k.first, k.second, b.score, std::nullopt, b.status, "", {}};
    if (!x) {
      c.why = {"gone"};
    } else {
      if (x->score == b.score && reports::gradebook_status(x) == b.status) continue;
      c.after = x->score, c.after_status = reports::gradebook_status(x);
      const auto p = parts_now.find(k);
      if (p != parts_now.end()) c.why = differing(b.parts, p->second);
      if (c.why.empty()) c.why = {b.parts.empty() ? "unknown" : regraded ? "regrade" : "unknown"};
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace grader

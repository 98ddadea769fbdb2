// `grade merge`: the output folders of sharded `grade batch` runs as one.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "batch.h"
#include "class_files.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

// An option's key in batch.json as its flag is spelled ("lms_assignment" -> lms-assignment).
std::string flag_name(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

}  // namespace

int merge_batches(const std::vector<std::string>& inputs, const std::string& out, bool allow_partial, std::ostream& log) {
  std::set<std::string> students;
  std::map<std::string, reports::ClassExercise> exercises;
  std::vector<reports::IntakeNote> intake;
  std::map<std::string, reports::Identity> identities;
  std::error_code ec;
  fs::create_directories(fs::path(out) / "students", ec);
  if (ec) throw std::runtime_error("cannot create " + out + ": " + ec.message());
  // Which shards the inputs hold: all of 1..N, each once, unless the
  // instructor asked for a partial merge.
  int shard_count = 0;
  std::set<int> held;
  std::vector<json> manifests;
  for (const auto& in : inputs) {
    if (fs::equivalent(in, out, ec)) throw std::invalid_argument("merge into a folder that is not one of its inputs");
    json m = read_json_or_null(fs::path(in) / "batch.json");
    if (!m.is_object() || !m.contains("students") || !m.contains("exercises"))
      throw std::invalid_argument(in + " is not the output of `grade batch` (it has no readable batch.json)");
    const int n = m.value("shard_count", 1);
    if (shard_count && n != shard_count)
      throw std::invalid_argument(in + " was sharded into " + std::to_string(n) + ", another input into " +
                                  std::to_string(shard_count) + ": merge the shards of one run");
    shard_count = n;
    if (!manifests.empty() && m.value("options", json::object()) != manifests.front().value("options", json::object())) {
      const json a = manifests.front().value("options", json::object()), b = m.value("options", json::object());
      std::string diff;
      for (const auto& [k, v] : a.items())
        if (b.value(k, json()) != v) diff += (diff.empty() ? "" : ", ") + (k == "roster" ? std::string("--roster (another file)") : "--" + flag_name(k));
      throw std::invalid_argument(in + " was graded with other options than " + inputs.front() + " (" +
                                  (diff.empty() ? std::string("another version of grade") : diff) +
                                  "): merge the shards of one `grade batch` command");
    }
    for (const auto& k : m.value("shards", json::array({1})))
      if (!held.insert(k.get<int>()).second)
        throw std::invalid_argument("shard " + std::to_string(k.get<int>()) + " of " + std::to_string(n) +
                                    " is in two of the folders (" + in + " is one)");
    manifests.push_back(std::move(m));
  }
  std::vector<int> missing;
  for (int k = 1; k <= shard_count; ++k)
    if (!held.count(k)) missing.push_back(k);
  if (!missing.empty() && !allow_partial) {
    std::string list;
    for (int k : missing) list += (list.empty() ? "" : ", ") + std::to_string(k);
    throw std::invalid_argument("shard" + std::string(missing.size() > 1 ? "s " : " ") + list + " of " +
                                std::to_string(shard_count) + " missing: their students would be left out of the "
                                "gradebook. Merge their folders too, or pass --allow-partial to merge without them");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    const json& m = manifests[i];
    if (m.contains("intake") && m["intake"].is_array())
      for (const auto& n : m["intake"])
        intake.push_back({n.value("entry", ""), n.value("reason", ""), n.value("refused", true)});
    const json ids = m.value("identities", json::object());
    for (const auto& [st, i] : ids.items()) identities[st] = identity_from(i);
    for (const auto& e : m["exercises"])
      exercises[e.value("id", "")] = {e.value("id", ""), e.value("title", ""), e.value("max_score", 0.0)};
    for (const auto& s : m["students"]) {
      const std::string name = s.get<std::string>();
      if (!students.insert(name).second)
        throw std::invalid_argument("student \"" + name + "\" is in two of the folders: were they sharded the same way?");
      const fs::path from = fs::path(in) / "students" / name, to = fs::path(out) / "students" / name;
      fs::remove_all(to, ec);
      fs::copy(from, to, fs::copy_options::recursive, ec);
      if (ec) throw std::runtime_error("cannot copy " + from.string() + ": " + ec.message());
    }
  }
  std::vector<reports::ClassExercise> ex;
  for (const auto& [id, e] : exercises) ex.push_back(e);
  std::sort(ex.begin(), ex.end(), [](const auto& a, const auto& b) { return numeric_less(a.id, b.id); });
  reports::ClassResults c = collect(out, {students.begin(), students.end()}, ex);
  std::sort(intake.begin(), intake.end(),
            [](const auto& a, const auto& b) { return std::tie(a.entry, a.reason) < std::tie(b.entry, b.reason); });
  intake.erase(std::unique(intake.begin(), intake.end(),
                           [](const auto& a, const auto& b) { return a.entry == b.entry && a.reason == b.reason; }),
               intake.end());
  c.intake = intake;
  c.identities = identities;
  // The same in every shard: their options were checked above.
  const json& first = manifests.front();
  const json options = first.value("options", json::object());
  c.layout = first.value("layout", "");
  c.csv_bom = options.value("bom", false);
  c.lms_assignment = options.value("lms_assignment", std::string("gradlab"));
  // A complete merge is the whole class, as one unsharded run would write
  // it; a partial one keeps saying which shards it holds and which it lacks.
  c.shards = missing.empty() ? 1 : shard_count;
  c.missing_shards = missing;
  const std::string err =
      write_class_files(out, c, missing.empty() ? std::vector<int>{1} : std::vector<int>(held.begin(), held.end()),
                        options);
  if (!err.empty()) throw std::runtime_error(err);
  report_nothing_handed_in(c, log);
  if (!missing.empty())
    log << "grade merge: warning: " << missing.size() << " of " << shard_count
        << " shards missing (--allow-partial): summary.html and summary.json say which\n";
  log << "grade merge: " << students.size() << " students from " << inputs.size() << " folders\ngradebook: "
      << (fs::path(out) / "gradebook.csv").string() << "\nsummary:   " << (fs::path(out) / "summary.html").string()
      << "\n";
  return 0;
}

}  // namespace grader

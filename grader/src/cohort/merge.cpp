// `grade merge`: the output folders of sharded `grade batch` runs as one.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "cohort/batch.h"
#include "cohort/class_files.h"
#include "common/exit_codes.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

// An option's key in batch.json as its flag is spelled ("lms_assignment" -> lms-assignment).
std::string flag_name(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// The inputs' manifests, checked to be shards of one `grade batch` command:
// the same count and options, no shard twice, none missing unless allowed.
struct Shards {
  int count = 0;
  std::set<int> held;
  std::vector<int> missing;
  std::vector<json> manifests;  // in the inputs' order
};

void check_same_options(const json& first, const json& m, const std::string& in, const std::string& first_in) {
  const json a = first.value("options", json::object()), b = m.value("options", json::object());
  if (a == b) return;
  std::string diff;
  for (const auto& [k, v] : a.items())
    if (b.value(k, json()) != v)
      diff += (diff.empty() ? "" : ", ") + (k == "roster" ? std::string("--roster (another file)") : "--" + flag_name(k));
  throw std::invalid_argument(in + " was graded with other options than " + first_in + " (" +
                              (diff.empty() ? std::string("another version of grade") : diff) +
                              "): merge the shards of one `grade batch` command");
}

Shards read_shards(const std::vector<std::string>& inputs, const std::string& out, bool allow_partial) {
  Shards s;
  std::error_code ec;
  for (const auto& in : inputs) {
    if (fs::equivalent(in, out, ec)) throw std::invalid_argument("merge into a folder that is not one of its inputs");
    json m = read_json_or_null(fs::path(in) / "batch.json");
    if (!m.is_object() || !m.contains("students") || !m.contains("exercises"))
      throw std::invalid_argument(in + " is not the output of `grade batch` (it has no readable batch.json)");
    const int n = m.value("shard_count", 1);
    if (s.count && n != s.count)
      throw std::invalid_argument(in + " was sharded into " + std::to_string(n) + ", another input into " +
                                  std::to_string(s.count) + ": merge the shards of one run");
    s.count = n;
    if (!s.manifests.empty()) check_same_options(s.manifests.front(), m, in, inputs.front());
    for (const auto& k : m.value("shards", json::array({1})))
      if (!s.held.insert(k.get<int>()).second)
        throw std::invalid_argument("shard " + std::to_string(k.get<int>()) + " of " + std::to_string(n) +
                                    " is in two of the folders (" + in + " is one)");
    s.manifests.push_back(std::move(m));
  }
  for (int k = 1; k <= s.count; ++k)
    if (!s.held.count(k)) s.missing.push_back(k);
  if (!s.missing.empty() && !allow_partial) {
    std::string list;
    for (int k : s.missing) list += (list.empty() ? "" : ", ") + std::to_string(k);
    throw std::invalid_argument("shard" + std::string(s.missing.size() > 1 ? "s " : " ") + list + " of " +
                                std::to_string(s.count) + " missing: their students would be left out of the "
                                "gradebook. Merge their folders too, or pass --allow-partial to merge without them");
  }
  return s;
}

// What the shards hold together: their students' folders copied into `out`,
// their intake notes, identities and exercises.
struct Gathered {
  std::set<std::string> students;
  std::map<std::string, reports::ClassExercise> exercises;
  std::vector<reports::IntakeNote> intake;
  std::map<std::string, reports::Identity> identities;
  std::set<std::pair<std::string, std::string>> late;
  std::map<std::pair<std::string, std::string>, std::string> lms_entries;
  std::map<std::pair<std::string, std::string>, std::string> submitted;
};

Gathered gather(const std::vector<std::string>& inputs, const Shards& shards, const std::string& out) {
  Gathered g;
  std::error_code ec;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    const json& m = shards.manifests[i];
    if (m.contains("intake") && m["intake"].is_array())
      for (const auto& n : m["intake"])
        g.intake.push_back({n.value("entry", ""), n.value("reason", ""), n.value("refused", true)});
    const json ids = m.value("identities", json::object());
    for (const auto& [st, id] : ids.items()) g.identities[st] = identity_from(id);
    for (const json& l : m.value("late", json::array()))
      if (l.is_array() && l.size() == 2 && l[0].is_string() && l[1].is_string())
        g.late.insert({l[0].get<std::string>(), l[1].get<std::string>()});
    for (const json& l : m.value("lms_entries", json::array()))
      if (l.is_array() && l.size() == 3 && l[0].is_string() && l[1].is_string() && l[2].is_string())
        g.lms_entries[{l[0].get<std::string>(), l[1].get<std::string>()}] = l[2].get<std::string>();
    for (const json& l : m.value("submitted", json::array()))
      if (l.is_array() && l.size() == 3 && l[0].is_string() && l[1].is_string() && l[2].is_string())
        g.submitted[{l[0].get<std::string>(), l[1].get<std::string>()}] = l[2].get<std::string>();
    for (const auto& e : m["exercises"])
      g.exercises[e.value("id", "")] = {e.value("id", ""), e.value("title", ""), e.value("max_score", 0.0)};
    for (const auto& s : m["students"]) {
      const std::string name = s.get<std::string>();
      if (!g.students.insert(name).second)
        throw std::invalid_argument("student \"" + name + "\" is in two of the folders: were they sharded the same way?");
      const fs::path from = fs::path(in) / "students" / name, to = fs::path(out) / "students" / name;
      fs::remove_all(to, ec);
      fs::copy(from, to, fs::copy_options::recursive, ec);
      if (ec) throw std::runtime_error("cannot copy " + from.string() + ": " + ec.message());
    }
  }
  std::sort(g.intake.begin(), g.intake.end(),
            [](const auto& a, const auto& b) { return std::tie(a.entry, a.reason) < std::tie(b.entry, b.reason); });
  g.intake.erase(std::unique(g.intake.begin(), g.intake.end(),
                             [](const auto& a, const auto& b) { return a.entry == b.entry && a.reason == b.reason; }),
                 g.intake.end());
  return g;
}

}  // namespace

int merge_batches(const std::vector<std::string>& inputs, const std::string& out, bool allow_partial, std::ostream& log) {
  std::error_code ec;
  fs::create_directories(fs::path(out) / "students", ec);
  if (ec) throw std::runtime_error("cannot create " + out + ": " + ec.message());
  const Shards shards = read_shards(inputs, out, allow_partial);
  Gathered g = gather(inputs, shards, out);
  std::vector<reports::ClassExercise> ex;
  for (const auto& [id, e] : g.exercises) ex.push_back(e);
  std::sort(ex.begin(), ex.end(), [](const auto& a, const auto& b) { return numeric_less(a.id, b.id); });
  reports::ClassResults c = collect(out, {g.students.begin(), g.students.end()}, ex);
  c.intake = std::move(g.intake);
  c.identities = std::move(g.identities);
  c.late = std::move(g.late);
  c.lms_entries = std::move(g.lms_entries);
  c.submitted = std::move(g.submitted);
  // The same in every shard: their options were checked above.
  const json& first = shards.manifests.front();
  const json options = first.value("options", json::object());
  c.layout = first.value("layout", "");
  c.csv_bom = options.value("bom", false);
  c.lms_assignment = options.value("lms_assignment", std::string("gradlab"));
  if (const json p = first.value("lms_points", json()); p.is_object())
    c.lms_points = reports::ClassResults::LmsPoints{p.value("column", ""), p.value("points_possible", 0.0),
                                                    p.value("accepted", false)};
  // A complete merge is the whole class, as one unsharded run would write
  // it; a partial one keeps saying which shards it holds and which it lacks.
  const bool whole = shards.missing.empty();
  c.shards = whole ? 1 : shards.count;
  c.missing_shards = shards.missing;
  const std::string err = write_class_files(
      out, c, whole ? std::vector<int>{1} : std::vector<int>(shards.held.begin(), shards.held.end()), options);
  if (!err.empty()) throw std::runtime_error(err);
  report_nothing_handed_in(c, log);
  report_points(c, log);
  if (!whole)
    log << "grade merge: warning: " << shards.missing.size() << " of " << shards.count
        << " shards missing (--allow-partial): summary.html and summary.json say which\n";
  log << "grade merge: " << g.students.size() << " students from " << inputs.size() << " folders\ngradebook: "
      << (fs::path(out) / "gradebook.csv").string() << "\nsummary:   " << (fs::path(out) / "summary.html").string()
      << "\n";
  return c.canvas_refused() ? kExitFailed : 0;
}

}  // namespace grader

#include "cohort/similarity.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "course/course.h"
#include "common/files.h"
#include "reports/escape.h"
#include "fence/sandbox.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSim = "/usr/bin/sim_c++";

// Runs sim_c++ on `files` (names in `work`) in the fence; its report.
std::string run_sim(const std::string& work, const std::vector<std::string>& files, int threshold, bool isolate,
                    std::string& error) {
  SandboxSpec spec;
  // -p percentages, -e each file against each, -s not against itself, -t the threshold.
  spec.tool = {kSim, "-p", "-e", "-s", "-t" + std::to_string(threshold)};
  spec.tool.insert(spec.tool.end(), files.begin(), files.end());
  spec.view.writable = work;
  spec.view.chdir = work;
  spec.view.tmpfs = {{"/tmp", 64L << 20}};
  spec.limits.cpu_seconds = 60;
  spec.limits.wall_seconds = 120;
  spec.limits.memory_mb = 2048;
  spec.limits.output_kb = 16 << 10;
  spec.limits.processes = 4;
  spec.isolate = isolate;
  SandboxOutcome o = run_sandboxed(spec);
  if (!o.failure.empty()) error = "sim_c++ could not run in the fence: " + o.failure;
  else if (o.exit_code != 0 || o.signal) error = "sim_c++ failed (exit " + std::to_string(o.exit_code) + "): " + o.out.substr(0, 500);
  return o.out;
}

}  // namespace

std::string without_given(const std::string& text, const std::string& given_text) {
  std::set<std::string> given;
  std::istringstream s(given_text);
  for (std::string l; std::getline(s, l);) given.insert(reports::without_blanks(l));
  std::string out;
  std::istringstream t(text);
  for (std::string l; std::getline(t, l);)
    if (!given.count(reports::without_blanks(l))) out += l + "\n";
  return out;
}

std::vector<reports::SimilarPair> similar_pairs(const std::map<std::string, std::vector<Submitted>>& by_exercise,
                                                const std::map<std::string, std::string>& given, int threshold,
                                                bool isolate, std::string& error) {
  std::vector<reports::SimilarPair> out;
  if (!fs::exists(kSim)) {
    error = "sim_c++ is not installed (Debian's similarity-tester: apt-get install similarity-tester)";
    return out;
  }
  static const std::regex line(R"(^(s[0-9]+)\.cpp consists for ([0-9]+) % of (s[0-9]+)\.cpp material)");
  for (const auto& [exercise, subs] : by_exercise) {
    if (subs.size() < 2) continue;
    const std::string work = make_work_folder(error);
    if (work.empty()) return out;
    // Files are named by index: students' names never reach a command line.
    std::vector<std::string> files;
    for (size_t i = 0; i < subs.size(); ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "s%05zu.cpp", i);
      files.push_back(name);
      const auto g = given.find(exercise);
      write_file_atomic(work + "/" + name, without_given(subs[i].text, g == given.end() ? "" : g->second));
    }
    const std::string report = run_sim(work, files, threshold, isolate, error);
    std::error_code ec;
    fs::remove_all(work, ec);
    if (!error.empty()) return out;
    std::map<std::pair<std::string, std::string>, int> best;
    std::istringstream in(report);
    for (std::string l; std::getline(in, l);) {
      std::smatch m;
      if (!std::regex_search(l, m, line)) continue;
      const size_t i = std::stoul(m[1].str().substr(1)), j = std::stoul(m[3].str().substr(1));
      if (i >= subs.size() || j >= subs.size() || i == j) continue;
      std::string a = subs[i].student, b = subs[j].student;
      if (b < a) std::swap(a, b);
      int& p = best[{a, b}];
      p = std::max(p, std::stoi(m[2].str()));
    }
    for (const auto& [ab, p] : best)
      if (p >= threshold) out.push_back({exercise, ab.first, ab.second, p, ""});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    if (x.exercise != y.exercise) return numeric_less(x.exercise, y.exercise);
    return std::tie(y.percent, x.a, x.b) < std::tie(x.percent, y.a, y.b);  // most similar first
  });
  return out;
}

}  // namespace grader

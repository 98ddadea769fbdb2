// Compares the facts printed by the engine build and the LibTorch build of
// facts.cpp: the same labels in the same order, strings and flags equal,
// numbers equal within float32 round-off. Prints every difference; exit 1 if any.
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {
std::vector<json> read_lines(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  std::vector<json> r;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) r.push_back(json::parse(line));
  return r;
}

bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return std::abs(x - y) <= 1e-6 + 1e-5 * std::abs(y);
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items())
      if (!b.contains(k) || !same(v, b[k])) return false;
    return true;
  }
  return a == b;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " ENGINE_FACTS LIBTORCH_FACTS\n";
    return 2;
  }
  auto engine = read_lines(argv[1]), libtorch = read_lines(argv[2]);
  // A program the reference itself crashed on (the fuzzer's {"label": "P",
  // "crashed": ...}, PyTorch 1.13 bugs) has no facts to compare: its lines
  // "P/..." leave both sides, and the count is said.
  std::vector<std::string> crashed;
  for (const auto& l : libtorch)
    if (l.contains("crashed")) crashed.push_back(l.value("label", "") + "/");
  auto keep = [&](std::vector<json>& lines) {
    std::vector<json> kept;
    for (auto& j : lines) {
      const std::string label = j.value("label", "");
      bool gone = &lines == &libtorch && j.contains("crashed");  // the engine's own crash is a difference
      for (const auto& p : crashed) gone |= label.rfind(p, 0) == 0;
      if (!gone) kept.push_back(std::move(j));
    }
    lines = std::move(kept);
  };
  keep(engine);
  keep(libtorch);
  if (!crashed.empty())
    std::cout << crashed.size() << " program(s) left out: the reference crashed on them (see its facts' \"crashed\")\n";
  int differences = 0;
  if (engine.size() != libtorch.size()) {
    std::cout << "fact count differs: engine " << engine.size() << ", LibTorch " << libtorch.size() << "\n";
    ++differences;
  }
  for (size_t i = 0; i < std::min(engine.size(), libtorch.size()); ++i) {
    const json& e = engine[i];
    const json& l = libtorch[i];
    if (e.value("label", "") != l.value("label", "")) {
      std::cout << "fact " << i << ": label " << e.value("label", "") << " vs " << l.value("label", "") << "\n";
      ++differences;
      break;
    }
    for (const auto& [k, v] : l.items()) {
      if (!e.contains(k) || !same(e[k], v)) {
        std::cout << l["label"].get<std::string>() << "." << k << ": engine " << (e.contains(k) ? e[k].dump() : "<absent>")
                  << "\n    LibTorch " << v.dump() << "\n";
        ++differences;
      }
    }
    for (const auto& [k, v] : e.items())
      if (!l.contains(k)) {
        std::cout << e["label"].get<std::string>() << "." << k << ": only the engine has it: " << v.dump() << "\n";
        ++differences;
      }
  }
  std::cout << (differences ? "DIFFERENT: " : "same: ") << libtorch.size() << " facts, " << differences
            << " differences\n";
  return differences ? 1 : 0;
}

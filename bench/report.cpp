// Reads the JSON lines of bench_engine and bench_libtorch from one run of
// bench/run and prints, per workload, both medians and the ratio
// LibTorch/engine (how many times faster the engine is), with the issue's
// target next to it. bench/run alternates the two binaries for several
// rounds, so a file may hold a workload more than once: each side's figure is
// the median over its rounds, which keeps a burst of load on a shared machine
// from landing on one side only.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
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
    if (!line.empty() && line[0] == '{') r.push_back(json::parse(line));
  return r;
}
// One line per workload, in first-seen order, with median_s and gflops the
// medians over the rounds that measured it.
std::vector<json> merge_rounds(const std::vector<json>& lines) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<json>> seen;
  for (const auto& j : lines) {
    const std::string name = j.at("workload");
    if (!seen.count(name)) order.push_back(name);
    seen[name].push_back(j);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  std::vector<json> r;
  for (const auto& name : order) {
    const auto& runs = seen[name];
    json m = runs.front();
    std::vector<double> t, g;
    for (const auto& j : runs) {
      t.push_back(j.at("median_s"));
      if (j.contains("gflops")) g.push_back(j["gflops"]);
    }
    m["median_s"] = median(t);
    if (!g.empty()) m["gflops"] = median(g);
    m["rounds"] = runs.size();
    r.push_back(m);
  }
  return r;
}
std::string human(double s) {
  char b[32];
  if (s < 1e-3) std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  else std::snprintf(b, sizeof b, "%.2f ms", s * 1e3);
  return b;
}
}  // namespace

// bench/run --tape-cost: the engine as built (its tape switched off, as in
// every run but a graded one) against the same engine with the tape compiled
// out; the bound is 5 %.
int tape_cost(const char* with_path, const char* without_path) {
  std::map<std::string, json> without;
  for (const auto& j : merge_rounds(read_lines(without_path))) without[j["workload"]] = j;
  std::printf("%-26s %12s %12s %9s\n", "workload", "tape off", "no tape", "cost");
  for (const auto& w : merge_rounds(read_lines(with_path))) {
    const std::string name = w["workload"];
    if (!without.count(name)) continue;
    const double a = w["median_s"], b = without[name]["median_s"];
    std::printf("%-26s %12s %12s %+8.1f%%\n", name.c_str(), human(a).c_str(), human(b).c_str(), 100 * (a - b) / b);
  }
  std::printf("(cost: how much longer an iteration takes with the tape built in but off; bound: 5%%)\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--tape-cost") {
    try {
      return tape_cost(argv[2], argv[3]);
    } catch (const std::exception& ex) {
      std::cerr << "bench_report: " << ex.what() << "\n";
      return 1;
    }
  }
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: " << argv[0] << " ENGINE.jsonl [LIBTORCH.jsonl]  |  --tape-cost WITH.jsonl WITHOUT.jsonl\n";
    return 2;
  }
  try {
    const auto engine = merge_rounds(read_lines(argv[1]));
    std::map<std::string, json> lt;
    if (argc == 3)
      for (const auto& j : merge_rounds(read_lines(argv[2]))) lt[j["workload"]] = j;
    // Targets from the engine issue: tiny graphs 20x faster, matmul/MLP no slower.
    const std::map<std::string, double> target = {
        {"exercise3", 20},        {"rnn_cell", 20},         {"chain_10000", 20},
        {"chain_10000_affine", 20}, {"mlp_step", 1},        {"mlp_step_input_t", 1},
        {"mlp_step_handwritten_loss", 1}, {"matmul_1024", 1}, {"matmul_1024_sum", 1},
        {"matmul_1024_grad_t", 1}, {"matmul_1024_grad_sliced", 1}};
    std::printf("%-26s %12s %12s %9s %8s\n", "workload", "engine", "LibTorch", "speedup", "target");
    double sgemm_gflops = 0, cublas_gflops = 0, gpu_matmul_gflops = 0;
    std::map<std::string, double> matmul_gflops;  // every CPU matmul_1024 spelling
    for (const auto& e : engine) {
      const std::string name = e["workload"];
      if (name == "openblas_sgemm_1024x3") sgemm_gflops = e.value("gflops", 0.0);
      if (name.rfind("matmul_1024", 0) == 0) matmul_gflops[name] = e.value("gflops", 0.0);
      if (name == "cublas_sgemm_4096x3") cublas_gflops = e.value("gflops", 0.0);
      if (name == "matmul_4096") gpu_matmul_gflops = e.value("gflops", 0.0);
      const double es = e["median_s"];
      std::string lts = "-", ratio = "-", tgt = "-";
      if (lt.count(name)) {
        const double ls = lt[name]["median_s"];
        lts = human(ls);
        char b[32];
        std::snprintf(b, sizeof b, "%.2fx", ls / es);
        ratio = b;
      }
      if (target.count(name)) {
        char b[32];
        std::snprintf(b, sizeof b, ">=%gx", target.at(name));
        tgt = b;
      }
      // Where each side ran, when it was not the CPU on both (the GPU workloads).
      const std::string where = e.value("device", "cpu") == "cpu" ? "" : " (" + e.value("device", "") + " vs " +
                                (lt.count(name) ? lt[name].value("device", "cpu") : "-") + ")";
      std::printf("%-26s %12s %12s %9s %8s%s\n", name.c_str(), human(es).c_str(), lts.c_str(), ratio.c_str(),
                  tgt.c_str(), where.c_str());
    }
    for (const auto& [name, gflops] : matmul_gflops)
      if (sgemm_gflops > 0 && gflops > 0)
        std::printf("%s forward+backward runs at %.0f%% of OpenBLAS's own sgemm rate (target >= 90%%)\n",
                    name.c_str(), 100 * gflops / sgemm_gflops);
    if (cublas_gflops > 0 && gpu_matmul_gflops > 0)
      std::printf("matmul_4096 forward+backward on the GPU: %.0f GFLOP/s, %.0f%% of cuBLAS's own sgemm rate (%.0f GFLOP/s)\n",
                  gpu_matmul_gflops, 100 * gpu_matmul_gflops / cublas_gflops, cublas_gflops);
    if (!engine.empty())
      std::printf("(each figure: the median over %d alternating round(s) of both builds)\n",
                  engine.front()["rounds"].get<int>());
    if (argc == 2) std::printf("(LibTorch not measured: install Debian's libtorch-dev for the ratios)\n");
  } catch (const std::exception& ex) {
    std::cerr << "bench_report: " << ex.what() << "\n";
    return 1;
  }
  return 0;
}

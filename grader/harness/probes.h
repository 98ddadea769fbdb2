// The probes that run the program's own functions (the ones an exercise hands
// the lab with lab.function) on inputs the grader chooses after the exercise
// has run: numbers, shapes and graphs the statement never showed. A function
// right only at the statement's values, or a walker right only on its graph,
// shows here. Each case runs guarded: a crash, a stack overflow or a loop in
// the program's function ends that case, with what happened, and the probes
// and the result go on (grader/SECURITY.md: a guard, not a wall; the fence
// and its limits still stand behind it).
//
// Header-only, like facts_of.h: the harness is compiled against LibTorch too,
// as one file.
#ifndef GRADLAB_PROBES_H
#define GRADLAB_PROBES_H

#ifdef GRADLAB_ENGINE
#include <gradlab/node_count.h>
#endif
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>
#include <torch/torch.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <stdio_ext.h>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "facts_of.h"
#include "random_graphs.h"

namespace lab::probes {

using json = nlohmann::ordered_json;
using TensorFunction = std::function<torch::Tensor(const torch::Tensor&)>;
using Walker = std::function<void(const std::shared_ptr<torch::autograd::Node>&, int)>;

namespace detail {

using facts::error_text;
using facts::number;
using facts::values_of;

inline constexpr int kCaseSeconds = 1;
inline constexpr size_t kMaxOutput = 16 * 1024;

// ---- one case, guarded -------------------------------------------------

inline sigjmp_buf g_escape;
inline volatile sig_atomic_t g_signal = 0;

inline void escape(int sig) {
  g_signal = sig;
  siglongjmp(g_escape, 1);
}

// Runs `body`; "" when it finished, else what stopped it. A fault (a null
// node dereferenced, a recursion that never ends) or a case over its time
// jumps back here on a stack of its own; what the case had built is left
// behind, which is fine in a process about to send its result and exit.
inline std::string guarded(const std::function<void()>& body) {
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{}, old_ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, &old_ss);
  struct sigaction on{};
  on.sa_handler = escape;
  on.sa_flags = SA_ONSTACK;
  sigemptyset(&on.sa_mask);
  const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM, SIGXFSZ};  // SIGXFSZ: output past the run's limit
  constexpr int kCaught = sizeof caught / sizeof caught[0];
  struct sigaction old[kCaught];
  for (int i = 0; i < kCaught; ++i) sigaction(caught[i], &on, &old[i]);
  itimerval limit{};
  limit.it_value.tv_sec = kCaseSeconds;
  setitimer(ITIMER_REAL, &limit, nullptr);
  std::string why;
  if (sigsetjmp(g_escape, 1) == 0) {
    try {
      body();
    } catch (const std::exception& e) {
      why = "raised: " + error_text(e);
    } catch (...) {
      why = "threw something that is not a std::exception";
    }
  } else {
    why = g_signal == SIGALRM   ? "did not finish within " + std::to_string(kCaseSeconds) + " s"
          : g_signal == SIGXFSZ ? std::string("printed more than the run's output limit")
                                : std::string("crashed (") + strsignal(g_signal) + ")";
  }
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  for (int i = 0; i < kCaught; ++i) sigaction(caught[i], &old[i], nullptr);
  sigaltstack(&old_ss, nullptr);
  return why;
}

// Where a probe captures what a call prints: the memfd the grader's request
// came in, emptied once read (harness.cpp). A memfd, not a file: the fallback
// fence (Landlock) lets a run write no folder it does not own, and a memfd is
// in none. The run may make no memfd of its own (its filter refuses
// memfd_create: one kept alive by a mapped page is memory no limit sees), so
// the harness makes none either. -1: none (a run without the grader's request).
inline int& capture_sink() {
  static int fd = -1;
  return fd;
}

// What `body` printed on fd 1 (std::cout and printf), at most kMaxOutput
// bytes, in `text`; the program's own output is not touched.
inline std::string captured(const std::function<void()>& body, std::string& text) {
  std::cout.flush();
  std::fflush(stdout);
  const int sink = capture_sink();
  if (sink < 0 || ftruncate(sink, 0) != 0 || lseek(sink, 0, SEEK_SET) != 0)
    return std::string("the grader could not capture what it printed (") +
           (sink < 0 ? "no capture file was given" : std::strerror(errno)) + ")";
  const int saved = dup(STDOUT_FILENO);
  if (saved < 0 || dup2(sink, STDOUT_FILENO) < 0) {
    if (saved >= 0) close(saved);
    return std::string("the grader could not capture what it printed (") + std::strerror(errno) + ")";
  }
  std::string why = guarded(body);
  // A case cut short may leave its output half-written in stdout's buffer:
  // dropped, not flushed into the capture past the run's file-size limit.
  if (!why.empty()) {
    __fpurge(stdout);
    std::cout.clear();
  }
  struct sigaction ignore{}, was{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &was);  // over the limit, a write fails instead
  std::cout.flush();
  std::fflush(stdout);
  sigaction(SIGXFSZ, &was, nullptr);
  dup2(saved, STDOUT_FILENO);
  close(saved);
  text.assign(kMaxOutput, '\0');
  const ssize_t n = pread(sink, text.data(), kMaxOutput, 0);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return why;
}

// ---- call: values and gradients on the grader's inputs -------------------

inline void flatten(const json& v, std::vector<double>& values, std::vector<int64_t>& shape, size_t depth) {
  if (!v.is_array()) {
    if (!v.is_number()) throw std::runtime_error("an input that is not a number");
    values.push_back(v.get<double>());
    return;
  }
  if (depth == shape.size()) shape.push_back(static_cast<int64_t>(v.size()));
  else if (shape[depth] != static_cast<int64_t>(v.size())) throw std::runtime_error("a ragged input");
  for (const auto& e : v) flatten(e, values, shape, depth + 1);
}

inline torch::Tensor tensor_of(const json& v) {
  std::vector<double> values;
  std::vector<int64_t> shape;
  flatten(v, values, shape, 0);
  return torch::tensor(values, torch::dtype(torch::kDouble)).reshape(shape).to(torch::kFloat);
}

inline json shape_of(const torch::Tensor& t) { return json(t.sizes().vec()); }

// The order the cases run in: a new one each run, from the kernel's random
// numbers, so that a function cannot answer them by counting its calls. The
// answers are kept in the rubric's order, so a report does not change with it.
inline std::vector<size_t> shuffled(size_t n) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  for (size_t i = n; i > 1; --i) {
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r = static_cast<uint32_t>(i * 2654435761u);
    std::swap(order[i - 1], order[r % i]);
  }
  return order;
}

}  // namespace detail

// torch.autograd.gradcheck: the analytical Jacobian against central
// differences, at a seeded double input of p["shape"].
namespace detail {
// New values in a function's result, written into its memory behind
// autograd's back (no version bump), before its backward runs: a backward
// that reads the output its forward saved (σ's y·(1 − y)) follows them; one
// that works from the input, or recomputes the forward, does not; nor does
// one that recovers the input from the output (logit) and then works from
// it: every second value lies past 1 and every third below 0, where the
// output has no input (a polynomial in the output, σ's y·(1 − y), does not
// care). Drawn from the seed by the harness's own generator (the same on
// gradlab's engine and on LibTorch, whose rand() draws otherwise); the result
// must be a contiguous float or double tensor (null otherwise: nothing was
// rewritten).
inline json rewrite_output(const torch::Tensor& y, int64_t seed) {
  if (!y.is_contiguous() || y.device() != torch::kCPU) return nullptr;
  graphs::Draw draw(static_cast<uint64_t>(seed) ^ 0x5eedu);
  std::vector<double> values(static_cast<size_t>(y.numel()));
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = 0.1 + 0.8 * static_cast<double>(draw.next() >> 11) * 0x1.0p-53;  // in (0.1, 0.9)
    values[i] = i % 3 == 2 ? -v : i % 2 == 1 ? 1 + v : v;
  }
  torch::Tensor fresh;
  {
    torch::NoGradGuard untracked;
    fresh = torch::tensor(values, torch::dtype(torch::kDouble)).to(y.scalar_type()).reshape(y.sizes()).contiguous();
  }
  if (y.scalar_type() == torch::kFloat)
    std::memcpy(y.data_ptr<float>(), fresh.data_ptr<float>(), sizeof(float) * static_cast<size_t>(y.numel()));
  else if (y.scalar_type() == torch::kDouble)
    std::memcpy(y.data_ptr<double>(), fresh.data_ptr<double>(), sizeof(double) * static_cast<size_t>(y.numel()));
  else
    return nullptr;
  return facts::values_of(fresh);
}

// The node that made a function's result (null for none): the same numbers
// from another computation (torch::sigmoid for the exercise's own Function)
// come from another node.
inline json node_name(const torch::Tensor& y) { return y.grad_fn() ? json(y.grad_fn()->name()) : json(nullptr); }
}  // namespace detail

inline json gradcheck(const TensorFunction& f, const json& p) {
  std::vector<int64_t> shape = p.value("shape", std::vector<int64_t>{3});
  const double eps = p.value("eps", 1e-6), atol = p.value("atol", 1e-5), rtol = p.value("rtol", 1e-3);
  torch::manual_seed(p.value("seed", 0));
  torch::Tensor x = torch::randn(shape, torch::dtype(torch::kDouble)).requires_grad_(true);
  torch::Tensor y = f(x);
  if (!y.defined()) return {{"ok", false}, {"error", "the function returned an undefined tensor"}};
  if (y.scalar_type() != torch::kDouble)
    return {{"ok", false}, {"error", "the function turned a double input into " + c10::str(y.scalar_type())}};
  const int64_t nx = x.numel(), ny = y.numel();
  // An empty output has an empty Jacobian, which every backward "matches".
  if (ny == 0 && nx > 0)
    return {{"ok", false}, {"error", "the function returned an empty tensor for an input of " + std::to_string(nx) + " numbers"}};
  std::vector<double> analytic(static_cast<size_t>(nx * ny), 0.0), numeric(analytic.size(), 0.0);
  for (int64_t j = 0; j < ny; ++j) {
    torch::Tensor gy = torch::zeros({ny}, torch::dtype(torch::kDouble).device(torch::kCPU));
    gy.data_ptr<double>()[j] = 1.0;
    auto g = torch::autograd::grad({y}, {x}, {gy.reshape(y.sizes()).to(y.device())}, /*retain_graph=*/true,
                                   /*create_graph=*/false, /*allow_unused=*/true);
    if (!g[0].defined()) continue;
    torch::Tensor gc = g[0].to(torch::kCPU, torch::kDouble).contiguous();
    for (int64_t i = 0; i < nx; ++i) analytic[static_cast<size_t>(i * ny + j)] = gc.data_ptr<double>()[i];
  }
  {
    torch::NoGradGuard finite_differences_untracked;  // the numerical side builds no graph
    torch::Tensor xv = x.detach().to(torch::kCPU).clone();
    double* xp = xv.data_ptr<double>();
    for (int64_t i = 0; i < nx; ++i) {
      const double keep = xp[i];
      xp[i] = keep + eps;
      torch::Tensor hi = f(xv.to(x.device())).to(torch::kCPU, torch::kDouble).contiguous();
      xp[i] = keep - eps;
      torch::Tensor lo = f(xv.to(x.device())).to(torch::kCPU, torch::kDouble).contiguous();
      xp[i] = keep;
      for (int64_t j = 0; j < ny; ++j)
        numeric[static_cast<size_t>(i * ny + j)] = (hi.data_ptr<double>()[j] - lo.data_ptr<double>()[j]) / (2 * eps);
    }
  }
  double worst = 0;
  bool ok = true;
  for (size_t k = 0; k < analytic.size(); ++k) {
    const double d = std::abs(analytic[k] - numeric[k]);
    worst = std::max(worst, d);
    if (!(d <= atol + rtol * std::abs(numeric[k]))) ok = false;
  }
  return {{"ok", ok}, {"max_abs_error", facts::number(worst)}, {"inputs", nx}, {"outputs", ny}, {"grad_fn", detail::node_name(y)}};
}

// f on each of p["inputs"] (nested lists of numbers: a tensor each, float,
// requiring grad), then the gradient of its output against a seeded random
// grad_output (not ones, which a backward that ignores it passes):
// {"cases": [{"input", "values", "shape", "grad_output", "grad"} or {"input", "error"}]}.
inline json call(const TensorFunction& f, const json& p) {
  const json& inputs = p.at("inputs");
  json cases = json(inputs.size(), json(nullptr));
  const int64_t seed = p.value("seed", 0);
  for (size_t k : detail::shuffled(inputs.size())) {
    const json& input = inputs[k];
    json c = {{"input", input}};
    torch::Tensor x = detail::tensor_of(input).requires_grad_(true);
    torch::manual_seed(static_cast<uint64_t>(seed + static_cast<int64_t>(k)));
    const std::string why = detail::guarded([&] {
#ifdef GRADLAB_ENGINE
      const uint64_t nodes_before = gradlab::autograd::nodes_made();
#endif
      torch::Tensor y = f(x);
      if (!y.defined()) throw std::runtime_error("the function returned an undefined tensor");
#ifdef GRADLAB_ENGINE
      // The autograd nodes the call made (its Function's, its input's
      // AccumulateGrad): a forward that built a graph of its own makes more.
      if (p.value("rewrite_output", false)) c["nodes"] = gradlab::autograd::nodes_made() - nodes_before;
#endif
      c["values"] = facts::values_of(y);
      c["shape"] = detail::shape_of(y);
      c["grad_fn"] = detail::node_name(y);
      if (!y.requires_grad()) {
        c["grad"] = nullptr;
        return;
      }
      if (p.value("rewrite_output", false)) c["rewritten"] = detail::rewrite_output(y, seed + static_cast<int64_t>(k));
      torch::Tensor go = torch::randn(y.sizes(), torch::dtype(torch::kFloat)).to(y.scalar_type());
      c["grad_output"] = facts::values_of(go);
#ifdef GRADLAB_ENGINE
      const uint64_t nodes_before_backward = gradlab::autograd::nodes_made();
      const uint64_t ops_before_backward = gradlab::autograd::op_nodes_run();
#endif
      auto g = torch::autograd::grad({y}, {x}, {go}, /*retain_graph=*/false, /*create_graph=*/false,
                                     /*allow_unused=*/true);
#ifdef GRADLAB_ENGINE
      // And its backward's: none, as a backward computes with grad mode off.
      // One that switched it on and handed the derivative to a built-in op's
      // node (autograd::grad of a sigmoid it made) makes some.
      c["backward_nodes"] = gradlab::autograd::nodes_made() - nodes_before_backward;
      // And the built-in op nodes that ran: none where the Function's own
      // backward computes; one it made elsewhere and applies by hand, some.
      c["backward_ops_run"] = gradlab::autograd::op_nodes_run() - ops_before_backward;
#endif
      c["grad"] = g[0].defined() ? facts::values_of(g[0]) : json(nullptr);
    });
    if (!why.empty()) c["error"] = why;
    cases[k] = std::move(c);
  }
  return {{"ok", true}, {"cases", cases}};
}

// ---- walk: the walker on the grader's graphs -----------------------------

namespace detail {
struct Graph {
  const char* name;
  const char* expression;
  torch::Tensor (*build)();
};

// Each keeps its leaves alive through the graph it returns.
inline const Graph kGraphs[] = {
    {"unused-input", "(x * w).sum(), where w does not require grad (a null edge)",
     [] {
       auto x = torch::tensor({1.0, 2.0}, torch::requires_grad());
       auto w = torch::tensor({3.0, 4.0});
       return (x * w).sum();
     }},
    {"deep-chain", "((x.exp() * 2).sin() + 1).pow(2), one input five levels down",
     [] {
       auto x = torch::tensor(0.5, torch::requires_grad());
       return ((x.exp() * 2).sin() + 1).pow(2);
     }},
    {"three-inputs", "torch::stack({a, b * c, c}).sum(), c reached twice",
     [] {
       auto a = torch::tensor(1.0, torch::requires_grad());
       auto b = torch::tensor(2.0, torch::requires_grad());
       auto c = torch::tensor(3.0, torch::requires_grad());
       return torch::stack({a, b * c, c}).sum();
     }},
    {"leaf", "a leaf's grad_fn, which is null", [] { return torch::tensor(1.0, torch::requires_grad()); }},
};
}  // namespace detail

// The graphs walk() knows, for the rubric's validation.
inline bool known_graph(const std::string& name) {
  for (const detail::Graph& g : detail::kGraphs)
    if (name == g.name) return true;
  return false;
}

// The walker on each of the grader's graphs p["graphs"] (by name, built
// here), from the root at depth 0, with what it printed (std::cout and
// printf alike): {"cases": [{"graph", "expression", "output"} or {... "error"}]}.
// Then on p["random"] graphs made up from p["seed"] (random_graphs.h), which
// the grader picks for each program.
inline json walk(const Walker& f, const json& p) {
  struct Chosen {
    json head;  // what the case says of its graph
    std::function<torch::Tensor()> build;
  };
  std::vector<Chosen> chosen;
  for (const auto& name : p.at("graphs")) {
    const detail::Graph* g = nullptr;
    for (const detail::Graph& k : detail::kGraphs)
      if (name == k.name) g = &k;
    if (!g) throw std::runtime_error("no graph named " + name.dump());
    chosen.push_back({{{"graph", g->name}, {"expression", g->expression}}, g->build});
  }
  const int64_t random = p.value("random", 0), seed = p.value("seed", 0);
  for (int64_t r = 0; r < random; ++r) {
    const uint64_t s = static_cast<uint64_t>(seed + r);
    chosen.push_back({{{"graph", "random"}, {"seed", seed + r}, {"expression", graphs::random_graph(s).expression}},
                      [s] { return graphs::random_graph(s).root; }});
  }
  // Each graph is walked in kRounds rounds, each in an order of its own: a
  // walker that prints by how many times it was called, not by the graph,
  // passes a round by luck (one order in 24 for four graphs) but not three,
  // and prints something else for the same graph on the way.
  constexpr int kRounds = 3;
  json cases = json(chosen.size(), json(nullptr));
  for (int round = 0; round < kRounds; ++round)
    for (size_t k : detail::shuffled(chosen.size())) {
      if (round > 0 && cases[k].contains("error")) continue;
      torch::Tensor root = chosen[k].build();
      std::string text;
      const std::string why = detail::captured([&] { f(root.grad_fn(), 0); }, text);
      if (round == 0) {
        cases[k] = chosen[k].head;
        cases[k]["output"] = text;
        if (!why.empty()) cases[k]["error"] = why;
      } else if (!why.empty()) {
        cases[k]["error"] = "walked again, " + why;
      } else if (text != cases[k]["output"].get<std::string>()) {
        cases[k]["error"] = "printed other lines when the grader walked the same graph again: what a walk prints "
                            "must follow the graph, not the calls that came before it";
      }
    }
  return {{"ok", true}, {"cases", cases}};
}

}  // namespace lab::probes

#endif  // GRADLAB_PROBES_H

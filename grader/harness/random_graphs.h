// Backward graphs the grader makes up for each grade, for the walk probes: a
// walker that recognises the four fixed graphs by their shape and prints
// stored lines passes those, but not a graph it has never seen. Both sides
// build the same graph from a seed: the harness in the student's program
// (to walk it) and the grader in its own process (to know what the walk must
// print), so this header needs nothing but the torch API, and draws its
// choices from its own generator (splitmix64: the same numbers on every
// compiler, unlike std:: distributions).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <utility>

namespace lab::probes::graphs {

class Draw {
 public:
  explicit Draw(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t s_;
};

// A graph and its expression in C++ words, for the feedback.
struct Built {
  torch::Tensor root;
  std::string expression;
};

namespace detail {

struct Leaves {
  torch::Tensor a = torch::tensor({0.5, -1.0}, torch::requires_grad());
  torch::Tensor b = torch::tensor({2.0, 0.25}, torch::requires_grad());
  torch::Tensor k = torch::tensor({1.5, 3.0});  // requires no grad: its edges are null
};

// At most four levels of ops over the leaves, chosen by `d`: unary ops,
// binary ops (the same leaf may be reached twice), and detach(), which cuts
// a branch off.
inline std::pair<torch::Tensor, std::string> grow(Draw& d, const Leaves& l, int depth) {
  if (depth >= 4 || (depth > 0 && d.below(4) == 0)) {
    switch (d.below(3)) {
      case 0: return {l.a, "a"};
      case 1: return {l.b, "b"};
      default: return {l.k, "k"};
    }
  }
  const int op = d.below(9);
  auto [x, xs] = grow(d, l, depth + 1);
  switch (op) {
    case 0: return {x.exp(), xs + ".exp()"};
    case 1: return {x.sin(), xs + ".sin()"};
    case 2: return {x.tanh(), xs + ".tanh()"};
    case 3: return {-x, "(-" + xs + ")"};
    case 4: return {x.pow(2), xs + ".pow(2)"};
    case 5: return {x.detach(), xs + ".detach()"};
    default: break;
  }
  auto [y, ys] = grow(d, l, depth + 1);
  switch (op) {
    case 6: return {x + y, "(" + xs + " + " + ys + ")"};
    case 7: return {x * y, "(" + xs + " * " + ys + ")"};
    default: return {x - y, "(" + xs + " - " + ys + ")"};
  }
}

}  // namespace detail

// The graph for `seed`: a sum of the grown expression, with a and b
// requiring grad and k not (an expression that reaches neither gets + a, so
// that the root has a graph to walk). The root keeps its leaves alive.
inline Built random_graph(uint64_t seed) {
  Draw d(seed);
  detail::Leaves l;
  auto [x, xs] = detail::grow(d, l, 0);
  if (!x.requires_grad()) {
    x = x + l.a;
    xs = "(" + xs + " + a)";
  }
  return {x.sum(), xs + ".sum(), where a and b require grad and k does not"};
}

}  // namespace lab::probes::graphs

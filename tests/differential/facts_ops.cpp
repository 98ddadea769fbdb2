// Differential facts for ops beyond the lessons that students reach for:
// each op's value, grad_fn, next functions and gradients, its in-place form
// and its free function, built against the engine and against LibTorch 1.13.
#include "facts_common.h"

using namespace facts;

namespace {

Tensor leaf(std::initializer_list<int64_t> shape, double scale = 1.0) {
  return (torch::randn(shape, torch::kDouble) * scale).requires_grad_();
}
// Inside (-1, 1), where asin, acos and atanh are defined.
Tensor unit_leaf(std::initializer_list<int64_t> shape) { return (torch::rand(shape, torch::kDouble) * 1.8 - 0.9).requires_grad_(); }

// The op on a leaf: its output, then the leaf's gradient.
void op(const std::string& name, const Tensor& in, const std::function<Tensor(const Tensor&)>& fwd) {
  Tensor out;
  attempt(name + ".forward", [&] { out = fwd(in); });
  if (!out.defined()) return;
  fact(name + ".out", out);
  if (!out.requires_grad()) return;
  attempt(name + ".backward", [&] { out.backward(torch::ones_like(out)); });
  fact(name + ".in", in);
}

// The in-place form on a non-leaf copy of the input: version, grad_fn, and the
// gradient that reaches the leaf through it (computed from the value before).
void inplace(const std::string& name, const Tensor& in, const std::function<void(Tensor&)>& fwd) {
  Tensor t = in * 1;
  attempt(name + ".inplace", [&] { fwd(t); });
  fact(name + ".inplace.out", t);
  if (!t.requires_grad()) return;
  attempt(name + ".inplace.backward", [&] { t.sum().backward(); });
  fact(name + ".inplace.in", in);
}

void unary() {
  torch::manual_seed(3);
  const Tensor halves = torch::tensor({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51}, torch::kDouble).requires_grad_();
  op("round", halves, [](const Tensor& a) { return a.round(); });
  op("round.free", leaf({5}, 3), [](const Tensor& a) { return torch::round(a); });
  fact("round.int", torch::round(torch::tensor({-3, 0, 7})));
  op("ceil", leaf({5}, 3), [](const Tensor& a) { return a.ceil(); });
  op("trunc", leaf({5}, 3), [](const Tensor& a) { return torch::trunc(a); });
  op("floor.free", leaf({5}, 3), [](const Tensor& a) { return torch::floor(a); });
  op("sign.free", leaf({5}), [](const Tensor& a) { return torch::sign(a); });
  op("sinh", leaf({5}), [](const Tensor& a) { return a.sinh(); });
  op("cosh", leaf({5}), [](const Tensor& a) { return torch::cosh(a); });
  op("asin", unit_leaf({5}), [](const Tensor& a) { return a.asin(); });
  op("acos", unit_leaf({5}), [](const Tensor& a) { return torch::acos(a); });
  op("atan", leaf({5}, 2), [](const Tensor& a) { return a.atan(); });
  op("erf", leaf({5}), [](const Tensor& a) { return torch::erf(a); });
  op("reciprocal.free", leaf({5}), [](const Tensor& a) { return torch::reciprocal(a); });
  op("rsqrt.free", (leaf({5}).detach().abs() + 0.1).requires_grad_(), [](const Tensor& a) { return torch::rsqrt(a); });
  op("expm1.free", leaf({5}), [](const Tensor& a) { return torch::expm1(a); });
  fact("asin.float", torch::asin(torch::tensor({0.25f, -0.5f})));
  fact("sinh.int", torch::sinh(torch::tensor({1, 2})));
  // Second derivatives: the recorded backward's graph and values.
  for (const char* name : {"asin", "acos", "atan", "erf", "sinh"}) {
    Tensor a = std::string(name) == "sinh" || std::string(name) == "erf" ? leaf({4}) : unit_leaf({4});
    Tensor y = std::string(name) == "asin"   ? a.asin()
               : std::string(name) == "acos" ? a.acos()
               : std::string(name) == "atan" ? a.atan()
               : std::string(name) == "erf"  ? a.erf()
                                             : a.sinh();
    Tensor g = torch::autograd::grad({y.sum()}, {a}, {}, true, true)[0];
    fact(std::string(name) + ".grad_graph", g);
    emit(std::string(name) + ".grad_graph.desc", {{"graph", graph_desc(g.grad_fn())}});
    fact(std::string(name) + ".second", torch::autograd::grad({g.sum()}, {a})[0]);
  }
}

void unary_inplace() {
  torch::manual_seed(4);
  inplace("sin_", leaf({4}), [](Tensor& t) { t.sin_(); });
  inplace("cos_", leaf({4}), [](Tensor& t) { t.cos_(); });
  inplace("tan_", leaf({4}), [](Tensor& t) { t.tan_(); });
  inplace("sign_", leaf({4}), [](Tensor& t) { t.sign_(); });
  inplace("floor_", leaf({4}, 3), [](Tensor& t) { t.floor_(); });
  inplace("ceil_", leaf({4}, 3), [](Tensor& t) { t.ceil_(); });
  inplace("round_", leaf({4}, 3), [](Tensor& t) { t.round_(); });
  inplace("trunc_", leaf({4}, 3), [](Tensor& t) { t.trunc_(); });
  inplace("reciprocal_", leaf({4}), [](Tensor& t) { t.reciprocal_(); });
  inplace("rsqrt_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.rsqrt_(); });
  inplace("log1p_", (leaf({4}).detach().abs()).requires_grad_(), [](Tensor& t) { t.log1p_(); });
  inplace("expm1_", leaf({4}), [](Tensor& t) { t.expm1_(); });
  inplace("log2_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.log2_(); });
  inplace("log10_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.log10_(); });
  inplace("sinh_", leaf({4}), [](Tensor& t) { t.sinh_(); });
  inplace("cosh_", leaf({4}), [](Tensor& t) { t.cosh_(); });
  inplace("asin_", unit_leaf({4}), [](Tensor& t) { t.asin_(); });
  inplace("acos_", unit_leaf({4}), [](Tensor& t) { t.acos_(); });
  inplace("atan_", leaf({4}), [](Tensor& t) { t.atan_(); });
  inplace("erf_", leaf({4}), [](Tensor& t) { t.erf_(); });
  // On a leaf that requires grad: PyTorch's error, the leaf unchanged.
  Tensor l = leaf({3});
  attempt("sin_.leaf", [&] { l.sin_(); });
  fact("sin_.leaf.after", l);
}

}  // namespace

int main() {
  std::cout.precision(17);
  unary();
  unary_inplace();
  return 0;
}

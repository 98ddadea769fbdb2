// Finite-difference gradient checks (central differences in float64) for
// every differentiable op, on random shapes with broadcasting.
#include "gradcheck.h"
#include "reference.h"

using torch::Tensor;

namespace {
Tensor rnd(std::initializer_list<int64_t> s) { return torch::randn(s, torch::dtype(torch::kDouble)); }
Tensor pos(std::initializer_list<int64_t> s) { return torch::rand(s, torch::dtype(torch::kDouble)) + 0.5; }
using V = std::vector<Tensor>;
}  // namespace

TEST_CASE("gradcheck: elementwise ops with broadcasting", "[gradcheck]") {
  torch::manual_seed(1);
  CHECK(gradcheck([](const V& x) { return x[0] + x[1]; }, {rnd({3, 4}), rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].add(x[1], 2.5); }, {rnd({2, 3}), rnd({2, 1})}));
  CHECK(gradcheck([](const V& x) { return x[0] - x[1]; }, {rnd({3, 1}), rnd({1, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0] * x[1]; }, {rnd({2, 3, 4}), rnd({3, 1})}));
  CHECK(gradcheck([](const V& x) { return x[0] / x[1]; }, {rnd({3, 4}), pos({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].pow(x[1]); }, {pos({3}), rnd({3})}));
  CHECK(gradcheck([](const V& x) { return torch::pow(2.5, x[0]); }, {rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0] * 3 + 2 - x[0] / 4; }, {rnd({5})}));
  CHECK(gradcheck([](const V& x) { return 2 - x[0]; }, {rnd({5})}));
  CHECK(gradcheck([](const V& x) { return 2 / x[0]; }, {pos({5})}));
  CHECK(gradcheck([](const V& x) { return torch::maximum(x[0], x[1]); }, {rnd({6}), rnd({6})}));
  CHECK(gradcheck([](const V& x) { return torch::where(x[0] > 0, x[0], x[1]); }, {rnd({6}), rnd({6})}));
}

TEST_CASE("gradcheck: unary ops", "[gradcheck]") {
  torch::manual_seed(2);
  for (auto f : std::vector<Tensor (*)(const Tensor&)>{torch::exp, torch::tanh, torch::sigmoid, torch::sin, torch::cos, torch::neg})
    CHECK(gradcheck([f](const V& x) { return f(x[0]); }, {rnd({3, 3})}));
  CHECK(gradcheck([](const V& x) { return x[0].log(); }, {pos({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].sqrt(); }, {pos({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].abs(); }, {rnd({4}) + 3}));
  CHECK(gradcheck([](const V& x) { return x[0].relu(); }, {rnd({6}) + 0.01}));
  CHECK(gradcheck([](const V& x) { return x[0].pow(3); }, {rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].pow(-1.5); }, {pos({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].clamp(-0.5, 0.5); }, {rnd({8}) * 0.3 + 0.1}));
}

// Every op of the unary table (gradlab/unary_ops.h) on inputs in (0.55, 0.95):
// inside each one's domain (log, sqrt, tan) and away from floor's and sign's
// jumps. A line added to the table is checked here without another word.
TEST_CASE("gradcheck: every op of the unary table", "[gradcheck]") {
  torch::manual_seed(5);
  auto inside = [] { return torch::rand({3, 3}, torch::dtype(torch::kDouble)) * 0.4 + 0.55; };
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  SECTION(#name) {                                                                       \
    CHECK(gradcheck([](const V& x) { return x[0].name(); }, {inside()}));                \
    GRADLAB_WHEN_##inplace(CHECK(gradcheck([](const V& x) { return (x[0] * 1).name##_(); }, {inside()}));) \
  }
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
}

TEST_CASE("gradcheck: reductions, softmax, losses", "[gradcheck]") {
  torch::manual_seed(3);
  CHECK(gradcheck([](const V& x) { return x[0].sum(); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].sum({1}, true); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].mean(0); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].max(); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return std::get<0>(x[0].min(1)); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return torch::softmax(x[0], 1); }, {rnd({2, 5})}));
  CHECK(gradcheck([](const V& x) { return torch::log_softmax(x[0], 0); }, {rnd({4, 3})}));
  CHECK(gradcheck([](const V& x) { return torch::mse_loss(x[0], x[1]); }, {rnd({3, 2}), rnd({3, 2})}));
  CHECK(gradcheck([](const V& x) { return torch::cross_entropy_loss(x[0], torch::tensor({1, 0, 2})); }, {rnd({3, 4})}));
}

TEST_CASE("gradcheck: matrix products and shape ops", "[gradcheck]") {
  torch::manual_seed(4);
  CHECK(gradcheck([](const V& x) { return x[0].mm(x[1]); }, {rnd({3, 4}), rnd({4, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].mv(x[1]); }, {rnd({3, 4}), rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].dot(x[1]); }, {rnd({4}), rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].matmul(x[1]); }, {rnd({2, 3, 4}), rnd({4, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].matmul(x[1]); }, {rnd({2, 1, 3, 4}), rnd({3, 4, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].matmul(x[1]); }, {rnd({4}), rnd({4, 3})}));
  CHECK(gradcheck([](const V& x) { return x[0].t().reshape({-1}).unsqueeze(0); }, {rnd({3, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].transpose(0, 2).flatten(); }, {rnd({2, 3, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].expand({4, 3}); }, {rnd({1, 3})}));
  CHECK(gradcheck([](const V& x) { return x[0].select(1, 2) * x[0].slice(0, 1, 3).sum(); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return torch::cat({x[0], x[1]}, 1); }, {rnd({2, 3}), rnd({2, 2})}));
  CHECK(gradcheck([](const V& x) { return torch::stack({x[0], x[1]}, 1); }, {rnd({2, 3}), rnd({2, 3})}));
  CHECK(gradcheck([](const V& x) { auto p = x[0].split(2); return p[0] * p[1]; }, {rnd({4})}));
  CHECK(gradcheck([](const V& x) { return x[0].index({x[0] > 0}); }, {rnd({3, 3})}));
}

TEST_CASE("gradcheck: gather, index_select, scatter_add, logsumexp, cumsum, flip, tril, triu", "[gradcheck]") {
  torch::manual_seed(6);
  const Tensor i = torch::tensor({{1, 0, 3}, {2, 2, 0}, {3, 1, 1}}, torch::kLong);
  CHECK(gradcheck([&](const V& x) { return x[0].gather(1, i); }, {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].gather(0, i.narrow(1, 0, 2).clamp_max(2)); }, {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].index_select(1, torch::tensor({3, 0, 3}, torch::kLong)); }, {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].scatter_add(1, i, x[1]); }, {rnd({3, 4}), rnd({3, 3})}));
  CHECK(gradcheck([](const V& x) { return x[0].logsumexp({0, 2}) + x[0].logsumexp(1, true).sum(); }, {rnd({2, 3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].cumsum(1) * x[0].cumsum(0); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].flip({0, 2}) * x[0]; }, {rnd({2, 3, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].tril(1) - x[0].triu(-1) * x[0]; }, {rnd({3, 4})}));
}

TEST_CASE("gradcheck: prod, amax, var, std, norm, addmm, outer, masked_fill_, binary cross-entropies", "[gradcheck]") {
  torch::manual_seed(8);
  CHECK(gradcheck([](const V& x) { return x[0].prod() + x[0].prod(1, true).sum(); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].amax(1) - x[0].amin({0, 1}, true).sum(); }, {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].var() + x[0].std(1).sum() + x[0].var(0, false, true).sum(); },
                  {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return x[0].norm() + x[0].norm(3, {1}).sum() + x[0].norm(1, {0}).sum(); },
                  {rnd({3, 4})}));
  CHECK(gradcheck([](const V& x) { return torch::addmm(x[0], x[1], x[2], 0.5, 2) + torch::outer(x[3], x[3].narrow(0, 0, 2)); },
                  {rnd({2}), rnd({3, 4}), rnd({4, 2}), rnd({3})}));
  CHECK(gradcheck(
      [](const V& x) {
        Tensor h = x[0] * 1;
        h.masked_fill_(x[0] > 0.3, x[1].sum());
        return h.masked_fill(x[0] < -0.5, 2.0);
      },
      {rnd({6}), rnd({2})}));
  // The weights are constants: LibTorch refuses one that requires grad.
  const Tensor w = torch::rand({5}, torch::kDouble) + 0.5;
  CHECK(gradcheck([&](const V& x) { return torch::binary_cross_entropy(x[0].sigmoid(), x[1].sigmoid(), w); },
                  {rnd({5}), rnd({5})}));
  CHECK(gradcheck([&](const V& x) { return torch::binary_cross_entropy_with_logits(x[0], x[1].sigmoid(), w, w * 2); },
                  {rnd({5}), rnd({5})}));
}

TEST_CASE("gradcheck: cross-entropy with weights, ignore_index, label smoothing, probabilities, spatial inputs",
          "[gradcheck]") {
  torch::manual_seed(9);
  namespace F = torch::nn::functional;
  using Opts = F::CrossEntropyFuncOptions;
  const Tensor w = torch::rand({3}, torch::kDouble) + 0.5;
  const Tensor t = torch::tensor({2, 0, 1, 2, 1}, torch::kLong);
  CHECK(gradcheck([&](const V& x) { return F::cross_entropy(x[0], t, Opts().weight(w).ignore_index(1)); },
                  {rnd({5, 3})}));
  CHECK(gradcheck([&](const V& x) { return F::cross_entropy(x[0], t, Opts().label_smoothing(0.2).weight(w)); },
                  {rnd({5, 3})}));
  CHECK(gradcheck(
      [&](const V& x) {
        return F::cross_entropy(x[0], t, Opts().label_smoothing(0.3).ignore_index(2).reduction(torch::kNone));
      },
      {rnd({5, 3})}));
  // Probability targets: the gradient reaches the target too.
  CHECK(gradcheck([&](const V& x) { return F::cross_entropy(x[0], x[1].softmax(1), Opts().weight(w).label_smoothing(0.1)); },
                  {rnd({5, 3}), rnd({5, 3})}));
  const Tensor t3 = torch::tensor({{0, 2, 1, 1}, {2, 2, 0, 1}}, torch::kLong);
  CHECK(gradcheck([&](const V& x) { return F::cross_entropy(x[0], t3, Opts().weight(w).reduction(torch::kNone)); },
                  {rnd({2, 3, 4})}));
  CHECK(gradcheck([&](const V& x) { return F::cross_entropy(x[0], t3.view({2, 2, 2}), Opts().weight(w)); },
                  {rnd({2, 3, 2, 2})}));
}

TEST_CASE("gradcheck: sort, topk, scatter, masked_select, masked_scatter, diag, cumprod (zeros included)",
          "[gradcheck]") {
  torch::manual_seed(10);
  // Unique per row: with repeats scatter keeps one write and the others' gradients are meaningless.
  const Tensor idx = torch::tensor({{1, 0}, {2, 3}, {0, 1}}, torch::kLong);
  CHECK(gradcheck([](const V& x) { return std::get<0>(x[0].sort(1)) + std::get<0>(x[0].topk(2, 0)).sum(); },
                  {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].scatter(1, idx, x[1]) + x[0].scatter(1, idx, 2.0); },
                  {rnd({3, 4}), rnd({3, 2})}));
  CHECK(gradcheck([](const V& x) { return x[0].masked_select(x[0].detach() > 0).sum() + x[0].masked_scatter(x[0].detach() < 0, x[1]); },
                  {rnd({3, 4}), rnd({12})}));
  CHECK(gradcheck([](const V& x) { return x[0].diag(1).sum() + x[1].diag(-1).sum() + x[1].diag().diag(); },
                  {rnd({3, 4}), rnd({3, 3})}));
  CHECK(gradcheck([](const V& x) { return x[0].cumprod(1); }, {rnd({3, 4})}));
  const Tensor with_zeros = torch::tensor({{2.0, 0.0, 3.0, -1.0}, {0.0, 1.5, 0.0, 2.0}}, torch::kDouble);
  CHECK(gradcheck([](const V& x) { return x[0].cumprod(1); }, {with_zeros}));
  CHECK(gradcheck([](const V& x) { return torch::leaky_relu(x[0], 0.2) * x[0]; }, {rnd({3, 4})}));
}

TEST_CASE("gradcheck: advanced indexing and index_put_, repeats and dims apart included", "[gradcheck]") {
  using torch::indexing::Slice;
  torch::manual_seed(5);
  const Tensor rows = torch::tensor({2, 0, 2}, torch::kLong), cols = torch::tensor({1, 3, 1}, torch::kLong);
  CHECK(gradcheck([&](const V& x) { return x[0].index({rows, cols}); }, {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].index({rows.view({3, 1}), cols}); }, {rnd({3, 4})}));
  CHECK(gradcheck([&](const V& x) { return x[0].index({Slice(), rows}); }, {rnd({2, 3, 2})}));
  CHECK(gradcheck([&](const V& x) { return x[0].index({rows.slice(0, 0, 2), Slice(), cols.slice(0, 0, 2)}); },
                  {rnd({3, 2, 4})}));
  CHECK(gradcheck(
      [&](const V& x) {
        Tensor h = x[0] * 1;
        h.index_put_({torch::tensor({1, 0}, torch::kLong)}, x[1]);
        return h;
      },
      {rnd({3, 4}), rnd({4})}));
  CHECK(gradcheck(
      [&](const V& x) {
        Tensor h = x[0] * 2;
        h.index_put_({Slice(), cols.slice(0, 0, 2)}, x[1]);
        return h.index({rows, cols});
      },
      {rnd({3, 4}), rnd({3, 1})}));
}

// An op with a fused backward kernel has its derivative written twice: as the
// table's derivative column (its specification) and as the kernel, which
// computes it in one pass, with and without create_graph. The two must agree
// bit for bit, in both float types, where the derivative saturates, vanishes,
// changes sign or is not finite. pow's kernel (its exponent is a parameter,
// not a table line) is held to its recorded formula the same way.
namespace {
using Formula = std::function<Tensor(const Tensor& g, const Tensor& x, const Tensor& y)>;
bool fused_equals_formula(const std::function<Tensor(const Tensor&)>& f, const Formula& formula,
                          torch::ScalarType dtype) {
  const std::vector<double> at = {-30, -4, -1.5, -0.75, -1e-3, 0, 1e-3, 0.3, 0.75, 1, 2, 5, 30};
  Tensor x = torch::tensor(at, torch::dtype(dtype)).requires_grad_();
  Tensor g = torch::rand({static_cast<int64_t>(at.size())}, torch::dtype(dtype)) * 4 - 2;
  Tensor y = f(x);
  Tensor fused = torch::autograd::grad({y}, {x}, {g}, /*retain_graph=*/true)[0];
  Tensor recorded = torch::autograd::grad({y}, {x}, {g}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  Tensor want = formula(g, x.detach(), y.detach());
  INFO("fused " << fused << "\nrecorded " << recorded << "\nformula " << want);
  CHECK(recorded.grad_fn() != nullptr);  // create_graph records the backward itself
  return fused.scalar_type() == want.scalar_type() &&
         torch::allclose(fused, want, /*rtol=*/0, /*atol=*/0, /*equal_nan=*/true) &&
         torch::allclose(recorded.detach(), want, /*rtol=*/0, /*atol=*/0, /*equal_nan=*/true);
}
}  // namespace

TEST_CASE("fused backward kernels compute their op's derivative, bit for bit", "[gradcheck]") {
  torch::manual_seed(6);
  int fused_ops = 0;
  for (auto dtype : {torch::kFloat, torch::kDouble}) {
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative)            \
  GRADLAB_WHEN_##fused({                                                                                     \
    INFO(#name << " in " << dtype);                                                                          \
    auto column = [](const Tensor& g, const Tensor& x_, const Tensor& y_) {                                   \
      [[maybe_unused]] auto x = [&] { return x_; };                                                          \
      [[maybe_unused]] auto y = [&] { return y_; };                                                          \
      return derivative;                                                                                     \
    };                                                                                                       \
    CHECK(fused_equals_formula([](const Tensor& x) { return x.name(); }, column, dtype));                    \
    ++fused_ops;                                                                                             \
  })
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
    for (double e : {2.0, 3.0, 0.5, 1.0, -1.0, -2.0, 1.5, -0.5}) {  // (x^0's gradient is zeros, no kernel)
      INFO("pow(x, " << e << ") in " << dtype);
      auto recorded_formula = [e](const Tensor& g, const Tensor& x, const Tensor&) { return g * (x.pow(e - 1) * e); };
      CHECK(fused_equals_formula([e](const Tensor& x) { return x.pow(e); }, recorded_formula, dtype));
    }
  }
  CHECK(fused_ops == 2 * 3);  // tanh, sigmoid, relu
}

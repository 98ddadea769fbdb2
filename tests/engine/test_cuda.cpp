// The CUDA backend against the CPU backend (the reference): every op's
// value and gradients within a per-op tolerance, gradcheck in float64 on the
// GPU, and the device rules PyTorch has (same-device errors, printing,
// gradients on the tensor's device, seeded random numbers). cuda_main.cpp
// reports the whole binary as skipped where there is no GPU.
#include "catch_compat.h"
#include <functional>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "gradcheck.h"

using torch::Tensor;
using V = std::vector<Tensor>;

namespace {

struct Case {
  std::string name;
  std::function<Tensor(const V&)> f;
  std::function<V()> inputs;  // CPU, float64, fresh each call
  double rtol = 1e-5, atol = 1e-6;
  bool differentiable = true;
};

Tensor rnd(std::vector<int64_t> s) { return torch::randn(s, torch::dtype(torch::kDouble)); }
Tensor pos(std::vector<int64_t> s) { return torch::rand(s, torch::dtype(torch::kDouble)) + 0.5; }

// Largest |a - b| - (atol + rtol |b|): at most 0 when the tensors agree.
bool agree(const Tensor& got, const Tensor& want, double rtol, double atol) {
  REQUIRE(got.sizes() == want.sizes());
  Tensor g = got.to(torch::kCPU, torch::kDouble).contiguous(), w = want.to(torch::kCPU, torch::kDouble).contiguous();
  const double* pg = g.data_ptr<double>();
  const double* pw = w.data_ptr<double>();
  for (int64_t i = 0; i < g.numel(); ++i) {
    const bool both_nan = std::isnan(pg[i]) && std::isnan(pw[i]);
    if (!both_nan && !(std::abs(pg[i] - pw[i]) <= atol + rtol * std::abs(pw[i]))) {
      UNSCOPED_INFO("element " << i << ": GPU " << pg[i] << ", CPU " << pw[i]);
      return false;
    }
  }
  return true;
}

// Forward and backward in `dtype` on both devices; the GPU's results must be
// GPU tensors and agree with the CPU's.
void compare_devices(const Case& c, torch::ScalarType dtype) {
  torch::manual_seed(7);
  const V base = c.inputs();
  V cpu_in, gpu_in;
  for (const auto& t : base) {
    const bool grad = c.differentiable && t.is_floating_point();
    cpu_in.push_back(t.to(t.is_floating_point() ? dtype : t.scalar_type()).detach().requires_grad_(grad));
    gpu_in.push_back(cpu_in.back().detach().to(torch::kCUDA).requires_grad_(grad));
  }
  Tensor want = c.f(cpu_in), got = c.f(gpu_in);
  CHECK(got.device().is_cuda());
  CHECK(got.scalar_type() == want.scalar_type());
  CHECK(agree(got, want, c.rtol, c.atol));
  if (!c.differentiable || !want.requires_grad()) return;
  CHECK(got.grad_fn()->name() == want.grad_fn()->name());
  Tensor w = torch::rand(want.sizes(), torch::dtype(want.scalar_type())) + 0.5;
  (want * w).sum().backward();
  (got * w.to(torch::kCUDA)).sum().backward();
  for (size_t i = 0; i < cpu_in.size(); ++i) {
    if (!cpu_in[i].requires_grad()) continue;
    INFO("gradient of input " << i);
    REQUIRE(gpu_in[i].grad().defined() == cpu_in[i].grad().defined());
    if (!cpu_in[i].grad().defined()) continue;
    CHECK(gpu_in[i].grad().device().is_cuda());
    CHECK(agree(gpu_in[i].grad(), cpu_in[i].grad(), c.rtol * 10, c.atol * 10));
  }
}

std::vector<Case> cases() {
  std::vector<Case> c;
  auto add = [&](std::string name, std::function<Tensor(const V&)> f, std::function<V()> in, double rtol = 1e-5,
                 double atol = 1e-6) { c.push_back({std::move(name), std::move(f), std::move(in), rtol, atol, true}); };
  // Elementwise, broadcasting, scalars on either side.
  add("add (broadcast, alpha)", [](const V& x) { return x[0].add(x[1], 2.5); }, [] { return V{rnd({3, 4}), rnd({4})}; });
  add("sub", [](const V& x) { return x[0] - x[1]; }, [] { return V{rnd({3, 1}), rnd({1, 4})}; });
  add("mul", [](const V& x) { return x[0] * x[1]; }, [] { return V{rnd({2, 3, 4}), rnd({3, 1})}; });
  add("div", [](const V& x) { return x[0] / x[1]; }, [] { return V{rnd({3, 4}), pos({4})}; });
  add("scalar ops", [](const V& x) { return (x[0] * 3 + 2 - x[0] / 4).neg(); }, [] { return V{rnd({5})}; });
  add("scalar - tensor, scalar / tensor", [](const V& x) { return 2 - x[0] + 2 / x[1]; }, [] { return V{rnd({5}), pos({5})}; });
  add("pow (scalar)", [](const V& x) { return x[0].pow(2) + x[1].pow(2.5) + x[1].pow(-1); }, [] { return V{rnd({6}), pos({6})}; });
  add("pow (tensor)", [](const V& x) { return x[0].pow(x[1]); }, [] { return V{pos({3, 2}), rnd({2})}; });
  add("scalar ** tensor", [](const V& x) { return torch::pow(2.5, x[0]); }, [] { return V{rnd({4})}; });
  add("exp, log", [](const V& x) { return x[0].exp() + x[1].log(); }, [] { return V{rnd({7}), pos({7})}; });
  add("tanh, sigmoid", [](const V& x) { return torch::tanh(x[0]) * torch::sigmoid(x[0]); }, [] { return V{rnd({9})}; });
  add("relu, abs", [](const V& x) { return torch::relu(x[0]) + x[0].abs(); }, [] { return V{rnd({9})}; });
  add("sqrt, sin, cos", [](const V& x) { return x[0].sqrt() + x[1].sin() * x[1].cos(); }, [] { return V{pos({5}), rnd({5})}; });
  add("clamp", [](const V& x) { return x[0].clamp(-0.5, 0.5); }, [] { return V{rnd({11})}; });
  // Every op of the unary table, on inputs inside every one's domain.
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  add("table: " #name, [](const V& x) { return x[0].name(); }, [] { return V{pos({7}) * 0.4 + 0.35}; });
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
  add("maximum, minimum", [](const V& x) { return torch::maximum(x[0], x[1]) - torch::minimum(x[0], x[1]); },
      [] { return V{rnd({6}), rnd({6})}; });
  add("where", [](const V& x) { return torch::where(x[0] > 0, x[0], x[1]); }, [] { return V{rnd({6}), rnd({6})}; });
  add("non-contiguous input", [](const V& x) { return x[0].t().exp() * x[1].expand({4, 3}); },
      [] { return V{rnd({3, 4}), rnd({1, 3})}; });
  // Reductions.
  add("sum, mean (all)", [](const V& x) { return x[0].sum() + x[0].mean(); }, [] { return V{rnd({4, 5})}; });
  add("sum over dims, keepdim", [](const V& x) { return x[0].sum({0, 2}, true) + x[0].mean(1, true).sum(2, true); },
      [] { return V{rnd({3, 4, 5})}; });
  add("max, min (all)", [](const V& x) { return x[0].max() - x[0].min(); }, [] { return V{rnd({4, 6})}; });
  add("max over a dim", [](const V& x) { return std::get<0>(x[0].max(1)) + std::get<0>(x[0].min(0)).sum(); },
      [] { return V{rnd({5, 4})}; });
  add("softmax, log_softmax", [](const V& x) { return torch::softmax(x[0], 1) + torch::log_softmax(x[0], 0); },
      [] { return V{rnd({4, 5})}; });
  add("mse_loss", [](const V& x) { return torch::mse_loss(x[0], x[1]); }, [] { return V{rnd({4, 3}), rnd({4, 3})}; });
  add("cross_entropy", [](const V& x) { return torch::cross_entropy_loss(x[0], x[1]); },
      [] { return V{rnd({5, 4}), torch::tensor({0, 3, 1, 2, 3}, torch::kLong)}; });
  // Linear algebra.
  add("mm", [](const V& x) { return x[0].mm(x[1]); }, [] { return V{rnd({3, 4}), rnd({4, 2})}; }, 1e-4, 1e-5);
  add("mm (transposed operands)", [](const V& x) { return x[0].t().mm(x[1].t()); },
      [] { return V{rnd({4, 3}), rnd({2, 4})}; }, 1e-4, 1e-5);
  add("matmul (batched, matrix-vector, vector-vector)",
      [](const V& x) { return torch::matmul(x[0], x[1]).sum() + torch::matmul(x[1][0], x[2]).sum() + x[2].dot(x[2]); },
      [] { return V{rnd({2, 3, 4}), rnd({2, 4, 5}), rnd({5})}; }, 1e-4, 1e-5);
  add("mv", [](const V& x) { return x[0].mv(x[1]); }, [] { return V{rnd({3, 4}), rnd({4})}; }, 1e-4, 1e-5);
  // Shapes.
  add("view, reshape, flatten", [](const V& x) { return x[0].view({6, 2}).reshape({3, 4}).t().flatten(); },
      [] { return V{rnd({2, 6})}; });
  add("squeeze, unsqueeze, transpose", [](const V& x) { return x[0].unsqueeze(0).transpose(1, 2).squeeze(0); },
      [] { return V{rnd({3, 4})}; });
  add("cat, stack", [](const V& x) { return torch::cat({x[0], x[1]}, 0).sum(0) + torch::stack({x[0], x[1]}).sum({0, 1}); },
      [] { return V{rnd({3, 3}), rnd({3, 3})}; });
  add("indexing and slicing",
      [](const V& x) { return x[0].index({torch::indexing::Slice(1, 3), 0}) + x[0][2].sum(); },
      [] { return V{rnd({4, 3})}; });
  add("advanced indexing (two tensors, a mask, dims apart)",
      [](const V& x) {
        using torch::indexing::Slice;
        return torch::cat({x[0].index({torch::arange(3), torch::tensor({1, 0, 3})}),
                           x[0].index({x[0] > 0.2}).sum().view({1}),
                           x[1].index({torch::tensor({1, 0}), Slice(), torch::tensor({2, 3})}).flatten()});
      },
      [] { return V{rnd({3, 4}), rnd({2, 3, 4})}; });
  add("index_put_ (rows from values, a mask)",
      [](const V& x) {
        Tensor h = x[0] * 1;
        h.index_put_({torch::tensor({2, 0})}, x[1]);
        h.index_put_({h < 0}, 0.0);
        return h;
      },
      [] { return V{rnd({3, 4}), rnd({4})}; });
  add("gather, index_select, scatter_add",
      [](const V& x) {
        const Tensor i = torch::tensor({{1, 0, 3}, {2, 2, 0}, {3, 1, 1}}, torch::kLong);
        return x[0].gather(1, i) + x[0].index_select(1, torch::tensor({3, 0, 3}, torch::kLong)) +
               x[1].scatter_add(1, i, x[0].narrow(1, 0, 3)).narrow(1, 1, 3);
      },
      [] { return V{rnd({3, 4}), rnd({3, 4})}; });
  add("logsumexp, cumsum, flip, tril, triu",
      [](const V& x) { return x[0].logsumexp(1, true) + x[0].cumsum(0).flip({1}) + x[0].tril(-1) - x[0].triu(1); },
      [] { return V{rnd({3, 4})}; });
  add("prod, amax, amin, var, std, norm",
      [](const V& x) {
        return x[0].prod(1, true) + x[0].amax(1, true) - x[0].amin(0) + x[0].var(1, true, true) +
               x[0].std(0) * x[0].norm(3, {1}, true) + x[0].norm();
      },
      [] { return V{pos({3, 4})}; });
  add("addmm, outer, binary cross-entropies",
      [](const V& x) {
        return torch::addmm(x[0], x[1], x[2]) + torch::outer(x[3], x[0]) +
               torch::binary_cross_entropy(x[3].sigmoid().view({3, 1}).expand({3, 2}), x[4].sigmoid()) +
               torch::binary_cross_entropy_with_logits(x[4], x[0].sigmoid().expand({3, 2}), {}, torch::ones_like(x[4]) * 1.5);
      },
      [] { return V{rnd({2}), rnd({3, 4}), rnd({4, 2}), rnd({3}), rnd({3, 2})}; }, 1e-4, 1e-5);
  add("cross-entropy: weights, ignore_index, smoothing, probabilities, spatial",
      [](const V& x) {
        namespace F = torch::nn::functional;
        using Opts = F::CrossEntropyFuncOptions;
        const Tensor w = torch::tensor({0.5, 1.0, 2.0}, torch::kDouble).to(x[0].device(), x[0].scalar_type());
        const Tensor t = torch::tensor({2, 0, 1, 2}, torch::kLong).to(x[0].device());
        return F::cross_entropy(x[0], t, Opts().weight(w).ignore_index(1).label_smoothing(0.1)) +
               F::cross_entropy(x[0], x[1].softmax(1), Opts().weight(w)) +
               F::cross_entropy(x[2], t.view({2, 2}), Opts().reduction(torch::kNone)).sum();
      },
      [] { return V{rnd({4, 3}), rnd({4, 3}), rnd({2, 3, 2})}; });
  add("sort, topk, scatter, masked_select, diag, cumprod",
      [](const V& x) {
        const Tensor idx = torch::tensor({{1, 0}, {2, 3}, {0, 1}}, torch::kLong).to(x[0].device());
        return std::get<0>(x[0].sort(1)) + x[0].scatter(1, idx, x[1]) + x[0].diag().sum() + x[0].cumprod(1) +
               std::get<0>(x[0].topk(2, 0)).sum() + x[0].masked_select(x[0].detach() > 0).sum() +
               torch::leaky_relu(x[0], 0.2) * x[0];
      },
      [] { return V{rnd({3, 4}), rnd({3, 2})}; });
  add("masked_fill_ with a number and with a 0-d tensor",
      [](const V& x) {
        Tensor h = x[0] * 1;
        h.masked_fill_(x[0] > 0.3, x[1].sum());
        return h.masked_fill(x[0] < -0.5, 2.0);
      },
      [] { return V{rnd({6}), rnd({2})}; });
  add("repeat", [](const V& x) { return x[0].repeat({2, 1, 3}); }, [] { return V{rnd({3, 2})}; });
  add("clone, contiguous", [](const V& x) { return x[0].t().contiguous().clone() * 2; }, [] { return V{rnd({2, 3})}; });
  return c;
}

}  // namespace

TEST_CASE("CUDA: every op in float32 agrees with the CPU backend, forward and backward", "[cuda]") {
  for (const auto& c : cases()) {
    INFO(c.name);
    compare_devices(c, torch::kFloat);
  }
}

TEST_CASE("CUDA: every op in float64 agrees with the CPU backend", "[cuda]") {
  for (auto c : cases()) {
    INFO(c.name);
    c.rtol = 1e-10, c.atol = 1e-12;
    compare_devices(c, torch::kDouble);
  }
}

TEST_CASE("CUDA: gradcheck in float64 on the GPU", "[cuda][gradcheck]") {
  for (const auto& c : cases()) {
    INFO(c.name);
    torch::manual_seed(11);
    CHECK(gradcheck(c.f, c.inputs(), torch::kCUDA));
  }
}

TEST_CASE("CUDA: large tensors take the multi-block kernels and cuBLAS", "[cuda]") {
  torch::manual_seed(3);
  Tensor big = torch::randn({1 << 20});  // a whole-tensor sum split over blocks
  CHECK(agree(big.cuda().sum(), big.sum(), 1e-5, 1e-4));
  Tensor wide = torch::randn({64, 4096});  // a bias gradient: a thread per output
  CHECK(agree(wide.cuda().sum(0), wide.sum(0), 1e-5, 1e-5));
  CHECK(agree(wide.cuda().sum(1), wide.sum(1), 1e-5, 1e-4));
  Tensor a = torch::randn({300, 200}), b = torch::randn({200, 100});
  CHECK(agree(a.cuda().mm(b.cuda()), a.mm(b), 1e-4, 1e-4));
  CHECK(agree(b.t().cuda().mm(a.t().cuda()), b.t().mm(a.t()), 1e-4, 1e-4));
  Tensor rows = torch::randn({1000, 700});
  CHECK(agree(torch::softmax(rows.cuda(), 1), torch::softmax(rows, 1), 1e-5, 1e-7));
  CHECK(agree(std::get<1>(rows.cuda().max(1)), std::get<1>(rows.max(1)), 0, 0));
  Tensor li = torch::randint(-5, 5, {20, 30}, torch::kLong), lj = torch::randint(-5, 5, {30, 10}, torch::kLong);
  CHECK(agree(li.cuda().mm(lj.cuda()), li.mm(lj), 0, 0));  // integer products: the plain kernel
  CHECK(torch::equal(li.cuda(), li.cuda().clone()));
  CHECK_FALSE(torch::equal(li.cuda(), (li + 1).cuda()));
  CHECK(torch::empty({0}, torch::kCUDA).sum().item<float>() == 0);
}

TEST_CASE("CUDA: mm's backward takes every gradient layout (expanded, transposed, sliced)", "[cuda]") {
  torch::manual_seed(5);
  Tensor a = torch::randn({96, 80}), b = torch::randn({80, 72});
  const std::vector<std::pair<const char*, Tensor>> grads = {
      {"expanded", torch::ones({}).expand({96, 72})},
      {"transposed", torch::randn({72, 96}).t()},
      {"sliced", torch::randn({96, 144}).slice(1, 0, 144, 2)}};
  for (const auto& [layout, g] : grads) {
    INFO(layout);
    Tensor ca = a.clone().requires_grad_(), cb = b.clone().requires_grad_();
    ca.mm(cb).backward(g);
    Tensor ga = a.cuda().requires_grad_(), gb = b.cuda().requires_grad_();
    ga.mm(gb).backward(g.cuda());
    CHECK(agree(ga.grad(), ca.grad(), 1e-4, 1e-4));
    CHECK(agree(gb.grad(), cb.grad(), 1e-4, 1e-4));
  }
}

// The upstream gradient of every product, softmax and loss in the layouts the
// natural spellings send it: expanded (from sum or mean), transposed (from
// t()), sliced (a strided view). Sizes are above the BLAS threshold, so the
// GPU's cuBLAS path must make each layout readable, as the CPU's does.
TEST_CASE("CUDA: every product's, softmax's and loss's backward takes every gradient layout", "[cuda]") {
  struct Op {
    const char* name;
    std::function<Tensor(const V&)> f;
    std::vector<std::vector<int64_t>> shapes;
  };
  const std::vector<Op> ops = {
      {"mm", [](const V& x) { return x[0].mm(x[1]); }, {{96, 80}, {80, 72}}},
      {"mm of transposed operands", [](const V& x) { return x[0].t().mm(x[1].t()); }, {{80, 96}, {72, 80}}},
      {"bmm", [](const V& x) { return x[0].bmm(x[1]); }, {{4, 40, 32}, {4, 32, 24}}},
      {"matmul 3-D by transposed 3-D", [](const V& x) { return torch::matmul(x[0], x[1].transpose(1, 2)); },
       {{4, 40, 32}, {4, 24, 32}}},
      {"matmul 3-D by 2-D", [](const V& x) { return torch::matmul(x[0], x[1]); }, {{4, 40, 32}, {32, 24}}},
      {"mv", [](const V& x) { return x[0].mv(x[1]); }, {{96, 80}, {80}}},
      {"matmul vector by matrix", [](const V& x) { return torch::matmul(x[0], x[1]); }, {{80}, {80, 72}}},
      {"softmax", [](const V& x) { return torch::softmax(x[0], 1); }, {{64, 48}}},
      {"log_softmax", [](const V& x) { return torch::log_softmax(x[0], 0); }, {{64, 48}}},
      {"mse_loss without reduction", [](const V& x) { return torch::mse_loss(x[0], x[1], gradlab::Reduction::None); },
       {{64, 48}, {64, 48}}},
      {"linear layer", [](const V& x) { return torch::relu(x[0].mm(x[1]) + x[2]); }, {{96, 80}, {80, 72}, {72}}},
  };
  torch::manual_seed(11);
  for (const auto& op : ops) {
    V base;
    for (const auto& s : op.shapes) base.push_back(torch::randn(s));
    const auto out_sizes = op.f(base).sizes().vec();
    using Layouts = std::vector<std::pair<const char*, Tensor>>;
    auto wide = out_sizes;
    wide.back() *= 2;
    const Tensor expanded = torch::ones({}).expand(out_sizes), sliced = torch::randn(wide).slice(-1, 0, wide.back(), 2);
    Layouts grads = {{"expanded", expanded}, {"sliced", sliced}};
    if (out_sizes.size() >= 2) {
      auto swapped = out_sizes;
      std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
      grads = Layouts{{"expanded", expanded}, {"transposed", torch::randn(swapped).transpose(-1, -2)}, {"sliced", sliced}};
    }
    for (const auto& [layout, g] : grads) {
      INFO(op.name << ", " << layout << " gradient");
      V cpu, gpu;
      for (const auto& t : base) {
        cpu.push_back(t.clone().requires_grad_());
        gpu.push_back(t.cuda().requires_grad_());
      }
      op.f(cpu).backward(g);
      Tensor out = op.f(gpu);
      CHECK(out.grad_fn()->name() == op.f(cpu).grad_fn()->name());
      out.backward(g.cuda());
      for (size_t i = 0; i < cpu.size(); ++i) {
        INFO("gradient of input " << i);
        CHECK(gpu[i].grad().is_cuda());
        CHECK(agree(gpu[i].grad(), cpu[i].grad(), 1e-4, 1e-4));
      }
    }
  }
  // The spelling students write, at a size where the naive loop once took seconds.
  Tensor a = torch::randn({512, 512}), b = torch::randn({512, 512});
  Tensor ca = a.clone().requires_grad_(), ga = a.cuda().requires_grad_();
  ca.mm(b).sum().backward();
  ga.mm(b.cuda()).sum().backward();
  CHECK(agree(ga.grad(), ca.grad(), 1e-4, 1e-3));
}

// create_graph on the GPU: the backwards that are ops of their own (the fused
// activations', softmax's, the losses', select's and indexing's) recorded
// there, differentiated again, against the CPU.
TEST_CASE("CUDA: second derivatives agree with the CPU's", "[cuda]") {
  using torch::indexing::Slice;
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> fs = {
      {"tanh, sigmoid, relu", [](const Tensor& x) { return (x.tanh() * x + x.sigmoid() * x + x.relu() * x).sum(); }},
      {"softmax, log_softmax", [](const Tensor& x) { return (torch::softmax(x, 1) * x + torch::log_softmax(x, 0) * x).sum(); }},
      {"mse_loss, cross_entropy",
       [](const Tensor& x) {
         return torch::mse_loss(x * x, x) + torch::cross_entropy_loss(x * x, torch::tensor({2, 0, 1, 1}).to(x.device()));
       }},
      {"select, slice, index",
       [](const Tensor& x) {
         return (x.pow(2)[1] * x[0]).sum() + (x.pow(2).index({Slice(), Slice(0, 2)}) * x.narrow(1, 1, 2)).sum() +
                (x.pow(2).index({torch::tensor({0, 2, 2})}) * x.index({torch::tensor({1, 2, 3})})).sum();
       }},
  };
  torch::manual_seed(13);
  const Tensor start = torch::randn({4, 3}, torch::kDouble);
  for (const auto& [name, f] : fs) {
    INFO(name);
    Tensor grads[2], seconds[2];
    for (int on_gpu = 0; on_gpu < 2; ++on_gpu) {
      Tensor x = (on_gpu ? start.cuda() : start.clone()).requires_grad_();
      Tensor g = torch::autograd::grad({f(x)}, {x}, {}, true, true)[0];
      Tensor w = torch::arange(1, g.numel() + 1, torch::dtype(torch::kDouble).device(x.device())).reshape(g.sizes());
      grads[on_gpu] = g;
      seconds[on_gpu] = torch::autograd::grad({(g * w).sum()}, {x})[0];
    }
    CHECK(grads[1].grad_fn()->name() == grads[0].grad_fn()->name());
    CHECK(seconds[1].is_cuda());
    CHECK(agree(grads[1], grads[0], 1e-10, 1e-10));
    CHECK(agree(seconds[1], seconds[0], 1e-10, 1e-10));
  }
}

TEST_CASE("CUDA: in-place ops and copies across devices", "[cuda]") {
  Tensor x = torch::arange(6, torch::kFloat).reshape({2, 3}).cuda();
  x.add_(1).mul_(2).sub_(torch::ones({3}).cuda()).div_(2);
  x.t().copy_(torch::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}));  // host to a strided device view
  CHECK(agree(x, torch::tensor({{1.f, 3.f, 5.f}, {2.f, 4.f, 6.f}}), 0, 0));
  x.clamp_(2, 5).pow_(2).exp_().zero_().fill_(1.5);
  CHECK(x.sum().item<float>() == 9.0f);
  x.relu_();
  x += 1, x -= 0.5, x *= 2, x /= 4;
  CHECK(x.cpu().allclose(torch::full({2, 3}, 1.0f)));
  const int64_t before = x._version();
  x.add_(1);
  CHECK(x._version() == before + 1);
  Tensor host = torch::empty({3, 2}, torch::kDouble);
  host.t().copy_(x);  // device float to a strided host double view
  CHECK(agree(host, torch::full({3, 2}, 2.0, torch::kDouble), 0, 0));
}

TEST_CASE("CUDA: devices as PyTorch has them", "[cuda]") {
  Tensor a = torch::ones({2}, torch::kCUDA), b = torch::ones({2});
  CHECK(a.is_cuda());
  CHECK(c10::str(a.device()) == "cuda:0");
  CHECK_THROWS_WITH(a + b, "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
  CHECK_THROWS_WITH(b * a, "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
  CHECK_THROWS_WITH(a.reshape({1, 2}).mm(b.reshape({2, 1})),
                    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!");
  CHECK((a + torch::tensor(2.0f)).is_cuda());  // a CPU scalar tensor may join a GPU op, as in PyTorch
  CHECK(c10::str(torch::tensor({1.f, 2.f}).cuda()) == "tensor([1., 2.], device='cuda:0')");
  Tensor leaf = torch::tensor({1.f, 2.f}, torch::device(torch::kCUDA).requires_grad(true));
  CHECK(c10::str(leaf) == "tensor([1., 2.], device='cuda:0', requires_grad=True)");
  Tensor y = (leaf * leaf).sum();
  CHECK(c10::str(y).find("device='cuda:0', grad_fn=<SumBackward0>") != std::string::npos);
  y.backward();
  CHECK(leaf.grad().is_cuda());
  CHECK(leaf.grad().cpu().allclose(torch::tensor({2.f, 4.f})));
  CHECK(y.item<float>() == 5.0f);
  // A CPU leaf moved to the GPU: the copy is in the graph, the gradient comes home.
  Tensor h = torch::tensor({3.0, 4.0}, torch::requires_grad());
  Tensor d = h.to(torch::kCUDA);
  CHECK(d.grad_fn()->name() == "ToCopyBackward0");
  (d * d).sum().backward();
  CHECK_FALSE(h.grad().is_cuda());
  CHECK(h.grad().allclose(torch::tensor({6.0, 8.0})));
  // A saved tensor changed in place: the same version error as on the CPU.
  Tensor p = torch::ones({3}, torch::device(torch::kCUDA).requires_grad(true));
  Tensor q = p.exp();
  Tensor r = q.exp();
  q.mul_(2);
  CHECK_THROWS_WITH(r.sum().backward(), Catch::Contains("[CUDAFloatType [3]], which is output 0 of ExpBackward0, is at "
                                                        "version 1; expected version 0 instead"));
}

TEST_CASE("CUDA: seeded randn and rand give the CPU's values on the GPU", "[cuda]") {
  for (int64_t n : {5, 16, 100}) {
    torch::manual_seed(42);
    Tensor cpu_n = torch::randn({n}), cpu_u = torch::rand({n});
    torch::manual_seed(42);
    Tensor gpu_n = torch::randn({n}, torch::kCUDA), gpu_u = torch::rand({n}, torch::kCUDA);
    CHECK(gpu_n.is_cuda());
    CHECK(torch::equal(gpu_n.cpu(), cpu_n));
    CHECK(torch::equal(gpu_u.cpu(), cpu_u));
  }
}

TEST_CASE("CUDA: the default device moves factories to the GPU", "[cuda]") {
  gradlab::TensorOptions::set_default_device(gradlab::Device(gradlab::DeviceType::CUDA, 0));
  Tensor z = torch::zeros({2, 2}), t = torch::tensor({1.0f}), e = torch::eye(3), r = torch::randn({4});
  Tensor i = torch::arange(5);
  gradlab::TensorOptions::set_default_device(gradlab::Device(gradlab::DeviceType::CPU));
  CHECK(z.is_cuda());
  CHECK(t.is_cuda());
  CHECK(e.is_cuda());
  CHECK(r.is_cuda());
  CHECK(i.is_cuda());
  CHECK(e.sum().item<float>() == 3.0f);
  CHECK_FALSE(torch::zeros({1}).is_cuda());
}

// A model built on the CPU, moved with Module::to, trained on the GPU: the
// same weights as the CPU run, and the parameters (the optimiser's handles)
// are the module's own, now on the GPU. Dropout's masks are drawn by the
// CPU generator on both devices, so they agree too.
TEST_CASE("CUDA: a module moved to the GPU trains as on the CPU (dropout; SGD, Adam, RMSprop, Adagrad)", "[cuda]") {
  enum Kind { kSgd, kAdam, kRmsprop, kAdagrad };
  auto train = [](torch::Device device, Kind kind) {
    torch::manual_seed(11);
    torch::nn::Sequential model(torch::nn::Linear(3, 8), torch::nn::ReLU(), torch::nn::Dropout(0.25),
                                torch::nn::Linear(8, 2));
    Tensor x = torch::randn({16, 3}), target = torch::randn({16, 2});
    model->to(device);
    x = x.to(device);
    target = target.to(device);
    std::unique_ptr<torch::optim::Optimizer> opt;
    if (kind == kAdam)
      opt = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(0.01));
    else if (kind == kRmsprop)
      opt = std::make_unique<torch::optim::RMSprop>(model->parameters(),
                                                    torch::optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
    else if (kind == kAdagrad)
      opt = std::make_unique<torch::optim::Adagrad>(model->parameters(), torch::optim::AdagradOptions(0.05));
    else
      opt = std::make_unique<torch::optim::SGD>(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
    for (int i = 0; i < 5; ++i) {
      opt->zero_grad();
      Tensor out = model->forward(x);
      (torch::nn::functional::mse_loss(out, target) + torch::nn::functional::l1_loss(out, target)).backward();
      opt->step();
    }
    return model->parameters();
  };
  for (Kind kind : {kSgd, kAdam, kRmsprop, kAdagrad}) {
    INFO("optimiser " << kind);
    const V gpu = train(torch::kCUDA, kind), cpu = train(torch::kCPU, kind);
    REQUIRE(gpu.size() == cpu.size());
    for (size_t i = 0; i < gpu.size(); ++i) {
      CHECK(gpu[i].is_cuda());
      CHECK(gpu[i].grad().is_cuda());
      CHECK(agree(gpu[i], cpu[i], 1e-4, 1e-5));
    }
  }
}

// One program, written against the torch:: subset that students use, built
// twice: against gradlab's engine and against LibTorch. Each build prints the
// same facts as JSON lines (values, gradients, grad_fn names, next functions,
// flags, versions, error texts); compare.cpp checks that the two agree.
// Nothing here may use an API that only one side has.
#include <limits>

#include "facts_common.h"

namespace {

using namespace facts;

// A forward expression on fresh inputs, then backward with ones: the output
// and every input's gradient.
void op(const std::string& name, const std::vector<Tensor>& inputs, const std::function<Tensor()>& fwd) {
  Tensor out;
  attempt(name + ".forward", [&] { out = fwd(); });
  if (!out.defined()) return;
  fact(name + ".out", out);
  if (out.requires_grad()) {
    attempt(name + ".backward", [&] { out.backward(torch::ones_like(out)); });
    for (size_t i = 0; i < inputs.size(); ++i) fact(name + ".in" + std::to_string(i), inputs[i]);
  }
}

Tensor leaf(std::initializer_list<int64_t> shape, double scale = 1.0) {
  return (torch::randn(shape, torch::kDouble) * scale).requires_grad_();
}

struct Square : torch::autograd::Function<Square> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    return {2 * x * g[0]};
  }
};

void course() {
  // The lab's exercise.
  Tensor x = torch::tensor(-2.0, torch::requires_grad()), y = torch::tensor(2.0, torch::requires_grad()),
         z = torch::tensor(3.0, torch::requires_grad());
  Tensor p = x.pow(2), q = p + y, f = q * z;
  p.retain_grad();
  q.retain_grad();
  f.backward();
  for (auto [n, t] : {std::pair{"x", x}, {"y", y}, {"z", z}, {"p", p}, {"q", q}, {"f", f}}) fact(std::string("ex3.") + n, t);

  // The RNN cell on seeded inputs; a second backward fails, retain_graph allows it.
  torch::manual_seed(0);
  Tensor Wh = torch::randn({3, 3}, torch::requires_grad()), Wx = torch::randn({3, 2}, torch::requires_grad());
  Tensor xi = torch::randn({2, 1}), h = torch::randn({3, 1});
  Tensor i2h = Wx.mm(xi), h2h = Wh.mm(h), next_h = (i2h + h2h).tanh(), out = next_h.sum();
  fact("rnn.next_h", next_h);
  out.backward({}, true);
  fact("rnn.Wh", Wh);
  fact("rnn.Wx", Wx);
  attempt("rnn.retained_second", [&] { out.backward(); });
  attempt("rnn.third", [&] { out.backward(); });
  fact("rnn.Wh_after", Wh);

  // Accumulation, then zero_.
  for (int it = 0; it < 3; ++it) {
    (Wh * 2).sum().backward();
    fact("acc." + std::to_string(it), Wh);
  }
  Wh.grad().zero_();
  fact("acc.zeroed", Wh);

  // Reassignment.
  Tensor w1 = torch::tensor(2., torch::requires_grad()), w2 = torch::tensor(2., torch::requires_grad());
  Tensor xs = torch::tensor(4., torch::requires_grad());
  Tensor r = w1 * xs;
  r = w2 * r;
  r.retain_grad();
  Tensor o = r.pow(2);
  o.backward();
  fact("reassign.y", r);
  fact("reassign.w1", w1);

  // detach, no_grad, in-place rules.
  Tensor d = torch::ones({4}, torch::requires_grad());
  Tensor cut = (d.detach().pow(2) + d.pow(3)).sum();
  fact("detach.cut", cut);
  cut.backward();
  fact("detach.d", d);
  {
    torch::NoGradGuard guard;
    Tensor n = d * 2;
    fact("no_grad.n", n);
    d -= 0.5 * d.grad();
  }
  fact("no_grad.step", d);
  attempt("inplace.leaf", [&] { d.mul_(2); });
  attempt("inplace.view_of_leaf", [&] { d[0] = 1.; });
  Tensor e = d.exp();
  e.add_(1);
  attempt("inplace.saved_output", [&] { e.sum().backward(); });
  Tensor k = d * 3;
  k.mul_(2);
  fact("inplace.nonleaf", k);
  Tensor base = d * 1;
  base.slice(0, 1, 3).mul_(10);
  fact("inplace.copyslices", base);
  base.sum().backward();
  fact("inplace.copyslices_grad", d);

  // Errors the lessons show.
  attempt("err.implicit_nonscalar", [&] { (d * 2).backward(); });
  attempt("err.no_grad_fn", [&] { torch::ones({2}).sum().backward(); });
  attempt("err.mm_shapes", [&] { (void)torch::ones({2, 1}).mm(torch::ones({2, 1})); });
  attempt("err.int_requires_grad", [&] { (void)torch::ones({2}, torch::kLong).requires_grad_(); });
  attempt("err.retain_grad_no_grad", [&] { torch::ones({2}).retain_grad(); });
  attempt("err.nonleaf_requires_grad_false", [&] { (d * 2).requires_grad_(false); });
  attempt("err.item_multi", [&] { (void)d.item<float>(); });
  attempt("err.view_noncontiguous", [&] { (void)torch::ones({2, 3}).t().view({6}); });
  attempt("err.broadcast", [&] { (void)(torch::ones({2, 3}) + torch::ones({4})); });

  // torch::autograd::grad and custom functions.
  Tensor a = torch::tensor({1., 2., 3.}, torch::requires_grad());
  Tensor ga = torch::autograd::grad({(a * a).sum()}, {a}, {}, true, true)[0];
  fact("grad.first", ga);
  Tensor gga = torch::autograd::grad({ga.sum()}, {a})[0];
  fact("grad.second", gga);
  Tensor sq = Square::apply(a);
  fact("custom.out", sq);
  sq.sum().backward();
  fact("custom.a", a);
}

void ops() {
  torch::manual_seed(1);
  // Elementwise, with broadcasting and scalars.
  { Tensor A = leaf({2, 3}), B = leaf({3}); op("add", {A, B}, [&] { return A + B; }); }
  { Tensor A = leaf({2, 3}), B = leaf({2, 1}); op("add_alpha", {A, B}, [&] { return torch::add(A, B, 2.5); }); }
  { Tensor A = leaf({2, 3}), B = leaf({3}); op("sub_alpha", {A, B}, [&] { return A.sub(B, 0.5); }); }
  { Tensor A = leaf({2, 3}); op("rsub", {A}, [&] { return 3 - A; }); }
  { Tensor A = leaf({3, 1}), B = leaf({1, 4}); op("mul", {A, B}, [&] { return A * B; }); }
  { Tensor A = leaf({2, 3}); op("mul_scalar", {A}, [&] { return A * 1.5; }); }
  { Tensor A = leaf({2, 3}), B = (leaf({2, 3}).detach().abs() + 0.5).requires_grad_(); op("div", {A, B}, [&] { return A / B; }); }
  { Tensor A = (leaf({3}).detach().abs() + 0.5).requires_grad_(); op("rdiv", {A}, [&] { return 2 / A; }); }
  { Tensor A = leaf({2, 2}); op("neg", {A}, [&] { return -A; }); }
  { Tensor A = leaf({2, 2}); op("pow_int", {A}, [&] { return A.pow(3); }); }
  { Tensor A = (leaf({4}).detach().abs() + 0.1).requires_grad_(); op("pow_float", {A}, [&] { return A.pow(0.7); }); }
  { Tensor A = (leaf({4}).detach().abs() + 0.1).requires_grad_(), B = leaf({4}); op("pow_tensor", {A, B}, [&] { return A.pow(B); }); }
  { Tensor A = leaf({5}); op("exp", {A}, [&] { return A.exp(); }); }
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("log", {A}, [&] { return torch::log(A); }); }
  { Tensor A = leaf({5}); op("tanh", {A}, [&] { return A.tanh(); }); }
  { Tensor A = leaf({5}); op("sigmoid", {A}, [&] { return torch::sigmoid(A); }); }
  { Tensor A = leaf({6}); op("relu", {A}, [&] { return torch::relu(A); }); }
  { Tensor A = leaf({6}); op("abs", {A}, [&] { return A.abs(); }); }
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("sqrt", {A}, [&] { return A.sqrt(); }); }
  { Tensor A = leaf({5}); op("sin", {A}, [&] { return A.sin(); }); }
  { Tensor A = leaf({5}); op("cos", {A}, [&] { return A.cos(); }); }
  { Tensor A = leaf({6}); op("clamp", {A}, [&] { return A.clamp(-0.5, 0.5); }); }
  { Tensor A = leaf({6}); op("clamp_min", {A}, [&] { return A.clamp_min(0.1); }); }
  // Linear algebra.
  { Tensor A = leaf({3, 4}), B = leaf({4, 2}); op("mm", {A, B}, [&] { return A.mm(B); }); }
  { Tensor A = leaf({3, 4}), B = leaf({4}); op("matmul_mv", {A, B}, [&] { return A.matmul(B); }); }
  { Tensor A = leaf({4}), B = leaf({4, 3}); op("matmul_vm", {A, B}, [&] { return torch::matmul(A, B); }); }
  { Tensor A = leaf({4}), B = leaf({4}); op("matmul_vv", {A, B}, [&] { return A.matmul(B); }); }
  { Tensor A = leaf({2, 3, 4}), B = leaf({2, 4, 5}); op("matmul_batched", {A, B}, [&] { return A.matmul(B); }); }
  { Tensor A = leaf({2, 3, 4}), B = leaf({4, 5}); op("matmul_batched_bcast", {A, B}, [&] { return A.matmul(B); }); }
  // matmul picks mm, a folded mm or bmm by the operands' layout, as LibTorch 1.13 does.
  for (auto [label, make] : std::vector<std::pair<std::string, std::function<Tensor(Tensor, Tensor)>>>{
           {"plain", [](Tensor A, Tensor B) { return A.matmul(B); }},
           {"a_transposed", [](Tensor A, Tensor B) { return A.transpose(1, 2).matmul(B.t()); }},
           {"a_permuted", [](Tensor A, Tensor B) { return A.permute({0, 2, 1}).matmul(B.t()); }},
           {"a_transposed_vec", [](Tensor A, Tensor B) { return A.transpose(1, 2).matmul(B[0]); }},
           {"b_batched", [](Tensor A, Tensor B) { return B.t().matmul(A); }},
           {"both_transposed", [](Tensor A, Tensor) { return A.transpose(1, 2).matmul(A); }},
           {"vec_batched", [](Tensor A, Tensor B) { return B[1].matmul(A); }},
           {"b_batched_transposed", [](Tensor A, Tensor B) { return B.matmul(A.transpose(1, 2)); }},
           {"four_d", [](Tensor A, Tensor B) { return A.unsqueeze(0).matmul(B); }},
           {"four_d_transposed", [](Tensor A, Tensor B) { return A.unsqueeze(0).transpose(2, 3).matmul(B); }},
       }) {
    Tensor A = leaf({2, 4, 4}), B = leaf({4, 4});
    Tensor out = make(A, B);
    emit("matmul_layout." + label, {{"graph", graph_desc(out.grad_fn())}});
    op("matmul_layout." + label, {A, B}, [&] { return out; });
  }
  { Tensor A = leaf({3, 4}), B = leaf({4}); op("mv", {A, B}, [&] { return A.mv(B); }); }
  { Tensor A = leaf({4}), B = leaf({4}); op("dot", {A, B}, [&] { return A.dot(B); }); }
  // Shapes and views.
  { Tensor A = leaf({2, 3}); op("t", {A}, [&] { return A.t() * 2; }); }
  { Tensor A = leaf({2, 3, 4}); op("transpose", {A}, [&] { return A.transpose(0, 2).contiguous(); }); }
  { Tensor A = leaf({2, 6}); op("view", {A}, [&] { return A.view({3, 4}); }); }
  { Tensor A = leaf({2, 6}); op("reshape_nc", {A}, [&] { return A.t().reshape({12}); }); }
  { Tensor A = leaf({2, 3, 2}); op("flatten", {A}, [&] { return A.flatten(); }); }
  { Tensor A = leaf({2, 1, 3}); op("squeeze", {A}, [&] { return A.squeeze(1); }); }
  { Tensor A = leaf({3}); op("unsqueeze", {A}, [&] { return A.unsqueeze(0); }); }
  { Tensor A = leaf({3, 1}); op("expand", {A}, [&] { return A.expand({3, 4}); }); }
  { Tensor A = leaf({2, 3}), B = leaf({1, 3}); op("cat", {A, B}, [&] { return torch::cat({A, B}, 0); }); }
  { Tensor A = leaf({2, 3}), B = leaf({2, 3}); op("stack", {A, B}, [&] { return torch::stack({A, B}, 1); }); }
  { Tensor A = leaf({3, 4}); op("index", {A}, [&] { return A[1].slice(0, 0, 3) * A.select(1, 2); }); }
  // Reductions.
  { Tensor A = leaf({3, 4}); op("sum", {A}, [&] { return A.sum(); }); }
  { Tensor A = leaf({3, 4}); op("sum_dim", {A}, [&] { return A.sum(1); }); }
  { Tensor A = leaf({3, 4}); op("sum_keepdim", {A}, [&] { return A.sum(0, true); }); }
  { Tensor A = leaf({3, 4}); op("mean", {A}, [&] { return A.mean(); }); }
  { Tensor A = leaf({3, 4}); op("mean_dim", {A}, [&] { return A.mean(1, true); }); }
  { Tensor A = leaf({3, 4}); op("max_all", {A}, [&] { return A.max(); }); }
  { Tensor A = leaf({3, 4}); op("min_all", {A}, [&] { return A.min(); }); }
  {
    Tensor A = leaf({3, 4});
    auto [v, i] = A.max(1);
    fact("max_dim.indices", i);
    op("max_dim", {A}, [&] { return v; });
  }
  { Tensor A = leaf({3, 4}); op("softmax", {A}, [&] { return torch::softmax(A, 1); }); }
  { Tensor A = leaf({3, 4}); op("log_softmax", {A}, [&] { return torch::log_softmax(A, 0); }); }
  { Tensor A = leaf({3, 4}), B = leaf({3, 4}); op("mse_loss", {A, B}, [&] { return torch::mse_loss(A, B); }); }
  {
    Tensor A = leaf({4, 5});
    Tensor target = torch::tensor({0, 3, 4, 1});
    op("cross_entropy", {A}, [&] { return torch::nn::functional::cross_entropy(A, target); });
  }
  { Tensor A = leaf({2, 3}); op("clone", {A}, [&] { return A.clone(); }); }
  { Tensor A = leaf({3, 4}); op("masked_fill", {A}, [&] { return A.masked_fill(A > 0.3, -1.5); }); }
  { Tensor A = leaf({3, 4}); op("masked_fill_bcast", {A}, [&] { return A.masked_fill(torch::tensor({true, false, true, false}), 2); }); }
  // In-place on non-leaves.
  { Tensor A = leaf({4}); op("inplace_chain", {A}, [&] {
      Tensor c = A * 1;
      c.add_(2).mul_(A).div_(3).pow_(2).exp_();
      return c;
    }); }
  { Tensor A = leaf({4}); op("inplace_ops", {A}, [&] {
      Tensor c = A * 1;
      c += 1;
      c -= A;
      c *= 2;
      c /= 4;
      return c.relu_().clamp_(0, 1);
    }); }
  { Tensor A = leaf({3}); op("copy_fill", {A}, [&] {
      Tensor c = A * 1;
      c.fill_(2);
      Tensor b = A * 1;
      b.copy_(c);
      return b * A;
    }); }
  // Factories.
  fact("factory.zeros", torch::zeros({2, 3}));
  fact("factory.ones", torch::ones({2}, torch::kDouble));
  fact("factory.full", torch::full({2, 2}, 7.5));
  fact("factory.arange", torch::arange(5));
  fact("factory.arange_step", torch::arange(0., 1., 0.25));
  fact("factory.eye", torch::eye(3));
  fact("factory.tensor_nested", torch::tensor({{1., 2.}, {3., 4.}}));
  torch::manual_seed(7);
  fact("factory.randn_20", torch::randn({20}));
  fact("factory.rand_5", torch::rand({5}));
  // Tensors without elements are contiguous whatever their strides, and
  // copying one costs nothing even when its shape is astronomical.
  for (auto [label, t] : {std::pair{"empty.t", torch::empty({2, 0}).t()},
                          {"empty.permuted", torch::empty({3, 0, 2}).permute({2, 0, 1})},
                          {"empty.huge_t", torch::empty({int64_t{1} << 40, 0}).t()}}) {
    emit(std::string(label) + ".layout", {{"contiguous", t.is_contiguous()}, {"strides", t.strides().vec()},
                                          {"clone_numel", t.clone().numel()}, {"sizes", t.contiguous().sizes().vec()}});
  }
  // Spellings students reach for (found by independent submissions): the
  // free functions of the logarithms, and scalar_tensor's dtype.
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("log10", {A}, [&] { return torch::log10(A); }); }
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("log2_free", {A}, [&] { return torch::log2(A); }); }
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("log1p_free", {A}, [&] { return torch::log1p(A); }); }
  { Tensor A = (leaf({5}).detach().abs() + 0.1).requires_grad_(); op("log10_method", {A}, [&] { return A.log10(); }); }
  { Tensor A = leaf({5}); op("tan", {A}, [&] { return torch::tan(A); }); }
  { Tensor A = leaf({2, 3}); op("tan_method", {A}, [&] { return A.tan(); }); }
  { Tensor A = leaf({4}); op("tan_create_graph", {A}, [&] { return torch::autograd::grad({A.tan().sum()}, {A}, {}, true, true)[0]; }); }
  fact("scalar_tensor.double", torch::scalar_tensor(-2.0));
  fact("scalar_tensor.int", torch::scalar_tensor(5));
  fact("scalar_tensor.options", torch::scalar_tensor(3, torch::dtype(torch::kDouble).requires_grad(true)));
  {  // a NaN is close to nothing, unless equal_nan; equal infinities are close
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    Tensor a = torch::tensor({nan, 1.0, inf, -inf, 2.0}), b = torch::tensor({nan, 1.0 + 1e-9, inf, inf, nan});
    fact("isclose", torch::isclose(a, b));
    fact("isclose.equal_nan", torch::isclose(a, b, 1e-5, 1e-8, true));
    fact("allclose.nan", torch::tensor(torch::allclose(a.slice(0, 0, 3), b.slice(0, 0, 3))));
    fact("allclose.equal_nan", torch::tensor(torch::allclose(a.slice(0, 0, 3), b.slice(0, 0, 3), 1e-5, 1e-8, true)));
    fact("allclose.method.equal_nan", torch::tensor(a.slice(0, 0, 3).allclose(b.slice(0, 0, 3), 1e-5, 1e-8, true)));
  }
}

}  // namespace

int main() {
  std::cout.precision(17);
  course();
  ops();
  return 0;
}

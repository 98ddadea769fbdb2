// Spellings, engine vs LibTorch: the free-function and in-place forms of
// ops, a number on the left of a comparison, elementwise max/min, the
// NaN/inf tests, dtypes and devices as values (x.dtype() as options,
// x.to(other), device.type()), and the lists torch::tensor refuses.
// Built against both; see CMakeLists.txt.
#include "facts_common.h"

using facts::attempt;
using facts::emit;
using facts::fact;
using facts::json;
using torch::Tensor;

namespace {

// masked_fill_ with a number or a 0-d tensor, the free view functions, and
// mse_loss of a float and a double tensor.
void free_and_inplace_forms() {
  {
    Tensor x = torch::tensor({1.0, -2.0, 3.0}, torch::requires_grad()), h = x * 2;
    h.masked_fill_(h < 0, 0.5);
    fact("masked_fill_", h);
    (h * h).sum().backward();
    fact("masked_fill_.leaf", x);
    Tensor y = torch::tensor({1.0, 2.0}, torch::requires_grad()), m = y * 1;
    m.masked_fill_(torch::tensor({true, false}), torch::tensor(7.0));
    fact("masked_fill_.tensor", m);
  }
  {
    Tensor x = torch::arange(6, torch::kDouble).view({2, 3}).requires_grad_(), h = x * 1;
    auto parts = torch::split(h, 2, 1);
    fact("free.split", parts[1]);
    fact("free.chunk", torch::chunk(h, 3, 1)[2]);
    fact("free.narrow", torch::narrow(h, 1, 1, 2));
    fact("free.select", torch::select(h, 0, 1));
    fact("free.permute", torch::permute(h, {1, 0}));
    fact("free.unbind", torch::unbind(h, 1)[0]);
  }
  {
    Tensor a = torch::tensor({1.0, 2.0}, torch::requires_grad());
    Tensor b = torch::tensor({1.5, 2.5}, torch::dtype(torch::kDouble));
    attempt("mse.mixed", [&] { fact("mse.mixed.value", torch::mse_loss(a, b)); });
  }
}

void numbers_on_the_left() {
  const Tensor x = torch::tensor({-1.0f, 0.0f, 2.0f});
  fact("0 < x", 0 < x);
  fact("1 > x", 1 > x);
  fact("0.0 <= x", 0.0 <= x);
  fact("2 >= x", 2 >= x);
  fact("1.0 == x + 1", 1.0 == x + 1);
  fact("0 != x", 0 != x);
}

void elementwise_extremes() {
  Tensor a = torch::tensor({1.0f, 5.0f, 3.0f}, torch::requires_grad());
  Tensor b = torch::tensor({4.0f, 2.0f, 3.0f}, torch::requires_grad());
  Tensor hi = torch::max(a, b), lo = torch::min(a, b);
  fact("torch::max(a, b)", hi);
  fact("torch::min(a, b)", lo);
  fact("a.max(b)", a.max(b));
  fact("a.min(b)", a.min(b));
  (hi + lo).sum().backward();
  fact("max + min: a.grad", a.grad());
  fact("max + min: b.grad", b.grad());
  const Tensor c = torch::tensor({1.0f, NAN, INFINITY, -INFINITY});
  fact("isnan", torch::isnan(c));
  fact("isinf", torch::isinf(c));
  fact("isfinite", torch::isfinite(c));
  fact("x.isnan()", c.isnan());
  fact("isinf of integers", torch::isinf(torch::tensor({1, 2})));
  fact("isfinite of integers", torch::isfinite(torch::tensor({1, 2})));
}

void dtypes_and_devices() {
  const Tensor x = torch::ones({2}, torch::kDouble);
  fact("zeros({2}, x.dtype())", torch::zeros({2}, x.dtype()));
  fact("TensorOptions().dtype(x.dtype())", torch::zeros({2}, torch::TensorOptions().dtype(x.dtype())));
  fact("ones.to(x)", torch::ones({2}).to(x));
  fact("ones({1}, x.dtype().toScalarType())", torch::ones({1}, x.dtype().toScalarType()));
  const torch::Device cpu = x.device(), gpu(torch::kCUDA, 1);
  emit("device accessors", json{{"cpu type", cpu.type() == torch::kCPU}, {"cpu index", cpu.index()},
                                {"cpu has_index", cpu.has_index()}, {"gpu index", gpu.index()},
                                {"gpu has_index", gpu.has_index()}, {"gpu str", gpu.str()},
                                {"parsed", gpu == torch::Device("cuda:1")}});
}

void tensor_lists() {
  attempt("tensor({1.0f, 2.0})", [] { torch::tensor({1.0f, 2.0}); });
  attempt("tensor({{1.0, 2.0}, {3.0f, 4.0f}})", [] { torch::tensor({{1.0, 2.0}, {3.0f, 4.0f}}); });
  attempt("tensor({1, 2.5})", [] { torch::tensor({1, 2.5}); });
  attempt("tensor({true, 1})", [] { torch::tensor({true, 1}); });
  attempt("tensor({int64_t(1), 2})", [] { torch::tensor({int64_t(1), 2}); });
  fact("tensor({1, 2})", torch::tensor({1, 2}));
  fact("tensor({int64_t(1), int64_t(2)})", torch::tensor({int64_t(1), int64_t(2)}));
  fact("tensor({1.5, 2.5})", torch::tensor({1.5, 2.5}));
  fact("tensor({true, false})", torch::tensor({true, false}));
  fact("tensor(3)", torch::tensor(3));
  fact("tensor(std::vector<int>)", torch::tensor(std::vector<int>{1, 2}));
  fact("tensor(std::vector<int64_t>)", torch::tensor(std::vector<int64_t>{1, 2}));
  fact("tensor({1, 2}, kFloat)", torch::tensor({1, 2}, torch::kFloat));
}

// The fused forms students reach for: torch::rsub (RsubBackward0/1, not the
// SubBackward0 of `10 - d`), addcmul and addcdiv with their in-place forms
// (one node each), the softmax options; values, nodes, next functions and
// gradients, and the errors (integer addcdiv, a leaf changed in place).
void fused_forms() {
  auto leaf = [](std::vector<double> v) { return torch::tensor(v, torch::dtype(torch::kDouble)).requires_grad_(); };
  {
    Tensor d = leaf({1.5, -2.0, 0.25});
    Tensor e = leaf({0.5, 3.0, -1.0});
    Tensor r0 = torch::rsub(d, e), r1 = torch::rsub(d, 10), r2 = torch::rsub(d, e, 3), r3 = torch::rsub(d, 10.5, -2);
    Tensor op = 10 - d;
    fact("rsub(d, e)", r0);
    fact("rsub(d, 10)", r1);
    fact("rsub(d, e, 3)", r2);
    fact("rsub(d, 10.5, -2)", r3);
    fact("10 - d", op);
    (r0 * r1 + r2 * r3 + op).sum().backward();
    fact("rsub: d.grad", d.grad());
    fact("rsub: e.grad", e.grad());
    fact("rsub of ints", torch::rsub(torch::tensor({1, 2}), 5));
  }
  {
    Tensor s = leaf({1.0, 2.0, 3.0});
    Tensor a = leaf({0.5, -1.5, 2.0});
    Tensor b = leaf({4.0, 0.25, -3.0});
    Tensor m = torch::addcmul(s, a, b, 0.5), q = torch::addcdiv(s, a, b, -2), mm = s.addcmul(a, b), qq = s.addcdiv(a, b);
    fact("addcmul(s, a, b, 0.5)", m);
    fact("addcdiv(s, a, b, -2)", q);
    fact("s.addcmul(a, b)", mm);
    fact("s.addcdiv(a, b)", qq);
    (m * q + mm + qq * qq).sum().backward();
    fact("addc: s.grad", s.grad());
    fact("addc: a.grad", a.grad());
    fact("addc: b.grad", b.grad());
    Tensor h = s * 1;
    h.addcmul_(a, b, 2);
    fact("h.addcmul_(a, b, 2)", h);
    h.addcdiv_(b, a);
    fact("h.addcdiv_(b, a)", h);
    Tensor row = torch::tensor({1.0, 2.0}, torch::kDouble), col = torch::tensor({{3.0}, {4.0}}, torch::kDouble);
    fact("addcmul broadcast", torch::addcmul(row, col, row));
    attempt("addcmul_ broadcast into a row", [&] { Tensor r = row.clone(); r.addcmul_(col, row); });
    attempt("addcdiv of ints", [] { torch::addcdiv(torch::ones({2}), torch::tensor({1, 2}), torch::tensor({2, 3})); });
    attempt("addcmul_ on a leaf", [&] { s.addcmul_(a, b); });
    Tensor x = leaf({1.0, 2.0});
    Tensor w = x * 1;
    Tensor y = torch::addcmul(x, w, w);
    attempt("addcmul then w changed in place", [&] {
      w.mul_(2);
      y.sum().backward();
    });
  }
  {
    namespace F = torch::nn::functional;
    Tensor x = torch::tensor({{1.0, 2.0, 0.5}, {-1.0, 0.0, 3.0}}, torch::requires_grad());
    Tensor p = F::softmax(x, F::SoftmaxFuncOptions(1)), lp = F::log_softmax(x, F::LogSoftmaxFuncOptions(0));
    Tensor pd = F::softmax(x, F::SoftmaxFuncOptions(1).dtype(torch::kDouble));
    fact("F::softmax(x, SoftmaxFuncOptions(1))", p);
    fact("F::log_softmax(x, LogSoftmaxFuncOptions(0))", lp);
    fact("F::softmax(x, SoftmaxFuncOptions(1).dtype(kDouble))", pd);
    (p * lp).sum().backward();
    fact("softmax options: x.grad", x.grad());
  }
}

// What a node keeps, seen from outside: mean over a dim keeps its input (a
// second backward through it raises), prod keeps its input even when it is
// 0-d (an in-place change after it raises), and an in-place op refuses an
// operand that reads the memory it writes.
void kept_for_backward() {
  {
    Tensor x = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, torch::requires_grad()), y = x.mean(0);
    y.sum().backward();
    attempt("mean(0): a second backward", [&] { y.sum().backward(); });
    Tensor z = x.mean();
    z.backward();
    attempt("mean(): a second backward", [&] { z.backward(); });
    fact("mean twice: x.grad", x.grad());
  }
  for (const bool scalar : {true, false}) {
    Tensor a = scalar ? torch::tensor(3.0, torch::requires_grad()) : torch::tensor({3.0}, torch::requires_grad());
    Tensor h = a * 1, p = h.prod();
    attempt(std::string("prod of a ") + (scalar ? "0-d" : "1-d") + " tensor changed in place", [&] {
      h.mul_(2);
      p.backward();
    });
  }
  {
    Tensor t = torch::tensor({1.0, 2.0, 3.0});
    attempt("t.mul_(t[1])", [&] { t.mul_(t[1]); });
    attempt("t.add_(t.flip(0))", [&] { t.add_(t.flip(0)); });
    attempt("t.add_(t)", [&] { t.add_(t); });
    fact("t after", t);
  }
}

// PyTorch's other names for ops (the API sweep's first todo group): the
// same values, the same nodes, the same gradients, methods and free
// functions, in-place forms bumping the version as the op's do.
void other_names() {
  Tensor x = torch::tensor({0.25, -0.5, 0.75}, torch::requires_grad());
  Tensor y = torch::tensor({2.0, -4.0, 0.5}, torch::requires_grad());
  const std::vector<std::pair<const char*, Tensor>> unary = {
      {"absolute", x.absolute()}, {"torch::absolute", torch::absolute(x)}, {"arccos", x.arccos()},
      {"torch::arccos", torch::arccos(x)}, {"arcsin", x.arcsin()},        {"torch::arcsin", torch::arcsin(x)},
      {"arctan", x.arctan()},     {"torch::arctan", torch::arctan(x)},     {"negative", x.negative()},
      {"torch::negative", torch::negative(x)}, {"fix", (x * 3).fix()},    {"torch::fix", torch::fix(x * 3)},
      {"clip", x.clip(-0.3, 0.3)}, {"torch::clip", torch::clip(x, -0.3, 0.3)}, {"clip min only", x.clip(0.0)},
      {"ravel", (x * 1).view({3, 1}).t().ravel()}, {"torch::ravel", torch::ravel(x.view({3, 1}))},
  };
  Tensor total = torch::zeros({}, torch::kDouble);
  for (const auto& [label, t] : unary) {
    fact(std::string("name.") + label, t);
    total = total + t.sum();
  }
  const std::vector<std::pair<const char*, Tensor>> binary = {
      {"multiply", x.multiply(y)},       {"multiply number", x.multiply(3)},    {"torch::multiply", torch::multiply(x, y)},
      {"divide", x.divide(y)},           {"divide number", x.divide(4)},        {"torch::divide", torch::divide(x, y)},
      {"true_divide", x.true_divide(y)}, {"torch::true_divide", torch::true_divide(x, 2)},
      {"subtract", x.subtract(y)},       {"subtract alpha", x.subtract(y, 2)},  {"subtract number", x.subtract(1)},
      {"torch::subtract", torch::subtract(x, y, 3)},
  };
  for (const auto& [label, t] : binary) {
    fact(std::string("name.") + label, t);
    total = total + t.sum();
  }
  total.backward();
  fact("name.all: x.grad", x.grad());
  fact("name.all: y.grad", y.grad());
  fact("name.greater", x.greater(y));
  fact("name.greater_equal number", x.greater_equal(0.25));
  fact("name.less", torch::less(x, y));
  fact("name.less_equal", x.less_equal(y));
  fact("name.not_equal number", torch::not_equal(x, 0.25));
  Tensor m = torch::arange(6, torch::kDouble).view({2, 3}).requires_grad_();
  fact("name.swapaxes", m.swapaxes(0, 1));
  fact("name.torch::swapdims", torch::swapdims(m * 1, 1, 0));
  fact("name.concat", torch::concat({m, m * 2}, 1));
  fact("name.concatenate", torch::concatenate({m, m}));
  Tensor h = x * 1;  // in-place forms on a non-leaf
  h.absolute_();
  h.negative_();
  h.clip_(-0.6, 0.6);
  h.multiply_(2);
  h.divide_(y);
  h.subtract_(x, 0.5);
  h.fix_();
  fact("name.in place", h);
}

// The elementwise math the course's losses and activations reach for
// (acosh, asinh, atanh, erfc, exp2, frac, deg2rad, rad2deg) and their other
// names (arccosh, arcsinh, arctanh): values, nodes, gradients, the in-place
// forms' versions, and each op's second derivative where it has one.
void elementwise_math() {
  Tensor x = torch::tensor({1.5, 2.0, 3.25}, torch::requires_grad());  // past 1: acosh's domain
  Tensor u = torch::tensor({-0.75, 0.1, 0.5}, torch::requires_grad());  // inside (-1, 1): atanh's
  const std::vector<std::pair<const char*, Tensor>> ops = {
      {"acosh", x.acosh()},     {"torch::acosh", torch::acosh(x)},  {"arccosh", x.arccosh()},
      {"torch::arccosh", torch::arccosh(x)}, {"asinh", u.asinh()},  {"torch::asinh", torch::asinh(u)},
      {"arcsinh", u.arcsinh()}, {"torch::arcsinh", torch::arcsinh(x)}, {"atanh", u.atanh()},
      {"torch::atanh", torch::atanh(u)}, {"arctanh", u.arctanh()},   {"torch::arctanh", torch::arctanh(u)},
      {"erfc", u.erfc()},       {"torch::erfc", torch::erfc(x)},    {"exp2", u.exp2()},
      {"torch::exp2", torch::exp2(x)}, {"frac", (x * -1.5).frac()},  {"torch::frac", torch::frac(u * 3)},
      {"deg2rad", x.deg2rad()}, {"torch::deg2rad", torch::deg2rad(u)}, {"rad2deg", u.rad2deg()},
      {"torch::rad2deg", torch::rad2deg(x)},
  };
  Tensor total = torch::zeros({}, torch::kDouble);
  for (const auto& [label, t] : ops) {
    fact(std::string("math.") + label, t);
    total = total + t.sum();
  }
  // The gradients, then the second derivatives through each backward.
  const auto g = torch::autograd::grad({total}, {x, u}, {}, /*retain_graph=*/true, /*create_graph=*/true);
  fact("math.all: d/dx", g[0]);
  fact("math.all: d/du", g[1]);
  const auto xx = torch::autograd::grad({g[0].sum()}, {x}, {}, true, false, true);
  const auto uu = torch::autograd::grad({g[1].sum()}, {u}, {}, true, false, true);
  fact("math.all: d(x.grad)/dx", xx[0]);
  fact("math.all: d(u.grad)/du", uu[0]);
  // Integers: deg2rad and exp2 make floats, as LibTorch does.
  fact("math.deg2rad of ints", torch::tensor({90, 180}).deg2rad());
  fact("math.exp2 of ints", torch::exp2(torch::tensor({1, 3})));
  Tensor h = u * 1;  // in-place forms on a non-leaf
  h.asinh_();
  h.arcsinh_();
  h.atanh_();
  h.arctanh_();
  h.erfc_();
  h.exp2_();
  h.frac_();
  h.deg2rad_();
  h.rad2deg_();
  fact("math.in place", h);
  Tensor k = x * 1;
  k.acosh_();
  k.add_(1).arccosh_();
  torch::asinh_(k);
  torch::atanh_(k.mul_(0.1));
  torch::erfc_(k);
  torch::exp2_(k);
  torch::frac_(k);
  torch::deg2rad_(k);
  torch::rad2deg_(k);
  fact("math.in place, torch::", k);
  // The free in-place forms of the ops the engine had, and of their other
  // names, each on a copy of its own (a chain would change what an earlier
  // one saved for backward).
  const std::vector<std::pair<const char*, Tensor& (*)(Tensor&)>> free_inplace = {
      {"abs_", torch::abs_},         {"neg_", torch::neg_},         {"exp_", torch::exp_},
      {"sigmoid_", torch::sigmoid_}, {"tanh_", torch::tanh_},       {"relu_", torch::relu_},
      {"arccos_", torch::arccos_},   {"negative_", torch::negative_}, {"arctan_", torch::arctan_},
      {"fix_", torch::fix_},         {"round_", torch::round_},     {"log1p_", torch::log1p_},
  };
  Tensor sum = torch::zeros({}, torch::kDouble);
  for (const auto& [label, f] : free_inplace) {
    Tensor t = u * 1;
    f(t);
    fact(std::string("math.torch::") + label, t);
    sum = sum + t.sum();
  }
  sum.backward();
  fact("math.free in-place forms: u.grad", u.grad());
}

}  // namespace

int main() {
  free_and_inplace_forms();
  numbers_on_the_left();
  elementwise_extremes();
  dtypes_and_devices();
  tensor_lists();
  fused_forms();
  kept_for_backward();
  other_names();
  elementwise_math();
}

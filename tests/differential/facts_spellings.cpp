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

}  // namespace

int main() {
  free_and_inplace_forms();
  numbers_on_the_left();
  elementwise_extremes();
  dtypes_and_devices();
  tensor_lists();
}

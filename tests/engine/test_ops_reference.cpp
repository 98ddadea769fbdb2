// Every ops.* case of the LibTorch reference whose op the engine provides:
// the same expression on the same inputs must give the recorded output
// (value, shape, grad_fn, next functions, version...) and the recorded
// gradients of every input after out.backward(ones_like(out)).
#include <functional>

#include "reference.h"

namespace {
using torch::Tensor;
using torch::indexing::Slice;
namespace F = torch::nn::functional;

struct Inputs {
  Tensor A = torch::tensor({{1., 2.}, {3., 4.}}, torch::requires_grad());
  Tensor B = torch::tensor({{0.5, -1.}, {2., 0.25}}, torch::requires_grad());
  Tensor X = torch::tensor({{-1., 0.}, {2., -3.}}, torch::requires_grad());
  Tensor v = torch::tensor({1., -2.}, torch::requires_grad());
  Tensor s = torch::tensor(2., torch::requires_grad());
  Tensor N = torch::tensor({{1., 0.}, {0., 1.}});
  Tensor C;
  Tensor& by_name(const std::string& n) {
    if (n == "A") return A;
    if (n == "B") return B;
    if (n == "X") return X;
    if (n == "v") return v;
    if (n == "s") return s;
    if (n == "N") return N;
    return C;
  }
};

using Expr = std::function<Tensor(Inputs&)>;
// Case id -> the C++ expression the case recorded (its "forward" statement).
const std::vector<std::pair<std::string, Expr>> kCases = {
    {"ops.add.tensor_tensor", [](Inputs& i) { return i.A + i.B; }},
    {"ops.add.tensor_scalar", [](Inputs& i) { return i.A + 2; }},
    {"ops.add.scalar_tensor", [](Inputs& i) { return 2 + i.A; }},
    {"ops.add.no_grad_operand", [](Inputs& i) { return i.A + i.N; }},
    {"ops.add.torch_add", [](Inputs& i) { return torch::add(i.A, i.B); }},
    {"ops.add.broadcast_vector", [](Inputs& i) { return i.A + i.v; }},
    {"ops.sub.tensor_tensor", [](Inputs& i) { return i.A - i.B; }},
    {"ops.sub.tensor_scalar", [](Inputs& i) { return i.A - 2; }},
    {"ops.sub.scalar_tensor", [](Inputs& i) { return 2 - i.A; }},
    {"ops.sub.method", [](Inputs& i) { return i.A.sub(i.B); }},
    {"ops.mul.tensor_tensor", [](Inputs& i) { return i.A * i.B; }},
    {"ops.mul.tensor_scalar", [](Inputs& i) { return i.A * 2; }},
    {"ops.mul.scalar_tensor", [](Inputs& i) { return 2 * i.A; }},
    {"ops.mul.no_grad_operand", [](Inputs& i) { return i.A * i.N; }},
    {"ops.mul.method", [](Inputs& i) { return i.A.mul(i.B); }},
    {"ops.div.tensor_tensor", [](Inputs& i) { return i.A / i.B; }},
    {"ops.div.tensor_scalar", [](Inputs& i) { return i.A / 2; }},
    {"ops.div.scalar_tensor", [](Inputs& i) { return 2 / i.A; }},
    {"ops.div.method", [](Inputs& i) { return i.A.div(i.B); }},
    {"ops.neg.operator", [](Inputs& i) { return -i.A; }},
    {"ops.neg.method", [](Inputs& i) { return i.A.neg(); }},
    {"ops.neg.torch", [](Inputs& i) { return torch::neg(i.A); }},
    {"ops.pow.int_exponent", [](Inputs& i) { return i.A.pow(2); }},
    {"ops.pow.method", [](Inputs& i) { return i.A.pow(2); }},
    {"ops.pow.float_exponent", [](Inputs& i) { return i.A.pow(0.5); }},
    {"ops.pow.tensor_exponent", [](Inputs& i) { return i.A.pow(i.B); }},
    {"ops.pow.scalar_base", [](Inputs& i) { return torch::pow(2, i.A); }},
    {"ops.pow.torch_scalar_base", [](Inputs& i) { return torch::pow(2, i.A); }},
    {"ops.pow.square", [](Inputs& i) { return i.A.square(); }},
    {"ops.pow.of_zero_negative_base", [](Inputs& i) { return i.X.pow(2); }},
    {"ops.exp.method", [](Inputs& i) { return i.A.exp(); }},
    {"ops.exp.torch", [](Inputs& i) { return torch::exp(i.A); }},
    {"ops.log.method", [](Inputs& i) { return i.A.log(); }},
    {"ops.log.torch", [](Inputs& i) { return torch::log(i.A); }},
    {"ops.tanh.method", [](Inputs& i) { return i.X.tanh(); }},
    {"ops.tanh.torch", [](Inputs& i) { return torch::tanh(i.X); }},
    {"ops.relu.method", [](Inputs& i) { return i.X.relu(); }},
    {"ops.relu.torch", [](Inputs& i) { return torch::relu(i.X); }},
    {"ops.relu.functional", [](Inputs& i) { return F::relu(i.X); }},
    {"ops.relu.module", [](Inputs& i) { return torch::nn::ReLU()(i.X); }},
    {"ops.sigmoid.method", [](Inputs& i) { return i.X.sigmoid(); }},
    {"ops.sigmoid.torch", [](Inputs& i) { return torch::sigmoid(i.X); }},
    {"ops.sum.all", [](Inputs& i) { return i.A.sum(); }},
    {"ops.sum.dim0", [](Inputs& i) { return i.A.sum(0); }},
    {"ops.sum.dim1", [](Inputs& i) { return i.A.sum(1); }},
    {"ops.sum.torch", [](Inputs& i) { return torch::sum(i.A); }},
    {"ops.mean.all", [](Inputs& i) { return i.A.mean(); }},
    {"ops.mean.dim0", [](Inputs& i) { return i.A.mean(0); }},
    {"ops.mm.method", [](Inputs& i) { return i.A.mm(i.B); }},
    {"ops.mm.torch", [](Inputs& i) { return torch::mm(i.A, i.B); }},
    {"ops.mm.no_grad_operand", [](Inputs& i) { return i.A.mm(i.N); }},
    {"ops.matmul.method_2d", [](Inputs& i) { return i.A.matmul(i.B); }},
    {"ops.matmul.matrix_vector", [](Inputs& i) { return i.A.matmul(i.v); }},
    {"ops.matmul.vector_matrix", [](Inputs& i) { return i.v.matmul(i.A); }},
    {"ops.mv", [](Inputs& i) { return i.A.mv(i.v); }},
    {"ops.dot", [](Inputs& i) { return torch::dot(i.v, i.v); }},
    {"ops.t.method", [](Inputs& i) { return i.A.t(); }},
    {"ops.t.permute", [](Inputs& i) { return i.A.permute({1, 0}); }},
    {"ops.transpose", [](Inputs& i) { return i.A.transpose(0, 1); }},
    {"ops.view", [](Inputs& i) { return i.A.view({4}); }},
    {"ops.reshape", [](Inputs& i) { return i.A.reshape({4}); }},
    {"ops.flatten", [](Inputs& i) { return i.A.flatten(); }},
    {"ops.unsqueeze", [](Inputs& i) { return i.A.unsqueeze(0); }},
    {"ops.squeeze", [](Inputs& i) { return i.A.unsqueeze(0).squeeze(); }},
    {"ops.index.int", [](Inputs& i) { return i.A[0]; }},
    {"ops.index.slice_column", [](Inputs& i) { return i.A.index({Slice(), 1}); }},
    {"ops.index.element", [](Inputs& i) { return i.A.index({0, 1}); }},
    {"ops.index.mask", [](Inputs& i) { return i.A.index({i.A > 2}); }},
    {"ops.index.list", [](Inputs& i) { return i.A.index({torch::tensor({0, 0, 1})}); }},
    {"ops.expand", [](Inputs& i) { return i.A.expand({3, 2, 2}); }},
    {"ops.clone", [](Inputs& i) { return i.A.clone(); }},
    {"ops.contiguous_noop", [](Inputs& i) { return i.A.contiguous(); }},
    {"ops.float_noop", [](Inputs& i) { return i.A.to(torch::kFloat); }},
    {"ops.double", [](Inputs& i) { return i.A.to(torch::kDouble); }},
    {"ops.cat", [](Inputs& i) { return torch::cat({i.A, i.B}); }},
    {"ops.stack", [](Inputs& i) { return torch::stack({i.A, i.B}); }},
    {"ops.where", [](Inputs& i) { return torch::where(i.N > 0, i.A, i.B); }},
    {"ops.max.all", [](Inputs& i) { return i.A.max(); }},
    {"ops.min.all", [](Inputs& i) { return i.A.min(); }},
    {"ops.max.dim_values", [](Inputs& i) { return std::get<0>(i.A.max(0)); }},
    {"ops.maximum", [](Inputs& i) { return torch::maximum(i.A, i.B); }},
    {"ops.abs", [](Inputs& i) { return i.X.abs(); }},
    {"ops.sign", [](Inputs& i) { return i.X.sign(); }},
    {"ops.sqrt", [](Inputs& i) { return i.A.sqrt(); }},
    {"ops.rsqrt", [](Inputs& i) { return i.A.rsqrt(); }},
    {"ops.reciprocal", [](Inputs& i) { return i.A.reciprocal(); }},
    {"ops.sin", [](Inputs& i) { return i.A.sin(); }},
    {"ops.cos", [](Inputs& i) { return i.A.cos(); }},
    {"ops.log1p", [](Inputs& i) { return i.A.log1p(); }},
    {"ops.expm1", [](Inputs& i) { return i.A.expm1(); }},
    {"ops.log2", [](Inputs& i) { return i.A.log2(); }},
    {"ops.floor", [](Inputs& i) { return i.X.floor(); }},
    {"ops.softmax", [](Inputs& i) { return torch::softmax(i.A, 1); }},
    {"ops.log_softmax", [](Inputs& i) { return torch::log_softmax(i.A, 1); }},
    {"ops.mse_loss", [](Inputs& i) { return torch::mse_loss(i.A, i.B); }},
    {"ops.cross_entropy", [](Inputs& i) { return F::cross_entropy(i.A, torch::tensor({0, 1})); }},
    {"ops.argmax_no_grad", [](Inputs& i) { return i.A.argmax(); }},
    {"ops.detach", [](Inputs& i) { return i.A.detach(); }},
    {"ops.comparison", [](Inputs& i) { return i.A > i.B; }},
    {"ops.inplace.add_", [](Inputs& i) { return (i.C = i.A * 1).add_(1); }},
    {"ops.inplace.sub_", [](Inputs& i) { return (i.C = i.A * 1).sub_(1); }},
    {"ops.inplace.mul_scalar", [](Inputs& i) { return (i.C = i.A * 1).mul_(2); }},
    {"ops.inplace.mul_tensor", [](Inputs& i) { return (i.C = i.A * 1).mul_(i.B); }},
    {"ops.inplace.div_", [](Inputs& i) { return (i.C = i.A * 1).div_(2); }},
    {"ops.inplace.exp_", [](Inputs& i) { return (i.C = i.A * 1).exp_(); }},
    {"ops.inplace.tanh_", [](Inputs& i) { return (i.C = i.X * 1).tanh_(); }},
    {"ops.inplace.relu_", [](Inputs& i) { return (i.C = i.X * 1).relu_(); }},
    {"ops.inplace.sigmoid_", [](Inputs& i) { return (i.C = i.X * 1).sigmoid_(); }},
    {"ops.inplace.zero_", [](Inputs& i) { return (i.C = i.A * 1).zero_(); }},
    {"ops.inplace.fill_", [](Inputs& i) { return (i.C = i.A * 1).fill_(1.); }},
    {"ops.inplace.copy_", [](Inputs& i) { return (i.C = i.A * 1).copy_(i.B); }},
    {"ops.inplace.neg_", [](Inputs& i) { return (i.C = i.A * 1).neg_(); }},
    {"ops.inplace.log_", [](Inputs& i) { return (i.C = i.A * 1).log_(); }},
    {"ops.inplace.sqrt_", [](Inputs& i) { return (i.C = i.A * 1).sqrt_(); }},
    {"ops.inplace.abs_", [](Inputs& i) { return (i.C = i.X * 1).abs_(); }},
    {"ops.inplace.F_relu_inplace", [](Inputs& i) { return F::relu(i.C = i.X * 1, F::ReLUFuncOptions().inplace(true)); }},
};
}  // namespace

TEST_CASE("ops: every in-scope LibTorch ops case is reproduced", "[reference][ops]") {
  const auto& cases = ref::cpp()["cases"];
  for (const auto& [id, expr] : kCases) {
    DYNAMIC_SECTION(id) {
      REQUIRE(cases.contains(id));
      const auto& facts = cases[id]["facts"];
      Inputs in;
      Tensor out = expr(in);
      ref::check_tensor(facts["forward.out"], out);
      if (facts.contains("requires_grad")) CHECK(out.requires_grad() == facts["requires_grad"]["result"].get<bool>());
      if (!facts.contains("backward")) continue;
      ref::check_run(facts["backward"], [&] { out.backward(torch::ones_like(out)); });
      for (const auto& [label, rec] : facts.items()) {
        if (label.rfind("grads.", 0) != 0) continue;
        ref::check_tensor(rec, in.by_name(label.substr(6)));
      }
    }
  }
}

// LibTorch's fused pointwise ops: rsub (a subtraction the other way round,
// other - alpha·self) and addcmul / addcdiv (self + value·t1·t2, and /t2).
// Each is one node, as in PyTorch (RsubBackward0/1, AddcmulBackward0,
// AddcdivBackward0), and computes in the order PyTorch's kernels round in.
// (The C++ operator `2 - a` is not rsub: LibTorch spells it as a filled
// tensor updated in place, SubBackward0; binary.cpp.)
#include "ops/ops_internal.h"

namespace gradlab {

using backend::Binary;

namespace {

struct Alpha {
  double alpha = 1;
};
struct Value {
  double value = 1;
};

// -g·α as PyTorch writes it (maybe_multiply(-grad, alpha)).
Tensor neg_scaled(const Tensor& g, double alpha) { return alpha == 1 ? g.neg() : g.neg() * alpha; }

// d(o - αs) = (-α, 1), for (self, other)
GradList rsub_bw(Op<Alpha>& n, Grads& g) {
  return {n.should_compute_output(0) ? neg_scaled(g[0], n.alpha) : Tensor(),
          n.should_compute_output(1) ? g[0] : Tensor()};
}
GradList rsub_scalar_bw(Op<Alpha>& n, Grads& g) { return {neg_scaled(g[0], n.alpha)}; }

// d(s + v·t1·t2) = (1, g·(t2·v), g·(t1·v)); saved: t1 when t2 needs a
// gradient, t2 when t1 does (in that order, each or an empty slot).
GradList addcmul_bw(Op<Value>& n, Grads& g) {
  GradList r(3);
  if (n.should_compute_output(0)) r[0] = g[0];
  if (n.should_compute_output(1)) r[1] = g[0] * (n.saved_at(1) * n.value);
  if (n.should_compute_output(2)) r[2] = g[0] * (n.saved_at(0) * n.value);
  return r;
}
// d(s + v·t1/t2) = (1, g·(v/t2), -g·(v·t1/(t2·t2)))
GradList addcdiv_bw(Op<Value>& n, Grads& g) {
  GradList r(3);
  if (n.should_compute_output(0)) r[0] = g[0];
  if (n.should_compute_output(1)) r[1] = g[0] * (n.value / n.saved_at(1));
  if (n.should_compute_output(2)) {
    const Tensor t1 = n.saved_at(0), t2 = n.saved_at(1);
    r[2] = g[0].neg() * (t1 * n.value / (t2 * t2));
  }
  return r;
}

enum class Fused { Mul, Div };

void check_operands(const Tensor& self, const Tensor& t1, const Tensor& t2, Fused op) {
  check_defined(self, 0, "self");
  check_defined(t1, 1, "tensor1");
  check_defined(t2, 2, "tensor2");
  GRADLAB_CHECK(op == Fused::Mul || t1.is_floating_point() || t2.is_floating_point(),
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
                "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
                "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
                "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
                "(input + value * tensor1 / tensor2), for all dtypes.");
}

// self + value·t1·t2 (or ·t1/t2), out of place, outside any graph, rounded
// as PyTorch's kernel rounds: (value·t1)·t2, then self +.
Tensor fused_value(const Tensor& self, const Tensor& t1, const Tensor& t2, double value, Fused op) {
  autograd::NoGradGuard ng;
  const Tensor scaled = value == 1 ? t1 : t1 * value;
  return self + (op == Fused::Mul ? scaled * t2 : scaled / t2);
}

// out = self + value·t1 op t2, or into self; one node either way.
Tensor& fused_into(Tensor& out, const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar v, Fused op) {
  const bool inplace = out.is_same(self);
  check_operands(self, t1, t2, op);
  const double value = v.toDouble();
  Tensor r = fused_value(self, t1, t2, value, op);
  if (inplace) {
    check_inplace(self);
    check_no_partial_overlap(self, t1);
    check_no_partial_overlap(self, t2);
    check_can_cast(r.scalar_type(), self.scalar_type());
    GRADLAB_CHECK(r.sizes().equals(self.sizes()), "output with shape ", self.sizes(),
                  " doesn't match the broadcast shape ", r.sizes());
  }
  auto fn = record(op == Fused::Mul ? "AddcmulBackward0" : "AddcdivBackward0", {&self, &t1, &t2},
                   op == Fused::Mul ? addcmul_bw : addcdiv_bw, Value{value});
  if (fn) {
    // addcdiv reads t2 for either gradient; each keeps what the other's formula reads.
    const bool t1_needed = fn->should_compute_output(2), t2_needed = fn->should_compute_output(1) || (op == Fused::Div && fn->should_compute_output(2));
    fn->save(t1_needed ? t1 : Tensor());
    fn->save(t2_needed ? t2 : Tensor());
  }
  if (inplace) backend::of(self).copy(self, r);
  else out = r;
  finish_written(std::move(fn), self, out, inplace);
  return out;
}

}  // namespace

Tensor rsub(const Tensor& self, const Tensor& other, Scalar alpha) {
  GRADLAB_TAPE("rsub", rsub(self, other, alpha), self, other, alpha);
  check_defined(self, 0, "self");
  check_defined(other, 1, "other");
  Tensor out = binary_kernel(Binary::Sub, other, self, result_type(self, other), alpha.toDouble());
  if (auto fn = record("RsubBackward0", {&self, &other}, rsub_bw, Alpha{alpha.toDouble()})) finish(std::move(fn), out);
  return out;
}

Tensor rsub(const Tensor& self, Scalar other, Scalar alpha) {
  GRADLAB_TAPE("rsub", rsub(self, other, alpha), self, other, alpha);
  check_defined(self, 0, "self");
  const ScalarType type = result_type(self, other);
  Tensor out = binary_kernel(Binary::Sub, scalar_like(other, self, type), self, type, alpha.toDouble());
  if (auto fn = record("RsubBackward1", {&self}, rsub_scalar_bw, Alpha{alpha.toDouble()})) finish(std::move(fn), out);
  return out;
}

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  GRADLAB_TAPE("addcmul", addcmul(self, t1, t2, value), self, t1, t2, value);
  Tensor out;
  return fused_into(out, self, t1, t2, value, Fused::Mul);
}
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value) {
  GRADLAB_TAPE("addcdiv", addcdiv(self, t1, t2, value), self, t1, t2, value);
  Tensor out;
  return fused_into(out, self, t1, t2, value, Fused::Div);
}
Tensor Tensor::addcmul(const Tensor& t1, const Tensor& t2, Scalar value) const {
  return gradlab::addcmul(*this, t1, t2, value);
}
Tensor Tensor::addcdiv(const Tensor& t1, const Tensor& t2, Scalar value) const {
  return gradlab::addcdiv(*this, t1, t2, value);
}
Tensor& Tensor::addcmul_(const Tensor& t1, const Tensor& t2, Scalar value) const {
  GRADLAB_TAPE("addcmul_", addcmul_(t1, t2, value), *this, t1, t2, value);
  Tensor& self = const_cast<Tensor&>(*this);
  return fused_into(self, self, t1, t2, value, Fused::Mul);
}
Tensor& Tensor::addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value) const {
  GRADLAB_TAPE("addcdiv_", addcdiv_(t1, t2, value), *this, t1, t2, value);
  Tensor& self = const_cast<Tensor&>(*this);
  return fused_into(self, self, t1, t2, value, Fused::Div);
}

}  // namespace gradlab

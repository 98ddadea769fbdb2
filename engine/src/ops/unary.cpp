// Unary elementwise ops. Each backward sits beside its forward; the comment
// on each is the derivative it implements.
#include <cmath>

#include "ops/ops_internal.h"

namespace gradlab {

using backend::Unary;

namespace {
enum Save : uint8_t { kNone = 0, kSelf = 1, kResult = 2 };

bool float_only(Unary k) {
  switch (k) {
    case Unary::Neg: case Unary::Relu: case Unary::Abs: case Unary::Sign: case Unary::Floor:
    case Unary::Clamp: case Unary::Pow:
      return false;
    default: return true;
  }
}

Tensor unary_op(const Tensor& x, Unary k, const char* name, OpNode::BackwardFn bw, uint8_t save, double a = 0,
                double b = 0) {
  check_defined(x);
  const Tensor in = float_only(k) && !x.is_floating_point() ? x.to(ScalarType::Float) : x;
  Tensor out = unary_kernel(k, in, a, b);
  if (auto fn = record(name, {&x}, bw)) {
    fn->scalar[0] = a;
    fn->scalar[1] = b;
    if (save & kSelf) fn->save(x);
    if (save & kResult) fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor& unary_inplace(Tensor& self, Unary k, const char* name, OpNode::BackwardFn bw, uint8_t save, double a = 0,
                      double b = 0) {
  check_inplace(self);
  auto fn = record(name, {&self}, bw);
  // A backward that needs the input sees its value from before the op.
  if (fn && (save & kSelf)) fn->save(self.clone());
  backend::of(self).unary(k, self, self, a, b);
  bump_version(self);
  if (fn) {
    fn->scalar[0] = a;
    fn->scalar[1] = b;
    finish_inplace(self, fn);
    if (save & kResult) fn->save(self, /*is_output=*/true);
  }
  return self;
}

// Index of the saved tensor: self first when both are saved.
Tensor saved_self(OpNode& n) { return n.saved_at(0); }
Tensor saved_result(OpNode& n) { return n.saved_at(n.saved.size() - 1); }

// d(-x) = -1
GradList neg_bw(OpNode&, Grads& g) { return {g[0].neg()}; }
// d e^x = e^x
GradList exp_bw(OpNode& n, Grads& g) { return {g[0] * saved_result(n)}; }
// d ln x = 1/x
GradList log_bw(OpNode& n, Grads& g) { return {g[0].div(saved_self(n))}; }
// d tanh x = 1 - tanh²x. With create_graph the formula is recorded op by
// op; otherwise one fused kernel, PyTorch's tanh_backward (same roundings).
GradList tanh_bw(OpNode& n, Grads& g) {
  Tensor y = saved_result(n);
  if (autograd::GradMode::is_enabled()) return {g[0] * (1 - y * y)};
  return {binary_kernel(backend::Binary::TanhGrad, g[0], y, g[0].scalar_type())};
}
// d σ(x) = σ(x)(1 - σ(x)), as PyTorch's sigmoid_backward: g·(1 - σ)·σ.
GradList sigmoid_bw(OpNode& n, Grads& g) {
  Tensor y = saved_result(n);
  if (autograd::GradMode::is_enabled()) return {g[0] * (1 - y) * y};
  return {binary_kernel(backend::Binary::SigmoidGrad, g[0], y, g[0].scalar_type())};
}
// d relu x = [relu x > 0]
GradList relu_bw(OpNode& n, Grads& g) {
  const Tensor r = saved_result(n);
  // With create_graph the formula must itself be recorded; otherwise one
  // fused kernel (no bool mask, no dtype conversion).
  if (autograd::GradMode::is_enabled()) return {g[0] * (r > 0)};
  return {binary_kernel(backend::Binary::ReluGrad, g[0], r, g[0].scalar_type())};
}
// d |x| = sgn x
GradList abs_bw(OpNode& n, Grads& g) { return {g[0] * saved_self(n).sign()}; }
// d √x = 1 / (2√x)
GradList sqrt_bw(OpNode& n, Grads& g) { return {g[0].div(saved_result(n) * 2)}; }
// d sin x = cos x
GradList sin_bw(OpNode& n, Grads& g) { return {g[0] * saved_self(n).cos()}; }
// d cos x = -sin x
GradList cos_bw(OpNode& n, Grads& g) { return {g[0] * saved_self(n).sin().neg()}; }
// d sign x = 0 (almost everywhere)
GradList zero_bw(OpNode&, Grads& g) { return {zeros_like(g[0])}; }
// d (1/x) = -1/x²
GradList reciprocal_bw(OpNode& n, Grads& g) {
  Tensor y = saved_result(n);
  return {g[0] * (y * y).neg()};
}
// d x^(-1/2) = -1/2 x^(-3/2)
GradList rsqrt_bw(OpNode& n, Grads& g) {
  Tensor y = saved_result(n);
  return {g[0] * (y.pow(3) * -0.5)};
}
// d ln(1+x) = 1/(1+x)
GradList log1p_bw(OpNode& n, Grads& g) { return {g[0].div(saved_self(n) + 1)}; }
// d (e^x - 1) = e^x
GradList expm1_bw(OpNode& n, Grads& g) { return {g[0] * (saved_result(n) + 1)}; }
// d log2 x = 1/(x ln 2)
GradList log2_bw(OpNode& n, Grads& g) { return {g[0].div(saved_self(n) * M_LN2)}; }
// d log10 x = 1/(x ln 10)
GradList log10_bw(OpNode& n, Grads& g) { return {g[0].div(saved_self(n) * M_LN10)}; }
// d x^a = a x^(a-1)  (0 when a == 0)
GradList pow_bw(OpNode& n, Grads& g) {
  const double a = n.scalar[0];
  Tensor x = saved_self(n);
  if (a == 0.0) return {zeros_like(x)};
  if (autograd::GradMode::is_enabled()) return {g[0] * (x.pow(a - 1) * a)};  // create_graph: recorded
  return {binary_kernel(backend::Binary::PowGrad, g[0], x, g[0].scalar_type(), a)};  // one fused kernel
}
// d clamp(x, lo, hi) = [lo <= x <= hi]
GradList clamp_bw(OpNode& n, Grads& g) {
  Tensor x = saved_self(n);
  const double lo = n.scalar[0], hi = n.scalar[1];
  Tensor mask = ones_like(x, TensorOptions(ScalarType::Bool));
  if (!std::isnan(lo)) mask = mask * (x >= lo);
  if (!std::isnan(hi)) mask = mask * (x <= hi);
  return {g[0] * mask};
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

Tensor neg(const Tensor& a) { return unary_op(a, Unary::Neg, "NegBackward0", neg_bw, kNone); }
Tensor exp(const Tensor& a) { return unary_op(a, Unary::Exp, "ExpBackward0", exp_bw, kResult); }
Tensor log(const Tensor& a) { return unary_op(a, Unary::Log, "LogBackward0", log_bw, kSelf); }
Tensor tanh(const Tensor& a) { return unary_op(a, Unary::Tanh, "TanhBackward0", tanh_bw, kResult); }
Tensor sigmoid(const Tensor& a) { return unary_op(a, Unary::Sigmoid, "SigmoidBackward0", sigmoid_bw, kResult); }
Tensor relu(const Tensor& a) { return unary_op(a, Unary::Relu, "ReluBackward0", relu_bw, kResult); }
Tensor abs(const Tensor& a) { return unary_op(a, Unary::Abs, "AbsBackward0", abs_bw, kSelf); }
Tensor sqrt(const Tensor& a) { return unary_op(a, Unary::Sqrt, "SqrtBackward0", sqrt_bw, kResult); }
Tensor sin(const Tensor& a) { return unary_op(a, Unary::Sin, "SinBackward0", sin_bw, kSelf); }
Tensor cos(const Tensor& a) { return unary_op(a, Unary::Cos, "CosBackward0", cos_bw, kSelf); }
Tensor square(const Tensor& a) { return pow(a, 2); }
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  GRADLAB_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  return unary_op(a, Unary::Clamp, "ClampBackward1", clamp_bw, kSelf, min ? min->toDouble() : kNaN,
                  max ? max->toDouble() : kNaN);
}
Tensor clamp_min(const Tensor& a, Scalar min) {
  return unary_op(a, Unary::Clamp, "ClampMinBackward0", clamp_bw, kSelf, min.toDouble(), kNaN);
}
Tensor clamp_max(const Tensor& a, Scalar max) {
  return unary_op(a, Unary::Clamp, "ClampMaxBackward0", clamp_bw, kSelf, kNaN, max.toDouble());
}
Tensor pow(const Tensor& a, Scalar e) {
  check_defined(a);
  const bool promote = e.isFloatingPoint() && !a.is_floating_point();
  return unary_op(promote ? a.to(ScalarType::Float) : a, Unary::Pow, "PowBackward0", pow_bw, kSelf, e.toDouble());
}

Tensor Tensor::neg() const { return gradlab::neg(*this); }
Tensor Tensor::exp() const { return gradlab::exp(*this); }
Tensor Tensor::log() const { return gradlab::log(*this); }
Tensor Tensor::tanh() const { return gradlab::tanh(*this); }
Tensor Tensor::sigmoid() const { return gradlab::sigmoid(*this); }
Tensor Tensor::relu() const { return gradlab::relu(*this); }
Tensor Tensor::abs() const { return gradlab::abs(*this); }
Tensor Tensor::sqrt() const { return gradlab::sqrt(*this); }
Tensor Tensor::sin() const { return gradlab::sin(*this); }
Tensor Tensor::cos() const { return gradlab::cos(*this); }
Tensor Tensor::sign() const { return unary_op(*this, Unary::Sign, "SignBackward0", zero_bw, kNone); }
Tensor Tensor::floor() const { return unary_op(*this, Unary::Floor, "FloorBackward0", zero_bw, kNone); }
Tensor Tensor::reciprocal() const {
  return unary_op(*this, Unary::Reciprocal, "ReciprocalBackward0", reciprocal_bw, kResult);
}
Tensor Tensor::rsqrt() const { return unary_op(*this, Unary::Rsqrt, "RsqrtBackward0", rsqrt_bw, kResult); }
Tensor Tensor::log1p() const { return unary_op(*this, Unary::Log1p, "Log1PBackward0", log1p_bw, kSelf); }
Tensor Tensor::expm1() const { return unary_op(*this, Unary::Expm1, "Expm1Backward0", expm1_bw, kResult); }
Tensor Tensor::log2() const { return unary_op(*this, Unary::Log2, "Log2Backward0", log2_bw, kSelf); }
Tensor Tensor::log10() const { return unary_op(*this, Unary::Log10, "Log10Backward0", log10_bw, kSelf); }
Tensor log2(const Tensor& a) { return a.log2(); }
Tensor log10(const Tensor& a) { return a.log10(); }
Tensor log1p(const Tensor& a) { return a.log1p(); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return gradlab::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(Scalar min) const { return gradlab::clamp_min(*this, min); }
Tensor Tensor::clamp_max(Scalar max) const { return gradlab::clamp_max(*this, max); }
Tensor Tensor::pow(Scalar e) const { return gradlab::pow(*this, e); }

Tensor& Tensor::neg_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Neg, "NegBackward0", neg_bw, kNone); }
Tensor& Tensor::exp_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Exp, "ExpBackward0", exp_bw, kResult); }
Tensor& Tensor::log_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Log, "LogBackward0", log_bw, kSelf); }
Tensor& Tensor::sqrt_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Sqrt, "SqrtBackward0", sqrt_bw, kResult); }
Tensor& Tensor::abs_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Abs, "AbsBackward0", abs_bw, kSelf); }
Tensor& Tensor::tanh_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Tanh, "TanhBackward0", tanh_bw, kResult); }
Tensor& Tensor::sigmoid_() const {
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Sigmoid, "SigmoidBackward0", sigmoid_bw, kResult);
}
Tensor& Tensor::relu_() const { return unary_inplace(const_cast<Tensor&>(*this), Unary::Relu, "ReluBackward0", relu_bw, kResult); }
Tensor& Tensor::pow_(Scalar e) const {
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Pow, "PowBackward0", pow_bw, kSelf, e.toDouble());
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Clamp, "ClampBackward1", clamp_bw, kSelf, min ? min->toDouble() : kNaN,
                       max ? max->toDouble() : kNaN);
}
Tensor& Tensor::clamp_min_(Scalar min) const {
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Clamp, "ClampMinBackward0", clamp_bw, kSelf, min.toDouble(), kNaN);
}
Tensor& Tensor::clamp_max_(Scalar max) const {
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Clamp, "ClampMaxBackward0", clamp_bw, kSelf, kNaN, max.toDouble());
}

}  // namespace gradlab

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
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  case Unary::Kind:                                                                      \
    return !(ints);
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
    case Unary::Clamp: case Unary::Pow:
      return false;
    default: return true;
  }
}

// The op's kernel takes up to two numbers (a, b); what its backward needs
// goes in `state`.
template <class State = NoState>
Tensor unary_op(const Tensor& x, Unary k, const char* name, GradList (*bw)(Op<State>&, Grads&), uint8_t save,
                State state = {}, double a = 0, double b = 0) {
  check_defined(x);
  GRADLAB_CHECK(k != Unary::Neg || x.scalar_type() != ScalarType::Bool,
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                "use the `~` or `logical_not()` operator instead.");
  const Tensor in = float_only(k) && !x.is_floating_point() ? x.to(ScalarType::Float) : x;
  Tensor out = unary_kernel(k, in, a, b);
  if (auto fn = record(name, {&x}, bw, std::move(state))) {
    if (save & kSelf) fn->save(x);
    if (save & kResult) fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

template <class State = NoState>
Tensor& unary_inplace(Tensor& self, Unary k, const char* name, GradList (*bw)(Op<State>&, Grads&), uint8_t save,
                      State state = {}, double a = 0, double b = 0) {
  check_inplace(self);
  if (float_only(k) && !self.is_floating_point()) check_can_cast(ScalarType::Float, self.scalar_type());
  auto fn = record(name, {&self}, bw, std::move(state));
  check_rebase(self, fn);
  // A backward that needs the input sees its value from before the op.
  if (fn && (save & kSelf)) fn->save(self.clone());
  backend::of(self).unary(k, self, self, a, b);
  bump_version(self);
  if (fn) {
    finish_inplace(self, fn);
    if (save & kResult) fn->save(self, /*is_output=*/true);
  }
  return self;
}

// Index of the saved tensor: self first when both are saved.
Tensor saved_self(OpNode& n) { return n.saved_at(0); }
Tensor saved_result(OpNode& n) { return n.saved_at(n.saved.size() - 1); }

// A fused backward is an op of its own, as PyTorch's tanh_backward(g, y),
// sigmoid_backward(g, y) and threshold_backward(g, y, 0) are: one kernel pass
// over g and the saved tensor s, recorded under create_graph as one node. Its
// own backward is the same op of the incoming gradient (it is linear in g),
// and for s the derivative below.
struct FusedGrad {
  backend::Binary kind;
};
Tensor fused_grad(backend::Binary kind, const Tensor& g, const Tensor& s);
GradList fused_grad_bw(Op<FusedGrad>& n, Grads& grads) {
  const Tensor &gg = grads[0], g = n.saved_at(0), s = n.saved_at(1);
  Tensor ds;
  if (n.should_compute_output(1)) {
    switch (n.kind) {
      case backend::Binary::TanhGrad: ds = gg * (s * -2 * g); break;            // d g(1 - s²)/ds
      case backend::Binary::SigmoidGrad: ds = gg * g * (s * -2 + 1); break;     // d g(1 - s)s/ds
      default: ds = zeros_like(gg);                                             // relu: a step in s
    }
  }
  return {n.should_compute_output(0) ? fused_grad(n.kind, gg, s) : Tensor(), ds};
}
const char* fused_grad_name(backend::Binary kind) {
  switch (kind) {
    case backend::Binary::TanhGrad: return "TanhBackwardBackward0";
    case backend::Binary::SigmoidGrad: return "SigmoidBackwardBackward0";
    default: return "ThresholdBackwardBackward0";
  }
}
Tensor fused_grad(backend::Binary kind, const Tensor& g, const Tensor& s) {
  Tensor r = binary_kernel(kind, g, s, g.scalar_type());
  if (auto fn = record(fused_grad_name(kind), {&g, &s}, fused_grad_bw, FusedGrad{kind})) {
    fn->save(g);
    fn->save(s);
    finish(std::move(fn), r);
  }
  return r;
}

// The table's backwards: the derivative column, with g the output's gradient
// and x(), y() the saved input and result, recorded op by op under
// create_graph. An op with a fused kernel computes it with fused_grad instead.
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative)          \
  GradList name##_bw(PlainOp& n, Grads& grads) {                                                           \
    [[maybe_unused]] auto x = [&n] { return saved_self(n); };                                             \
    [[maybe_unused]] auto y = [&n] { return saved_result(n); };                                           \
    [[maybe_unused]] const Tensor& g = grads[0];                                                          \
    GRADLAB_WHEN_##fused(return {fused_grad(backend::Binary::Kind##Grad, g, (saves) == kResult ? y() : x())};) \
    GRADLAB_WHEN_NOT_##fused(return {derivative};)                                                        \
  }
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
// d x^a = a x^(a-1)  (0 when a == 0)
struct Exponent {
  double exponent;
};
GradList pow_bw(Op<Exponent>& n, Grads& g) {
  const double a = n.exponent;
  Tensor x = saved_self(n);
  if (a == 0.0) return {zeros_like(x)};
  if (detail::grad_mode()) return {g[0] * (x.pow(a - 1) * a)};  // create_graph: recorded
  return {binary_kernel(backend::Binary::PowGrad, g[0], x, g[0].scalar_type(), a)};  // one fused kernel
}
// d clamp(x, lo, hi) = [lo <= x <= hi]; NaN stands for a missing bound.
struct Bounds {
  double lo, hi;
};
GradList clamp_bw(Op<Bounds>& n, Grads& g) {
  Tensor x = saved_self(n);
  const double lo = n.lo, hi = n.hi;
  Tensor mask = ones_like(x, TensorOptions(ScalarType::Bool));
  if (!std::isnan(lo)) mask = mask * (x >= lo);
  if (!std::isnan(hi)) mask = mask * (x <= hi);
  return {where(mask, g[0], zeros({}, TensorOptions(g[0].scalar_type()).device(g[0].device())))};
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

// The table's ops: the method, the free function and the in-place form.
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative)   \
  Tensor Tensor::name() const {                                                            \
    GRADLAB_TAPE(#name, name(), *this);                                                    \
    return unary_op(*this, Unary::Kind, grad_fn, name##_bw, saves);                       \
  }                                                                                        \
  GRADLAB_WHEN_##free(Tensor name(const Tensor& a) { return a.name(); })                  \
  GRADLAB_WHEN_##inplace(Tensor& Tensor::name##_() const {                                \
    GRADLAB_TAPE(#name "_", name##_(), *this);                                             \
    return unary_inplace(const_cast<Tensor&>(*this), Unary::Kind, grad_fn, name##_bw, saves); \
  })
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY

Tensor square(const Tensor& a) { return pow(a, 2); }
namespace {
// Whether the op's numbers make an integral (or bool) input float, as
// PyTorch's type promotion does: a floating number does.
bool promoted(const Tensor& a, std::optional<Scalar> s1, std::optional<Scalar> s2 = std::nullopt) {
  return !a.is_floating_point() && ((s1 && s1->isFloatingPoint()) || (s2 && s2->isFloatingPoint()));
}
Tensor promote(const Tensor& a, std::optional<Scalar> s1, std::optional<Scalar> s2 = std::nullopt) {
  check_defined(a);
  return promoted(a, s1, s2) ? a.to(ScalarType::Float) : a;
}
// In place the input cannot change its dtype: PyTorch's error instead.
Tensor& promote_inplace(const Tensor& self, OutName name, std::optional<Scalar> s1,
                        std::optional<Scalar> s2 = std::nullopt) {
  check_defined(self);
  if (promoted(self, s1, s2)) check_can_cast(ScalarType::Float, self.scalar_type(), name);
  return const_cast<Tensor&>(self);
}

Bounds bounds_of(std::optional<Scalar> min, std::optional<Scalar> max) {
  return {min ? min->toDouble() : kNaN, max ? max->toDouble() : kNaN};
}
// The clamps: a kernel over the bounds, the same bounds kept for the backward.
Tensor clamp_op(const Tensor& a, const char* name, std::optional<Scalar> min, std::optional<Scalar> max) {
  const Bounds bounds = bounds_of(min, max);
  return unary_op(promote(a, min, max), Unary::Clamp, name, clamp_bw, kSelf, bounds, bounds.lo, bounds.hi);
}
Tensor& clamp_inplace(const Tensor& self, const char* name, std::optional<Scalar> min, std::optional<Scalar> max) {
  const Bounds bounds = bounds_of(min, max);
  return unary_inplace(promote_inplace(self, OutName::CppType, min, max), Unary::Clamp, name, clamp_bw, kSelf, bounds, bounds.lo,
                       bounds.hi);
}
}  // namespace

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  GRADLAB_TAPE("clamp", clamp(a, min, max), a, min, max);
  GRADLAB_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  return clamp_op(a, "ClampBackward1", min, max);
}
Tensor clamp_min(const Tensor& a, Scalar min) {
  GRADLAB_TAPE("clamp_min", clamp_min(a, min), a, min);
  return clamp_op(a, "ClampMinBackward0", min, std::nullopt);
}
Tensor clamp_max(const Tensor& a, Scalar max) {
  GRADLAB_TAPE("clamp_max", clamp_max(a, max), a, max);
  return clamp_op(a, "ClampMaxBackward0", std::nullopt, max);
}
Tensor pow(const Tensor& a, Scalar e) {
  GRADLAB_TAPE("pow", pow(a, e), a, e);
  check_defined(a);
  GRADLAB_CHECK(a.is_floating_point() || e.isFloatingPoint() || e.toDouble() >= 0,
                "Integers to negative integer powers are not allowed.");
  const double x = e.toDouble();
  return unary_op(promote(a, e), Unary::Pow, "PowBackward0", pow_bw, kSelf, Exponent{x}, x);
}

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return gradlab::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(Scalar min) const { return gradlab::clamp_min(*this, min); }
Tensor Tensor::clamp_max(Scalar max) const { return gradlab::clamp_max(*this, max); }
Tensor Tensor::pow(Scalar e) const { return gradlab::pow(*this, e); }

Tensor& Tensor::pow_(Scalar e) const {
  GRADLAB_TAPE("pow_", pow_(e), *this, e);
  const double x = e.toDouble();
  check_defined(*this);
  // LibTorch's pow_ meets the promotion in its kernel's dtype check.
  GRADLAB_CHECK(!promoted(*this, e, std::nullopt), "Found dtype ", c10_name(scalar_type()), " but expected ",
                c10_name(ScalarType::Float));
  return unary_inplace(const_cast<Tensor&>(*this), Unary::Pow, "PowBackward0", pow_bw, kSelf, Exponent{x}, x);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  GRADLAB_TAPE("clamp_", clamp_(min, max), *this, min, max);
  return clamp_inplace(*this, "ClampBackward1", min, max);
}
Tensor& Tensor::clamp_min_(Scalar min) const {
  GRADLAB_TAPE("clamp_min_", clamp_min_(min), *this, min);
  return clamp_inplace(*this, "ClampMinBackward0", min, std::nullopt);
}
Tensor& Tensor::clamp_max_(Scalar max) const {
  GRADLAB_TAPE("clamp_max_", clamp_max_(max), *this, max);
  return clamp_inplace(*this, "ClampMaxBackward0", std::nullopt, max);
}

}  // namespace gradlab

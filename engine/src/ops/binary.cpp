// Binary elementwise ops, their in-place forms and the C++ operators.
// LibTorch's scalar overloads make their own nodes (a * 2 is MulBackward1
// with one edge), and a number on the left of - or / becomes a filled tensor
// updated in place (2 - a is SubBackward0 with a null first edge).
#include <cmath>
#include <functional>
#include <limits>

#include "ops/ops_internal.h"

namespace gradlab {

using backend::Binary;

namespace {

Tensor wrap(Scalar s, const Tensor& like) { return scalar_like(s, like, s.default_type()); }

// ---- backward formulas (the engine reduces broadcast gradients)
// add and sub scale their second operand by alpha.
struct Alpha {
  double alpha = 1;
};
// d(a + αb) = (1, α)
GradList add_bw(Op<Alpha>& n, Grads& g) {
  return {g[0], n.should_compute_output(1) ? (n.alpha == 1 ? g[0] : g[0] * n.alpha) : Tensor()};
}
// d(a - αb) = (1, -α)
GradList sub_bw(Op<Alpha>& n, Grads& g) {
  return {g[0], n.should_compute_output(1) ? g[0] * (-n.alpha) : Tensor()};
}
GradList identity_bw(PlainOp&, Grads& g) { return {g[0]}; }
// d(ab) = (b, a); saved: [a if b needs grad], [b if a needs grad]
GradList mul_bw(PlainOp& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor self = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor other = n.should_compute_output(0) ? n.saved_at(i++) : Tensor();
  if (n.should_compute_output(0)) r[0] = g[0] * other;
  if (n.should_compute_output(1)) r[1] = g[0] * self;
  return r;
}
// The number a tensor is multiplied or divided by.
struct Factor {
  double factor;
};
// d(a·s) = s
// Under create_graph PyTorch multiplies by the number as a 0-d tensor
// (MulBackward0 with an empty edge), as its derivative formulas do.
GradList mul_scalar_bw(Op<Factor>& n, Grads& g) {
  if (detail::grad_mode()) return {g[0] * scalar_like(n.factor, g[0], g[0].scalar_type())};
  return {g[0] * n.factor};
}
// d(a/b) = (1/b, -a/b²)
GradList div_bw(PlainOp& n, Grads& g) {
  GradList r(2);
  size_t i = 0;
  Tensor self = n.should_compute_output(1) ? n.saved_at(i++) : Tensor();
  Tensor other = n.saved_at(i++);
  if (n.should_compute_output(0)) r[0] = g[0].div(other);
  if (n.should_compute_output(1)) r[1] = g[0].neg() * self.div(other).div(other);  // PyTorch's order of roundings
  return r;
}
// d(a/s) = 1/s
GradList div_scalar_bw(Op<Factor>& n, Grads& g) {
  if (detail::grad_mode()) return {g[0].div(scalar_like(n.factor, g[0], g[0].scalar_type()))};
  return {g[0].div(n.factor)};
}
// d(a^b) = (b a^(b-1), a^b ln a); where a == 0 and b >= 0 the second is 0
GradList pow_tensor_bw(PlainOp& n, Grads& g) {
  Tensor self = n.saved_at(0), exponent = n.saved_at(1), result = n.saved_at(2);
  GradList r(2);
  if (n.should_compute_output(0))
    r[0] = where(exponent == 0, zeros({}, TensorOptions(g[0].scalar_type()).device(g[0].device())),
                 g[0] * (exponent * self.pow(exponent - 1)));
  if (n.should_compute_output(1)) {
    Tensor d = result * self.log();
    r[1] = g[0] * where((self == 0) * (exponent >= 0), zeros_like(d), d);
  }
  return r;
}
// d(s^b) = s^b ln s
struct Base {
  double base;
};
GradList pow_scalar_base_bw(Op<Base>& n, Grads& g) {
  const double base = n.base;
  Tensor result = n.saved_at(0);
  if (base == 0) return {g[0] * where(result.detach() >= 0, zeros_like(result), result * std::log(base))};
  return {g[0] * (result * std::log(base))};
}
// d max(a, b): the larger side gets the gradient, ties split it.
struct Extremum {
  bool is_max;
};
// PyTorch 1.13's formula, in place as it is written there (so the gradient
// is at version 1, and under create_graph a MaskedFillBackward0):
// where(a == b, grad / 2, grad).masked_fill_(a < b, 0) for a's side of max.
GradList maximum_bw(Op<Extremum>& n, Grads& g) {
  Tensor a = n.saved_at(0), b = n.saved_at(1);
  const bool is_max = n.is_max;
  auto side = [&](const Tensor& loses) { return where(a == b, g[0] / 2, g[0]).masked_fill_(loses, 0); };
  return {n.should_compute_output(0) ? side(is_max ? a < b : a > b) : Tensor(),
          n.should_compute_output(1) ? side(is_max ? a > b : a < b) : Tensor()};
}
GradList where_bw(PlainOp& n, Grads& g) {
  Tensor cond = n.saved_at(0);
  Tensor z = zeros_like(g[0]);
  return {n.should_compute_output(0) ? where(cond, g[0], z) : Tensor(),
          n.should_compute_output(1) ? where(cond, z, g[0]) : Tensor()};
}

// Saves the operands mul/div backwards need, following PyTorch's rule: an
// operand is kept only when the other one's gradient will be computed.
void save_mul_operands(OpNode& fn, const Tensor& a, const Tensor& b) {
  if (fn.should_compute_output(1)) fn.save(a);
  if (fn.should_compute_output(0)) fn.save(b);
}
void save_div_operands(OpNode& fn, const Tensor& a, const Tensor& b) {
  if (fn.should_compute_output(1)) fn.save(a);
  fn.save(b);
}

// The arithmetic ops, one line a variant: the kernel, the grad_fn name, the
// backward (whose node's state type it fixes) and the operands it keeps. The
// out-of-place and in-place forms of a variant read the same line.
template <class State>
struct BinarySpec {
  Binary kernel;
  const char* grad_fn;
  GradList (*backward)(Op<State>&, Grads&);
  void (*save)(OpNode&, const Tensor&, const Tensor&) = nullptr;
};
constexpr BinarySpec<Alpha> kAdd{Binary::Add, "AddBackward0", add_bw};
constexpr BinarySpec<NoState> kAddScalar{Binary::Add, "AddBackward1", identity_bw};
constexpr BinarySpec<Alpha> kSub{Binary::Sub, "SubBackward0", sub_bw};
constexpr BinarySpec<NoState> kSubScalar{Binary::Sub, "SubBackward1", identity_bw};
constexpr BinarySpec<NoState> kMul{Binary::Mul, "MulBackward0", mul_bw, save_mul_operands};
constexpr BinarySpec<Factor> kMulScalar{Binary::Mul, "MulBackward1", mul_scalar_bw};
constexpr BinarySpec<NoState> kDiv{Binary::Div, "DivBackward0", div_bw, save_div_operands};
constexpr BinarySpec<Factor> kDivScalar{Binary::Div, "DivBackward1", div_scalar_bw};

Tensor tensor_op(Binary k, const Tensor& a, const Tensor& b, double alpha, ScalarType out_type) {
  check_defined(a, 0, "self");
  check_defined(b, 1, "other");
  return binary_kernel(k, a, b, out_type, alpha);
}

// Records `op`'s node for out = a op b (computed by the caller, who returns
// it: named there, it is constructed in place).
template <class State>
void record_binary(const BinarySpec<State>& op, const Tensor& a, const Tensor& b, const Tensor& out, State state = {}) {
  if (auto fn = record(op.grad_fn, {&a, &b}, op.backward, std::move(state))) {
    if (op.save) op.save(*fn, a, b);
    finish(std::move(fn), out);
  }
}

// The dtype the op computes in from the operands' common dtype: true
// division of integers (or bools) is floating.
ScalarType computed_type(Binary k, ScalarType common) {
  return k == Binary::Div && !is_floating(common) ? ScalarType::Float : common;
}

// --- in place: self op= other
template <class State>
Tensor& inplace_op(const BinarySpec<State>& op, const Tensor& self_in, const Tensor& other, double alpha, State state = {}) {
  // In-place methods are const, as in LibTorch: the handle is const, the tensor is not.
  Tensor& self = const_cast<Tensor&>(self_in);
  const Binary k = op.kernel;
  check_defined(self, 0, "self");
  check_defined(other, 1, "other");
  check_inplace(self);
  check_no_partial_overlap(self, other);
  check_can_cast(computed_type(k, result_type(self, other)), self.scalar_type());
  if (!other.sizes().equals(self.sizes())) {
    const DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
    if (!shape.ref().equals(self.sizes()))
      throw Error(str_cat("output with shape ", self.sizes(), " doesn't match the broadcast shape ", shape.ref()));
  }
  auto fn = record(op.grad_fn, {&self, &other}, op.backward, std::move(state));
  check_rebase(self, fn);
  if (fn && op.save) op.save(*fn, fn->should_compute_output(1) ? self.clone() : self, other);
  if (other.scalar_type() == self.scalar_type() && other.device() == self.device()) {
    backend::of(self).binary(k, self, self, other, alpha);  // the common case: nothing to convert
  } else {
    const Tensor o = other.scalar_type() == self.scalar_type() ? other : other.detach().to(self.scalar_type());
    backend::of(self).binary(k, self, self, o.device() == self.device() ? o : o.to(self.device()), alpha);
  }
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

template <class State>
Tensor& inplace_scalar(const BinarySpec<State>& op, const Tensor& self_in, Scalar s, State state = {}, double alpha = 1) {
  Tensor& self = const_cast<Tensor&>(self_in);
  check_defined(self, 0, "self");
  check_inplace(self);
  check_can_cast(computed_type(op.kernel, result_type(self, s)), self.scalar_type());
  auto fn = record(op.grad_fn, {&self}, op.backward, std::move(state));
  check_rebase(self, fn);
  Tensor w = scalar_like(s, self, self.scalar_type());
  backend::of(self).binary(op.kernel, self, self, w, alpha);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

// The result's dtype follows the number s alone, as in PyTorch (an integer
// tensor plus an integer stays integer); alpha only scales it in the kernel.
template <class State>
Tensor scalar_op(const BinarySpec<State>& op, const Tensor& a, Scalar s, State state = {}, double alpha = 1) {
  const Binary k = op.kernel;
  check_defined(a, 0, "self");
  const ScalarType type = result_type(a, s);
  Tensor out;
  if (a.scalar_type() == type) {  // no conversion of a: the number goes straight to the kernel
    out = empty_following(a.sizes(), type, a.device(), {&a});
    backend::of(a).binary_scalar(k, out, a, s, alpha);
  } else {
    out = binary_kernel(k, a, wrap(s, a), type, alpha);
  }
  if (auto fn = record(op.grad_fn, {&a}, op.backward, std::move(state))) finish(std::move(fn), out);
  return out;
}
}  // namespace

// ---------------------------------------------------------------- out of place
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  GRADLAB_TAPE("add", add(a, b, alpha), a, b, alpha);
  Tensor out = tensor_op(kAdd.kernel, a, b, alpha.toDouble(), result_type(a, b));
  record_binary(kAdd, a, b, out, Alpha{alpha.toDouble()});
  return out;
}
Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  GRADLAB_TAPE("add", add(a, b, alpha), a, b, alpha);
  return scalar_op(kAddScalar, a, b, NoState{}, alpha.toDouble());
}
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  GRADLAB_TAPE("sub", sub(a, b, alpha), a, b, alpha);
  Tensor out = tensor_op(kSub.kernel, a, b, alpha.toDouble(), result_type(a, b));
  record_binary(kSub, a, b, out, Alpha{alpha.toDouble()});
  return out;
}
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  GRADLAB_TAPE("sub", sub(a, b, alpha), a, b, alpha);
  return scalar_op(kSubScalar, a, b, NoState{}, alpha.toDouble());
}
Tensor mul(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("mul", mul(a, b), a, b);
  Tensor out = tensor_op(kMul.kernel, a, b, 1, result_type(a, b));
  record_binary(kMul, a, b, out);
  return out;
}
Tensor mul(const Tensor& a, Scalar b) {
  GRADLAB_TAPE("mul", mul(a, b), a, b);
  return scalar_op(kMulScalar, a, b, Factor{b.toDouble()});
}
Tensor div(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("div", div(a, b), a, b);
  const ScalarType rt = computed_type(Binary::Div, result_type(a, b));
  Tensor out = tensor_op(kDiv.kernel, a.to(rt), b.to(rt), 1, rt);
  record_binary(kDiv, a, b, out);
  return out;
}
Tensor div(const Tensor& a, Scalar b) {
  GRADLAB_TAPE("div", div(a, b), a, b);
  const ScalarType rt = computed_type(Binary::Div, result_type(a, b));
  return scalar_op(kDivScalar, a.to(rt), b, Factor{b.toDouble()});
}
Tensor pow(const Tensor& a, const Tensor& e) {
  GRADLAB_TAPE("pow", pow(a, e), a, e);
  Tensor out = tensor_op(Binary::Pow, a, e, 1, result_type(a, e));
  if (auto fn = record("PowBackward1", {&a, &e}, pow_tensor_bw)) {
    fn->save(a);
    fn->save(e);
    fn->save(out, true);
    finish(std::move(fn), out);
  }
  return out;
}
Tensor pow(Scalar base, const Tensor& e) {
  GRADLAB_TAPE("pow", pow(base, e), base, e);
  check_defined(e, 1, "exponent");
  Tensor ef = is_floating(e.scalar_type()) ? e : e.to(ScalarType::Float);
  Tensor out = unary_kernel(backend::Unary::RPow, ef, base.toDouble());
  if (auto fn = record("PowBackward2", {&e}, pow_scalar_base_bw, Base{base.toDouble()})) {
    fn->save(out, true);
    finish(std::move(fn), out);
  }
  return out;
}
namespace {
Tensor max_min_binary(const Tensor& a, const Tensor& b, bool is_max) {
  Tensor out = tensor_op(is_max ? Binary::Max : Binary::Min, a, b, 1, result_type(a, b));
  if (auto fn = record(is_max ? "MaximumBackward0" : "MinimumBackward0", {&a, &b}, maximum_bw, Extremum{is_max})) {
    fn->save(a);
    fn->save(b);
    finish(std::move(fn), out);
  }
  return out;
}
}  // namespace
Tensor maximum(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("maximum", maximum(a, b), a, b);
  return max_min_binary(a, b, true);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("minimum", minimum(a, b), a, b);
  return max_min_binary(a, b, false);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  GRADLAB_TAPE("where", where(cond, a, b), cond, a, b);
  check_defined(cond, 0, "condition");
  check_defined(a, 1, "self");
  check_defined(b, 2, "other");
  GRADLAB_CHECK(cond.scalar_type() == ScalarType::Bool, "where expected condition to be a boolean tensor, but got a tensor with dtype ", c10_name(cond.scalar_type()));
  const ScalarType rt = result_type(a, b);
  DimVector shape = broadcast_shapes(broadcast_shapes(cond.sizes(), a.sizes()), b.sizes());
  Tensor out = gradlab::new_empty(shape, rt, a.device());
  backend::of(a).where(out, cond, a.to(rt), b.to(rt));
  if (auto fn = record("WhereBackward0", {&a, &b}, where_bw)) {
    fn->save(cond);
    finish(std::move(fn), out);
  }
  return out;
}

// A number in where() is a wrapped number on the other operand's device, as
// in LibTorch: the tensor's dtype decides (a float number with an integral
// tensor gives the default dtype).
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  GRADLAB_TAPE("where", where(cond, a, b), cond, a, b);
  check_defined(b, 2, "other");
  return where(cond, scalar_like(a, b, result_type(b, a)), b);
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  GRADLAB_TAPE("where", where(cond, a, b), cond, a, b);
  check_defined(a, 1, "self");
  return where(cond, a, scalar_like(b, a, result_type(a, b)));
}
Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  GRADLAB_TAPE("where", where(cond, a, b), cond, a, b);
  check_defined(cond, 0, "condition");
  const bool floating = a.isFloatingPoint() || b.isFloatingPoint();
  const ScalarType t = floating ? TensorOptions().dtype() : a.isBoolean() && b.isBoolean() ? ScalarType::Bool : ScalarType::Long;
  return where(cond, scalar_like(a, cond, t), scalar_like(b, cond, t));
}
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return gradlab::where(condition, *this, other); }

// ---------------------------------------------------------------- comparisons
#define GRADLAB_COMPARE(NAME, KIND, OP)                                                                 \
  Tensor Tensor::NAME(const Tensor& o) const {                                                           \
    GRADLAB_TAPE(#NAME, NAME(o), *this, o);                                                              \
    return tensor_op(Binary::KIND, *this, o, 1, ScalarType::Bool);                                       \
  }                                                                                                      \
  Tensor Tensor::NAME(Scalar o) const {                                                                  \
    GRADLAB_TAPE(#NAME, NAME(o), *this, o);                                                              \
    return tensor_op(Binary::KIND, *this, scalar_like(o, *this, result_type(*this, o)), 1, ScalarType::Bool); \
  }                                                                                                      \
  Tensor operator OP(const Tensor& a, const Tensor& b) { return a.NAME(b); }                             \
  Tensor operator OP(const Tensor& a, Scalar b) { return a.NAME(b); }
GRADLAB_COMPARE(gt, Gt, >)
GRADLAB_COMPARE(lt, Lt, <)
GRADLAB_COMPARE(ge, Ge, >=)
GRADLAB_COMPARE(le, Le, <=)
GRADLAB_COMPARE(eq, Eq, ==)
GRADLAB_COMPARE(ne, Ne, !=)
#undef GRADLAB_COMPARE

bool equal(const Tensor& a, const Tensor& b) {
  check_defined(a);
  check_defined(b, 1, "other");
  if (!a.sizes().equals(b.sizes())) return false;
  const ScalarType t = promote_types(a.scalar_type(), b.scalar_type());
  return backend::of(a).equal(a.to(t), b.to(t));
}
bool Tensor::equal(const Tensor& o) const { return gradlab::equal(*this, o); }

// As LibTorch 1.13 computes it, in place on the result (whose version counter
// shows each step): equal values (equal infinities among them), then NaN
// facing NaN where asked, then the finite differences within tolerance.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  autograd::NoGradGuard ng;
  auto or_in_place = [](const Tensor& close, const Tensor& also) { close.copy_(close + also > 0); };
  Tensor close = a == b;
  if (equal_nan && is_floating(a.scalar_type())) or_in_place(close, (a != a) * (b != b));  // x != x: x is NaN
  if (rtol == 0 && atol == 0) return close;
  const Tensor allowed = (b * rtol).abs() + atol;
  const Tensor actual = (a - b).abs();
  or_in_place(close, (actual < std::numeric_limits<double>::infinity()) * (actual <= allowed));  // NaN < inf is false
  return close;
}
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all_true();
}
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
  return gradlab::allclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::all_true() const {
  Tensor c = to(ScalarType::Double).contiguous().to(Device(DeviceType::CPU));
  const double* p = c.data_ptr<double>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (p[i] == 0) return false;
  return true;
}

// ---------------------------------------------------------------- methods and operators
Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return gradlab::add(*this, o, alpha); }
Tensor Tensor::add(Scalar o, Scalar alpha) const { return gradlab::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return gradlab::sub(*this, o, alpha); }
Tensor Tensor::sub(Scalar o, Scalar alpha) const { return gradlab::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return gradlab::mul(*this, o); }
Tensor Tensor::mul(Scalar o) const { return gradlab::mul(*this, o); }
Tensor Tensor::div(const Tensor& o) const { return gradlab::div(*this, o); }
Tensor Tensor::div(Scalar o) const { return gradlab::div(*this, o); }
Tensor Tensor::pow(const Tensor& e) const { return gradlab::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return gradlab::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return gradlab::minimum(*this, o); }

// x != x only for NaN; x - x is 0 only for a finite x (inf - inf is NaN).
Tensor isnan(const Tensor& a) {
  GRADLAB_TAPE("isnan", isnan(a), a);
  autograd::NoGradGuard ng;
  return a != a;
}
Tensor isinf(const Tensor& a) {
  GRADLAB_TAPE("isinf", isinf(a), a);
  autograd::NoGradGuard ng;
  return is_floating(a.scalar_type()) ? a.abs() == std::numeric_limits<double>::infinity()
                                      : zeros(a.sizes(), TensorOptions(ScalarType::Bool).device(a.device()));
}
Tensor isfinite(const Tensor& a) {
  GRADLAB_TAPE("isfinite", isfinite(a), a);
  autograd::NoGradGuard ng;
  return is_floating(a.scalar_type()) ? (a - a) == 0
                                      : ones(a.sizes(), TensorOptions(ScalarType::Bool).device(a.device()));
}
Tensor Tensor::isnan() const { return gradlab::isnan(*this); }
Tensor Tensor::isinf() const { return gradlab::isinf(*this); }
Tensor Tensor::isfinite() const { return gradlab::isfinite(*this); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) {
  // LibTorch: empty_like(b).fill_(a).sub_(b), not rsub (fused.cpp)
  check_defined(b, 1, "other");
  Tensor r = empty_like(b, TensorOptions(result_type(b, a)));
  r.fill_(a);
  r.sub_(b);
  return r;
}
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) {
  // LibTorch: empty_like(b).fill_(a).div_(b)
  check_defined(b, 1, "other");
  ScalarType rt = result_type(b, a);
  if (!is_floating(rt)) rt = ScalarType::Float;
  Tensor r = empty_like(b, TensorOptions(rt));
  r.fill_(a);
  r.div_(b);
  return r;
}
Tensor operator-(const Tensor& a) { return neg(a); }

// ---------------------------------------------------------------- in place
Tensor& Tensor::add_(const Tensor& o, Scalar alpha) const {
  GRADLAB_TAPE("add_", add_(o, alpha), *this, o, alpha);
  return inplace_op(kAdd, *this, o, alpha.toDouble(), Alpha{alpha.toDouble()});
}
Tensor& Tensor::add_(Scalar o, Scalar alpha) const {
  GRADLAB_TAPE("add_", add_(o, alpha), *this, o, alpha); return inplace_scalar(kAddScalar, *this, o, NoState{}, alpha.toDouble()); }
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) const {
  GRADLAB_TAPE("sub_", sub_(o, alpha), *this, o, alpha);
  return inplace_op(kSub, *this, o, alpha.toDouble(), Alpha{alpha.toDouble()});
}
Tensor& Tensor::sub_(Scalar o, Scalar alpha) const {
  GRADLAB_TAPE("sub_", sub_(o, alpha), *this, o, alpha); return inplace_scalar(kSubScalar, *this, o, NoState{}, alpha.toDouble()); }
Tensor& Tensor::mul_(const Tensor& o) const {
  GRADLAB_TAPE("mul_", mul_(o), *this, o);
  return inplace_op(kMul, *this, o, 1);
}
Tensor& Tensor::mul_(Scalar o) const {
  GRADLAB_TAPE("mul_", mul_(o), *this, o); return inplace_scalar(kMulScalar, *this, o, Factor{o.toDouble()}); }
Tensor& Tensor::div_(const Tensor& o) const {
  GRADLAB_TAPE("div_", div_(o), *this, o);
  return inplace_op(kDiv, *this, o, 1);
}
Tensor& Tensor::div_(Scalar o) const {
  GRADLAB_TAPE("div_", div_(o), *this, o); return inplace_scalar(kDivScalar, *this, o, Factor{o.toDouble()}); }

// ---------------------------------------------------------------- out= variants
namespace {
// PyTorch refuses out= when autograd would have to record the op; otherwise
// the result is written into `out`, which counts as an in-place change.
Tensor& write_out(const char* op, Tensor& out, const Tensor& a, const Tensor& b, const std::function<Tensor()>& f) {
  check_defined(out, 0, "out");
  if (detail::grad_mode() && (out.requires_grad() || a.requires_grad() || (b.defined() && b.requires_grad())))
    throw Error(str_cat(op, "(): functions with out=... arguments don't support automatic differentiation, but one "
                            "of the arguments requires grad."));
  Tensor r;
  {
    autograd::NoGradGuard guard;
    r = f();
  }
  if (!r.sizes().equals(out.sizes()))
    throw Error(str_cat(op, "_out: the out tensor has shape ", out.sizes(), " but the result has shape ", r.sizes(),
                        "; pass an out tensor of the result's shape"));
  autograd::NoGradGuard guard;
  out.copy_(r);
  return out;
}
}  // namespace

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return write_out("add", out, a, b, [&] { return add(a, b, alpha); });
}
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha) {
  return write_out("sub", out, a, b, [&] { return sub(a, b, alpha); });
}
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("mul", out, a, b, [&] { return mul(a, b); });
}
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) {
  return write_out("div", out, a, b, [&] { return div(a, b); });
}

}  // namespace gradlab

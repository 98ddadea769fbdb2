// Loss functions: mse_loss and binary cross-entropy (nll.cpp has nll_loss and cross_entropy).
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
// A loss's reduction: a mean divides by `count` (the elements, or the rows).
struct Reduced {
  bool mean;
  double count;
  Reduction reduction;
};
Tensor mse_loss_backward(const Tensor& g, const Tensor& a, const Tensor& b, const Reduced& r);
// The backward's own backward (create_graph), as PyTorch's derivatives of
// mse_loss_backward(g, a, b): gg is the incoming gradient.
GradList mse_backward_bw(Op<Reduced>& n, Grads& grads) {
  const Tensor &gg = grads[0], g = n.saved_at(0), a = n.saved_at(1), b = n.saved_at(2);
  Tensor dg, da;
  if (n.should_compute_output(0))
    dg = n.reduction == Reduction::None ? mse_loss_backward(gg, a, b, n)
                                        : (mse_loss_backward(ones_like(g), a, b, n) * gg).sum();
  if (n.should_compute_output(1) || n.should_compute_output(2)) {
    da = gg * g * 2;
    if (n.mean) da = da.div(n.count);
  }
  return {dg, n.should_compute_output(1) ? da : Tensor(), n.should_compute_output(2) ? da.neg() : Tensor()};
}
// d mean((a-b)²)/da = 2(a-b)/N; an op of its own under create_graph.
Tensor mse_loss_backward(const Tensor& g, const Tensor& a, const Tensor& b, const Reduced& r) {
  Tensor gi;
  {
    autograd::NoGradGuard ng;
    Tensor d = (a - b) * 2;
    if (r.mean) d = d.div(r.count);
    gi = g * d;
  }
  if (auto fn = record("MseLossBackwardBackward0", {&g, &a, &b}, mse_backward_bw, r)) {
    fn->save(g);
    fn->save(a);
    fn->save(b);
    finish(std::move(fn), gi);
  }
  return gi;
}
// The target's gradient is the same op with the operands swapped, as in PyTorch.
GradList mse_bw(Op<Reduced>& n, Grads& g) {
  Tensor x = n.saved_at(0), y = n.saved_at(1);
  return {n.should_compute_output(0) ? mse_loss_backward(g[0], x, y, n) : Tensor(),
          n.should_compute_output(1) ? mse_loss_backward(g[0], y, x, n) : Tensor()};
}
// The loss of each element summed or averaged as asked.
Tensor reduce_loss(const Tensor& l, Reduction r) {
  return r == Reduction::None ? l : r == Reduction::Sum ? l.sum() : l.mean();
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction red) {
  GRADLAB_TAPE("mse_loss", mse_loss(input, target, red), input, target, red);
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor d = input - target;
    Tensor sq = d * d;
    out = reduce_loss(sq, red);
  }
  out = out.tensor_data();
  auto reduced = [&] {
    const double count = static_cast<double>(numel_of(broadcast_shapes(input.sizes(), target.sizes())));
    return Reduced{red == Reduction::Mean, count, red};
  };
  if (auto fn = record("MseLossBackward0", {&input, &target}, mse_bw, reduced)) {
    fn->save(input);
    fn->save(target);
    finish(std::move(fn), out);
  }
  return out;
}

// ATen's l1_loss is composite: |input - target| and the reduction, recorded
// as SubBackward0, AbsBackward0 and then MeanBackward0 or SumBackward0.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction red) {
  GRADLAB_TAPE("l1_loss", l1_loss(input, target, red), input, target, red);
  return reduce_loss((input - target).abs(), red);
}

// ---------------------------------------------------------------- binary cross-entropy
namespace {
// Which optional weights a binary cross-entropy has (saved after input and target).
struct Bce : Reduced {
  bool weight, pos_weight;
};
Tensor saved_or_none(Op<Bce>& n, bool present, size_t& i) { return present ? n.saved_at(i++) : Tensor(); }
// PyTorch's binary_cross_entropy_backward: g (x - y) / max((1 - x) x, 1e-12);
// the target's: -logit(x) g. Both times the weight, over the count for a mean.
GradList bce_bw(Op<Bce>& n, Grads& g) {
  size_t i = 2;
  const Tensor x = n.saved_at(0), y = n.saved_at(1), w = saved_or_none(n, n.weight, i);
  Tensor dx, dy;
  if (n.should_compute_output(0)) dx = g[0] * (x - y) / ((1 - x) * x).clamp_min(1e-12);
  if (n.should_compute_output(1)) dy = (x / (1 - x)).log().neg() * g[0];
  for (Tensor* d : {&dx, &dy}) {
    if (d->defined() && w.defined()) *d = *d * w;
    if (d->defined() && n.mean) *d = *d / n.count;
  }
  return {dx, dy};
}
// d/dx = (σ(x) - y) g, or with pos_weight p: ((p y + 1 - y) σ(x) - p y) g; d/dy = -x g, or with p:
// (log(1 - σ(x)) - p log σ(x)) g. Both times the weight, over the count for a mean.
GradList bce_logits_bw(Op<Bce>& n, Grads& g) {
  size_t i = 2;
  const Tensor x = n.saved_at(0), y = n.saved_at(1), w = saved_or_none(n, n.weight, i);
  const Tensor pw = saved_or_none(n, n.pos_weight, i);
  Tensor dx, dy;
  if (n.should_compute_output(0)) {
    if (pw.defined()) {
      const Tensor t = pw * y;
      dx = ((t + 1 - y) * x.sigmoid() - t) * g[0];
    } else {
      dx = (x.sigmoid() - y) * g[0];
    }
    if (w.defined()) dx = dx * w;
    if (n.mean) dx = dx / n.count;
  }
  if (n.should_compute_output(1)) {
    dy = pw.defined() ? ((1 - x.sigmoid()).log() - pw * x.sigmoid().log()) * g[0] : x * -g[0];
    if (w.defined()) dy = dy * w;
    if (n.mean) dy = dy / n.count;
  }
  return {dx, dy};
}
void check_bce_shapes(const Tensor& input, const Tensor& target) {
  GRADLAB_CHECK(input.sizes().equals(target.sizes()), "Using a target size (", target.sizes(),
                ") that is different to the input size (", input.sizes(), ") is deprecated. Please ensure they have the same size.");
}
}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                            Reduction red) {
  GRADLAB_TAPE("binary_cross_entropy", binary_cross_entropy(input, target, weight, red), input, target, weight, red);
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  check_bce_shapes(input, target);
  const Tensor w = weight.value_or(Tensor());
  check_no_requires_grad(w, "weight", "binary_cross_entropy");
  Tensor out;
  {
    autograd::NoGradGuard ng;
    GRADLAB_CHECK(((input >= 0) * (input <= 1)).all().item<bool>(), "all elements of input should be between 0 and 1");
    Tensor l = (target - 1) * (1 - input).log().clamp_min(-100) - target * input.log().clamp_min(-100);
    if (w.defined()) l = l * w;
    out = reduce_loss(l, red).clone();
  }
  auto state = [&] { return Bce{{red == Reduction::Mean, static_cast<double>(input.numel()), red}, w.defined(), false}; };
  if (auto fn = record("BinaryCrossEntropyBackward0", {&input, &target}, bce_bw, state)) {
    fn->save(input);
    fn->save(target);
    if (w.defined()) fn->save(w);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, Reduction red) {
  GRADLAB_TAPE("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits(input, target, weight, pos_weight, red), input, target, weight, pos_weight, red);
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  check_bce_shapes(input, target);
  const Tensor w = weight.value_or(Tensor()), pw = pos_weight.value_or(Tensor());
  check_no_requires_grad(w, "weight", "binary_cross_entropy_with_logits");
  check_no_requires_grad(pw, "pos_weight", "binary_cross_entropy_with_logits");
  Tensor out;
  {
    // Stable for large |x|: log(1 + e^-x) = m + log(e^-m + e^(-x-m)), m = max(-x, 0).
    autograd::NoGradGuard ng;
    const Tensor m = (-input).clamp_min(0);
    const Tensor softplus = ((-m).exp() + (-input - m).exp()).log() + m;
    Tensor l = (1 - target) * input + (pw.defined() ? ((pw - 1) * target + 1) * softplus : softplus);
    if (w.defined()) l = l * w;
    out = reduce_loss(l, red).clone();
  }
  auto state = [&] {
    return Bce{{red == Reduction::Mean, static_cast<double>(input.numel()), red}, w.defined(), pw.defined()};
  };
  if (auto fn = record("BinaryCrossEntropyWithLogitsBackward0", {&input, &target}, bce_logits_bw, state)) {
    fn->save(input);
    fn->save(target);
    if (w.defined()) fn->save(w);
    if (pw.defined()) fn->save(pw);
    finish(std::move(fn), out);
  }
  return out;
}

}  // namespace gradlab

// ---------------------------------------------------------------- leaky_relu
namespace gradlab {
namespace {
struct Slope {
  double slope;
};
Tensor leaky_relu_backward(const Tensor& g, const Tensor& self, double slope);
// leaky_relu_backward is linear in g: its own backward is itself of the
// incoming gradient; the input's share is zero (a step), as in PyTorch.
GradList leaky_backward_bw(Op<Slope>& n, Grads& g) {
  return {n.should_compute_output(0) ? leaky_relu_backward(g[0], n.saved_at(0), n.slope) : Tensor(),
          n.should_compute_output(1) ? zeros_like(g[0]) : Tensor()};
}
Tensor leaky_relu_backward(const Tensor& g, const Tensor& self, double slope) {
  Tensor r;
  {
    autograd::NoGradGuard ng;
    r = where(self > 0, g, g * slope);
  }
  if (auto fn = record("LeakyReluBackwardBackward0", {&g, &self}, leaky_backward_bw, Slope{slope})) {
    fn->save(self);
    finish(std::move(fn), r);
  }
  return r;
}
GradList leaky_bw(Op<Slope>& n, Grads& g) { return {leaky_relu_backward(g[0], n.saved_at(0), n.slope)}; }
// In place the input is gone: the result decides the side (the same for a positive slope).
GradList leaky_inplace_bw(Op<Slope>& n, Grads& g) {
  GRADLAB_CHECK(n.slope > 0,
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
                "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
                "in-place leakRelu backward calculation with negative slope");
  return {leaky_relu_backward(g[0], n.saved_at(0), n.slope)};
}
}  // namespace

Tensor& leaky_relu_(Tensor& self, Scalar negative_slope) {
  GRADLAB_TAPE("leaky_relu_", leaky_relu_(self, negative_slope), self, negative_slope);
  check_defined(self, 0, "self");
  GRADLAB_CHECK(self.is_floating_point(), "\"leaky_relu_cpu\" not implemented for '", c10_name(self.scalar_type()), "'");
  check_inplace(self);
  const double slope = negative_slope.toDouble();
  auto fn = record("LeakyReluBackward1", {&self}, leaky_inplace_bw, Slope{slope});
  check_rebase(self, fn);
  {
    autograd::NoGradGuard ng;
    Tensor r = where(self > 0, self, self * slope);
    backend::of(self).copy(self, r);
  }
  bump_version(self);
  if (fn) {
    finish_inplace(self, fn);
    fn->save(self, /*is_output=*/true);
  }
  return self;
}

Tensor leaky_relu(const Tensor& x, Scalar negative_slope) {
  GRADLAB_TAPE("leaky_relu", leaky_relu(x, negative_slope), x, negative_slope);
  check_defined(x, 0, "self");
  GRADLAB_CHECK(x.is_floating_point(), "\"leaky_relu_cpu\" not implemented for '", c10_name(x.scalar_type()), "'");
  const double slope = negative_slope.toDouble();
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = where(x > 0, x, x * slope);
  }
  if (auto fn = record("LeakyReluBackward0", {&x}, leaky_bw, Slope{slope})) {
    fn->save(x);
    finish(std::move(fn), out);
  }
  return out;
}
}  // namespace gradlab

// Loss functions: mse_loss, nll_loss, cross_entropy (= nll_loss ∘ log_softmax).
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
// d nll: -1 at each row's target (divided by N for the mean)
struct NllState : Reduced {
  DimVector sizes;  // the input's
};
// nll_loss_backward is linear in g: its own backward (create_graph) is
// nll_loss of the incoming gradient; the input's share is zero, as in PyTorch.
GradList nll_backward_bw(Op<NllState>& n, Grads& g) {
  return {n.should_compute_output(0) ? nll_loss(g[0], n.saved_at(0), n.reduction) : Tensor(),
          n.should_compute_output(1) ? zeros_like(g[0]) : Tensor()};
}
GradList nll_bw(Op<NllState>& n, Grads& g) {
  Tensor target = n.saved_at(0);
  Tensor r = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  {
    autograd::NoGradGuard ng;
    Tensor tc = target.to(Device(DeviceType::CPU)).contiguous();
    const int64_t* t = tc.data_ptr<int64_t>();
    Tensor scale = n.mean ? g[0].div(n.count).neg() : g[0].neg();
    for (int64_t i = 0; i < tc.numel(); ++i)
      r.select(0, i).select(0, t[i]).copy_(n.mean || scale.dim() == 0 ? scale : scale.select(0, i));
  }
  // Under create_graph, an op of its own over g and the loss's input.
  if (detail::grad_mode()) {
    auto fn = detail::make_pooled<Op<NllState>>("NllLossBackwardBackward0", nll_backward_bw, NllState(n));
    connect(*fn, {&g[0]});
    fn->add_next_edge(n.next_edge(0));
    fn->save(target);
    finish(std::move(fn), r);
  }
  return {r};
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction red) {
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor d = input - target;
    Tensor sq = d * d;
    out = red == Reduction::None ? sq : (red == Reduction::Sum ? sq.sum() : sq.mean());
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

Tensor nll_loss(const Tensor& lp, const Tensor& target, Reduction red) {
  check_defined(lp, 0, "self");
  check_defined(target, 1, "target");
  GRADLAB_CHECK(lp.dim() == 2 && target.dim() == 1, "nll_loss: expected 2-D input and 1-D target, got ", lp.dim(),
                "-D and ", target.dim(), "-D");
  GRADLAB_CHECK(lp.size(0) == target.size(0), "Expected input batch_size (", lp.size(0),
                ") to match target batch_size (", target.size(0), ").");
  GRADLAB_CHECK(target.scalar_type() == ScalarType::Long, "expected scalar type Long but found ", c10_name(target.scalar_type()));
  Tensor tc = target.to(Device(DeviceType::CPU)).contiguous();
  const int64_t* t = tc.data_ptr<int64_t>();
  Tensor out;
  {
    autograd::NoGradGuard ng;
    std::vector<Tensor> picked;
    for (int64_t i = 0; i < tc.numel(); ++i) {
      GRADLAB_CHECK(t[i] >= 0 && t[i] < lp.size(1), "Target ", t[i], " is out of bounds.");
      picked.push_back(lp.select(0, i).select(0, t[i]).neg().reshape({1}));
    }
    Tensor all = cat(picked, 0);
    out = red == Reduction::None ? all : (red == Reduction::Sum ? all.sum() : all.mean());
  }
  out = out.tensor_data();
  out.unsafeGetTensorImpl()->is_view = false;
  auto state = [&] {
    return NllState{Reduced{red == Reduction::Mean, static_cast<double>(lp.size(0)), red}, DimVector(lp.sizes())};
  };
  if (auto fn = record("NllLossBackward0", {&lp}, nll_bw, state)) {
    fn->save(target);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction red) {
  return nll_loss(log_softmax(input, 1), target, red);
}

}  // namespace gradlab

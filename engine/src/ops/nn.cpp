// Loss functions: mse_loss, nll_loss, cross_entropy (= nll_loss ∘ log_softmax).
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
// A loss's reduction: a mean divides by `count` (the elements, or the rows).
struct Reduced {
  bool mean;
  double count;
};
// d mean((x-y)²) = 2(x-y)/N, and the negative for y
GradList mse_bw(Op<Reduced>& n, Grads& g) {
  Tensor x = n.saved_at(0), y = n.saved_at(1);
  Tensor d = (x - y) * 2;
  if (n.mean) d = d.div(n.count);
  Tensor gi = g[0] * d;
  return {n.should_compute_output(0) ? gi : Tensor(), n.should_compute_output(1) ? gi.neg() : Tensor()};
}
// d nll: -1 at each row's target (divided by N for the mean)
struct NllState : Reduced {
  DimVector sizes;  // the input's
};
GradList nll_bw(Op<NllState>& n, Grads& g) {
  Tensor target = n.saved_at(0);
  Tensor r = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  Tensor tc = target.to(Device(DeviceType::CPU)).contiguous();
  const int64_t* t = tc.data_ptr<int64_t>();
  Tensor scale = n.mean ? g[0].div(n.count).neg() : g[0].neg();
  for (int64_t i = 0; i < tc.numel(); ++i) {
    Tensor gi = n.mean || scale.dim() == 0 ? scale : scale.select(0, i);
    autograd::NoGradGuard ng;
    r.select(0, i).select(0, t[i]).copy_(gi);
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
    return Reduced{red == Reduction::Mean, static_cast<double>(numel_of(broadcast_shapes(input.sizes(), target.sizes())))};
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
    return NllState{Reduced{red == Reduction::Mean, static_cast<double>(lp.size(0))}, DimVector(lp.sizes())};
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

// Negative log-likelihood and cross-entropy as ATen 1.13 has them: class
// weights, ignore_index, a 1-d input without a batch, (N, C) and spatial
// (N, C, d1, ...) inputs (4-d is nll_loss2d; other ranks are viewed as 4-d,
// as nll_loss_nd does), and cross-entropy's label smoothing and probability
// targets, composed from log_softmax as ATen composes them. The picking
// itself runs on the host, in double, like the other by-position ops.
#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {

// The operands seen as (N, C, K): N rows, C classes, K positions per row
// (the spatial ones of nll_loss2d, else 1). A 1-d input is one row.
struct NllLayout {
  int64_t n, c, k;
};
NllLayout layout_of(const Tensor& input, bool spatial) {
  if (spatial) return {input.size(0), input.size(1), input.size(2) * input.size(3)};
  if (input.dim() == 1) return {1, input.size(0), 1};
  return {input.size(0), input.size(1), 1};
}

struct NllState {
  NllLayout layout;
  Reduction reduction;
  int64_t ignore_index;
  bool spatial;         // nll_loss2d
  double total_weight;  // the mean's divisor: the summed weights of the targets not ignored
  DimVector sizes;      // the input's
};

Tensor host_double(const Tensor& t) {
  autograd::NoGradGuard ng;
  return on_host(t.to(ScalarType::Double));
}

// Calls f(target element, input offset, class weight) for each target not ignored.
template <class F>
void for_each_target(const NllLayout& l, const Tensor& target, const Tensor& weight, int64_t ignore, F f) {
  const int64_t* t = target.data_ptr<int64_t>();
  const double* w = weight.defined() ? weight.data_ptr<double>() : nullptr;
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t k = 0; k < l.k; ++k) {
      const int64_t e = i * l.k + k, cls = t[e];
      if (cls == ignore) continue;
      GRADLAB_CHECK(cls >= 0 && cls < l.c, "Target ", cls, " is out of bounds.");
      f(e, (i * l.c + cls) * l.k + k, w ? w[cls] : 1.0);
    }
}

Tensor from_doubles(const std::vector<double>& v, IntArrayRef sizes, const Tensor& like) {
  Tensor r = empty(sizes, TensorOptions(ScalarType::Double));
  std::copy(v.begin(), v.end(), r.data_ptr<double>());
  autograd::NoGradGuard ng;
  return r.to(like.device(), like.scalar_type());
}

Tensor nll_core(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction red, int64_t ignore,
                bool spatial);

// nll_loss_backward is linear in the gradient: its own backward is the same
// loss of the incoming gradient; the input's share is zero, as in PyTorch.
GradList nll_backward_bw(Op<NllState>& n, Grads& g) {
  const Tensor weight = n.saved.size() > 1 ? n.saved_at(1) : Tensor();
  return {n.should_compute_output(0) ? nll_core(g[0], n.saved_at(0), weight, n.reduction, n.ignore_index, n.spatial)
                                     : Tensor(),
          n.should_compute_output(1) ? zeros_like(g[0]) : Tensor()};
}

GradList nll_bw(Op<NllState>& n, Grads& g) {
  const Tensor target = n.saved_at(0), weight = n.saved.size() > 1 ? n.saved_at(1) : Tensor();
  const NllLayout& layout = n.layout;
  const Tensor gh = host_double(g[0]);
  const double* gp = gh.data_ptr<double>();
  const bool per_element = n.reduction == Reduction::None && gh.dim() > 0;
  const double divisor = n.reduction == Reduction::Mean ? n.total_weight : 1.0;
  std::vector<double> gi(static_cast<size_t>(layout.n * layout.c * layout.k), 0.0);
  for_each_target(layout, on_host(target), weight.defined() ? host_double(weight) : Tensor(), n.ignore_index,
                  [&](int64_t e, int64_t off, double w) { gi[off] = -w * gp[per_element ? e : 0] / divisor; });
  Tensor r = from_doubles(gi, n.sizes, g[0]);
  // Under create_graph, an op of its own over g and the loss's input.
  if (detail::grad_mode()) {
    auto fn = detail::make_pooled<Op<NllState>>(n.spatial ? "NllLoss2DBackwardBackward0" : "NllLossBackwardBackward0",
                                                nll_backward_bw, NllState(n));
    connect(*fn, {&g[0]});
    fn->add_next_edge(n.untaped_next_edges().at(0));
    fn->save(target);
    if (weight.defined()) fn->save(weight);
    finish(std::move(fn), r);
  }
  return {r};
}

void check_nll_args(const Tensor& input, const Tensor& target, const Tensor& weight, bool spatial) {
  GRADLAB_CHECK(target.scalar_type() == ScalarType::Long, "expected scalar type Long but found ",
                c10_name(target.scalar_type()));
  if (spatial) {
    GRADLAB_CHECK(target.dim() == 3,
                  "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
    GRADLAB_CHECK(input.dim() == 4,
                  "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", input.dim());
    GRADLAB_CHECK(!weight.defined() || weight.numel() == input.size(1),
                  "weight tensor should be defined either for all or no classes");
    GRADLAB_CHECK(input.size(0) == target.size(0) && input.size(2) == target.size(1) &&
                      input.size(3) == target.size(2),
                  "size mismatch (got input: ", input.sizes(), " , target: ", target.sizes());
    return;
  }
  GRADLAB_CHECK(input.dim() > 0 && input.dim() <= 2, "input tensor should be 1D or 2D");
  GRADLAB_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = input.dim() == 1 && target.dim() == 0;
  GRADLAB_CHECK(no_batch_dim || (target.dim() == 1 && input.size(0) == target.size(0)),
                "size mismatch (got input: ", input.sizes(), ", target: ", target.sizes(), ")");
  const int64_t classes = input.size(-1);
  GRADLAB_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
                "weight tensor should be defined either for all ", classes,
                " classes or no classes but got weight tensor of shape: ", weight.sizes());
}

// One nll_loss (1-d or 2-d input) or nll_loss2d (4-d input): NllLossBackward0
// or NllLoss2DBackward0 over the input.
Tensor nll_core(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction red, int64_t ignore,
                bool spatial) {
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  check_nll_args(input, target, weight, spatial);
  check_no_requires_grad(weight, "weight", spatial ? "nll_loss2d_forward" : "nll_loss_forward");
  const NllLayout l = layout_of(input, spatial);
  const Tensor x = host_double(input);
  const double* xp = x.data_ptr<double>();
  std::vector<double> loss(static_cast<size_t>(l.n * l.k), 0.0);
  double total_weight = 0;
  for_each_target(l, on_host(target), weight.defined() ? host_double(weight) : Tensor(), ignore,
                  [&](int64_t e, int64_t off, double w) {
                    loss[e] = -xp[off] * w;
                    total_weight += w;
                  });
  Tensor out;
  if (red == Reduction::None) {
    out = from_doubles(loss, target.sizes(), input);
  } else {
    double sum = 0;
    for (double v : loss) sum += v;
    out = from_doubles({red == Reduction::Mean ? sum / total_weight : sum}, {}, input);
  }
  auto state = [&] { return NllState{l, red, ignore, spatial, total_weight, DimVector(input.sizes())}; };
  if (auto fn = record(spatial ? "NllLoss2DBackward0" : "NllLossBackward0", {&input}, nll_bw, state)) {
    fn->save(target);
    if (weight.defined()) fn->save(weight);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor weight_of(const std::optional<Tensor>& w) { return w ? *w : Tensor(); }

// The weight shaped to broadcast along the class dim of an input of rank `dims`.
Tensor class_weight_view(const Tensor& weight, int64_t dims, int64_t class_dim) {
  DimVector shape(static_cast<size_t>(dims), 1);
  shape[static_cast<size_t>(class_dim)] = weight.size(0);
  return weight.view(shape);
}

// Cross-entropy against a distribution over the classes (target shaped as input).
Tensor cross_entropy_prob_target(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction red,
                                 double smoothing) {
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  GRADLAB_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == classes),
                "cross_entropy: weight tensor should be defined either for all ", classes,
                " classes or no classes but got weight tensor of shape: ", weight.sizes());
  const Tensor lp = log_softmax(input, class_dim);
  Tensor t = target;
  if (smoothing > 0.0) {
    GRADLAB_CHECK(smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: ", smoothing);
    t = target * (1 - smoothing) + (smoothing / static_cast<double>(classes));
  }
  Tensor prod = lp * t;
  if (weight.defined()) prod = prod * class_weight_view(weight, input.dim(), class_dim);
  if (red == Reduction::None) return -prod.sum(class_dim);
  if (red == Reduction::Sum) return -prod.sum();
  return -prod.sum() / (input.numel() / classes);
}

// Class-index targets with label smoothing: (1 - s) nll + s/C times the
// loss against the uniform distribution (ignored targets excluded).
Tensor cross_entropy_smoothed(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction red,
                              int64_t ignore, double smoothing) {
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  const Tensor lp = log_softmax(input, class_dim);
  const Tensor nll = nll_loss(lp, target, weight, red, ignore);
  const Tensor ignored = target == ignore;
  Tensor smooth = weight.defined() ? -(lp * class_weight_view(weight, input.dim(), class_dim)).sum(class_dim)
                                   : -lp.sum(class_dim);
  smooth.masked_fill_(ignored, 0.0);
  Tensor ret;
  if (red == Reduction::Mean) {
    // The divisor is not differentiable: the weights (or the count) of the targets kept.
    double kept = 0;
    const Tensor t = on_host(target), w = weight.defined() ? host_double(weight) : Tensor();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int64_t cls = t.data_ptr<int64_t>()[i];
      if (cls != ignore) kept += w.defined() ? w.data_ptr<double>()[cls] : 1.0;
    }
    const ScalarType kept_type = weight.defined() ? weight.scalar_type() : ScalarType::Long;
    ret = smooth.sum() / full({}, kept, TensorOptions(kept_type).device(smooth.device()));
  } else {
    ret = red == Reduction::Sum ? smooth.sum() : smooth;
  }
  return (1 - smoothing) * nll + ret * (smoothing / static_cast<double>(classes));
}

}  // namespace

// As ATen's nll_loss_nd.
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight_opt, Reduction red,
                int64_t ignore_index) {
  GRADLAB_TAPE("nll_loss", nll_loss(input, target, weight_opt, red, ignore_index), input, target, weight_opt, red, ignore_index);
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  const Tensor weight = weight_of(weight_opt);
  GRADLAB_CHECK(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  GRADLAB_CHECK(input.dim() == 1 || (target.dim() >= 1 && input.size(0) == target.size(0)),
                "Expected input batch_size (", input.size(0), ") to match target batch_size (",
                target.dim() >= 1 ? target.size(0) : 0, ").");
  if (input.dim() <= 2) return nll_core(input, target, weight, red, ignore_index, false);
  if (input.dim() == 4) return nll_core(input, target, weight, red, ignore_index, true);
  const int64_t n = input.size(0), c = input.size(1);
  DimVector out_size{n};
  for (int64_t d = 2; d < input.dim(); ++d) out_size.push_back(input.size(d));
  const IntArrayRef rest(out_size.data() + 1, out_size.size() - 1);
  GRADLAB_CHECK(target.dim() >= 1 && IntArrayRef(target.sizes().data() + 1, target.sizes().size() - 1).equals(rest),
                "Expected target size ",
                IntArrayRef(out_size), ", got ", target.sizes());
  const bool any = input.numel() > 0;
  Tensor in = input.contiguous().view({n, c, any ? 1 : 0, any ? -1 : 0});
  Tensor tg = target.contiguous().view({n, target.numel() > 0 ? 1 : 0, target.numel() > 0 ? -1 : 0});
  Tensor out = nll_core(in, tg, weight, red, ignore_index, true);
  return red == Reduction::None ? out.view(out_size) : out;
}
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction r) {
  GRADLAB_TAPE("nll_loss", nll_loss(log_probs, target, r), log_probs, target, r);
  return nll_loss(log_probs, target, std::nullopt, r);
}

// As ATen's cross_entropy_loss.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight_opt, Reduction red,
                     int64_t ignore_index, double label_smoothing) {
  GRADLAB_TAPE("cross_entropy", cross_entropy(input, target, weight_opt, red, ignore_index, label_smoothing), input, target, weight_opt, red, ignore_index, label_smoothing);
  check_defined(input, 0, "self");
  check_defined(target, 1, "target");
  const Tensor weight = weight_of(weight_opt);
  if (input.sizes().equals(target.sizes())) {
    GRADLAB_CHECK(target.is_floating_point(), "Expected floating point type for target with class probabilities, got ",
                  c10_name(target.scalar_type()));
    GRADLAB_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    return cross_entropy_prob_target(input, target, weight, red, label_smoothing);
  }
  if (label_smoothing > 0.0) {
    GRADLAB_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    return cross_entropy_smoothed(input, target, weight, red, ignore_index, label_smoothing);
  }
  return nll_loss(log_softmax(input, input.dim() == 1 ? 0 : 1), target, weight, red, ignore_index);
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction r) {
  GRADLAB_TAPE("cross_entropy", cross_entropy(input, target, r), input, target, r);
  return cross_entropy(input, target, std::nullopt, r);
}

}  // namespace gradlab

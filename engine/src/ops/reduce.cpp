// Reductions and the softmax family.
#include <limits>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
DimVector reduce_dims(const Tensor& a, IntArrayRef dims) {
  DimVector r;
  for (auto d : dims) r.push_back(wrap_dim(d, a.dim()));
  std::sort(r.begin(), r.end());
  return r;
}
DimVector kept_shape(const Tensor& a, const DimVector& dims) {
  DimVector s(a.sizes());
  for (auto d : dims) s[static_cast<size_t>(d)] = 1;
  return s;
}
DimVector dropped_shape(const Tensor& a, const DimVector& dims) {
  DimVector s;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) s.push_back(a.size(d));
  return s;
}
ScalarType sum_type(const Tensor& a, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(a.scalar_type(), true) ? ScalarType::Long : a.scalar_type();
}

bool reduces_all(const Tensor& a, const DimVector& dims) {
  if (dims.size() != static_cast<size_t>(a.dim())) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Tensor sum_kernel(const Tensor& a, const DimVector& dims, bool keepdim, ScalarType t) {
  Tensor in = a.scalar_type() == t ? a : a.detach().to(t);
  // A sum over everything goes straight into a 0-d result (no reshaping view).
  const bool to_scalar = !keepdim && reduces_all(a, dims);
  Tensor out = gradlab::new_empty(to_scalar ? DimVector() : kept_shape(a, dims), t, a.device());
  backend::of(a).sum_to(out, in);
  if (!keepdim && !to_scalar) {
    const DimVector shape = dropped_shape(a, dims);
    out = alias_with_geometry(out, shape, contiguous_strides(shape), 0);
  }
  return out;
}

// A reduction over dims: the input's shape, the dims reduced (sorted), whether
// they were kept as 1, and for a mean how many elements each result averages.
struct ReducedDims {
  DimVector sizes;
  DimVector dims;
  bool keepdim = false;
  double count = 1;
};
// The reduced gradient spread back over the input's shape.
Tensor expand_back(const ReducedDims& r, Tensor grad) {
  // keepdim was false: put the reduced dims back as 1. A 0-d gradient (a sum
  // over everything) expands as it is.
  if (!r.keepdim && grad.dim() > 0) {
    for (auto d : r.dims) grad = grad.unsqueeze(d);
  }
  return grad.expand(r.sizes);
}
// d sum = 1, broadcast back over the reduced dims
GradList sum_bw(Op<ReducedDims>& n, Grads& g) { return {expand_back(n, g[0])}; }
// d mean = 1/N
GradList mean_bw(Op<ReducedDims>& n, Grads& g) { return {expand_back(n, g[0]).div(n.count)}; }
// Over dims, PyTorch's node unpacks the self it keeps (and so raises once it is freed or changed).
GradList mean_dim_bw(Op<ReducedDims>& n, Grads& g) {
  (void)n.saved_at(0);
  return mean_bw(n, g);
}
// d max (all): the gradient goes to the maxima, split evenly between ties
// (NaNs, when the result is one). PyTorch 1.13's evenly_distribute_backward
// fills zeros in place on the CPU (the gradient is at version 1) and
// multiplies by the mask on CUDA.
GradList max_all_bw(PlainOp& n, Grads& g) {
  Tensor self = n.saved_at(0), result = n.saved_at(1);
  if (self.is_cuda()) {
    Tensor mask = ((self == result) + (self.isnan() * result.isnan())) > 0;
    return {mask * (g[0] / mask.sum())};
  }
  Tensor mask = result.isnan().item<bool>() ? self.isnan() : self == result;
  return {g[0].new_zeros(self.sizes(), TensorOptions(self.scalar_type())).masked_fill_(mask, g[0] / mask.sum())};
}
// d max(dim): the gradient goes to the index that was picked
struct PickedAlong {
  DimVector sizes;  // the input's
  int64_t dim;
  bool keepdim;
};
GradList max_dim_bw(Op<PickedAlong>& n, Grads& g) {
  Tensor indices = n.saved_at(0);
  const int64_t dim = n.dim;
  Tensor grad = g[0];
  Tensor idx = indices;
  if (!n.keepdim) {
    grad = grad.unsqueeze(dim);
    idx = idx.unsqueeze(dim);
  }
  // one-hot over dim from the indices
  const int64_t length = n.sizes[static_cast<size_t>(dim)];
  Tensor ar = arange(length, TensorOptions(ScalarType::Long).device(grad.device()));
  DimVector view_shape(n.sizes.size(), 1);
  view_shape[static_cast<size_t>(dim)] = length;
  Tensor onehot = ar.view(view_shape) == idx;
  return {onehot * grad};
}
// softmax: dx = y (g - Σ g y);  log_softmax: dx = g - e^y Σ g
struct SoftmaxDim {
  int64_t dim;
  bool log;
};
Tensor softmax_backward_data(const Tensor& g, const Tensor& y, const SoftmaxDim& s);
// The backward's own backward (create_graph), as PyTorch's derivatives of
// _softmax_backward_data and _log_softmax_backward_data: gg is the incoming
// gradient, g and y the backward's inputs.
GradList softmax_backward_data_bw(Op<SoftmaxDim>& n, Grads& grads) {
  const Tensor &gg = grads[0], g = n.saved_at(0), y = n.saved_at(1);
  const int64_t dim = n.dim;
  Tensor dg, dy;
  if (n.log) {
    if (n.should_compute_output(0)) dg = gg - (gg * y.exp()).sum({dim}, true);
    if (n.should_compute_output(1)) dy = -g.sum({dim}, true) * y.exp() * gg;
  } else {
    if (n.should_compute_output(0)) dg = softmax_backward_data(gg, y, n);
    if (n.should_compute_output(1)) dy = g * gg - (y * g).sum({dim}, true) * gg - g * (y * gg).sum({dim}, true);
  }
  return {dg, dy};
}
// softmax's backward from its output y, an op of its own under create_graph.
Tensor softmax_backward_data(const Tensor& g, const Tensor& y, const SoftmaxDim& s) {
  Tensor r;
  {
    autograd::NoGradGuard ng;
    r = s.log ? g - y.exp() * g.sum({s.dim}, true) : y * (g - (g * y).sum({s.dim}, true));
  }
  const char* name = s.log ? "LogSoftmaxBackwardDataBackward0" : "SoftmaxBackwardDataBackward0";
  if (auto fn = record(name, {&g, &y}, softmax_backward_data_bw, s)) {
    fn->save(g);
    fn->save(y);
    finish(std::move(fn), r);
  }
  return r;
}
GradList softmax_bw(Op<SoftmaxDim>& n, Grads& g) { return {softmax_backward_data(g[0], n.saved_at(0), n)}; }

Tensor softmax_impl(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  check_defined(a);
  Tensor in = dtype ? a.to(*dtype) : (a.is_floating_point() ? a : a.to(ScalarType::Float));
  const int64_t nd = in.dim();
  dim = wrap_dim(dim, nd);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor moved = nd == 0 ? in.reshape({1}) : in.transpose(dim, nd - 1).contiguous();
    Tensor res = gradlab::new_empty(moved.sizes(), moved.scalar_type(), moved.device());
    backend::of(moved).softmax_lastdim(res, moved, log);
    out = nd == 0 ? res.reshape({}) : res.transpose(dim, nd - 1).contiguous();
  }
  out = out.detach();
  out.unsafeGetTensorImpl()->is_view = false;
  out.unsafeGetTensorImpl()->base.reset();
  if (auto fn = record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {&in}, softmax_bw, SoftmaxDim{dim, log})) {
    fn->save(out, true);
    finish(std::move(fn), out);
  }
  return out;
}

std::tuple<Tensor, Tensor> max_min_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  check_defined(a);
  const int64_t nd = a.dim();
  dim = wrap_dim(dim, nd);
  GRADLAB_CHECK(nd == 0 || a.size(dim) > 0, is_max ? "max" : "min",
                "(): Expected reduction dim ", dim, " to have non-zero size.");
  Tensor values, indices;
  {
    autograd::NoGradGuard ng;
    Tensor moved = nd == 0 ? a.reshape({1}) : a.transpose(dim, nd - 1).contiguous();
    DimVector rows_shape(moved.sizes());
    rows_shape.resize(rows_shape.size() - 1);
    Tensor v = gradlab::new_empty(rows_shape, a.scalar_type(), a.device());
    Tensor i = gradlab::new_empty(rows_shape, ScalarType::Long, a.device());
    backend::of(a).max_min_lastdim(v, i, moved, is_max);
    // rows_shape is a.sizes() with dim moved last and dropped; restore the order.
    DimVector kept = DimVector(a.sizes());
    if (nd > 0) kept[static_cast<size_t>(dim)] = 1;
    if (nd > 1 && dim != nd - 1) {
      v = v.unsqueeze(v.dim()).transpose(dim, nd - 1).contiguous();
      i = i.unsqueeze(i.dim()).transpose(dim, nd - 1).contiguous();
      if (!keepdim) {
        v = v.squeeze(dim);
        i = i.squeeze(dim);
      }
    } else if (keepdim && nd > 0) {
      v = v.unsqueeze(dim);
      i = i.unsqueeze(dim);
    }
    values = v.contiguous().detach();
    indices = i.contiguous().detach();
  }
  for (Tensor* t : {&values, &indices}) {
    t->unsafeGetTensorImpl()->is_view = false;
    t->unsafeGetTensorImpl()->base.reset();
  }
  if (auto fn = record(is_max ? "MaxBackward0" : "MinBackward0", {&a}, max_dim_bw, [&] { return PickedAlong{DimVector(a.sizes()), dim, keepdim}; })) {
    fn->save(indices, true);
    finish(fn, values);
  }
  return {values, indices};
}

Tensor max_min_all(const Tensor& a, bool is_max) {
  check_defined(a);
  GRADLAB_CHECK(a.numel() > 0, is_max ? "max" : "min",
                "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  Tensor v;
  {
    autograd::NoGradGuard ng;
    Tensor flat = a.contiguous().reshape({1, a.numel()});
    Tensor out = gradlab::new_empty({1}, a.scalar_type(), a.device());
    backend::of(a).max_min_lastdim(out, Tensor(), flat, is_max);
    v = alias_with_geometry(out, {}, {}, 0);
  }
  if (auto fn = record(is_max ? "MaxBackward1" : "MinBackward1", {&a}, max_all_bw)) {
    fn->save(a);
    fn->save(v, true);
    finish(fn, v);
  }
  return v;
}
}  // namespace

Tensor sum(const Tensor& a, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("sum", sum(a, dtype), a, dtype);
  check_defined(a);
  DimVector all;
  for (int64_t d = 0; d < a.dim(); ++d) all.push_back(d);
  Tensor out = sum_kernel(a, all, false, sum_type(a, dtype));
  if (auto fn = record("SumBackward0", {&a}, sum_bw, [&] { return ReducedDims{DimVector(a.sizes()), all}; })) finish(std::move(fn), out);
  return out;
}

Tensor sum(const Tensor& a, IntArrayRef dims_in, bool keepdim, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("sum", sum(a, dims_in, keepdim, dtype), a, dims_in, keepdim, dtype);
  check_defined(a);
  DimVector dims = reduce_dims(a, dims_in);
  if (dims_in.empty())
    for (int64_t d = 0; d < a.dim(); ++d) dims.push_back(d);
  Tensor out = sum_kernel(a, dims, keepdim, sum_type(a, dtype));
  if (auto fn = record("SumBackward1", {&a}, sum_bw, [&] { return ReducedDims{DimVector(a.sizes()), dims, keepdim}; }))
    finish(std::move(fn), out);
  return out;
}

Tensor mean(const Tensor& a, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("mean", mean(a, dtype), a, dtype);
  check_defined(a);
  const ScalarType t = dtype.value_or(a.scalar_type());
  GRADLAB_CHECK(is_floating(t), "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ", c10_name(t));
  DimVector all;
  for (int64_t d = 0; d < a.dim(); ++d) all.push_back(d);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = sum_kernel(a, all, false, t).div(static_cast<double>(a.numel()));  // 0/0: NaN when empty
  }
  if (auto fn = record("MeanBackward0", {&a}, mean_bw, [&] {
        return ReducedDims{DimVector(a.sizes()), all, false, static_cast<double>(a.numel())};
      }))
    finish(std::move(fn), out);
  return out;
}

Tensor mean(const Tensor& a, IntArrayRef dims_in, bool keepdim, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("mean", mean(a, dims_in, keepdim, dtype), a, dims_in, keepdim, dtype);
  check_defined(a);
  const ScalarType t = dtype.value_or(a.scalar_type());
  GRADLAB_CHECK(is_floating(t), "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: ", c10_name(t));
  DimVector dims = reduce_dims(a, dims_in);
  if (dims_in.empty())
    for (int64_t d = 0; d < a.dim(); ++d) dims.push_back(d);
  int64_t count = 1;
  for (auto d : dims) count *= a.size(d);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = sum_kernel(a, dims, keepdim, t).div(static_cast<double>(count));
  }
  if (auto fn = record("MeanBackward1", {&a}, mean_dim_bw, [&] {
        return ReducedDims{DimVector(a.sizes()), dims, keepdim, static_cast<double>(count)};
      })) {
    // PyTorch 1.13's MeanBackward1 keeps self (its backward reads only the
    // sizes): so a second backward through it raises, and a change in place
    // of self after it is caught.
    fn->save(a);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor max(const Tensor& a) {
  GRADLAB_TAPE("max", max(a), a);
  return max_min_all(a, true);
}
Tensor min(const Tensor& a) {
  GRADLAB_TAPE("min", min(a), a);
  return max_min_all(a, false);
}
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim) {
  GRADLAB_TAPE("max", max(a, dim, keepdim), a, dim, keepdim);
  return max_min_dim(a, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim) {
  GRADLAB_TAPE("min", min(a, dim, keepdim), a, dim, keepdim);
  return max_min_dim(a, dim, keepdim, false);
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  GRADLAB_TAPE("argmax", argmax(a, dim, keepdim), a, dim, keepdim);
  autograd::NoGradGuard ng;
  if (!dim) return std::get<1>(max_min_dim(a.reshape({-1}), 0, false, true));
  return std::get<1>(max_min_dim(a, *dim, keepdim, true));
}
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  GRADLAB_TAPE("argmin", argmin(a, dim, keepdim), a, dim, keepdim);
  autograd::NoGradGuard ng;
  if (!dim) return std::get<1>(max_min_dim(a.reshape({-1}), 0, false, false));
  return std::get<1>(max_min_dim(a, *dim, keepdim, false));
}
Tensor softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("softmax", softmax(a, dim, dtype), a, dim, dtype);
  return softmax_impl(a, dim, dtype, false);
}
Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("log_softmax", log_softmax(a, dim, dtype), a, dim, dtype);
  return softmax_impl(a, dim, dtype, true);
}

namespace {
struct LogsumexpDims {
  DimVector dims;  // wrapped, ascending
  bool keepdim;
};
// d/dx log Σ e^x = e^(x - result): the gradient and result regain the reduced dims first.
GradList logsumexp_bw(Op<LogsumexpDims>& n, Grads& g) {
  Tensor grad = g[0], result = n.saved_at(1);
  if (!n.keepdim)
    for (int64_t d : n.dims) grad = grad.unsqueeze(d), result = result.unsqueeze(d);
  return {grad * (n.saved_at(0) - result).exp()};
}
}  // namespace

Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim) {
  GRADLAB_TAPE("logsumexp", logsumexp(a, dims, keepdim), a, dims, keepdim);
  check_defined(a, 0, "self");
  dispatch_floating(a.scalar_type(), "logsumexp", [](auto) {});
  DimVector wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, std::max<int64_t>(a.dim(), 1)));
  std::sort(wrapped.begin(), wrapped.end());
  Tensor out;
  {
    // Stable: the largest element is taken out first (a whole -inf or inf slice keeps its own value).
    autograd::NoGradGuard ng;
    Tensor m = a;
    for (int64_t d : wrapped) m = std::get<0>(m.max(d, true));
    m = m.masked_fill(m.abs() == std::numeric_limits<double>::infinity(), 0);
    Tensor kept = m;
    if (!keepdim)
      for (size_t i = wrapped.size(); i-- > 0;) kept = kept.squeeze(wrapped[i]);
    out = (a - m).exp().sum(wrapped, keepdim).log() + kept;
  }
  if (auto fn = record("LogsumexpBackward0", {&a}, logsumexp_bw, [&] { return LogsumexpDims{wrapped, keepdim}; })) {
    fn->save(a);
    fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return gradlab::logsumexp(*this, dims, keepdim); }

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return gradlab::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const { return gradlab::sum(*this, dims, keepdim, dtype); }
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return gradlab::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const { return gradlab::mean(*this, dims, keepdim, dtype); }
Tensor Tensor::max() const { return gradlab::max(*this); }
Tensor Tensor::min() const { return gradlab::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return gradlab::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return gradlab::min(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return gradlab::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return gradlab::argmin(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const { return gradlab::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const { return gradlab::log_softmax(*this, dim, dtype); }

}  // namespace gradlab

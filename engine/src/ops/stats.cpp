// Reductions beyond sum, mean and max: prod, amax/amin, var/std, norm, and
// all/any. The forward is computed without a graph from the engine's own ops
// (or on the host, for prod); each records one node under PyTorch's name whose
// backward writes PyTorch's formula, so create_graph records what PyTorch's does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {

// The dims a reduction names, wrapped and ascending; none means all of them.
DimVector reduced_dims(const Tensor& a, IntArrayRef dims) {
  DimVector r;
  if (dims.empty())
    for (int64_t d = 0; d < a.dim(); ++d) r.push_back(d);
  for (int64_t d : dims) r.push_back(wrap_dim(d, std::max<int64_t>(a.dim(), 1)));
  std::sort(r.begin(), r.end());
  return r;
}
// A reduced tensor (grad or result) with its reduced dims back as size 1.
Tensor restored(Tensor t, const DimVector& dims, bool keepdim) {
  if (!keepdim)
    for (int64_t d : dims) t = t.unsqueeze(d);
  return t;
}
Tensor squeezed(Tensor t, const DimVector& dims, bool keepdim) {
  if (!keepdim)
    for (size_t i = dims.size(); i-- > 0;) t = t.squeeze(dims[i]);
  return t;
}
int64_t count_over(const Tensor& a, const DimVector& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= a.dim() == 0 ? 1 : a.size(d);
  return n;
}
struct ReducedOver {
  DimVector dims;
  bool keepdim;
  bool all;  // the whole tensor (the overload without dims)
};

// ------------------------------------------------------------------ prod
// `t` reversed along dim, as PyTorch 1.13's backward formulas reverse it: an
// index_select with a descending index (IndexSelectBackward0 in a graph).
Tensor reverse_dim(const Tensor& t, int64_t dim) {
  return t.index_select(dim, arange(t.size(dim) - 1, -1, -1, TensorOptions(ScalarType::Long).device(t.device())));
}
// The product of the other elements along dim, safe with zeros: exclusive
// cumulative products from the front and from the back, multiplied.
// [a, b, c]: [1, a, ab] * [bc, c, 1]. Built from recorded ops, so under
// create_graph the second derivative runs through PyTorch's graph.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim) {
  if (inp.numel() == 0) return grad.expand_as(inp);
  const int64_t n = inp.size(dim);
  if (n == 1) return grad;
  DimVector ones_size(inp.sizes());
  ones_size[static_cast<size_t>(dim)] = 1;
  const Tensor ones = gradlab::ones(ones_size, TensorOptions(grad.scalar_type()).device(grad.device()));
  const Tensor from_front = cat({ones, inp.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  const Tensor from_back = reverse_dim(cat({ones, reverse_dim(inp.narrow(dim, 1, n - 1), dim)}, dim).cumprod(dim), dim);
  return grad * (from_front * from_back);
}
// PyTorch 1.13's prod_backward: grad * (result / x) where x has no zero;
// otherwise the products of the others. Over the whole tensor, two or more
// zeros make every such product 0, and zeros come back (with no graph, even
// under create_graph).
GradList prod_bw(Op<ReducedOver>& n, Grads& g) {
  const Tensor x = n.saved_at(0);
  if (x.dim() == 0) return {g[0]};
  Tensor grad = g[0], result = n.saved_at(1);
  if (!n.all) grad = restored(grad, n.dims, n.keepdim), result = restored(result, n.dims, n.keepdim);
  int64_t zeros;
  {
    autograd::NoGradGuard ng;
    zeros = (x == 0).sum().item<int64_t>();
  }
  if (zeros == 0) return {grad * (result / x)};
  if (!n.all) return {prod_safe_zeros_backward(grad, x, n.dims[0])};
  if (zeros > 1) return {zeros_like(x)};
  return {prod_safe_zeros_backward(grad, x.contiguous().view({-1}), 0).view_as(x)};
}
Tensor prod_impl(const Tensor& a, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
  check_defined(a, 0, "self");
  const ScalarType rt = dtype.value_or(is_integral(a.scalar_type(), true) ? ScalarType::Long : a.scalar_type());
  const DimVector dims = dim ? reduced_dims(a, IntArrayRef(*dim)) : DimVector{};
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor src = a.to(rt).contiguous().to(Device(DeviceType::CPU));
    if (!dim) src = src.reshape({-1});
    const int64_t d = dim && a.dim() > 0 ? dims[0] : 0;
    DimVector kept(src.sizes());
    if (src.dim() > 0) kept[static_cast<size_t>(d)] = 1;
    Tensor host = empty(kept, TensorOptions(rt));
    const Split3 s = split3(src.sizes(), d);
    const int64_t pre = s.pre, n = s.n, post = s.post;
    dispatch_all(rt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = src.data_ptr<T>();
      T* o = host.data_ptr<T>();
      for (int64_t x = 0; x < pre; ++x)
        for (int64_t y = 0; y < post; ++y) {
          T acc = T(1);
          for (int64_t i = 0; i < n; ++i) acc = static_cast<T>(acc * in[(x * n + i) * post + y]);
          o[x * post + y] = acc;
        }
    });
    out = dim ? squeezed(host, dims, keepdim || a.dim() == 0) : host.reshape({});
    out = out.to(a.device()).clone();
  }
  if (auto fn = record(dim ? "ProdBackward1" : "ProdBackward0", {&a}, prod_bw,
                       [&] { return ReducedOver{dims, keepdim, !dim}; })) {
    fn->save(a);
    fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

// ------------------------------------------------------------------ amax / amin
// The gradient is shared evenly among the elements equal to the result.
GradList amax_bw(Op<ReducedOver>& n, Grads& g) {
  const Tensor grad = restored(g[0], n.dims, n.keepdim), result = restored(n.saved_at(1), n.dims, n.keepdim);
  const Tensor mask = result == n.saved_at(0);
  return {(grad / mask.sum(n.dims, true)) * mask};
}
Tensor amax_amin(const Tensor& a, IntArrayRef dims_in, bool keepdim, bool is_max) {
  check_defined(a, 0, "self");
  const DimVector dims = reduced_dims(a, dims_in);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor m = a;
    for (int64_t d : dims) m = std::get<0>(is_max ? m.max(d, true) : m.min(d, true));
    out = squeezed(m, dims, keepdim).clone();
  }
  if (auto fn = record(is_max ? "AmaxBackward0" : "AminBackward0", {&a}, amax_bw,
                       [&] { return ReducedOver{dims, keepdim, false}; })) {
    fn->save(a);
    fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

// ------------------------------------------------------------------ var / std
struct Spread : ReducedOver {
  double dof;  // the count less the correction (1 when unbiased)
};
Tensor var_backward(Tensor grad, const Tensor& x, const Spread& s) {
  if (s.all) return (grad * (2.0 / s.dof)) * (x - x.mean());
  if (!s.keepdim && x.dim() > 1) grad = restored(grad, s.dims, false);
  return (grad * (2.0 / s.dof)) * (x - x.mean(s.dims, true));
}
GradList var_bw(Op<Spread>& n, Grads& g) { return {var_backward(g[0], n.saved_at(0), n)}; }
GradList std_bw(Op<Spread>& n, Grads& g) {
  const Tensor result = n.saved_at(1);
  return {var_backward((g[0] / (result * 2)).masked_fill(result == 0, 0), n.saved_at(0), n)};
}
Tensor var_std(const Tensor& a, std::optional<IntArrayRef> dims_in, bool unbiased, bool keepdim, bool is_std) {
  check_defined(a, 0, "self");
  GRADLAB_CHECK(a.is_floating_point(), "std and var only support floating point and complex dtypes");
  const DimVector dims = reduced_dims(a, dims_in.value_or(IntArrayRef()));
  const double dof = static_cast<double>(count_over(a, dims)) - (unbiased ? 1 : 0);
  Tensor out;
  {
    autograd::NoGradGuard ng;
    const Tensor d = dims_in ? a - a.mean(dims, true) : a - a.mean();
    out = (dims_in ? (d * d).sum(dims, keepdim) : (d * d).sum()) / dof;
    if (is_std) out = out.sqrt();
  }
  auto state = [&] { return Spread{{dims, keepdim, !dims_in}, dof}; };
  if (auto fn = is_std ? record("StdBackward0", {&a}, std_bw, state) : record("VarBackward0", {&a}, var_bw, state)) {
    fn->save(a);
    if (is_std) fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

// ------------------------------------------------------------------ norm
struct Norm : ReducedOver {
  double p;
};
// PyTorch's norm_backward, case by case of p.
GradList norm_bw(Op<Norm>& n, Grads& g) {
  const Tensor x = n.saved_at(0);
  Tensor grad = g[0], norm = n.saved_at(1);
  if (!n.all) grad = restored(grad, n.dims, n.keepdim), norm = restored(norm, n.dims, n.keepdim);
  const double p = n.p;
  if (p == 0) return {zeros_like(x)};
  if (p == 1) return {x.sgn() * grad};
  if (p == 2) return {x * (grad / norm).masked_fill(norm == 0, 0)};
  if (std::isinf(p)) {
    const Tensor mask = x.abs() == norm;
    return {x.sgn() * ((grad / (n.all ? mask.sum() : mask.sum(n.dims, true))) * mask)};
  }
  const Tensor scale = (grad / norm.pow(p - 1)).masked_fill(norm == 0, 0);
  if (p < 2) return {x.sgn() * x.abs().pow(p - 1) * scale};
  return {x * x.abs().pow(p - 2) * scale};
}
Tensor norm_impl(const Tensor& a, double p, std::optional<IntArrayRef> dims_in, bool keepdim) {
  check_defined(a, 0, "self");
  GRADLAB_CHECK(a.is_floating_point(), "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
                c10_name(a.scalar_type()));
  const DimVector dims = reduced_dims(a, dims_in.value_or(IntArrayRef()));
  Tensor out;
  {
    autograd::NoGradGuard ng;
    const Tensor ab = a.abs();
    auto total = [&](const Tensor& t) { return dims_in ? t.sum(dims, keepdim) : t.sum(); };
    if (std::isinf(p)) out = amax_amin(ab, dims, dims_in && keepdim, p > 0);
    else if (p == 0) out = total((a != 0).to(a.scalar_type()));
    else if (p == 1) out = total(ab);
    else if (p == 2) out = total(a * a).sqrt();
    else out = total(ab.pow(p)).pow(1.0 / p);
  }
  if (auto fn = record(dims_in ? "NormBackward1" : "NormBackward0", {&a}, norm_bw,
                       [&] { return Norm{{dims, keepdim, !dims_in}, p}; })) {
    fn->save(a);
    fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}

// ------------------------------------------------------------------ all / any
Tensor all_any(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool all) {
  check_defined(a, 0, "self");
  autograd::NoGradGuard ng;
  const Tensor nonzero = a != 0;
  if (!dim) return all ? nonzero.sum() == a.numel() : nonzero.sum() > 0;
  const int64_t d = wrap_dim(*dim, std::max<int64_t>(a.dim(), 1));
  const Tensor count = nonzero.sum(IntArrayRef(d), keepdim);
  return all ? count == (a.dim() == 0 ? 1 : a.size(d)) : count > 0;
}

}  // namespace

Tensor prod(const Tensor& a, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("prod", prod(a, dtype), a, dtype);
  return prod_impl(a, std::nullopt, false, dtype);
}
Tensor prod(const Tensor& a, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  GRADLAB_TAPE("prod", prod(a, dim, keepdim, dtype), a, dim, keepdim, dtype);
  return prod_impl(a, dim, keepdim, dtype);
}
Tensor amax(const Tensor& a, IntArrayRef dims, bool keepdim) {
  GRADLAB_TAPE("amax", amax(a, dims, keepdim), a, dims, keepdim);
  return amax_amin(a, dims, keepdim, true);
}
Tensor amin(const Tensor& a, IntArrayRef dims, bool keepdim) {
  GRADLAB_TAPE("amin", amin(a, dims, keepdim), a, dims, keepdim);
  return amax_amin(a, dims, keepdim, false);
}
Tensor var(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  GRADLAB_TAPE("var", var(a, dims, unbiased, keepdim), a, dims, unbiased, keepdim);
  return var_std(a, dims, unbiased, keepdim, false);
}
Tensor std(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  GRADLAB_TAPE("std", std(a, dims, unbiased, keepdim), a, dims, unbiased, keepdim);
  return var_std(a, dims, unbiased, keepdim, true);
}
Tensor norm(const Tensor& a, Scalar p) {
  GRADLAB_TAPE("norm", norm(a, p), a, p);
  return norm_impl(a, p.toDouble(), std::nullopt, false);
}
Tensor norm(const Tensor& a, std::optional<Scalar> p, IntArrayRef dims, bool keepdim) {
  GRADLAB_TAPE("norm", norm(a, p, dims, keepdim), a, p, dims, keepdim);
  return norm_impl(a, p ? p->toDouble() : 2.0, dims, keepdim);
}

Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return gradlab::prod(*this, dtype); }
Tensor Tensor::prod(int64_t dim, bool keepdim, std::optional<ScalarType> dtype) const {
  return gradlab::prod(*this, dim, keepdim, dtype);
}
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return gradlab::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return gradlab::amin(*this, dims, keepdim); }
Tensor Tensor::spread_of_all(bool unbiased, bool is_std) const {
  GRADLAB_TAPE("spread_of_all", spread_of_all(unbiased, is_std), *this, unbiased, is_std);
  return var_std(*this, std::nullopt, unbiased, false, is_std);
}
Tensor Tensor::var(IntArrayRef dims, bool unbiased, bool keepdim) const { return gradlab::var(*this, dims, unbiased, keepdim); }
Tensor Tensor::std(IntArrayRef dims, bool unbiased, bool keepdim) const { return gradlab::std(*this, dims, unbiased, keepdim); }
Tensor Tensor::norm(Scalar p) const { return gradlab::norm(*this, p); }
Tensor Tensor::norm(std::optional<Scalar> p, IntArrayRef dims, bool keepdim) const {
  return gradlab::norm(*this, p, dims, keepdim);
}
Tensor Tensor::all() const {
  GRADLAB_TAPE("all", all(), *this);
  return all_any(*this, std::nullopt, false, true);
}
Tensor Tensor::all(int64_t dim, bool keepdim) const {
  GRADLAB_TAPE("all", all(dim, keepdim), *this, dim, keepdim);
  return all_any(*this, dim, keepdim, true);
}
Tensor Tensor::any() const {
  GRADLAB_TAPE("any", any(), *this);
  return all_any(*this, std::nullopt, false, false);
}
Tensor Tensor::any(int64_t dim, bool keepdim) const {
  GRADLAB_TAPE("any", any(dim, keepdim), *this, dim, keepdim);
  return all_any(*this, dim, keepdim, false);
}
Tensor all(const Tensor& a) { return a.all(); }
Tensor all(const Tensor& a, int64_t dim, bool keepdim) { return a.all(dim, keepdim); }
Tensor any(const Tensor& a) { return a.any(); }
Tensor any(const Tensor& a, int64_t dim, bool keepdim) { return a.any(dim, keepdim); }

}  // namespace gradlab

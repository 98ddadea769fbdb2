// Ops that choose, order or place elements: sort, topk, scatter,
// masked_select and masked_scatter, diag. Like gather.cpp's they
// compute on the host over contiguous copies; their backwards are written
// with recorded ops (as PyTorch's formulas are), so create_graph works.
// Ties and NaNs come out in PyTorch's order: sort is stable with NaN
// largest, topk runs the same standard-library algorithms as ATen's CPU
// kernel (partial_sort or nth_element then sort) over (value, index) pairs.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {

struct AlongDim {
  DimVector sizes;  // the input's
  int64_t dim;
};

// Zeros as ATen's zeros() makes them (empty, then zero_()): at version 1,
// so that a backward writing into them in place ends where PyTorch's does.
Tensor aten_zeros(IntArrayRef sizes, const Tensor& like) {
  Tensor z = zeros(sizes, TensorOptions(like.scalar_type()).device(like.device()));
  bump_version(z);
  return z;
}

// The backward of an op that picked values along `dim` at `indices`: the
// gradient scattered in place into zeros of the input's shape.
GradList picked_bw(Op<AlongDim>& n, Grads& g) {
  Tensor z = aten_zeros(n.sizes, g[0]);
  z.scatter_(n.dim, n.saved_at(0), g[0]);
  return {z};
}

// Runs f(values, indices, slice length) over each slice along `dim` of a
// contiguous host tensor; values and indices are the slice's elements as
// (double, position) pairs, written back through `out` in the order f leaves them.
using Slice = std::vector<std::pair<double, int64_t>>;
template <class F>
std::tuple<Tensor, Tensor> per_slice(const Tensor& self, int64_t dim, int64_t keep, F f) {
  const Tensor src = on_host(self);
  DimVector out_sizes(self.sizes());
  if (self.dim() > 0) out_sizes[static_cast<size_t>(dim)] = keep;
  Tensor values = empty(out_sizes, TensorOptions(self.scalar_type()));
  Tensor indices = empty(out_sizes, TensorOptions(ScalarType::Long));
  const Split3 s = split3(self.sizes(), self.dim() == 0 ? 0 : dim);
  dispatch_all(self.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    T* vo = values.data_ptr<T>();
    int64_t* io = indices.data_ptr<int64_t>();
    Slice q(static_cast<size_t>(s.n));
    for (int64_t a = 0; a < s.pre; ++a)
      for (int64_t b = 0; b < s.post; ++b) {
        for (int64_t i = 0; i < s.n; ++i) q[i] = {static_cast<double>(in[(a * s.n + i) * s.post + b]), i};
        f(q);
        for (int64_t i = 0; i < keep; ++i) {
          const int64_t at = (a * keep + i) * s.post + b;
          vo[at] = in[(a * s.n + q[i].second) * s.post + b];
          io[at] = q[i].second;
        }
      }
  });
  if (!self.device().is_cpu()) {
    values = values.to(self.device());
    indices = indices.to(self.device());
  }
  return {values, indices};
}

// NaN is the largest value, as in PyTorch.
bool nan_last_less(double x, double y) { return (!std::isnan(x) && std::isnan(y)) || x < y; }
bool nan_first_greater(double x, double y) { return (std::isnan(x) && !std::isnan(y)) || x > y; }

std::tuple<Tensor, Tensor> recorded_pick(const char* name, const Tensor& self, int64_t dim,
                                         std::tuple<Tensor, Tensor> r) {
  if (auto fn = record(name, {&self}, picked_bw, [&] { return AlongDim{DimVector(self.sizes()), dim}; })) {
    fn->save(std::get<1>(r));
    finish(std::move(fn), std::get<0>(r));
  }
  return r;
}

}  // namespace

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
  GRADLAB_TAPE("sort", sort(dim, descending), *this, dim, descending);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  const int64_t n = this->dim() == 0 ? 1 : size(dim);
  auto r = per_slice(*this, dim, n, [&](Slice& q) {
    std::stable_sort(q.begin(), q.end(), [&](const auto& x, const auto& y) {
      return descending ? nan_first_greater(x.first, y.first) : nan_last_less(x.first, y.first);
    });
  });
  return recorded_pick("SortBackward0", *this, dim, std::move(r));
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) { return self.sort(dim, descending); }
Tensor Tensor::argsort(int64_t dim, bool descending) const { return std::get<1>(sort(dim, descending)); }
Tensor argsort(const Tensor& self, int64_t dim, bool descending) { return self.argsort(dim, descending); }

std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  GRADLAB_TAPE("topk", topk(k, dim, largest, sorted), *this, k, dim, largest, sorted);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  const int64_t n = this->dim() == 0 ? 1 : size(dim);
  GRADLAB_CHECK(k >= 0 && k <= n, "selected index k out of range");
  auto r = per_slice(*this, dim, k, [&](Slice& q) {
    if (k == 0) return;
    auto cmp = [largest](const auto& x, const auto& y) {
      return largest ? nan_first_greater(x.first, y.first) : nan_last_less(x.first, y.first);
    };
    if (k * 64 <= n) {
      std::partial_sort(q.begin(), q.begin() + k, q.end(), cmp);
    } else {
      std::nth_element(q.begin(), q.begin() + k - 1, q.end(), cmp);
      if (sorted) std::sort(q.begin(), q.begin() + k - 1, cmp);
    }
  });
  return recorded_pick("TopkBackward0", *this, dim, std::move(r));
}
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  return self.topk(k, dim, largest, sorted);
}

// ---------------------------------------------------------------- scatter
namespace {
GradList scatter_src_bw(Op<AlongDim>& n, Grads& g) {
  const Tensor index = n.saved_at(0);
  return {n.should_compute_output(0) ? g[0].scatter(n.dim, index, 0) : Tensor(),
          n.should_compute_output(1) ? g[0].gather(n.dim, index) : Tensor()};
}
GradList scatter_value_bw(Op<AlongDim>& n, Grads& g) { return {g[0].scatter(n.dim, n.saved_at(0), 0)}; }

// self with src's elements (or a value) written at index along dim, into `out`.
void scatter_into(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                  Scalar value) {
  check_defined(index, 2, "index");
  GRADLAB_CHECK(index.scalar_type() == ScalarType::Long, "scatter(): Expected dtype int64 for index");
  GRADLAB_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1),
                "Index tensor must have the same number of dimensions as self tensor");
  if (src) {
    GRADLAB_CHECK(src->scalar_type() == self.scalar_type(), "scatter(): Expected self.dtype to be equal to src.dtype");
    GRADLAB_CHECK(index.dim() == src->dim() || (index.dim() <= 1 && src->dim() <= 1),
                  "Index tensor must have the same number of dimensions as src tensor");
  }
  for (int64_t d = 0; d < index.dim() && self.dim() > 0; ++d)
    GRADLAB_CHECK((d == dim || index.size(d) <= self.size(d)) && (!src || index.size(d) <= src->size(d)),
                  "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ",
                  dim, src ? str_cat(" and to be smaller size than src ", src->sizes()) : std::string());
  Tensor result = on_host(self).clone(), part;
  if (src) {
    autograd::NoGradGuard ng;
    part = *src;
    for (int64_t d = 0; d < index.dim(); ++d) part = part.narrow(d, 0, index.size(d));
    part = on_host(part);
  }
  const std::vector<int64_t> off = offsets_along(self.sizes(), on_host(index), dim);
  dispatch_all(self.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* r = result.data_ptr<T>();
    const T* p = src ? part.data_ptr<T>() : nullptr;
    const T v = src ? T() : value.to<T>();
    for (size_t e = 0; e < off.size(); ++e) r[off[e]] = p ? p[e] : v;
  });
  backend::of(out).copy(out, result.to(out.device()));
}

Tensor& scatter_impl(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                     Scalar value) {
  const bool inplace = out.is_same(self);
  if (inplace) check_inplace(self);
  dim = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  auto state = [&] { return AlongDim{DimVector(self.sizes()), dim}; };
  auto fn = src ? record("ScatterBackward0", {&self, src}, scatter_src_bw, state)
                : record("ScatterBackward1", {&self}, scatter_value_bw, state);
  scatter_into(out, self, dim, index, src, value);
  if (fn) fn->save(index);
  finish_written(std::move(fn), self, out, inplace);
  return out;
}
}  // namespace

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  GRADLAB_TAPE("scatter", scatter(dim, index, src), *this, dim, index, src);
  checked();
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  return scatter_impl(out, *this, dim, index, &src, 0);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar value) const {
  GRADLAB_TAPE("scatter", scatter(dim, index, value), *this, dim, index, value);
  checked();
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  return scatter_impl(out, *this, dim, index, nullptr, value);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) const {
  GRADLAB_TAPE("scatter_", scatter_(dim, index, src), *this, dim, index, src);
  checked();
  Tensor& self = const_cast<Tensor&>(*this);
  return scatter_impl(self, self, dim, index, &src, 0);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, Scalar value) const {
  GRADLAB_TAPE("scatter_", scatter_(dim, index, value), *this, dim, index, value);
  checked();
  Tensor& self = const_cast<Tensor&>(*this);
  return scatter_impl(self, self, dim, index, nullptr, value);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return self.scatter(dim, index, src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  return self.scatter(dim, index, value);
}

// ---------------------------------------------------------------- masked_select, masked_scatter
namespace {
// The positions (in a contiguous tensor of the broadcast shape) where mask is true.
std::vector<int64_t> true_positions(const Tensor& mask, IntArrayRef shape) {
  const Tensor m = on_host(mask.expand(shape));
  const bool* p = m.data_ptr<bool>();
  std::vector<int64_t> r;
  for (int64_t i = 0; i < m.numel(); ++i)
    if (p[i]) r.push_back(i);
  return r;
}
void check_bool_mask(const Tensor& mask, const char* op) {
  check_defined(mask, 1, "mask");
  GRADLAB_CHECK(mask.scalar_type() == ScalarType::Bool, op, ": expected BoolTensor or ByteTensor for mask");
}

struct Shapes {
  DimVector self, source;
};
// masked_select's backward: the gradient placed back where the mask was true,
// then summed to the input's shape (where the mask broadcast it).
GradList masked_select_bw(Op<Shapes>& n, Grads& g) {
  const Tensor mask = n.saved_at(0);
  const DimVector shape = broadcast_shapes(n.self, mask.sizes());
  Tensor z = zeros(shape, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  z.masked_scatter_(mask, g[0]);
  return {sum_to(z, n.self)};
}
GradList masked_scatter_bw(Op<Shapes>& n, Grads& g) {
  const Tensor mask = n.saved_at(0);
  Tensor dsource;
  if (n.should_compute_output(1)) {
    // The gradient at the mask's true positions feeds source's first elements; the rest get zero.
    const Tensor picked = g[0].masked_select(mask);
    const int64_t total = numel_of(n.source);
    dsource = picked.numel() < total
                  ? cat({picked, zeros({total - picked.numel()}, TensorOptions(g[0].scalar_type()).device(g[0].device()))}, 0)
                  : picked;
    dsource = dsource.view(n.source);
  }
  return {n.should_compute_output(0) ? g[0].masked_fill(mask, 0) : Tensor(), dsource};
}
}  // namespace

Tensor Tensor::masked_select(const Tensor& mask) const {
  GRADLAB_TAPE("masked_select", masked_select(mask), *this, mask);
  checked();
  check_bool_mask(mask, "masked_select");
  const DimVector shape = broadcast_shapes(sizes(), mask.sizes());
  const std::vector<int64_t> at = true_positions(mask, shape);
  Tensor src = on_host(expand(shape));
  Tensor out = empty({static_cast<int64_t>(at.size())}, TensorOptions(scalar_type()));
  dispatch_all(scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (size_t i = 0; i < at.size(); ++i) o[i] = in[at[i]];
  });
  if (!device().is_cpu()) out = out.to(device());
  if (auto fn = record("MaskedSelectBackward0", {this}, masked_select_bw, [&] { return Shapes{DimVector(sizes()), {}}; })) {
    fn->save(mask);
    finish(std::move(fn), out);
  }
  return out;
}
Tensor masked_select(const Tensor& self, const Tensor& mask) { return self.masked_select(mask); }

namespace {
Tensor& masked_scatter_impl(Tensor& out, const Tensor& self, const Tensor& mask, const Tensor& source) {
  check_bool_mask(mask, "masked_scatter_");
  check_defined(source, 2, "source");
  GRADLAB_CHECK(source.scalar_type() == self.scalar_type(),
                "masked_scatter: expected self and source to have same dtypes but got", c10_name(self.scalar_type()),
                " and ", c10_name(source.scalar_type()));
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  GRADLAB_CHECK(IntArrayRef(shape).equals(self.sizes()), "masked_scatter: the mask must broadcast to self's shape ",
                self.sizes(), ", got ", mask.sizes());
  const std::vector<int64_t> at = true_positions(mask, shape);
  GRADLAB_CHECK(static_cast<int64_t>(at.size()) <= source.numel(),
                "masked_scatter: expected source to have at least ", at.size(), " elements, got ", source.numel());
  const bool inplace = out.is_same(self);
  if (inplace) check_inplace(self);
  auto fn = record("MaskedScatterBackward0", {&self, &source}, masked_scatter_bw,
                   [&] { return Shapes{DimVector(self.sizes()), DimVector(source.sizes())}; });
  Tensor result = on_host(self).clone(), src = on_host(source);
  dispatch_all(self.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    T* o = result.data_ptr<T>();
    for (size_t i = 0; i < at.size(); ++i) o[at[i]] = in[i];
  });
  backend::of(out).copy(out, result.to(out.device()));
  if (fn) fn->save(mask);
  finish_written(std::move(fn), self, out, inplace);
  return out;
}
}  // namespace

Tensor Tensor::masked_scatter(const Tensor& mask, const Tensor& source) const {
  GRADLAB_TAPE("masked_scatter", masked_scatter(mask, source), *this, mask, source);
  checked();
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  return masked_scatter_impl(out, *this, mask, source);
}
Tensor& Tensor::masked_scatter_(const Tensor& mask, const Tensor& source) const {
  GRADLAB_TAPE("masked_scatter_", masked_scatter_(mask, source), *this, mask, source);
  checked();
  Tensor& self = const_cast<Tensor&>(*this);
  return masked_scatter_impl(self, self, mask, source);
}

// ---------------------------------------------------------------- diag
namespace {
struct DiagState {
  DimVector sizes;
  int64_t diagonal;
};
// PyTorch's diag_backward: the gradient's own diag where that inverts the
// op (a vector, or a square matrix); else zeros with the diagonal filled.
GradList diag_bw(Op<DiagState>& n, Grads& g) {
  if (n.sizes.size() == 1 || n.sizes[0] == n.sizes[1]) return {g[0].diag(n.diagonal)};
  Tensor z = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  const int64_t k = n.diagonal;
  Tensor idx = arange(g[0].numel(), TensorOptions(ScalarType::Long).device(g[0].device()));
  Tensor rows = k >= 0 ? idx : idx - k, cols = k >= 0 ? idx + k : idx;
  z.index_put_({rows, cols}, g[0]);
  return {z};
}
}  // namespace

Tensor Tensor::diag(int64_t k) const {
  GRADLAB_TAPE("diag", diag(k), *this, k);
  checked();
  GRADLAB_CHECK(dim() == 1 || dim() == 2, "matrix or a vector expected");
  const Tensor src = on_host(*this);
  Tensor out;
  dispatch_all(scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    if (dim() == 1) {
      const int64_t n = size(0), m = n + std::abs(k);
      out = zeros({m, m}, TensorOptions(scalar_type()));
      T* o = out.data_ptr<T>();
      for (int64_t i = 0; i < n; ++i) o[(k >= 0 ? i : i - k) * m + (k >= 0 ? i + k : i)] = in[i];
    } else {
      const int64_t r = size(0), c = size(1);
      const int64_t len = std::max<int64_t>(0, k >= 0 ? std::min(r, c - k) : std::min(r + k, c));
      out = empty({len}, TensorOptions(scalar_type()));
      T* o = out.data_ptr<T>();
      for (int64_t i = 0; i < len; ++i) o[i] = in[(k >= 0 ? i : i - k) * c + (k >= 0 ? i + k : i)];
    }
  });
  if (!device().is_cpu()) out = out.to(device());
  if (auto fn = record("DiagBackward0", {this}, diag_bw, [&] { return DiagState{DimVector(sizes()), k}; }))
    finish(std::move(fn), out);
  return out;
}
Tensor diag(const Tensor& self, int64_t k) { return self.diag(k); }

}  // namespace gradlab

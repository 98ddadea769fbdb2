// Ops that read or write along one dim by position, element by element:
// gather and scatter_add (each other's backward), cumsum and cumprod, flip,
// tril/triu.
// They compute on the host over a contiguous copy and give the result back on
// the input's device: the GPU backend has no kernels of its own for them.
#include <cstring>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

std::vector<int64_t> offsets_along(IntArrayRef sizes, const Tensor& index, int64_t dim) {
  const size_t nd = sizes.size();
  std::vector<int64_t> stride(nd, 1), coord(nd, 0), off(static_cast<size_t>(index.numel()));
  for (size_t d = nd; d-- > 1;) stride[d - 1] = stride[d] * sizes[d];
  const int64_t* pi = index.data_ptr<int64_t>();
  const int64_t n = nd == 0 ? 1 : sizes[static_cast<size_t>(dim)];  // a 0-d tensor: one place
  for (size_t e = 0; e < off.size(); ++e) {
    const int64_t v = pi[e];
    GRADLAB_CHECK(v >= 0 && v < n, "index ", v, " is out of bounds for dimension ", dim, " with size ", n);
    int64_t o = 0;
    for (size_t d = 0; d < nd; ++d) o += (static_cast<int64_t>(d) == dim ? v : coord[d]) * stride[d];
    off[e] = o;
    for (size_t d = nd; d-- > 0;) {
      if (++coord[d] < index.size(static_cast<int64_t>(d))) break;
      coord[d] = 0;
    }
  }
  return off;
}

namespace {

void check_index(const char* op, const Tensor& self, int64_t dim, const Tensor& index) {
  check_defined(index, 2, "index");
  GRADLAB_CHECK(index.scalar_type() == ScalarType::Long, op, "(): Expected dtype int64 for index");
  GRADLAB_CHECK(index.dim() == self.dim() || (index.dim() <= 1 && self.dim() <= 1),
                "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < index.dim(); ++d)
    GRADLAB_CHECK(d == dim || index.size(d) <= self.size(d), "Size does not match at dimension ", d,
                  " expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                  " apart from dimension ", dim);
}

struct AlongDim {
  DimVector sizes;  // the input's
  int64_t dim;
};
GradList scatter_add_bw(Op<AlongDim>& n, Grads& g) {
  return {n.should_compute_output(0) ? g[0] : Tensor(),
          n.should_compute_output(1) ? g[0].gather(n.dim, n.saved_at(0)) : Tensor()};
}
// d/dx x.gather(dim, i) adds each gradient back where it was read from.
GradList gather_bw(Op<AlongDim>& n, Grads& g) {
  const Tensor z = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  return {z.scatter_add(n.dim, n.saved_at(0), g[0])};
}

// --- cumsum and flip
struct Dims {
  DimVector dims;
};
GradList flip_bw(Op<Dims>& n, Grads& g) { return {g[0].flip(n.dims)}; }
// d/dx cumsum: the gradients summed from the end (PyTorch's reversed cumsum).
GradList cumsum_bw(Op<Dims>& n, Grads& g) {
  const int64_t dim = n.dims[0];
  if (g[0].numel() <= 1 || g[0].size(dim) == 1) return {g[0]};
  return {g[0].flip(dim).cumsum(dim).flip(dim)};
}

// --- tril / triu
struct Diagonal {
  int64_t k;
  bool lower;
};
Tensor reversed_cumsum(const Tensor& t, int64_t dim) { return t.flip({dim}).cumsum(dim).flip({dim}); }

// d out_j / d x_k along one slice when x has zeros, in double: positions
// before the first zero see the usual quotient; the first zero sees the
// products around it; later positions get nothing (the zero stays a factor).
void cumprod_grad_with_zeros(const double* x, const double* g, double* gi, int64_t n, int64_t step) {
  int64_t z = 0;
  while (z < n && x[z * step] != 0) ++z;
  double prefix = 1;  // the product of x before k
  for (int64_t k = 0; k < z; ++k) {
    double acc = 0, prod = prefix;  // prod: out_j without x_k
    for (int64_t j = k; j < n; ++j) {
      if (j > k) prod *= x[j * step];
      acc += g[j * step] * prod;
    }
    gi[k * step] = acc;
    prefix *= x[k * step];
  }
  if (z < n) {
    double acc = 0, prod = prefix;
    for (int64_t j = z; j < n; ++j) {
      if (j > z) prod *= x[j * step];
      acc += g[j * step] * prod;
    }
    gi[z * step] = acc;
  }
}

// Under create_graph, with zeros: PyTorch's O(n²) form, whose graph is the
// second derivative's. Position k's gradient sums g_j times the product of
// x_i (i <= j, i != k): the product before k times the running products
// after it, written into the k-th slice of a zero tensor (CopySlices).
Tensor cumprod_grad_recorded(const Tensor& input, const Tensor& grad, int64_t dim) {
  const int64_t n = input.size(dim);
  const TensorOptions opts = TensorOptions(grad.scalar_type()).device(grad.device());
  // at::zeros called inside ATen fills in place below the autograd layer
  // but above the version counter: the tensor starts at version 1.
  Tensor grad_input = zeros(input.sizes(), opts);
  bump_version(grad_input);
  DimVector ones_size(input.sizes());
  ones_size[static_cast<size_t>(dim)] = 1;
  const Tensor ones = gradlab::ones({1}, opts).expand(ones_size);
  for (int64_t k = 0; k < n; ++k) {
    Tensor omitted;
    if (k == 0) {
      omitted = cat({ones, input.slice(dim, k + 1).cumprod(dim)}, dim);
    } else {
      const Tensor until_k = input.slice(dim, 0, k).prod(dim, true);
      if (k == n - 1) {
        omitted = until_k;
      } else {
        const Tensor after_k = input.slice(dim, k + 1).cumprod(dim);
        omitted = cat({until_k, until_k.expand_as(after_k) * after_k}, dim);
      }
    }
    grad_input.select(dim, k).copy_((grad.slice(dim, k) * omitted).sum(dim));
  }
  return grad_input;
}

GradList cumprod_bw(Op<Dims>& n, Grads& g) {
  const int64_t dim = n.dims[0];
  const Tensor input = n.saved_at(0), output = n.saved_at(1);
  if (input.numel() <= 1 || input.size(dim) == 1) return {g[0]};
  const Tensor w = output * g[0];
  bool zero = false;
  {
    autograd::NoGradGuard ng;
    zero = (input == 0).any().item<bool>();
  }
  if (!zero) return {reversed_cumsum(w, dim).div(input)};
  if (detail::grad_mode()) return {cumprod_grad_recorded(input, g[0], dim)};
  // With zeros the quotient is undefined: the products, on the host.
  autograd::NoGradGuard ng;
  const Tensor x = on_host(input.to(ScalarType::Double)), gd = on_host(g[0].to(ScalarType::Double));
  Tensor gi = zeros(input.sizes(), TensorOptions(ScalarType::Double));
  const Split3 s = split3(input.sizes(), dim);
  for (int64_t a = 0; a < s.pre; ++a)
    for (int64_t b = 0; b < s.post; ++b) {
      const int64_t base = a * s.n * s.post + b;
      cumprod_grad_with_zeros(x.data_ptr<double>() + base, gd.data_ptr<double>() + base, gi.data_ptr<double>() + base,
                              s.n, s.post);
    }
  return {gi.to(g[0].device(), g[0].scalar_type())};
}


GradList tri_bw(Op<Diagonal>& n, Grads& g) { return {n.lower ? g[0].tril(n.k) : g[0].triu(n.k)}; }

Tensor tri(const Tensor& self, int64_t k, bool lower) {
  check_defined(self, 0, "self");
  GRADLAB_CHECK(self.dim() >= 2, lower ? "tril" : "triu", ": input tensor must have at least 2 dimensions");
  const int64_t rows = self.size(-2), cols = self.size(-1);
  Tensor keep = empty({rows, cols}, TensorOptions(ScalarType::Bool));
  bool* pk = keep.data_ptr<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) pk[i * cols + j] = lower ? j - i <= k : j - i >= k;
  Tensor out = gradlab::new_empty(self.sizes(), self.scalar_type(), self.device());
  backend::of(self).where(out, keep.to(self.device()), self, scalar_like(0, self, self.scalar_type()));
  if (auto fn = record(lower ? "TrilBackward0" : "TriuBackward0", {&self}, tri_bw, Diagonal{k, lower}))
    finish(std::move(fn), out);
  return out;
}

}  // namespace

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  GRADLAB_TAPE("gather", gather(dim, index), *this, dim, index);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  check_index("gather", *this, dim, index);
  const Tensor src = on_host(*this), idx = on_host(index);
  const std::vector<int64_t> off = offsets_along(src.sizes(), idx, dim);
  Tensor out = empty(index.sizes(), TensorOptions(scalar_type()));
  dispatch_all(scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (size_t e = 0; e < off.size(); ++e) o[e] = in[off[e]];
  });
  if (!device().is_cpu()) out = out.to(device());
  if (auto fn = record("GatherBackward0", {this}, gather_bw, [&] { return AlongDim{DimVector(sizes()), dim}; })) {
    fn->save(index);
    finish(std::move(fn), out);
  }
  return out;
}
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) { return self.gather(dim, index); }

Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  GRADLAB_TAPE("scatter_add", scatter_add(dim, index, src), *this, dim, index, src);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  check_index("scatter_add", *this, dim, index);
  GRADLAB_CHECK(src.scalar_type() == scalar_type(), "scatter_add(): Expected self.dtype to be equal to src.dtype");
  Tensor out, part;
  {
    autograd::NoGradGuard ng;
    out = on_host(*this).clone();
    part = src;  // the src elements the index covers
    for (int64_t d = 0; d < index.dim(); ++d) part = part.narrow(d, 0, index.size(d));
    part = on_host(part);
  }
  const std::vector<int64_t> off = offsets_along(out.sizes(), on_host(index), dim);
  dispatch_all(scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = part.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (size_t e = 0; e < off.size(); ++e) o[off[e]] = static_cast<T>(o[off[e]] + in[e]);
  });
  if (!device().is_cpu()) out = out.to(device());
  if (auto fn = record("ScatterAddBackward0", {this, &src}, scatter_add_bw,
                       [&] { return AlongDim{DimVector(sizes()), dim}; })) {
    fn->save(index);
    finish(std::move(fn), out);
  }
  return out;
}

Tensor Tensor::flip(IntArrayRef dims) const {
  GRADLAB_TAPE("flip", flip(dims), *this, dims);
  checked();
  DimVector wrapped;
  for (int64_t d : dims) wrapped.push_back(wrap_dim(d, dim()));
  Tensor out = on_host(*this);
  if (wrapped.empty()) out = out.clone();
  for (int64_t d : wrapped) {
    const Split3 s = split3(out.sizes(), d);
    Tensor next = empty(out.sizes(), TensorOptions(scalar_type()));
    const size_t row = static_cast<size_t>(s.post) * element_size(scalar_type());
    const char* in = static_cast<const char*>(out.data_ptr());
    char* o = static_cast<char*>(next.data_ptr());
    for (int64_t a = 0; a < s.pre; ++a)
      for (int64_t i = 0; i < s.n; ++i)
        std::memcpy(o + static_cast<size_t>(a * s.n + i) * row, in + static_cast<size_t>(a * s.n + s.n - 1 - i) * row, row);
    out = next;
  }
  if (!device().is_cpu()) out = out.to(device());
  if (auto fn = record("FlipBackward0", {this}, flip_bw, Dims{wrapped})) finish(std::move(fn), out);
  return out;
}
Tensor flip(const Tensor& self, IntArrayRef dims) { return self.flip(dims); }

namespace {
// A running sum or product along dim, in the result type (PyTorch's: the
// input's if floating, else long), on the host.
Tensor scan(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool product) {
  const ScalarType rt = dtype.value_or(self.is_floating_point() ? self.scalar_type() : ScalarType::Long);
  Tensor src;
  {
    autograd::NoGradGuard ng;
    src = on_host(self.to(rt));
  }
  Tensor out = empty(self.sizes(), TensorOptions(rt));
  const Split3 s = split3(self.sizes(), self.dim() == 0 ? 0 : dim);
  dispatch_all(rt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t a = 0; a < s.pre; ++a)
      for (int64_t b = 0; b < s.post; ++b) {
        T acc = T(product ? 1 : 0);
        for (int64_t i = 0; i < s.n; ++i) {
          const int64_t at = (a * s.n + i) * s.post + b;
          acc = static_cast<T>(product ? acc * in[at] : acc + in[at]);
          o[at] = acc;
        }
      }
  });
  return self.device().is_cpu() ? out : out.to(self.device());
}
}  // namespace

Tensor Tensor::cumsum(int64_t dim, std::optional<ScalarType> dtype) const {
  GRADLAB_TAPE("cumsum", cumsum(dim, dtype), *this, dim, dtype);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  Tensor out = scan(*this, dim, dtype, false);
  if (auto fn = record("CumsumBackward0", {this}, cumsum_bw, Dims{DimVector{dim}})) finish(std::move(fn), out);
  return out;
}
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return self.cumsum(dim, dtype); }

Tensor Tensor::cumprod(int64_t dim, std::optional<ScalarType> dtype) const {
  GRADLAB_TAPE("cumprod", cumprod(dim, dtype), *this, dim, dtype);
  checked();
  dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  Tensor out = scan(*this, dim, dtype, true);
  if (auto fn = record("CumprodBackward0", {this}, cumprod_bw, Dims{DimVector{dim}})) {
    fn->save(*this);
    fn->save(out, /*is_output=*/true);
    finish(std::move(fn), out);
  }
  return out;
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return self.cumprod(dim, dtype); }

Tensor Tensor::tril(int64_t k) const {
  GRADLAB_TAPE("tril", tril(k), *this, k);
  return tri(*this, k, true);
}
Tensor Tensor::triu(int64_t k) const {
  GRADLAB_TAPE("triu", triu(k), *this, k);
  return tri(*this, k, false);
}
Tensor tril(const Tensor& self, int64_t k) { return self.tril(k); }
Tensor triu(const Tensor& self, int64_t k) { return self.triu(k); }

}  // namespace gradlab

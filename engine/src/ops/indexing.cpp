// x.index({...}) and x.index_put_({...}, v), as LibTorch's at::indexing does
// them: the ints, slices, None and ellipsis apply first, as views; then every
// tensor index at once, as one advanced index (one IndexBackward0, one
// IndexPutBackward0). A write without tensor indices is a copy into a view
// (CopySlices), as in LibTorch.
#include <cstring>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {

using indexing::TensorIndex;

// Where an advanced index reads once the ints and slices are applied: the
// index tensors broadcast to `shape`, and for each of their elements the flat
// (row-major) position over dims [dim, dim + span) of the sliced tensor
// arranged by `perm`. Indexed dims that are apart go to the front, as in
// PyTorch; `perm` is empty when they are together.
struct Positions {
  DimVector perm;
  int64_t dim = 0, span = 0;
  DimVector shape;
  DimVector indexed_sizes;  // the sizes of the indexed dims, in order
  std::shared_ptr<const std::vector<int64_t>> flat;
  int64_t count() const { return static_cast<int64_t>(flat->size()); }
};

Tensor arranged(const Tensor& t, const Positions& p) { return p.perm.empty() ? t : t.permute(p.perm); }

int64_t product(IntArrayRef s, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t i = from; i < to; ++i) n *= s[i];
  return n;
}

// The result's shape: the arranged sizes with the indexed dims replaced by the index shape.
DimVector result_shape(IntArrayRef arranged_sizes, const Positions& p) {
  DimVector r;
  for (int64_t d = 0; d < p.dim; ++d) r.push_back(arranged_sizes[static_cast<size_t>(d)]);
  for (int64_t s : p.shape) r.push_back(s);
  for (size_t d = static_cast<size_t>(p.dim + p.span); d < arranged_sizes.size(); ++d) r.push_back(arranged_sizes[d]);
  return r;
}

// Broadcasts `acc` with `s` in place; false when they cannot be.
bool broadcast_into(DimVector& acc, IntArrayRef s) {
  DimVector r(std::max(acc.size(), s.size()), 1);
  for (size_t i = 0; i < r.size(); ++i) {
    const int64_t a = i < acc.size() ? acc[acc.size() - 1 - i] : 1, b = i < s.size() ? s[s.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1) return false;
    r[r.size() - 1 - i] = a == 1 ? b : a;
  }
  acc = r;
  return true;
}

// A bool or byte-like mask becomes one long index per mask dim (its nonzero
// positions); long indices stay. The result indexes `self`'s dims in order.
std::vector<Tensor> expand_masks(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& t : indices) {
    if (!t.defined() || t.scalar_type() == ScalarType::Long) {
      out.push_back(t);
      continue;
    }
    GRADLAB_CHECK(t.scalar_type() == ScalarType::Bool, "tensors used as indices must be long, byte or bool tensors");
    const int64_t at = static_cast<int64_t>(out.size());
    for (int64_t k = 0; k < t.dim(); ++k)
      GRADLAB_CHECK(at + k < self.dim() && t.size(k) == self.size(at + k), "The shape of the mask ", t.sizes(),
                    " at index ", k, " does not match the shape of the indexed tensor ", self.sizes(), " at index ",
                    at + k);
    Tensor m = t.contiguous().to(Device(DeviceType::CPU));
    const bool* pm = m.data_ptr<bool>();
    std::vector<std::vector<int64_t>> coords(static_cast<size_t>(t.dim()));
    for (int64_t i = 0; i < m.numel(); ++i) {
      if (!pm[i]) continue;
      for (int64_t k = t.dim() - 1, rest = i; k >= 0; --k) {
        coords[static_cast<size_t>(k)].push_back(rest % t.size(k));
        rest /= t.size(k);
      }
    }
    for (auto& c : coords) {
      Tensor idx = empty({static_cast<int64_t>(c.size())}, TensorOptions(ScalarType::Long));
      if (!c.empty()) std::memcpy(idx.data_ptr(), c.data(), c.size() * sizeof(int64_t));
      out.push_back(idx);
    }
  }
  return out;
}

// The positions the tensor indices (by dim of `self`, undefined where none) read.
Positions positions(const Tensor& self, const std::vector<Tensor>& indices) {
  const std::vector<Tensor> idx = expand_masks(self, indices);
  GRADLAB_CHECK(static_cast<int64_t>(idx.size()) <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Positions p;
  std::vector<int64_t> dims;
  bool broadcast = true;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (!idx[k].defined()) continue;
    if (dims.empty()) p.shape = DimVector(idx[k].sizes());
    else broadcast = broadcast && broadcast_into(p.shape, idx[k].sizes());
    dims.push_back(static_cast<int64_t>(k));
  }
  if (!broadcast) {
    std::string shapes;
    for (const Tensor& t : idx)
      if (t.defined()) shapes += (shapes.empty() ? "" : ", ") + str_cat(t.sizes());
    throw_error(str_cat("shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes));
  }
  p.span = static_cast<int64_t>(dims.size());
  if (dims.back() - dims.front() + 1 == p.span) {
    p.dim = dims.front();
  } else {  // apart: the indexed dims first, then the others in order
    for (int64_t d : dims) p.perm.push_back(d);
    for (int64_t d = 0; d < self.dim(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) p.perm.push_back(d);
  }
  for (int64_t d : dims) p.indexed_sizes.push_back(self.size(d));
  const int64_t n = product(p.shape, 0, p.shape.size());
  std::vector<int64_t> flat(static_cast<size_t>(n), 0);
  for (size_t j = 0; j < dims.size(); ++j) {
    Tensor v = idx[static_cast<size_t>(dims[j])].expand(p.shape).contiguous().to(Device(DeviceType::CPU));
    const int64_t* pv = v.data_ptr<int64_t>();
    const int64_t size = p.indexed_sizes[j];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = pv[i];
      if (x < -size || x >= size)
        throw_error(str_cat("index ", x, " is out of bounds for dimension ", dims[j], " with size ", size));
      flat[static_cast<size_t>(i)] = flat[static_cast<size_t>(i)] * size + (x < 0 ? x + size : x);
    }
  }
  p.flat = std::make_shared<const std::vector<int64_t>>(std::move(flat));
  return p;
}

// The elements of `self` at `p`, a new tensor outside any graph.
Tensor gather_at(const Tensor& self, const Positions& p) {
  autograd::NoGradGuard ng;
  const Tensor src = arranged(self, p);
  const DimVector out_shape = result_shape(src.sizes(), p);
  Tensor out = empty(out_shape, TensorOptions(self.scalar_type()).device(self.device()));
  const std::vector<int64_t>& flat = *p.flat;
  if (out.numel() == 0) return out;
  if (self.device().is_cpu()) {  // rows of [pre, indexed, post], copied
    const Tensor s = src.contiguous();
    const size_t nd = s.sizes().size(), d0 = static_cast<size_t>(p.dim), d1 = d0 + static_cast<size_t>(p.span);
    const int64_t pre = product(s.sizes(), 0, d0), k = product(s.sizes(), d0, d1);
    const size_t row = static_cast<size_t>(product(s.sizes(), d1, nd)) * element_size(s.scalar_type());
    const char* in = static_cast<const char*>(s.data_ptr());
    char* o = static_cast<char*>(out.data_ptr());
    for (int64_t a = 0; a < pre; ++a)
      for (int64_t i = 0; i < p.count(); ++i, o += row)
        std::memcpy(o, in + static_cast<size_t>(a * k + flat[static_cast<size_t>(i)]) * row, row);
    return out;
  }
  const Tensor s = src.flatten(p.dim, p.dim + p.span - 1);
  std::vector<Tensor> parts;
  for (int64_t f : flat) parts.push_back(s.select(p.dim, f).unsqueeze(p.dim));
  backend::of(out).copy(out, cat(parts, p.dim).reshape(out_shape));
  return out;
}

// Writes (or adds) `values`, broadcast to the indexed result's shape, into
// `dst`'s memory at `p`: no graph, no version change.
void scatter_at(const Tensor& dst, const Positions& p, const Tensor& values, bool accumulate) {
  autograd::NoGradGuard ng;
  const Tensor d = arranged(dst, p);
  const DimVector rs = result_shape(d.sizes(), p);
  if (product(rs, 0, rs.size()) == 0) return;
  const std::vector<int64_t>& flat = *p.flat;
  const size_t nd = d.sizes().size(), d0 = static_cast<size_t>(p.dim), d1 = d0 + static_cast<size_t>(p.span);
  if (dst.device().is_cpu() && d.is_contiguous()) {  // rows of [pre, indexed, post]
    const Tensor v = values.expand(rs).contiguous();
    const int64_t pre = product(d.sizes(), 0, d0), k = product(d.sizes(), d0, d1), post = product(d.sizes(), d1, nd);
    dispatch_all(dst.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(d.data_ptr());
      const T* in = static_cast<const T*>(v.data_ptr());
      for (int64_t a = 0; a < pre; ++a)
        for (int64_t i = 0; i < p.count(); ++i, in += post) {
          T* row = out + (a * k + flat[static_cast<size_t>(i)]) * post;
          if (accumulate)
            for (int64_t j = 0; j < post; ++j) row[j] = static_cast<T>(row[j] + in[j]);
          else
            std::memcpy(row, in, static_cast<size_t>(post) * sizeof(T));
        }
    });
    return;
  }
  // Any strides, any device: one indexed slice at a time, through the backend.
  DimVector flat_shape;
  for (size_t i = 0; i < d0; ++i) flat_shape.push_back(rs[i]);
  flat_shape.push_back(p.count());
  for (size_t i = d1; i < nd; ++i) flat_shape.push_back(d.size(static_cast<int64_t>(i)));
  const Tensor v = values.expand(rs).reshape(flat_shape);
  backend::Backend& b = backend::of(dst);
  for (int64_t i = 0; i < p.count(); ++i) {
    Tensor view = d;
    for (int64_t j = p.span - 1, rest = flat[static_cast<size_t>(i)]; j >= 0; --j) {
      const int64_t size = p.indexed_sizes[static_cast<size_t>(j)];
      view = view.select(p.dim + j, rest % size);
      rest /= size;
    }
    const Tensor src = v.select(p.dim, i);
    if (accumulate) b.binary(backend::Binary::Add, view, view, src, 1.0);
    else b.copy(view, src);
  }
}

// IndexBackward0 (x.index with tensors) and IndexPutBackward0 /
// IndexPutImplBackward0 (a write at the positions; the second accumulates,
// as index's own backward does) share one state.
struct Indexed {
  DimVector sizes;  // the indexed input's
  Positions pos;
  bool accumulate = false;
};
GradList index_bw(Op<Indexed>& n, Grads& g);
GradList index_put_bw(Op<Indexed>& n, Grads& g);
GradList index_select_bw(Op<Indexed>& n, Grads& g);

Tensor index_op(const Tensor& self, const Positions& p) {
  Tensor out = gather_at(self, p);
  if (auto fn = record("IndexBackward0", {&self}, index_bw, [&] { return Indexed{DimVector(self.sizes()), p}; }))
    finish(std::move(fn), out);
  return out;
}

// Records a write at `p` into a copy of `self` (`out`, already written) as
// index_put's node.
Tensor recorded_put(const Tensor& self, const Tensor& out, const Positions& p, const Tensor& values, bool accumulate) {
  if (auto fn = record(accumulate ? "IndexPutImplBackward0" : "IndexPutBackward0", {&self, &values}, index_put_bw,
                       [&] { return Indexed{DimVector(out.sizes()), p, accumulate}; }))
    finish(std::move(fn), out);
  return out;
}
// index_put (out of place): a copy of `self` with `values` written (or added) at `p`.
Tensor index_put_op(const Tensor& self, const Positions& p, const Tensor& values, bool accumulate) {
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = self.clone();
  }
  scatter_at(out, p, values, accumulate);
  return recorded_put(self, out, p, values, accumulate);
}

// d/dx x[i] scatters g back, summing repeats: PyTorch's index_put_ with
// accumulate into zeros that need no gradient (written directly: nobody else
// sees them, so there is nothing to copy first).
// g summed back into zeros of the indexed input's shape (index_bw's and
// index_select_bw's value).
Tensor summed_back(const Op<Indexed>& n, const Tensor& g) {
  const Tensor r = zeros(n.sizes, TensorOptions(g.scalar_type()).device(g.device()));
  scatter_at(r, n.pos, g, true);
  return r;
}
GradList index_bw(Op<Indexed>& n, Grads& g) {
  const Tensor r = summed_back(n, g[0]);
  const Tensor zeros_need_nothing;
  return {recorded_put(zeros_need_nothing, r, n.pos, g[0], true)};
}
// index_select's node: the gathered rows (one place for the forward and for
// index_add's backward).
Tensor index_select_at(const Tensor& self, const Positions& p) {
  Tensor out = gather_at(self, p);
  if (auto fn = record("IndexSelectBackward0", {&self}, index_select_bw,
                       [&] { return Indexed{DimVector(self.sizes()), p}; }))
    finish(std::move(fn), out);
  return out;
}
// index_add_(dim, index, source)'s backward: self's gradient passes, the
// source's is the gradient's rows at the index, expanded to its shape.
GradList index_add_bw(Op<Indexed>& n, Grads& g) {
  GradList r(2);
  if (n.should_compute_output(0)) r[0] = g[0];
  if (n.should_compute_output(1)) {
    const Tensor rows = index_select_at(g[0], n.pos);
    r[1] = rows.expand(rows.sizes());
  }
  return r;
}
// index_select's backward is PyTorch's grad.new_zeros(sizes).index_add_(dim,
// index, grad): the same sum of repeats as indexing's, recorded as
// IndexAddBackward0, on zeros written once in place (version 1).
GradList index_select_bw(Op<Indexed>& n, Grads& g) {
  const Tensor r = summed_back(n, g[0]);
  bump_version(r);
  const Tensor zeros_need_nothing;
  if (auto fn = record("IndexAddBackward0", {&zeros_need_nothing, &g[0]}, index_add_bw,
                       [&] { return Indexed{DimVector(r.sizes()), n.pos}; }))
    finish(std::move(fn), r);
  return {r};
}

// The written positions lose self's gradient (unless added to) and pass it
// to the values, which the engine sums back to their shape.
GradList index_put_bw(Op<Indexed>& n, Grads& g) {
  Tensor self_grad, values_grad;
  if (n.should_compute_output(0)) {
    const Tensor zero = zeros({}, TensorOptions(g[0].scalar_type()).device(g[0].device()));
    self_grad = n.accumulate ? g[0] : index_put_op(g[0], n.pos, zero, false);
  }
  if (n.should_compute_output(1)) values_grad = index_op(g[0], n.pos);
  return {self_grad, values_grad};
}

// x.index_put_ with tensor indices, once the other indices were applied.
void index_put_inplace(const Tensor& self, const Positions& p, const Tensor& values) {
  check_inplace(self);
  const DimVector rs = result_shape(arranged(self, p).sizes(), p);
  GRADLAB_CHECK(is_expandable_to(values.sizes(), rs), "shape mismatch: value tensor of shape ", values.sizes(),
                " cannot be broadcast to indexing result of shape ", rs);
  GRADLAB_CHECK(values.scalar_type() == self.scalar_type(),
                "Index put requires the source and destination dtypes match, got ", c10_name(self.scalar_type()),
                " for the destination and ", c10_name(values.scalar_type()), " for the source.");
  auto fn = record("IndexPutBackward0", {&self, &values}, index_put_bw,
                   [&] { return Indexed{DimVector(self.sizes()), p, false}; });
  check_rebase(self, fn);
  scatter_at(self, p, values, false);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
}

// The values with their leading size-1 dims dropped (a recorded view), as
// LibTorch's setitem takes them.
IntArrayRef leading_ones_dropped(IntArrayRef s) {
  size_t ones = 0;
  while (ones < s.size() && s[ones] == 1) ++ones;
  return IntArrayRef(s.data() + ones, s.size() - ones);
}
Tensor without_leading_ones(const Tensor& v) {
  return v.sizes().size() == leading_ones_dropped(v.sizes()).size() ? v : v.view(leading_ones_dropped(v.sizes()));
}

// A bool index (or 0-d bool tensor) on the dim it adds: all of it or none.
Tensor bool_index(bool keep) { return zeros({keep ? 1 : 0}, TensorOptions(ScalarType::Long)); }

// Applies the ints, slices, None, ellipsis and bools of x.index({...}) as
// views, as LibTorch's applySlicing does, and collects the tensor indices by
// the dim of the result they index (undefined where none).
Tensor apply_basic(const Tensor& self, ArrayRef<TensorIndex> idx, std::vector<Tensor>& tensors) {
  int64_t specified = 0;
  for (const auto& i : idx)
    if (i.kind() == TensorIndex::Kind::Int || i.kind() == TensorIndex::Kind::Slice) ++specified;
    else if (i.kind() == TensorIndex::Kind::Tensor)
      specified += i.tensor().scalar_type() == ScalarType::Bool ? i.tensor().dim() : 1;
  GRADLAB_CHECK(specified <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Tensor r = self;
  int64_t d = 0;
  int64_t real = 0;  // the dim of self the index reads, which errors name
  auto add_tensor = [&](Tensor t) {
    tensors.resize(static_cast<size_t>(d + 1));
    tensors[static_cast<size_t>(d++)] = std::move(t);
  };
  auto select = [&](int64_t v) {
    const int64_t n = r.size(d);
    GRADLAB_CHECK(v >= -n && v < n, "index ", v, " is out of bounds for dimension ", real, " with size ", n);
    r = r.select(d, v);
    ++real;
  };
  for (const auto& i : idx) {
    switch (i.kind()) {
      case TensorIndex::Kind::Int: select(i.integer()); break;
      case TensorIndex::Kind::Slice: {
        const auto& s = i.slice();
        GRADLAB_CHECK(s.step.value_or(1) > 0, "step must be greater than zero");
        r = r.slice(d, s.start, s.stop, s.step.value_or(1));
        ++d, ++real;
        break;
      }
      case TensorIndex::Kind::None: r = r.unsqueeze(d); ++d; break;
      case TensorIndex::Kind::Ellipsis: d += self.dim() - specified, real += self.dim() - specified; break;
      case TensorIndex::Kind::Bool:
        r = r.unsqueeze(d);
        add_tensor(bool_index(i.integer() != 0));
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = i.tensor();
        if (t.dim() == 0 && t.scalar_type() == ScalarType::Bool) {
          r = r.unsqueeze(d);
          add_tensor(bool_index(t.item<bool>()));
        } else if (t.dim() == 0 && t.scalar_type() == ScalarType::Long) {
          select(t.item<int64_t>());
        } else {
          real += t.scalar_type() == ScalarType::Bool ? t.dim() : 1;
          add_tensor(t);
        }
        break;
      }
    }
  }
  return r;
}

// A write without tensor indices, as LibTorch's copy_to: a copy_ of the same
// shape, a fill_ from a 0-d value on the CPU, or else a copy_ of the value
// without its leading 1s, expanded to the target (each step recorded).
void copy_to(const Tensor& dst, const Tensor& src) {
  if (dst.sizes().equals(src.sizes())) {
    dst.copy_(src);
  } else if (src.dim() == 0 && src.device().is_cpu()) {
    dst.fill_(src);
  } else {
    Tensor v = src.view(leading_ones_dropped(src.sizes()));
    if (!v.sizes().equals(dst.sizes())) v = v.expand(dst.sizes());
    dst.copy_(v);
  }
}
// The value LibTorch makes of a number written by index: 0-d, of the
// target's dtype, on the CPU (a fill_ reads it from any device).
Tensor value_tensor(const Tensor& self, Scalar v) {
  Tensor value = gradlab::new_empty({}, self.scalar_type(), Device(DeviceType::CPU));
  backend::cpu().fill(value, v);
  return value;
}

}  // namespace

indexing::TensorIndex::TensorIndex(const char* str) : kind_(Kind::Ellipsis) {
  GRADLAB_CHECK(std::string_view(str) == "...", "Expected \"...\" to represent an ellipsis index, but got \"", str,
                "\"");
}

Tensor Tensor::index(ArrayRef<TensorIndex> idx) const {
  GRADLAB_TAPE("index", index(idx), *this, idx);
  checked();
  std::vector<Tensor> tensors;
  Tensor sliced = apply_basic(*this, idx, tensors);
  return tensors.empty() ? sliced : index_op(sliced, positions(sliced, tensors));
}
Tensor Tensor::index(std::initializer_list<TensorIndex> idx) const {
  return index(ArrayRef<TensorIndex>(idx.begin(), idx.size()));
}

Tensor& Tensor::index_put_(ArrayRef<TensorIndex> idx, const Tensor& v) const {
  GRADLAB_TAPE("index_put_", index_put_(idx, v), *this, idx, v);
  Tensor& self = const_cast<Tensor&>(*this);  // const in-place method, as in LibTorch
  if (idx.size() == 1 && idx[0].kind() == TensorIndex::Kind::Bool) {  // x[False] = v writes nothing
    if (idx[0].integer()) copy_to(self.unsqueeze(0), v);
    return self;
  }
  std::vector<Tensor> tensors;
  Tensor sliced = apply_basic(*this, idx, tensors);
  if (tensors.empty()) copy_to(sliced, v);
  else index_put_inplace(sliced, positions(sliced, tensors), without_leading_ones(v));
  return self;
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> idx, Scalar v) const {
  GRADLAB_TAPE("index_put_", index_put_(idx, v), *this, idx, v);
  return index_put_(idx, value_tensor(*this, v));
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  GRADLAB_TAPE("index_select", index_select(dim, index), *this, dim, index);
  checked();
  check_defined(index, 2, "index");
  GRADLAB_CHECK(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  GRADLAB_CHECK(index.scalar_type() == ScalarType::Long || index.scalar_type() == ScalarType::Int,
                "index_select(): Expected dtype int32 or int64 for index");
  Positions p;
  p.dim = wrap_dim(dim, std::max<int64_t>(this->dim(), 1));
  p.span = 1;
  p.shape = DimVector{index.numel()};
  p.indexed_sizes = DimVector{this->dim() == 0 ? 1 : size(p.dim)};
  Tensor li = index.to(ScalarType::Long).contiguous().to(Device(DeviceType::CPU));
  std::vector<int64_t> flat(li.data_ptr<int64_t>(), li.data_ptr<int64_t>() + li.numel());
  for (int64_t v : flat) GRADLAB_CHECK(v >= 0 && v < p.indexed_sizes[0], "index out of range in self");
  p.flat = std::make_shared<const std::vector<int64_t>>(std::move(flat));
  return index_select_at(*this, p);
}
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) { return self.index_select(dim, index); }

Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> idx, const Tensor& v) const {
  return index_put_(ArrayRef<TensorIndex>(idx.begin(), idx.size()), v);
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> idx, Scalar v) const {
  return index_put_(ArrayRef<TensorIndex>(idx.begin(), idx.size()), v);
}

}  // namespace gradlab

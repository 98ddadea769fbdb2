// In-place writes that are not arithmetic: zero_, fill_, copy_, and indexing
// (x.index({...}), x[i] = v, index_put_).
#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
GradList zero_grad_bw(PlainOp&, Grads& g) { return {zeros_like(g[0])}; }
// copy_: the old value is overwritten (gradient 0); the source gets g.
GradList copy_bw(Op<Origin>& n, Grads& g) {
  return {zeros_like(g[0]), n.should_compute_output(1) ? g[0].to(n.dtype).to(Device(n.device)) : Tensor()};
}
// An advanced index: the input's shape, and the `span` dims from `dim` on
// that the saved flat positions count over.
struct IndexedDims {
  DimVector sizes;
  int64_t dim;
  int64_t span;
};
Tensor index_at(const Tensor& self, const Tensor& flat_pos, int64_t dim, int64_t span, IntArrayRef out_shape);
// The gathered shape and where: the incoming gradient's own backward
// (create_graph) gathers the same positions again.
struct Gathered {
  DimVector shape;
  int64_t dim;
  int64_t span;
};
GradList index_put_bw(Op<Gathered>& n, Grads& g) {
  return {Tensor(), index_at(g[0], n.saved_at(0), n.dim, n.span, n.shape)};
}
// Advanced indexing: the gradient is scattered back (summing repeats). Under
// create_graph the scatter is recorded as PyTorch records it: an accumulating
// index_put_ into zeros that need no gradient.
GradList index_bw(Op<IndexedDims>& n, Grads& g) {
  Tensor idx = n.saved_at(0);
  const int64_t dim = n.dim;
  Tensor r = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  {
    Tensor gc = g[0].contiguous();
    autograd::NoGradGuard ng;
    // idx holds flat positions along the indexed dims: add each slice back.
    const int64_t* p = idx.data_ptr<int64_t>();
    for (int64_t i = 0; i < idx.numel(); ++i) {
      Tensor dst = r.flatten(dim, dim + n.span - 1).select(dim, p[i]);
      dst.add_(gc.select(dim, i));
    }
  }
  const Tensor zeros_need_nothing;
  if (auto fn = record("IndexPutImplBackward0", {&zeros_need_nothing, &g[0]}, index_put_bw,
                       [&] { return Gathered{DimVector(g[0].sizes()), dim, n.span}; })) {
    fn->save(idx);
    finish(std::move(fn), r);
  }
  return {r};
}

Tensor& fill_impl(Tensor& self, Scalar v, const char* name) {
  check_inplace(self, Overlap::Allowed);
  auto fn = record(name, {&self}, zero_grad_bw);
  backend::of(self).fill(self, v);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

// x.index({... Tensor ...}): one advanced index (long positions or a bool mask).
Tensor advanced_index(const Tensor& self, const Tensor& index, int64_t dim) {
  std::vector<int64_t> pos;
  int64_t span = 1;
  DimVector out_shape;
  for (int64_t d = 0; d < dim; ++d) out_shape.push_back(self.size(d));
  if (index.scalar_type() == ScalarType::Bool) {
    span = index.dim();
    GRADLAB_CHECK(dim + span <= self.dim(), "too many indices for tensor of dimension ", self.dim());
    for (int64_t k = 0; k < span; ++k)
      GRADLAB_CHECK(index.size(k) == self.size(dim + k), "The shape of the mask ", index.sizes(), " at index ", k,
                    " does not match the shape of the indexed tensor ", self.sizes(), " at index ", dim + k);
    Tensor m = index.contiguous().reshape({-1}).to(Device(DeviceType::CPU));
    const bool* pm = m.data_ptr<bool>();
    for (int64_t i = 0; i < m.numel(); ++i)
      if (pm[i]) pos.push_back(i);
    out_shape.push_back(static_cast<int64_t>(pos.size()));
  } else {
    GRADLAB_CHECK(is_integral(index.scalar_type(), false), "tensors used as indices must be long, int, byte or bool tensors");
    Tensor li = index.to(ScalarType::Long).contiguous().reshape({-1}).to(Device(DeviceType::CPU));
    const int64_t n = self.size(dim);
    int64_t* p = li.data_ptr<int64_t>();
    for (int64_t i = 0; i < li.numel(); ++i) {
      int64_t v = p[i];
      GRADLAB_CHECK(v >= -n && v < n, "index ", v, " is out of bounds for dimension ", dim, " with size ", n);
      pos.push_back(v < 0 ? v + n : v);
    }
    for (auto s : index.sizes()) out_shape.push_back(s);
  }
  // Flat positions along the indexed dims; read on the host, so kept on the CPU.
  const Tensor flat_pos = tensor(pos.empty() ? TensorDataContainer(std::vector<int64_t>{}) : TensorDataContainer(pos),
                                 TensorOptions(ScalarType::Long).device(Device(DeviceType::CPU)));
  for (int64_t d = dim + span; d < self.dim(); ++d) out_shape.push_back(self.size(d));
  return index_at(self, flat_pos, dim, span, out_shape);
}

// The slices of `self` at `flat_pos` along dims [dim, dim + span), flattened
// into one, laid out as `out_shape`.
Tensor index_at(const Tensor& self, const Tensor& flat_pos, int64_t dim, int64_t span, IntArrayRef out_shape) {
  Tensor out;
  {
    autograd::NoGradGuard ng;
    Tensor src = self.flatten(dim, dim + span - 1);
    std::vector<Tensor> parts;
    const int64_t* p = flat_pos.data_ptr<int64_t>();
    for (int64_t i = 0; i < flat_pos.numel(); ++i) parts.push_back(src.select(dim, p[i]).unsqueeze(dim));
    if (parts.empty()) {
      out = empty(out_shape, TensorOptions(self.scalar_type()).device(self.device()));
    } else {
      out = cat(parts, dim).reshape(out_shape).contiguous();
    }
  }
  out = out.tensor_data();
  out.unsafeGetTensorImpl()->is_view = false;
  out.unsafeGetTensorImpl()->base.reset();
  if (auto fn = record("IndexBackward0", {&self}, index_bw, [&] { return IndexedDims{DimVector(self.sizes()), dim, span}; })) {
    fn->save(flat_pos);
    finish(std::move(fn), out);
  }
  return out;
}
}  // namespace

Tensor& Tensor::zero_() const { return fill_impl(const_cast<Tensor&>(*this), 0, "ZeroBackward0"); }
Tensor& Tensor::fill_(Scalar v) const { return fill_impl(const_cast<Tensor&>(*this), v, "FillBackward2"); }

Tensor& Tensor::copy_(const Tensor& src, bool) const {
  // In-place methods are const, as in LibTorch: the handle is const, the tensor is not.
  Tensor& self = const_cast<Tensor&>(*this);
  check_defined(self, 0, "self");
  check_defined(src, 1, "src");
  check_inplace(self);
  broadcast_shapes(sizes(), src.sizes());
  GRADLAB_CHECK(is_expandable_to(src.sizes(), sizes()), "output with shape ", sizes(),
                " doesn't match the broadcast shape ", broadcast_shapes(sizes(), src.sizes()).ref());
  auto fn = record("torch::autograd::CopyBackwards", {this, &src}, copy_bw, Origin{src.scalar_type(), src.device().type});
  if (src.device() == device()) {
    backend::of(self).copy(self, src);
  } else {
    backend::Backend& b = device().is_cpu() ? backend::of(src) : backend::of(self);
    b.copy(self, src);
  }
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

Tensor Tensor::index(ArrayRef<indexing::TensorIndex> idx) const {
  using indexing::TensorIndex;
  checked();
  Tensor r = *this;
  int64_t d = 0;
  int64_t specified = 0;
  for (const auto& i : idx)
    if (i.kind() == TensorIndex::Kind::Int || i.kind() == TensorIndex::Kind::Slice) ++specified;
    else if (i.kind() == TensorIndex::Kind::Tensor) specified += i.tensor().scalar_type() == ScalarType::Bool ? i.tensor().dim() : 1;
  GRADLAB_CHECK(specified <= dim(), "too many indices for tensor of dimension ", dim());
  bool seen_tensor = false;
  int64_t real = 0;  // the dim of *this the index reads, which errors name
  for (const auto& i : idx) {
    switch (i.kind()) {
      case TensorIndex::Kind::Int: {
        const int64_t n = r.size(d), v = i.integer();
        GRADLAB_CHECK(v >= -n && v < n, "index ", v, " is out of bounds for dimension ", real, " with size ", n);
        r = r.select(d, v);
        ++real;
        break;
      }
      case TensorIndex::Kind::Slice: {
        const auto& s = i.slice();
        GRADLAB_CHECK(s.step.value_or(1) > 0, "step must be greater than zero");
        r = r.slice(d, s.start, s.stop, s.step.value_or(1));
        ++d, ++real;
        break;
      }
      case TensorIndex::Kind::None: r = r.unsqueeze(d); ++d; break;
      case TensorIndex::Kind::Ellipsis: d += dim() - specified, real += dim() - specified; break;
      case TensorIndex::Kind::Bool:
        r = r.unsqueeze(d);
        if (!i.integer()) r = r.slice(d, 0, 0);
        ++d;
        break;
      case TensorIndex::Kind::Tensor: {
        GRADLAB_CHECK(!seen_tensor, "indexing with more than one tensor is not supported by gradlab yet");
        seen_tensor = true;
        const Tensor& t = i.tensor();
        r = advanced_index(r, t, d);
        d += t.scalar_type() == ScalarType::Bool ? 1 : t.dim();
        real += t.scalar_type() == ScalarType::Bool ? t.dim() : 1;
        break;
      }
    }
  }
  return r;
}
indexing::TensorIndex::TensorIndex(const char* str) : kind_(Kind::Ellipsis) {
  GRADLAB_CHECK(std::string_view(str) == "...", "Expected \"...\" to represent an ellipsis index, but got \"", str,
                "\"");
}

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> idx) const {
  return index(ArrayRef<indexing::TensorIndex>(idx.begin(), idx.size()));
}

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> idx, const Tensor& v) const {
  Tensor region = index(idx);
  GRADLAB_CHECK(region.unsafeGetTensorImpl()->storage == impl()->storage,
                "index_put_ with tensor indices is not supported by gradlab yet");
  region.copy_(v);
  return const_cast<Tensor&>(*this);  // const in-place method, as in LibTorch
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> idx, Scalar v) const {
  Tensor region = index(idx);
  GRADLAB_CHECK(region.unsafeGetTensorImpl()->storage == impl()->storage,
                "index_put_ with tensor indices is not supported by gradlab yet");
  region.fill_(v);
  return const_cast<Tensor&>(*this);
}

}  // namespace gradlab

// Factories: torch::tensor, zeros, ones, full, arange, eye, *_like, from_blob.
#include <cmath>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
Tensor finish_factory(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.set_requires_grad(true);
  return t;
}
Tensor filled(IntArrayRef size, Scalar v, const TensorOptions& o) {
  Tensor t = empty_tensor(size, o.dtype(), o.device());
  backend::of(t).fill(t, v);
  return finish_factory(t, o);
}
TensorOptions like_options(const Tensor& t, const TensorOptions& o) {
  return TensorOptions(o.dtype_opt().value_or(t.scalar_type()))
      .device(o.has_device() ? o.device() : t.device())
      .requires_grad(o.requires_grad());
}
// The *_like factories keep a dense tensor's layout (MemoryFormat::Preserve):
// empty_like(x.t()) is transposed too.
Tensor filled_like(const Tensor& like, const std::optional<Scalar>& v, const TensorOptions& o) {
  Tensor t = empty_preserving(like, o.dtype(), o.device());
  if (v) backend::of(t).fill(t, *v);
  return finish_factory(t, o);
}
}  // namespace

// ------------------------------------------------------------ torch::tensor
TensorDataContainer::TensorDataContainer(std::initializer_list<TensorDataContainer> l)
    : kind_(Kind::List), list_(l) {
  finish_list();
}

void TensorDataContainer::finish_list() {
  sizes_ = DimVector{static_cast<int64_t>(list_.size())};
  if (list_.empty()) {
    literal_ = ScalarType::Float;
    return;
  }
  const TensorDataContainer& first = list_.front();
  for (auto s : first.kind_ == Kind::Scalar ? IntArrayRef() : first.sizes_.ref()) sizes_.push_back(s);
  literal_ = first.literal_;
  for (const auto& e : list_) {
    GRADLAB_CHECK(e.kind_ == first.kind_ && (e.kind_ == Kind::Scalar || e.sizes_.ref().equals(first.sizes_)),
                  "Expected all sub-lists to have sizes: ", first.kind_ == Kind::Scalar ? IntArrayRef() : first.sizes_.ref(),
                  " (e.g. ", first.kind_ == Kind::Scalar ? "a scalar" : "a list", "), but got sub-list with sizes: ",
                  e.kind_ == Kind::Scalar ? IntArrayRef() : e.sizes_.ref());
    GRADLAB_CHECK(e.literal_ == literal_, "Expected all elements of the tensor to have the same scalar type: ",
                  c10_name(literal_), ", but got element of scalar type: ", c10_name(e.literal_));
  }
}

void TensorDataContainer::fill(void* dst, ScalarType t, int64_t& pos) const {
  if (kind_ == Kind::Scalar) {
    dispatch_all(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      static_cast<T*>(dst)[pos++] =
          scalar_.isFloatingPoint() ? static_cast<T>(scalar_.toDouble()) : static_cast<T>(scalar_.toLong());
    });
    return;
  }
  for (const auto& e : list_) e.fill(dst, t, pos);
}

Tensor TensorDataContainer::to_tensor(const TensorOptions& o) const {
  // PyTorch's dtype for the numbers' type: int64 for any integer, the
  // default float type for float and double.
  const ScalarType inferred = literal_ == ScalarType::Int    ? ScalarType::Long
                              : is_floating(literal_) ? Scalar(1.0).default_type()
                                                      : literal_;
  const ScalarType t = o.has_dtype() ? o.dtype() : inferred;
  const IntArrayRef sizes = kind_ == Kind::Scalar ? IntArrayRef() : sizes_.ref();
  Tensor cpu_t = empty_tensor(sizes, t, Device(DeviceType::CPU));
  int64_t pos = 0;
  fill(cpu_t.data_ptr(), t, pos);
  // LibTorch writes a braced list element by element through the
  // autograd-visible API, so the new tensor's version counts its elements.
  if (kind_ == Kind::List && !from_vector_) cpu_t.unsafeGetTensorImpl()->version() = static_cast<uint32_t>(cpu_t.numel());
  Tensor r = o.device().is_cpu() ? cpu_t : cpu_t.to(o.device());
  if (o.requires_grad()) {
    if (!is_floating(t)) throw Error(msg::kOnlyFloatGrad);
    r.set_requires_grad(true);
  }
  return r;
}

Tensor tensor(const TensorDataContainer& data, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("tensor", tensor(data, o));
  return data.to_tensor(o);
}

Tensor empty(IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("empty", empty(size, o));
  return finish_factory(empty_tensor(size, o.dtype(), o.device()), o);
}
Tensor zeros(IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("zeros", zeros(size, o));
  return filled(size, 0, o);
}
Tensor ones(IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("ones", ones(size, o));
  return filled(size, 1, o);
}
Tensor full(IntArrayRef size, Scalar v, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("full", full(size, v, o));
  return filled(size, v, o.has_dtype() ? o : o.dtype(v.isFloatingPoint() ? ScalarType::Float : v.default_type()));
}
// A 0-d tensor; the default dtype whatever the scalar's kind, as PyTorch's
// scalar_tensor (torch.scalar_tensor(5).dtype is float32).
Tensor scalar_tensor(Scalar v, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("scalar_tensor", scalar_tensor(v, o));
  return filled({}, v, o.has_dtype() ? o : o.dtype(ScalarType::Float));
}
Tensor empty_like(const Tensor& t, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("empty_like", empty_like(t, o));
  return filled_like(t, std::nullopt, like_options(t, o));
}
Tensor Tensor::new_empty(IntArrayRef size, const TensorOptions& o) const {
  GRADLAB_TAPE_NEW("new_empty", new_empty(size, o));
  return empty(size, like_options(*this, o));
}
Tensor Tensor::new_zeros(IntArrayRef size, const TensorOptions& o) const {
  GRADLAB_TAPE_NEW("new_zeros", new_zeros(size, o));
  return zeros(size, like_options(*this, o));
}
Tensor Tensor::new_ones(IntArrayRef size, const TensorOptions& o) const {
  GRADLAB_TAPE_NEW("new_ones", new_ones(size, o));
  return ones(size, like_options(*this, o));
}
Tensor Tensor::new_full(IntArrayRef size, Scalar v, const TensorOptions& o) const {
  GRADLAB_TAPE_NEW("new_full", new_full(size, v, o));
  return full(size, v, like_options(*this, o));
}
Tensor zeros_like(const Tensor& t, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("zeros_like", zeros_like(t, o));
  return filled_like(t, Scalar(0), like_options(t, o));
}
Tensor ones_like(const Tensor& t, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("ones_like", ones_like(t, o));
  return filled_like(t, Scalar(1), like_options(t, o));
}
Tensor full_like(const Tensor& t, Scalar v, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("full_like", full_like(t, v, o));
  return filled_like(t, v, like_options(t, o));
}

Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("arange", arange(start, end, step, o));
  const bool any_float = start.isFloatingPoint() || end.isFloatingPoint() || step.isFloatingPoint();
  const ScalarType t = o.has_dtype() ? o.dtype() : (any_float ? ScalarType::Float : ScalarType::Long);
  const double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  GRADLAB_CHECK(st != 0, "step must be nonzero");
  GRADLAB_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "upper bound and larger bound inconsistent with step sign");
  const int64_t n = static_cast<int64_t>(std::ceil((e - s) / st));
  Tensor cpu_t = empty_tensor({n}, t, Device(DeviceType::CPU));
  dispatch_all(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu_t.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + static_cast<double>(i) * st);
  });
  Tensor r = o.device().is_cpu() ? cpu_t : cpu_t.to(o.device());
  return finish_factory(r, o);
}
Tensor arange(Scalar end, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("arange", arange(end, o));
  return arange(0, end, 1, o);
}
Tensor arange(Scalar start, Scalar end, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("arange", arange(start, end, o));
  return arange(start, end, 1, o);
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("linspace", linspace(start, end, steps, o));
  GRADLAB_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor cpu_t = empty_tensor({steps}, o.dtype(), Device(DeviceType::CPU));
  const double s = start.toDouble(), e = end.toDouble();
  const double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0;
  dispatch_all(o.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu_t.data_ptr());
    const int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i)
      p[i] = static_cast<T>(i < half ? s + step * static_cast<double>(i) : e - step * static_cast<double>(steps - i - 1));
  });
  return finish_factory(o.device().is_cpu() ? cpu_t : cpu_t.to(o.device()), o);
}

Tensor eye(int64_t n, int64_t m, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("eye", eye(n, m, o));
  Tensor cpu_t = zeros({n, m}, TensorOptions(o.dtype()).device(Device(DeviceType::CPU)));
  dispatch_all(o.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu_t.data_ptr());
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = T(1);
  });
  return finish_factory(o.device().is_cpu() ? cpu_t : cpu_t.to(o.device()), o);
}
Tensor eye(int64_t n, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("eye", eye(n, o));
  return eye(n, n, o);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("from_blob", from_blob(data, sizes, o));
  auto impl = make_intrusive<TensorImpl>();
  impl->sizes = DimVector(sizes);
  impl->strides = contiguous_strides(sizes);  // contiguous, as a new TensorImpl assumes
  impl->numel = numel_of(sizes);
  impl->dtype = o.dtype();
  auto st = make_intrusive<StorageImpl>();
  st->data = data;
  st->nbytes = static_cast<size_t>(impl->numel) * element_size(o.dtype());
  st->device = o.device();
  impl->storage = st;
  return finish_factory(Tensor(std::move(impl)), o);
}

}  // namespace gradlab

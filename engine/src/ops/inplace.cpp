// In-place writes that are not arithmetic: zero_, fill_, copy_ (indexing is
// in indexing.cpp).
#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
GradList zero_grad_bw(PlainOp&, Grads& g) { return {zeros_like(g[0])}; }
// copy_: the old value is overwritten (gradient 0); the source gets g.
GradList copy_bw(Op<Origin>& n, Grads& g) {
  return {zeros_like(g[0]), n.should_compute_output(1) ? g[0].to(n.dtype).to(Device(n.device)) : Tensor()};
}
GradList fill_tensor_bw(PlainOp& n, Grads& g) {
  return {zeros_like(g[0]), n.should_compute_output(1) ? g[0].sum() : Tensor()};
}
// Copies src into self across devices: the kernel of the device that can reach both.
void copy_kernel(const Tensor& self, const Tensor& src) {
  if (src.device() == self.device()) backend::of(self).copy(self, src);
  else (self.device().is_cpu() ? backend::of(src) : backend::of(self)).copy(self, src);
}
Tensor& fill_impl(Tensor& self, Scalar v, const char* name) {
  check_inplace(self, Overlap::Allowed);
  auto fn = record(name, {&self}, zero_grad_bw);
  check_rebase(self, fn);
  backend::of(self).fill(self, v);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

}  // namespace

Tensor& Tensor::zero_() const {
  GRADLAB_TAPE("zero_", zero_(), *this);
  return fill_impl(const_cast<Tensor&>(*this), 0, "ZeroBackward0");
}
Tensor& Tensor::fill_(Scalar v) const {
  GRADLAB_TAPE("fill_", fill_(v), *this, v);
  return fill_impl(const_cast<Tensor&>(*this), v, "FillBackward2");
}
Tensor& Tensor::fill_(const Tensor& value) const {
  GRADLAB_TAPE("fill_", fill_(value), *this, value);
  Tensor& self = const_cast<Tensor&>(*this);
  check_defined(value, 1, "value");
  GRADLAB_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
                " dimensions.");
  check_inplace(self, Overlap::Allowed);
  auto fn = record("FillBackward3", {this, &value}, fill_tensor_bw);
  check_rebase(self, fn);
  copy_kernel(self, value);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

Tensor& Tensor::copy_(const Tensor& src, bool) const {
  GRADLAB_TAPE("copy_", copy_(src), *this, src);
  // In-place methods are const, as in LibTorch: the handle is const, the tensor is not.
  Tensor& self = const_cast<Tensor&>(*this);
  check_defined(self, 0, "self");
  check_defined(src, 1, "src");
  check_inplace(self, Overlap::Allowed);
  // LibTorch's copy_impl returns at once when src is self's own memory read
  // the same way (x.copy_(x), even expanded); the version still steps.
  const TensorImpl* a = unsafeGetTensorImpl();
  const TensorImpl* b = src.unsafeGetTensorImpl();
  const bool same_data = a == b || (a->storage && a->storage.get() == b->storage.get() && a->offset == b->offset &&
                                    sizes().equals(src.sizes()) && strides().equals(src.strides()) &&
                                    scalar_type() == src.scalar_type());
  if (!same_data) {
    check_no_internal_overlap(self);
    check_no_partial_overlap(self, src);  // x.copy_(x[0]) reads what it writes
  }
  broadcast_shapes(sizes(), src.sizes());
  GRADLAB_CHECK(is_expandable_to(src.sizes(), sizes()), "output with shape ", sizes(),
                " doesn't match the broadcast shape ", broadcast_shapes(sizes(), src.sizes()).ref());
  auto fn = record("torch::autograd::CopyBackwards", {this, &src}, copy_bw, Origin{src.scalar_type(), src.device().type()});
  check_rebase(self, fn);
  if (!same_data) copy_kernel(self, src);
  bump_version(self);
  if (fn) finish_inplace(self, fn);
  return self;
}

}  // namespace gradlab

// masked_fill and masked_fill_: where(mask, value, self), with a number or a
// 0-d tensor (which may itself need a gradient), out of place or in place.
#include "ops/ops_internal.h"

namespace gradlab {

namespace {
// d/dself: the gradient where the mask did not fill, zero where it did; a
// 0-d value tensor gets the sum of the gradient where it was written.
GradList masked_fill_bw(PlainOp& n, Grads& g) { return {where(n.saved_at(0), zeros_like(g[0]), g[0])}; }
GradList masked_fill_tensor_bw(PlainOp& n, Grads& g) {
  const Tensor mask = n.saved_at(0);
  return {n.should_compute_output(0) ? where(mask, zeros_like(g[0]), g[0]) : Tensor(),
          n.should_compute_output(1) ? where(mask, g[0], zeros_like(g[0])).sum() : Tensor()};
}
void check_mask(const Tensor& self, const Tensor& mask) {
  check_defined(mask, 1, "mask");
  // Bool masks only. LibTorch 1.13 also takes a uint8 mask (deprecated) and
  // reads a float mask's bytes as bools (silently filling nothing): a
  // student is better served by the error.
  GRADLAB_CHECK(mask.scalar_type() == ScalarType::Bool, "masked_fill_ only supports boolean masks, but got mask with dtype ",
                c10_name(mask.scalar_type()));
  GRADLAB_CHECK(is_expandable_to(mask.sizes(), self.sizes()), "The size of the mask ", mask.sizes(),
                " must be broadcastable to the size of the tensor ", self.sizes());
}
// The value as the fill writes it: a number, or a 0-d tensor (which may need a gradient).
Tensor fill_value(const Tensor& self, const Tensor& value) {
  check_defined(value, 2, "value");
  GRADLAB_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                value.dim(), " dimension(s).");
  autograd::NoGradGuard ng;
  return value.to(self.scalar_type()).to(self.device());
}
// out = where(mask, value, self), out of place or into self.
Tensor& masked_fill_into(Tensor& out, const Tensor& self, const Tensor& mask, const Tensor& fill, const Tensor* value) {
  const bool inplace = out.is_same(self);
  if (inplace) check_inplace(self);
  auto fn = value ? record("MaskedFillBackward1", {&self, value}, masked_fill_tensor_bw)
                  : record("MaskedFillBackward0", {&self}, masked_fill_bw);
  backend::of(self).where(out, mask, fill, self);
  if (fn) fn->save(mask);
  finish_written(std::move(fn), self, out, inplace);
  return out;
}
}  // namespace

Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  GRADLAB_TAPE("masked_fill", masked_fill(mask, value), *this, mask, value);
  checked();
  check_mask(*this, mask);
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  return masked_fill_into(out, *this, mask, scalar_like(value, *this, scalar_type()), nullptr);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  GRADLAB_TAPE("masked_fill", masked_fill(mask, value), *this, mask, value);
  checked();
  check_mask(*this, mask);
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  return masked_fill_into(out, *this, mask, fill_value(*this, value), &value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) const {
  GRADLAB_TAPE("masked_fill_", masked_fill_(mask, value), *this, mask, value);
  checked();
  check_mask(*this, mask);
  Tensor& self = const_cast<Tensor&>(*this);
  return masked_fill_into(self, self, mask, scalar_like(value, *this, scalar_type()), nullptr);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) const {
  GRADLAB_TAPE("masked_fill_", masked_fill_(mask, value), *this, mask, value);
  checked();
  check_mask(*this, mask);
  Tensor& self = const_cast<Tensor&>(*this);
  return masked_fill_into(self, self, mask, fill_value(*this, value), &value);
}

}  // namespace gradlab

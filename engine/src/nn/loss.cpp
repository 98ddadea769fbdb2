// The functional losses with their options, and the loss modules.
#include "gradlab/nn/loss.h"

namespace gradlab::nn {

namespace functional {
namespace {
std::optional<Tensor> optional_of(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& o) {
  return gradlab::mse_loss(input, target, o.reduction());
}
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& o) {
  return gradlab::l1_loss(input, target, o.reduction());
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& o) {
  GRADLAB_CHECK(input.dim() >= 2, "Expected 2 or more dimensions (got ", input.dim(), ")");
  GRADLAB_CHECK(target.dim() >= 1 && input.size(0) == target.size(0), "Expected input batch_size (", input.size(0),
                ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ").");
  return gradlab::nll_loss(input, target, optional_of(o.weight()), o.reduction(), o.ignore_index());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& o) {
  return gradlab::cross_entropy(input, target, optional_of(o.weight()), o.reduction(), o.ignore_index(),
                                o.label_smoothing());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const BinaryCrossEntropyFuncOptions& o) {
  return gradlab::binary_cross_entropy(input, target, optional_of(o.weight()), o.reduction());
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  return gradlab::binary_cross_entropy_with_logits(input, target, optional_of(o.weight()), optional_of(o.pos_weight()),
                                                   o.reduction());
}
}  // namespace functional

#define GRADLAB_LOSS_MODULE_DEFS(Name)                                                              \
  Name##Impl::Name##Impl(const Name##Options& o) : Module("torch::nn::" #Name "Impl"), options(o) {} \
  void Name##Impl::pretty_print(std::ostream& os) const { os << "torch::nn::" #Name "()"; }
GRADLAB_LOSS_MODULE_DEFS(MSELoss)
GRADLAB_LOSS_MODULE_DEFS(NLLLoss)
GRADLAB_LOSS_MODULE_DEFS(L1Loss)
GRADLAB_LOSS_MODULE_DEFS(CrossEntropyLoss)
GRADLAB_LOSS_MODULE_DEFS(BCELoss)
GRADLAB_LOSS_MODULE_DEFS(BCEWithLogitsLoss)
#undef GRADLAB_LOSS_MODULE_DEFS

}  // namespace gradlab::nn

// The losses as LibTorch's nn API spells them: option structs (the reduction
// as torch::kNone/kMean/kSum, class weights, ignore_index, label smoothing,
// pos_weight), the functional forms, and the loss modules, which are Modules
// (so a network can register its criterion, and print it).
#pragma once
#include <optional>

#include "gradlab/nn/module.h"
#include "gradlab/ops.h"

namespace gradlab {
// LibTorch's option tokens for a loss's reduction.
namespace enumtype {
struct kNone {};
struct kMean {};
struct kSum {};
}  // namespace enumtype
}  // namespace gradlab

namespace gradlab::nn {

// The reduction, given to reduction() (which returns the options) as a token.
template <class Self>
class ReductionOptions {
 public:
  Self& reduction(enumtype::kNone) { return set(Reduction::None); }
  Self& reduction(enumtype::kMean) { return set(Reduction::Mean); }
  Self& reduction(enumtype::kSum) { return set(Reduction::Sum); }
  Reduction reduction() const { return reduction_; }

 private:
  Self& set(Reduction r) {
    reduction_ = r;
    return static_cast<Self&>(*this);
  }
  Reduction reduction_ = Reduction::Mean;
};

// A loss's options that also take (class or element) weights.
template <class Self>
class WeightedOptions : public ReductionOptions<Self> {
 public:
  Self& weight(const Tensor& w) {
    weight_ = w;
    return static_cast<Self&>(*this);
  }
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// The class-index losses also ignore one class; cross-entropy also smooths labels.
template <class Self>
class ClassLossOptions : public WeightedOptions<Self> {
 public:
  Self& ignore_index(int64_t i) {
    ignore_index_ = i;
    return static_cast<Self&>(*this);
  }
  int64_t ignore_index() const { return ignore_index_; }

 private:
  int64_t ignore_index_ = -100;
};
struct NLLLossOptions : ClassLossOptions<NLLLossOptions> {};
struct CrossEntropyLossOptions : ClassLossOptions<CrossEntropyLossOptions> {
  CrossEntropyLossOptions& label_smoothing(double s) {
    label_smoothing_ = s;
    return *this;
  }
  double label_smoothing() const { return label_smoothing_; }

 private:
  double label_smoothing_ = 0.0;
};
// The losses whose only option is the reduction also take it in the
// constructor, as LibTorch's do: MSELossOptions(torch::kSum).
template <class Self>
struct ReductionOnlyOptions : ReductionOptions<Self> {
  ReductionOnlyOptions() = default;
  template <class R, class = decltype(std::declval<ReductionOptions<Self>&>().reduction(std::declval<R>()))>
  ReductionOnlyOptions(R r) {  // NOLINT: implicit, as LibTorch's
    this->reduction(r);
  }
};
struct MSELossOptions : ReductionOnlyOptions<MSELossOptions> {
  using ReductionOnlyOptions::ReductionOnlyOptions;
};
struct L1LossOptions : ReductionOnlyOptions<L1LossOptions> {
  using ReductionOnlyOptions::ReductionOnlyOptions;
};
struct BCELossOptions : WeightedOptions<BCELossOptions> {};
struct BCEWithLogitsLossOptions : WeightedOptions<BCEWithLogitsLossOptions> {
  BCEWithLogitsLossOptions& pos_weight(const Tensor& w) {
    pos_weight_ = w;
    return *this;
  }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor pos_weight_;
};

namespace functional {
using MSELossFuncOptions = MSELossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using L1LossFuncOptions = L1LossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
// Unlike ATen's nll_loss, the functional one wants a batch dimension.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
}  // namespace functional

// Each loss module: its options, forward(input, target) through the
// functional form, and LibTorch's printed name.
#define GRADLAB_LOSS_MODULE(Name, fn)                                                        \
  class Name##Impl : public Module {                                                        \
   public:                                                                                  \
    explicit Name##Impl(const Name##Options& options = {});                                 \
    Tensor forward(const Tensor& input, const Tensor& target) {                             \
      return functional::fn(input, target, options);                                        \
    }                                                                                       \
    void pretty_print(std::ostream& os) const override;                                     \
    Name##Options options;                                                                  \
  };                                                                                        \
  class Name : public ModuleHolder<Name##Impl> {                                            \
   public:                                                                                  \
    using ModuleHolder<Name##Impl>::ModuleHolder;                                           \
  }
GRADLAB_LOSS_MODULE(MSELoss, mse_loss);
GRADLAB_LOSS_MODULE(NLLLoss, nll_loss);
GRADLAB_LOSS_MODULE(L1Loss, l1_loss);
GRADLAB_LOSS_MODULE(CrossEntropyLoss, cross_entropy);
GRADLAB_LOSS_MODULE(BCELoss, binary_cross_entropy);
GRADLAB_LOSS_MODULE(BCEWithLogitsLoss, binary_cross_entropy_with_logits);
#undef GRADLAB_LOSS_MODULE

}  // namespace gradlab::nn

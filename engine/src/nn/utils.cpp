// Gradient clipping. The gradients are changed through .data(), as
// LibTorch's are: no graph, and the gradients' versions do not move.
#include "gradlab/nn/utils.h"

#include <cmath>
#include <limits>

#include "gradlab/ops.h"

namespace gradlab::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  std::vector<Tensor> with_grad;
  for (const auto& p : parameters)
    if (p.grad().defined()) with_grad.push_back(p);
  if (with_grad.empty()) return 0.0;
  Tensor total;
  if (norm_type == std::numeric_limits<double>::infinity()) {
    std::vector<Tensor> norms;
    for (const auto& p : with_grad) norms.push_back(p.grad().data().abs().max());
    total = norms.size() == 1 ? norms[0] : stack(norms).max();
  } else if (norm_type == 0) {
    total = full({}, static_cast<double>(with_grad.size()));
  } else {
    std::vector<Tensor> norms;
    for (const auto& p : with_grad) norms.push_back(p.grad().data().norm(norm_type));
    total = norms.size() == 1 ? norms[0] : stack(norms).norm(norm_type);
  }
  const double value = total.item<double>();
  GRADLAB_CHECK(!error_if_nonfinite || std::isfinite(value), "The total norm of order ", norm_type,
                " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and "
                "scale the gradients with the non-finite norm anyway, set `error_if_nonfinite=false`");
  const Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  for (auto& p : with_grad) p.grad().data().mul_(coef);
  return value;
}
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type, error_if_nonfinite);
}
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  for (const auto& p : parameters)
    if (p.grad().defined()) p.grad().data().clamp_(-clip_value, clip_value);
}
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}
void clip_grad_value_(const Tensor& parameter, double clip_value) { clip_grad_value_(std::vector<Tensor>{parameter}, clip_value); }

}  // namespace gradlab::nn::utils

// torch::nn::utils' gradient clipping, as LibTorch 1.13 does it: the norm of
// all the gradients together (each gradient's norm, then the norm of those),
// and every gradient scaled in place by min(1, max_norm / (norm + 1e-6)).
#pragma once
#include <initializer_list>
#include <vector>

#include "gradlab/tensor.h"

namespace gradlab::nn::utils {

// Returns the total norm before clipping.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient, in place, into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace gradlab::nn::utils

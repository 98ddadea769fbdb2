// Finite-difference gradient check shared by the CPU and the GPU tests:
// autograd's gradient of sum(f(inputs) * w), w random in [0.5, 1.5), against
// central differences in float64. Floating inputs become float64 leaves on
// `device`; the host perturbs a CPU copy of one input at a time and moves it
// over (on the CPU that copy is used as it is).
#pragma once
#include "catch_compat.h"
#include <cmath>
#include <functional>
#include <torch/torch.h>
#include <vector>

namespace gradcheck_detail {
using Fn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;
}

inline bool gradcheck(const gradcheck_detail::Fn& f, std::vector<torch::Tensor> inputs,
                      torch::Device device = torch::kCPU, double eps = 1e-6, double atol = 1e-5, double rtol = 1e-3) {
  for (auto& t : inputs)
    t = t.is_floating_point() ? t.detach().to(device, torch::kDouble).requires_grad_(true) : t.to(device);
  torch::Tensor out = f(inputs);
  torch::Tensor w = (torch::rand(out.sizes(), torch::dtype(torch::kDouble)) + 0.5).to(device);
  (out * w).sum().backward();
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].requires_grad()) continue;
    const torch::Tensor& g = inputs[k].grad();
    torch::Tensor analytic = (g.defined() ? g : torch::zeros_like(inputs[k])).cpu().reshape({-1});
    torch::Tensor host = inputs[k].detach().cpu().clone();
    double* p = host.data_ptr<double>();
    for (int64_t i = 0; i < host.numel(); ++i) {
      const double orig = p[i];
      auto eval = [&](double v) {
        torch::NoGradGuard ng;
        p[i] = v;
        std::vector<torch::Tensor> moved = inputs;
        moved[k] = host.to(device);
        return (f(moved) * w).sum().item<double>();
      };
      const double numeric = (eval(orig + eps) - eval(orig - eps)) / (2 * eps);
      p[i] = orig;
      const double a = analytic[i].item<double>();
      if (std::abs(a - numeric) > atol + rtol * std::abs(numeric)) {
        UNSCOPED_INFO("input " << k << " element " << i << ": analytic " << a << ", numeric " << numeric);
        return false;
      }
    }
  }
  return true;
}

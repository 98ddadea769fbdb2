// Parameter initialisation. Every fill runs under NoGradGuard: initialising a
// leaf that requires grad is not an operation to differentiate.
#include "gradlab/nn/init.h"

#include <cmath>

#include "gradlab/autograd.h"

namespace gradlab::nn::init {

namespace {
struct Gain {
  double param;
  double operator()(token::kLinear) const { return 1; }
  double operator()(token::kSigmoid) const { return 1; }
  double operator()(token::kTanh) const { return 5.0 / 3; }
  double operator()(token::kReLU) const { return std::sqrt(2.0); }
  double operator()(token::kLeakyReLU) const { return std::sqrt(2.0 / (1 + param * param)); }
};

double kaiming_std(const Tensor& tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  const auto fans = _calculate_fan_in_and_fan_out(tensor);
  const int64_t fan = std::holds_alternative<token::kFanIn>(mode) ? fans.first : fans.second;
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

double calculate_gain(NonlinearityType nonlinearity, double param) { return std::visit(Gain{param}, nonlinearity); }

std::pair<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  const int64_t dims = tensor.dim();
  GRADLAB_CHECK(dims >= 2, "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < dims; ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  autograd::NoGradGuard guard;
  return tensor.uniform_(low, high);
}
Tensor normal_(Tensor tensor, double mean, double std) {
  autograd::NoGradGuard guard;
  return tensor.normal_(mean, std);
}
Tensor constant_(Tensor tensor, Scalar value) {
  autograd::NoGradGuard guard;
  return tensor.fill_(value);
}
Tensor zeros_(Tensor tensor) {
  autograd::NoGradGuard guard;
  return tensor.zero_();
}
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor xavier_uniform_(Tensor tensor, double gain) {
  const auto fans = _calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fans.first + fans.second));
  const double a = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -a, a);
}
Tensor xavier_normal_(Tensor tensor, double gain) {
  const auto fans = _calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / static_cast<double>(fans.first + fans.second));
  return normal_(std::move(tensor), 0, std);
}
Tensor kaiming_uniform_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity);
  return uniform_(std::move(tensor), -bound, bound);
}
Tensor kaiming_normal_(Tensor tensor, double a, FanModeType mode, NonlinearityType nonlinearity) {
  const double std = kaiming_std(tensor, a, mode, nonlinearity);
  return normal_(std::move(tensor), 0, std);
}

}  // namespace gradlab::nn::init

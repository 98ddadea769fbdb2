// torch::nn::init: fill a parameter in place, without recording a graph, from
// the global generator (so a seeded lesson gets LibTorch's numbers).
#pragma once
#include <utility>
#include <variant>

#include "gradlab/tensor.h"

namespace gradlab::nn::init {

// LibTorch's tokens for the fan mode and the nonlinearity of kaiming_*_.
namespace token {
struct kFanIn {};
struct kFanOut {};
struct kLinear {};
struct kSigmoid {};
struct kTanh {};
struct kReLU {};
struct kLeakyReLU {};
}  // namespace token
using FanModeType = std::variant<token::kFanIn, token::kFanOut>;
using NonlinearityType = std::variant<token::kLinear, token::kSigmoid, token::kTanh, token::kReLU, token::kLeakyReLU>;

// The recommended gain for a nonlinearity; param is leaky_relu's slope.
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight: its sizes 1 and 0 times the receptive field.
std::pair<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, FanModeType mode = token::kFanIn{},
                        NonlinearityType nonlinearity = token::kLeakyReLU{});
Tensor kaiming_normal_(Tensor tensor, double a = 0, FanModeType mode = token::kFanIn{},
                       NonlinearityType nonlinearity = token::kLeakyReLU{});

}  // namespace gradlab::nn::init

// gradlab's LibTorch facade: student code written against this subset of
// LibTorch's C++ API compiles unchanged against gradlab or LibTorch.
// The engine lives in namespace gradlab; these are LibTorch's names for it.
#pragma once
// LibTorch's torch/torch.h brings <iostream> with it, and code written
// against it prints with std::cout without including it: so does this one.
// The same for the standard headers it brings along that students' code
// leans on (std::tanh without <cmath> compiles against LibTorch).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

// Set when torch:: is gradlab's facade, for the rare code (the grader's
// harness) that builds against both and must know which one it has.
#define GRADLAB_ENGINE 1

#include "gradlab/autograd.h"
// (Not gradlab/dot.h: LibTorch has no to_dot or walk_graph, and an exercise
// that asks for a walk of the graph must not find one written for it.)
#include "gradlab/function.h"
#include "gradlab/nn/init.h"
#include "gradlab/nn/loss.h"
#include "gradlab/nn/modules.h"
#include "gradlab/nn/utils.h"
#include "gradlab/ops.h"
#include "gradlab/optim.h"
#include "gradlab/tensor.h"

namespace c10 {
using gradlab::Device;
using gradlab::DeviceType;
using gradlab::Error;
using gradlab::IntArrayRef;
using gradlab::Scalar;
using gradlab::ScalarType;
using gradlab::TensorOptions;
using gradlab::SourceLocation;
using gradlab::WarningHandler;
using InferenceMode = gradlab::autograd::InferenceMode;
using NoGradGuard = gradlab::autograd::NoGradGuard;
using AutoGradMode = gradlab::autograd::AutoGradMode;
using GradMode = gradlab::autograd::GradMode;
template <class T>
using ArrayRef = gradlab::ArrayRef<T>;
inline constexpr std::nullopt_t nullopt = std::nullopt;
template <class T>
using optional = std::optional<T>;
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
// In LibTorch 1.13, c10::Warning is a namespace holding the handler functions.
namespace Warning {
using gradlab::get_warning_handler;
using gradlab::set_warning_handler;
inline void set_warnAlways(bool on) noexcept { gradlab::set_warn_always(on); }
inline bool get_warnAlways() noexcept { return gradlab::get_warn_always(); }
// Turns the warnings LibTorch gives once a process into warnings given every time.
struct WarnAlways {
  explicit WarnAlways(bool setting = true) : prev_(gradlab::get_warn_always()) { gradlab::set_warn_always(setting); }
  ~WarnAlways() { gradlab::set_warn_always(prev_); }
  WarnAlways(const WarnAlways&) = delete;
  WarnAlways& operator=(const WarnAlways&) = delete;

 private:
  bool prev_;
};
class WarningHandlerGuard {
  WarningHandler* prev_;

 public:
  WarningHandlerGuard(WarningHandler* h) : prev_(gradlab::get_warning_handler()) { gradlab::set_warning_handler(h); }
  ~WarningHandlerGuard() { gradlab::set_warning_handler(prev_); }
};
}  // namespace Warning
}  // namespace c10

namespace at {
using gradlab::Tensor;
// LibTorch's TensorBase is Tensor's base class; here they are one type.
using TensorBase = gradlab::Tensor;
using gradlab::arange;
using gradlab::empty;
using gradlab::eye;
using gradlab::full;
using gradlab::scalar_tensor;
using gradlab::ones;
using gradlab::ones_like;
using gradlab::rand;
using gradlab::randn;
using gradlab::tensor;
using gradlab::zeros;
using gradlab::zeros_like;
using gradlab::allclose;
using gradlab::equal;
using gradlab::TensorList;
using gradlab::TensorOptions;
using gradlab::Device;
using gradlab::DeviceType;
using gradlab::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;
using NoGradGuard = gradlab::autograd::NoGradGuard;
using AutoGradMode = gradlab::autograd::AutoGradMode;
using GradMode = gradlab::autograd::GradMode;
inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kInt = ScalarType::Int;
inline constexpr ScalarType kLong = ScalarType::Long;
inline constexpr ScalarType kFloat = ScalarType::Float;
inline constexpr ScalarType kDouble = ScalarType::Double;
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
inline TensorOptions dtype(ScalarType t) { return TensorOptions().dtype(t); }
inline TensorOptions device(Device d) { return TensorOptions().device(d); }
namespace native {
inline bool is_nonzero(const Tensor& t) { return t.is_nonzero(); }
}  // namespace native
// The reductions as ATen numbers them (torch::mse_loss's third argument).
namespace Reduction {
enum Reduction { None, Mean, Sum, END };
}  // namespace Reduction
}  // namespace at

namespace torch {
using gradlab::Tensor;
// LibTorch's torch namespace takes in all of at's: torch::Reduction::Mean is
// the spelling its loss docs use.
namespace Reduction = at::Reduction;
using gradlab::TensorList;
using gradlab::TensorOptions;
using gradlab::ScalarType;
using gradlab::Scalar;
using gradlab::Device;
using gradlab::DeviceType;
using gradlab::IntArrayRef;
using gradlab::TensorDataContainer;
using Dtype = gradlab::ScalarType;

using at::kBool;
using at::kInt;
inline constexpr ScalarType kInt32 = ScalarType::Int;
using at::kLong;
inline constexpr ScalarType kInt64 = ScalarType::Long;
using at::kFloat;
inline constexpr ScalarType kFloat32 = ScalarType::Float;
using at::kDouble;
inline constexpr ScalarType kFloat64 = ScalarType::Double;
using at::kCPU;
using at::kCUDA;

using at::device;
using at::dtype;
using at::requires_grad;

// factories
using gradlab::arange;
using gradlab::empty;
using gradlab::empty_like;
using gradlab::eye;
using gradlab::from_blob;
using gradlab::full;
using gradlab::full_like;
using gradlab::scalar_tensor;
using gradlab::linspace;
using gradlab::manual_seed;
using gradlab::ones;
using gradlab::ones_like;
using gradlab::rand;
using gradlab::rand_like;
using gradlab::randint;
using gradlab::randperm;
using gradlab::bernoulli;
using gradlab::dropout;
using gradlab::dropout_;
using gradlab::leaky_relu;
using gradlab::leaky_relu_;
using gradlab::randn;
using gradlab::randn_like;
using gradlab::tensor;
using gradlab::zeros;
using gradlab::zeros_like;

// ops
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  GRADLAB_WHEN_##free(using gradlab::name;)
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
// LibTorch's free in-place forms: torch::exp_(t) is t.exp_() (a Tensor&, as
// LibTorch's, so an rvalue is refused there and here alike).
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  GRADLAB_WHEN_##free(GRADLAB_WHEN_##inplace(inline Tensor& name##_(Tensor& t) { return t.name##_(); }))
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
using gradlab::add;
using gradlab::addcdiv;
using gradlab::addcmul;
using gradlab::add_out;
using gradlab::div_out;
using gradlab::mul_out;
using gradlab::sub_out;
using gradlab::all;
using gradlab::allclose;
using gradlab::amax;
using gradlab::amin;
using gradlab::any;
using gradlab::argmax;
using gradlab::addmm;
using gradlab::argmin;
using gradlab::binary_cross_entropy;
using gradlab::binary_cross_entropy_with_logits;
using gradlab::bmm;
using gradlab::cat;
// PyTorch's other names for the same ops (gradlab/other_names.h), and the
// ones whose arguments differ.
#define GRADLAB_OTHER_UNARY(name, op, free_inplace)      \
  inline Tensor name(const Tensor& t) { return t.op(); } \
  GRADLAB_WHEN_##free_inplace(inline Tensor& name##_(Tensor& t) { return t.op##_(); })
#define GRADLAB_OTHER_BINARY(name, op, inplace)                             \
  inline Tensor name(const Tensor& a, const Tensor& b) { return a.op(b); } \
  inline Tensor name(const Tensor& a, Scalar b) { return a.op(b); }
#include "gradlab/other_names.h"
#undef GRADLAB_OTHER_UNARY
#undef GRADLAB_OTHER_BINARY
inline Tensor clip(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) {
  return t.clamp(min, max);
}
inline Tensor subtract(const Tensor& a, const Tensor& b, Scalar alpha = 1) { return a.sub(b, alpha); }
inline Tensor subtract(const Tensor& a, Scalar b, Scalar alpha = 1) { return a.sub(b, alpha); }
inline Tensor swapaxes(const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); }
inline Tensor swapdims(const Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); }
inline Tensor ravel(const Tensor& t) { return t.ravel(); }
inline Tensor concat(TensorList tensors, int64_t dim = 0) { return cat(tensors, dim); }
inline Tensor concatenate(TensorList tensors, int64_t dim = 0) { return cat(tensors, dim); }
using gradlab::chunk;
using gradlab::clamp;
using gradlab::clamp_max;
using gradlab::clamp_min;
using gradlab::argsort;
using gradlab::cumprod;
using gradlab::cumsum;
using gradlab::diag;
using gradlab::masked_select;
using gradlab::scatter;
using gradlab::sort;
using gradlab::topk;
using gradlab::div;
using gradlab::dot;
using gradlab::equal;
using gradlab::flatten;
using gradlab::flip;
using gradlab::gather;
using gradlab::index_select;
using gradlab::isfinite;
using gradlab::isinf;
using gradlab::isnan;
using gradlab::isclose;
using gradlab::log_softmax;
using gradlab::logsumexp;
using gradlab::matmul;
using gradlab::max;
using gradlab::maximum;
using gradlab::mean;
using gradlab::min;
using gradlab::minimum;
using gradlab::mm;
using gradlab::mse_loss;
using gradlab::mul;
using gradlab::mv;
using gradlab::narrow;
using gradlab::nll_loss;
using gradlab::outer;
using gradlab::permute;
using gradlab::norm;
using gradlab::pow;
using gradlab::prod;
using gradlab::reshape;
using gradlab::select;
using gradlab::softmax;
using gradlab::split;
using gradlab::square;
using gradlab::squeeze;
using gradlab::std;
using gradlab::stack;
using gradlab::sub;
using gradlab::rsub;
using gradlab::sum;
using gradlab::t;
using gradlab::transpose;
using gradlab::tril;
using gradlab::triu;
using gradlab::unbind;
using gradlab::unsqueeze;
using gradlab::var;
using gradlab::where;

using InferenceMode = gradlab::autograd::InferenceMode;
using NoGradGuard = gradlab::autograd::NoGradGuard;
using AutoGradMode = gradlab::autograd::AutoGradMode;
using GradMode = gradlab::autograd::GradMode;

namespace indexing {
using gradlab::indexing::Ellipsis;
using gradlab::indexing::None;
using gradlab::indexing::Slice;
using gradlab::indexing::TensorIndex;
}  // namespace indexing

namespace autograd {
using gradlab::autograd::AccumulateGrad;
using gradlab::autograd::AutogradContext;
using gradlab::autograd::backward;
using gradlab::autograd::CppNode;
using gradlab::autograd::AnomalyMode;
using gradlab::autograd::DetectAnomalyGuard;
using gradlab::autograd::Edge;
using gradlab::autograd::edge_list;
using gradlab::autograd::Function;
using gradlab::autograd::IndexRange;
using gradlab::autograd::FunctionPostHook;
using gradlab::autograd::FunctionPreHook;
using gradlab::autograd::grad;
using gradlab::autograd::GradMode;
using gradlab::autograd::IValue;
using gradlab::autograd::Node;
using gradlab::autograd::variable_list;
using Variable = gradlab::Tensor;
// A variable over `data`'s memory with no history and a version counter of
// its own (LibTorch's make_variable; what .data() gives, then requires_grad).
inline Variable make_variable(const gradlab::Tensor& data, bool requires_grad = false) {
  gradlab::Tensor v = data.data();
  if (requires_grad) v.requires_grad_(true);
  return v;
}
namespace impl {
using gradlab::autograd::impl::grad_accumulator;
using gradlab::autograd::impl::gradient_edge;
}  // namespace impl
}  // namespace autograd

// LibTorch's option tokens for a loss's reduction (nn/loss.h).
namespace enumtype {
using gradlab::enumtype::kMean;
using gradlab::enumtype::kNone;
using gradlab::enumtype::kSum;
}  // namespace enumtype
inline constexpr enumtype::kNone kNone{};
inline constexpr enumtype::kMean kMean{};
inline constexpr enumtype::kSum kSum{};
// torch::nn::init's tokens: kaiming_uniform_(w, 0, torch::kFanOut, torch::kReLU).
inline constexpr gradlab::nn::init::token::kFanIn kFanIn{};
inline constexpr gradlab::nn::init::token::kFanOut kFanOut{};
inline constexpr gradlab::nn::init::token::kLinear kLinear{};
inline constexpr gradlab::nn::init::token::kSigmoid kSigmoid{};
inline constexpr gradlab::nn::init::token::kTanh kTanh{};
inline constexpr gradlab::nn::init::token::kReLU kReLU{};
inline constexpr gradlab::nn::init::token::kLeakyReLU kLeakyReLU{};
using gradlab::OrderedDict;
using gradlab::linear;
namespace optim = gradlab::optim;
// torch::mse_loss(input, target, at::Reduction::Sum), as ATen takes it.
inline Tensor mse_loss(const Tensor& a, const Tensor& b, int64_t reduction) {
  GRADLAB_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END, "mse_loss: ", reduction,
                " is not a valid value for reduction");
  return gradlab::mse_loss(a, b, static_cast<gradlab::Reduction>(reduction));
}

inline Tensor l1_loss(const Tensor& a, const Tensor& b, int64_t reduction = at::Reduction::Mean) {
  GRADLAB_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END, "l1_loss: ", reduction,
                " is not a valid value for reduction");
  return gradlab::l1_loss(a, b, static_cast<gradlab::Reduction>(reduction));
}

// ATen's spellings of the class-index losses, the reduction an at::Reduction.
inline gradlab::Reduction checked_reduction(const char* op, int64_t reduction) {
  GRADLAB_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END, op, ": ", reduction,
                " is not a valid value for reduction");
  return static_cast<gradlab::Reduction>(reduction);
}
inline Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                       int64_t reduction = at::Reduction::Mean, int64_t ignore_index = -100) {
  return gradlab::nll_loss(input, target, weight, checked_reduction("nll_loss", reduction), ignore_index);
}
inline Tensor nll_loss_nd(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                          int64_t reduction = at::Reduction::Mean, int64_t ignore_index = -100) {
  return gradlab::nll_loss(input, target, weight, checked_reduction("nll_loss_nd", reduction), ignore_index);
}
inline Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                                 int64_t reduction = at::Reduction::Mean, int64_t ignore_index = -100,
                                 double label_smoothing = 0.0) {
  return gradlab::cross_entropy(input, target, weight, checked_reduction("cross_entropy_loss", reduction),
                                ignore_index, label_smoothing);
}

inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                   int64_t reduction) {
  GRADLAB_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END, "binary_cross_entropy: ",
                reduction, " is not a valid value for reduction");
  return gradlab::binary_cross_entropy(input, target, weight, static_cast<gradlab::Reduction>(reduction));
}
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               const std::optional<Tensor>& weight,
                                               const std::optional<Tensor>& pos_weight, int64_t reduction) {
  GRADLAB_CHECK(reduction >= at::Reduction::None && reduction < at::Reduction::END,
                "binary_cross_entropy_with_logits: ", reduction, " is not a valid value for reduction");
  return gradlab::binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                                   static_cast<gradlab::Reduction>(reduction));
}

namespace nn {
namespace functional {
struct ReLUFuncOptions {
  ReLUFuncOptions& inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  bool inplace_ = false;
};
inline Tensor relu(Tensor x, const ReLUFuncOptions& o = {}) { return o.inplace_ ? x.relu_() : gradlab::relu(x); }
using LeakyReLUFuncOptions = gradlab::nn::LeakyReLUOptions;
inline Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& o = {}) {
  return o.inplace() ? gradlab::leaky_relu_(x, o.negative_slope()) : gradlab::leaky_relu(x, o.negative_slope());
}
inline Tensor softmax(const Tensor& x, int64_t dim) { return gradlab::softmax(x, dim); }
inline Tensor log_softmax(const Tensor& x, int64_t dim) { return gradlab::log_softmax(x, dim); }
// F::softmax(x, F::SoftmaxFuncOptions(1).dtype(torch::kDouble)), as LibTorch's options spell it.
struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  SoftmaxFuncOptions& dim(int64_t d) {
    dim_ = d;
    return *this;
  }
  SoftmaxFuncOptions& dtype(std::optional<ScalarType> t) {
    dtype_ = t;
    return *this;
  }
  const int64_t& dim() const noexcept { return dim_; }
  const std::optional<ScalarType>& dtype() const noexcept { return dtype_; }
  int64_t dim_;
  std::optional<ScalarType> dtype_;
};
struct LogSoftmaxFuncOptions : SoftmaxFuncOptions {
  using SoftmaxFuncOptions::SoftmaxFuncOptions;
};
inline Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) { return gradlab::softmax(x, o.dim(), o.dtype()); }
inline Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return gradlab::log_softmax(x, o.dim(), o.dtype());
}
inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}) {
  return gradlab::linear(input, weight, bias);
}
// The losses with their options (nn/loss.h).
using gradlab::nn::functional::BinaryCrossEntropyFuncOptions;
using gradlab::nn::functional::BinaryCrossEntropyWithLogitsFuncOptions;
using gradlab::nn::functional::CrossEntropyFuncOptions;
using gradlab::nn::functional::MSELossFuncOptions;
using gradlab::nn::functional::NLLLossFuncOptions;
using gradlab::nn::functional::L1LossFuncOptions;
using gradlab::nn::functional::l1_loss;
using gradlab::nn::functional::binary_cross_entropy;
using gradlab::nn::functional::binary_cross_entropy_with_logits;
using gradlab::nn::functional::cross_entropy;
using gradlab::nn::functional::dropout;
using gradlab::nn::functional::DropoutFuncOptions;
using gradlab::nn::functional::mse_loss;
using gradlab::nn::functional::nll_loss;
}  // namespace functional
// The modules (nn/modules.h): `torch::nn::Linear(4, 8)`, `torch::nn::ReLU()(x)`.
using gradlab::nn::AnyModule;
using gradlab::nn::Module;
using gradlab::nn::ModuleHolder;
using gradlab::nn::NamedAnyModule;
using gradlab::nn::FlattenOptions;
using gradlab::nn::LinearOptions;
using gradlab::nn::LogSoftmaxOptions;
using gradlab::nn::ReLUOptions;
using gradlab::nn::SoftmaxOptions;
using gradlab::nn::Flatten;
using gradlab::nn::FlattenImpl;
using gradlab::nn::Functional;
using gradlab::nn::FunctionalImpl;
using gradlab::nn::Identity;
using gradlab::nn::IdentityImpl;
using gradlab::nn::Linear;
using gradlab::nn::LinearImpl;
using gradlab::nn::LogSoftmax;
using gradlab::nn::LogSoftmaxImpl;
using gradlab::nn::LeakyReLU;
using gradlab::nn::Dropout;
using gradlab::nn::ModuleList;
using gradlab::nn::ModuleListImpl;
using gradlab::nn::DropoutImpl;
using gradlab::nn::DropoutOptions;
using gradlab::nn::LeakyReLUImpl;
using gradlab::nn::LeakyReLUOptions;
using gradlab::nn::ReLU;
using gradlab::nn::ReLUImpl;
using gradlab::nn::Sequential;
using gradlab::nn::SequentialImpl;
using gradlab::nn::Sigmoid;
using gradlab::nn::SigmoidImpl;
using gradlab::nn::Softmax;
using gradlab::nn::SoftmaxImpl;
using gradlab::nn::Tanh;
using gradlab::nn::TanhImpl;
namespace init = gradlab::nn::init;
namespace utils = gradlab::nn::utils;
// The loss modules and their options (nn/loss.h).
using gradlab::nn::BCELoss;
using gradlab::nn::BCELossImpl;
using gradlab::nn::BCELossOptions;
using gradlab::nn::BCEWithLogitsLoss;
using gradlab::nn::BCEWithLogitsLossImpl;
using gradlab::nn::BCEWithLogitsLossOptions;
using gradlab::nn::CrossEntropyLoss;
using gradlab::nn::CrossEntropyLossImpl;
using gradlab::nn::CrossEntropyLossOptions;
using gradlab::nn::MSELoss;
using gradlab::nn::L1Loss;
using gradlab::nn::L1LossImpl;
using gradlab::nn::L1LossOptions;
using gradlab::nn::MSELossImpl;
using gradlab::nn::MSELossOptions;
using gradlab::nn::NLLLoss;
using gradlab::nn::NLLLossImpl;
using gradlab::nn::NLLLossOptions;
}  // namespace nn

namespace cuda {
bool is_available();
int64_t device_count();
void synchronize(int64_t device_index = -1);
}  // namespace cuda

}  // namespace torch

// A module type's holder, as LibTorch's macro makes it: TORCH_MODULE(Net)
// turns `struct NetImpl : torch::nn::Module` into the shared handle `Net`.
#define TORCH_MODULE_IMPL(Name, ImplType)                              \
  class Name : public torch::nn::ModuleHolder<ImplType> { /* NOLINT */ \
   public:                                                             \
    using torch::nn::ModuleHolder<ImplType>::ModuleHolder;             \
    using Impl = ImplType;                                             \
  }
#define TORCH_MODULE(Name) TORCH_MODULE_IMPL(Name, Name##Impl)

// LibTorch's checking macros, for code written against LibTorch. Without a
// message TORCH_CHECK says what LibTorch says.
namespace gradlab::detail {
template <class... Args>
std::string torch_check_message(const char* cond, const Args&... args) {
  if constexpr (sizeof...(Args) == 0)
    return str_cat("Expected ", cond, " to be true, but got false.  (Could this error message be improved?  If so, "
                   "please report an enhancement request to PyTorch.)");
  else
    return str_cat(args...);
}
}  // namespace gradlab::detail
#define TORCH_CHECK(cond, ...)                                                                 \
  do {                                                                                         \
    if (!(cond)) ::gradlab::throw_error(::gradlab::detail::torch_check_message(#cond, ##__VA_ARGS__)); \
  } while (0)
#define AT_ERROR(...) ::gradlab::throw_error(::gradlab::str_cat(__VA_ARGS__))
#define TORCH_WARN(...) ::gradlab::warn({__func__, __FILE__, __LINE__}, ::gradlab::str_cat(__VA_ARGS__))

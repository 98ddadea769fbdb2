// The built-in modules: what each computes and how LibTorch prints it.
#include "gradlab/nn/modules.h"

#include <cmath>

#include "gradlab/autograd.h"
#include "gradlab/nn/init.h"
#include "gradlab/ops.h"

namespace gradlab {

// As ATen 1.13's linear: a matrix input with a bias is one addmm
// (AddmmBackward0); anything else is matmul, then the bias added in place
// (so the output is at version 1).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (input.dim() == 2 && bias.defined()) return addmm(bias, input, weight.t());
  Tensor out = matmul(input, weight.t());
  if (bias.defined()) out.add_(bias);
  return out;
}

namespace {
void check_dropout_probability(double p) {
  GRADLAB_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}
// ATen's _dropout on the CPU: a mask drawn in the input's dtype and layout
// order, scaled by 1/(1-p), multiplied in; p == 1 multiplies by a 0-d zero.
Tensor apply_dropout(Tensor& input, double p, bool train, bool inplace) {
  check_dropout_probability(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  Tensor noise;
  if (p == 1) {
    noise = zeros({}, TensorOptions(input.scalar_type()).device(input.device()));
  } else {
    noise = empty(input.sizes(), TensorOptions(input.scalar_type()).device(input.device()));
    noise.bernoulli_(1 - p);
    noise.div_(1 - p);
  }
  return inplace ? input.mul_(noise) : input.mul(noise);
}
}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return apply_dropout(in, p, train, false);
}
Tensor& dropout_(Tensor& input, double p, bool train) {
  apply_dropout(input, p, train, true);
  return input;
}

}  // namespace gradlab

namespace gradlab::nn {

LinearImpl::LinearImpl(const LinearOptions& o) : Module("torch::nn::LinearImpl"), options(o) { reset(); }

void LinearImpl::reset() {
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias())
    bias = register_parameter("bias", empty({options.out_features()}));
  else
    bias = register_parameter("bias", {}, /*requires_grad=*/false);
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const auto fans = init::_calculate_fan_in_and_fan_out(weight);
    const double bound = 1 / std::sqrt(static_cast<double>(fans.first));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) { return linear(input, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << std::boolalpha << "torch::nn::Linear(in_features=" << options.in_features()
     << ", out_features=" << options.out_features() << ", bias=" << options.bias() << ")";
}

Tensor ReLUImpl::forward(Tensor input) { return options.inplace() ? input.relu_() : relu(input); }
void ReLUImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::ReLU(";
  if (options.inplace()) os << std::boolalpha << "inplace=" << options.inplace();
  os << ")";
}

Tensor LeakyReLUImpl::forward(Tensor input) {
  return options.inplace() ? leaky_relu_(input, options.negative_slope()) : leaky_relu(input, options.negative_slope());
}
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << std::boolalpha << "torch::nn::LeakyReLU(negative_slope=" << options.negative_slope();
  if (options.inplace()) os << ", inplace=" << options.inplace();
  os << ")";
}

Tensor TanhImpl::forward(const Tensor& input) { return tanh(input); }
void TanhImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Tanh()"; }
Tensor SigmoidImpl::forward(const Tensor& input) { return sigmoid(input); }
void SigmoidImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Sigmoid()"; }
void IdentityImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Identity()"; }

Tensor SoftmaxImpl::forward(const Tensor& input) { return softmax(input, options.dim()); }
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Softmax(dim=" << options.dim() << ")"; }
Tensor LogSoftmaxImpl::forward(const Tensor& input) { return log_softmax(input, options.dim()); }
void LogSoftmaxImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::LogSoftmax(dim=" << options.dim() << ")";
}

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }
void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "torch::nn::Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

DropoutImpl::DropoutImpl(const DropoutOptions& o) : Module("torch::nn::DropoutImpl"), options(o) {
  check_dropout_probability(options.p());
}
Tensor DropoutImpl::forward(Tensor input) {
  return functional::dropout(std::move(input),
                             functional::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}
void DropoutImpl::pretty_print(std::ostream& os) const {
  os << std::boolalpha << "torch::nn::Dropout(p=" << options.p() << ", inplace=" << options.inplace() << ")";
}

Tensor functional::dropout(Tensor input, const DropoutFuncOptions& o) {
  if (o.inplace()) return dropout_(input, o.p(), o.training());
  return gradlab::dropout(input, o.p(), o.training());
}

void FunctionalImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Functional()"; }

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named) : SequentialImpl() {
  for (const auto& m : named) push_back(m.name, m.module);
}

void SequentialImpl::push_back(std::string name, AnyModule m) {
  register_module(std::move(name), m.ptr());
  modules_.push_back(std::move(m));
}

std::shared_ptr<Module> SequentialImpl::ptr(size_t i) const {
  GRADLAB_CHECK(i < modules_.size(), "Index out of range");
  return modules_[i].ptr();
}

Tensor SequentialImpl::run(const Tensor& input) {
  GRADLAB_CHECK(!is_empty(), "Cannot call forward() on an empty Sequential");
  Tensor x = modules_.front().forward(input);
  for (size_t i = 1; i < modules_.size(); ++i) x = modules_[i].forward(x);
  return x;
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  modules_.push_back(std::move(module));
  register_module(std::to_string(modules_.size() - 1), modules_.back());
}

void ModuleListImpl::insert(size_t index, std::shared_ptr<Module> module) {
  GRADLAB_CHECK(index <= size(), "Index out of range");
  if (index == size()) return push_back(std::move(module));
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), std::move(module));
  replace_module(std::to_string(index), modules_[index]);
  register_module(std::to_string(size() - 1), modules_.back());
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t i) const {
  GRADLAB_CHECK(i < modules_.size(), "Index out of range");
  return modules_[i];
}

void ModuleListImpl::pretty_print(std::ostream& os) const { os << "torch::nn::ModuleList"; }

void SequentialImpl::pretty_print(std::ostream& os) const { os << "torch::nn::Sequential"; }

}  // namespace gradlab::nn

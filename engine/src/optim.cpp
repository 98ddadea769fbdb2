// The optimisers. Each step runs under NoGradGuard (an update is not part of
// any graph) and does LibTorch 1.13's arithmetic in LibTorch's order, through
// the same views: SGD writes through p.data() (the parameter's version does
// not move); Adam, AdamW, RMSprop and Adagrad write into p itself (it does).
#include "gradlab/optim.h"

#include <cmath>
#include <sstream>

#include "gradlab/autograd.h"
#include "gradlab/ops.h"

namespace gradlab::optim {

OptimizerParamState::~OptimizerParamState() = default;
SGDParamState::~SGDParamState() = default;
AdamParamState::~AdamParamState() = default;
RMSpropParamState::~RMSpropParamState() = default;
AdagradParamState::~AdagradParamState() = default;
Optimizer::~Optimizer() = default;

#define GRADLAB_DEFINE_OPTIONS_VIRTUALS(Name)                                                                   \
  std::unique_ptr<OptimizerOptions> Name::clone() const { return std::make_unique<Name>(*this); }           \
  double Name::get_lr() const { return lr(); }                                                              \
  void Name::set_lr(double v) { lr(v); }
GRADLAB_DEFINE_OPTIONS_VIRTUALS(SGDOptions)
GRADLAB_DEFINE_OPTIONS_VIRTUALS(AdamOptions)
GRADLAB_DEFINE_OPTIONS_VIRTUALS(AdamWOptions)
GRADLAB_DEFINE_OPTIONS_VIRTUALS(RMSpropOptions)
GRADLAB_DEFINE_OPTIONS_VIRTUALS(AdagradOptions)
#undef GRADLAB_DEFINE_OPTIONS_VIRTUALS

OptimizerOptions& OptimizerParamGroup::options() {
  GRADLAB_CHECK(has_options(), "parameter group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  GRADLAB_CHECK(has_options(), "parameter group has no options");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  for (const auto& g : param_groups) add_param_group(g);
}

std::string Optimizer::state_key(const Tensor& p) {
  std::ostringstream os;
  os << static_cast<const void*>(p.unsafeGetTensorImpl());
  return os.str();
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  for (const auto& p : group.params()) GRADLAB_CHECK(p.is_leaf(), "can't optimize a non-leaf Tensor");
  OptimizerParamGroup copy(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  for (const auto& p : copy.params())
    GRADLAB_CHECK(state_.count(state_key(p)) == 0, "some parameters appear in more than one parameter group");
  param_groups_.push_back(std::move(copy));
}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  auto& params = param_groups_.at(0).params();
  params.insert(params.end(), parameters.begin(), parameters.end());
}

void Optimizer::zero_grad() {
  for (auto& g : param_groups_)
    for (auto& p : g.params()) {
      if (!p.grad().defined()) continue;
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
}

size_t Optimizer::size() const noexcept {
  warn({__func__, __FILE__, __LINE__}, "Optimizer::size() will be removed in PyTorch 1.6");
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return {};
  autograd::AutoGradMode enable(true);
  return closure();
}

namespace {
// The loop every step shares (run under NoGradGuard, after the closure):
// each parameter that has a gradient, with its group's options.
template <class Options, class Update>
void each_param(std::vector<OptimizerParamGroup>& groups, const Update& update) {
  for (auto& group : groups) {
    const auto& o = static_cast<const Options&>(group.options());
    for (auto& p : group.params())
      if (p.grad().defined()) update(p, o);
  }
}
}  // namespace

// ------------------------------------------------------------------ SGD
SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {
  GRADLAB_CHECK(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  GRADLAB_CHECK(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  GRADLAB_CHECK(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  GRADLAB_CHECK(!defaults.nesterov() || (defaults.momentum() > 0 && defaults.dampening() == 0),
                "Nesterov momentum requires a momentum and zero dampening");
}

Tensor SGD::step(LossClosure closure) {
  autograd::NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  each_param<SGDOptions>(param_groups_, [&](Tensor& p, const SGDOptions& o) {
    Tensor d_p = p.grad().data();
    if (o.weight_decay() != 0) d_p = d_p.add(p.data(), o.weight_decay());
    if (o.momentum() != 0) {
      auto& slot = state_[state_key(p)];
      Tensor buf;
      if (!slot) {
        buf = d_p.clone().detach();
        auto s = std::make_unique<SGDParamState>();
        s->momentum_buffer(buf);
        slot = std::move(s);
      } else {
        buf = static_cast<SGDParamState&>(*slot).momentum_buffer();
        buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
      }
      d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
    }
    p.data().add_(d_p, -1 * o.lr());
  });
  return loss;
}

// ------------------------------------------------------------------ Adam, AdamW
namespace {
template <class Options>
void check_adam_options(const Options& o) {
  GRADLAB_CHECK(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  GRADLAB_CHECK(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  const auto [beta1, beta2] = o.betas();
  GRADLAB_CHECK(0 <= beta1 && beta1 < 1.0, "Invalid beta parameter at index 0: ", beta1);
  GRADLAB_CHECK(0 <= beta2 && beta2 < 1.0, "Invalid beta parameter at index 1: ", beta2);
  GRADLAB_CHECK(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
}

// One parameter's Adam update, after any weight decay: the moments, their
// bias corrections, and p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
template <class Options>
void adam_update(std::unique_ptr<OptimizerParamState>& slot, const Tensor& p, const Tensor& grad, const Options& o) {
  if (!slot) {
    auto s = std::make_unique<AdamParamState>();
    s->exp_avg(zeros_like(p));
    s->exp_avg_sq(zeros_like(p));
    if (o.amsgrad()) s->max_exp_avg_sq(zeros_like(p));
    slot = std::move(s);
  }
  auto& s = static_cast<AdamParamState&>(*slot);
  s.step(s.step() + 1);
  const auto [beta1, beta2] = o.betas();
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(s.step()));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(s.step()));
  s.exp_avg().mul_(beta1).add_(grad, 1 - beta1);
  s.exp_avg_sq().mul_(beta2).add_(grad * grad, 1 - beta2);
  Tensor second = s.exp_avg_sq();
  if (o.amsgrad()) {
    // LibTorch's max_out(max, exp_avg_sq, max): the state read second (and refused
    // as argument #1 if amsgrad was turned on after the first step).
    s.max_exp_avg_sq().copy_(s.exp_avg_sq().maximum(s.max_exp_avg_sq()));
    second = s.max_exp_avg_sq();
  }
  Tensor denom = (second.sqrt() / std::sqrt(bias_correction2)).add_(o.eps());
  const double step_size = o.lr() / bias_correction1;
  p.add_(s.exp_avg() / denom, -step_size);
}
}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
  check_adam_options(defaults);
}

Tensor Adam::step(LossClosure closure) {
  autograd::NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  each_param<AdamOptions>(param_groups_, [&](Tensor& p, const AdamOptions& o) {
    Tensor grad = p.grad();
    if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
    adam_update(state_[state_key(p)], p, grad, o);
  });
  return loss;
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
  check_adam_options(defaults);
}

Tensor AdamW::step(LossClosure closure) {
  autograd::NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  each_param<AdamWOptions>(param_groups_, [&](Tensor& p, const AdamWOptions& o) {
    // Decoupled weight decay: the parameter shrinks before the Adam step.
    if (o.weight_decay() != 0) p.mul_(1 - o.lr() * o.weight_decay());
    adam_update(state_[state_key(p)], p, p.grad(), o);
  });
  return loss;
}

// ------------------------------------------------------------------ RMSprop
RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {
  GRADLAB_CHECK(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  GRADLAB_CHECK(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  GRADLAB_CHECK(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  GRADLAB_CHECK(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  GRADLAB_CHECK(defaults.alpha() >= 0, "Invalid alpha value: ", defaults.alpha());
}

// square_avg = alpha square_avg + (1 - alpha) g²; the step divides by its
// root plus eps (centred: by the root of its variance about grad_avg).
Tensor RMSprop::step(LossClosure closure) {
  autograd::NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  each_param<RMSpropOptions>(param_groups_, [&](Tensor& p, const RMSpropOptions& o) {
    auto& slot = state_[state_key(p)];
    if (!slot) {
      auto s = std::make_unique<RMSpropParamState>();
      s->square_avg(zeros_like(p));
      if (o.momentum() > 0) s->momentum_buffer(zeros_like(p));
      if (o.centered()) s->grad_avg(zeros_like(p));
      slot = std::move(s);
    }
    auto& s = static_cast<RMSpropParamState&>(*slot);
    s.step(s.step() + 1);
    Tensor grad = p.grad();
    if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
    s.square_avg().mul_(o.alpha()).add_(grad * grad, 1 - o.alpha());
    Tensor avg;
    if (o.centered()) {
      s.grad_avg().mul_(o.alpha()).add_(grad, 1 - o.alpha());
      avg = s.square_avg().sub(s.grad_avg() * s.grad_avg()).sqrt_().add_(o.eps());
    } else {
      avg = s.square_avg().sqrt().add_(o.eps());
    }
    if (o.momentum() > 0) {
      s.momentum_buffer().mul_(o.momentum()).add_(grad / avg);
      p.add_(s.momentum_buffer(), -o.lr());
    } else {
      p.add_(grad / avg, -o.lr());
    }
  });
  return loss;
}

// ------------------------------------------------------------------ Adagrad
Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {
  GRADLAB_CHECK(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  GRADLAB_CHECK(defaults.lr_decay() >= 0, "Invalid lr_decay value: ", defaults.lr_decay());
  GRADLAB_CHECK(defaults.weight_decay() >= 0, "Invalid weight_decay value: ", defaults.weight_decay());
  GRADLAB_CHECK(defaults.initial_accumulator_value() >= 0,
                "Invalid initial_accumulator_value value: ", defaults.initial_accumulator_value());
  GRADLAB_CHECK(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  for (const auto& group : param_groups_)
    for (const auto& p : group.params()) state_of(p, defaults);
}

// Made on first use for a parameter added after the optimiser was built
// (where LibTorch's internal assertion fails).
AdagradParamState& Adagrad::state_of(const Tensor& p, const AdagradOptions& o) {
  auto& slot = state_[state_key(p)];
  if (!slot) {
    auto s = std::make_unique<AdagradParamState>();
    s->sum(full_like(p.data(), o.initial_accumulator_value()));
    slot = std::move(s);
  }
  return static_cast<AdagradParamState&>(*slot);
}

// sum += g²; p -= clr g / (sqrt(sum) + eps), clr = lr / (1 + (step - 1) lr_decay).
Tensor Adagrad::step(LossClosure closure) {
  autograd::NoGradGuard no_grad;
  Tensor loss = run_closure(closure);
  each_param<AdagradOptions>(param_groups_, [&](Tensor& p, const AdagradOptions& o) {
    AdagradParamState& s = state_of(p, o);
    s.step(s.step() + 1);
    Tensor grad = p.grad();
    if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
    const double clr = o.lr() / (1 + static_cast<double>(s.step() - 1) * o.lr_decay());
    s.sum().add_(grad * grad);
    const Tensor std = s.sum().sqrt().add_(o.eps());
    p.add_(grad / std, -clr);
  });
  return loss;
}

// ------------------------------------------------------------------ schedulers
LRScheduler::~LRScheduler() = default;

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::step() {
  const std::vector<double> lrs = get_lrs();
  auto& groups = optimizer_.param_groups();
  GRADLAB_CHECK(lrs.size() == groups.size(), "Number of learning rates not equal to the number of param groups\n",
                "Number of learning rates given: ", lrs.size(), "\nNumber of param groups: ", groups.size());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  ++step_count_;
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (step_count_ != 0 && step_count_ % step_size_ == 0)
    for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

}  // namespace gradlab::optim

// torch::optim as LibTorch 1.13 has it: parameter groups with options,
// per-parameter state, zero_grad, step (with an optional closure that
// recomputes the loss), and SGD, Adam and AdamW doing the same arithmetic in
// the same order as LibTorch's, so a seeded training loop ends on the same
// weights.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gradlab/arg.h"
#include "gradlab/tensor.h"

namespace gradlab::optim {

class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
};
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
};

// The built-in options and states define their virtual functions in
// optim.cpp, so that their vtables (and clone's unique_ptr machinery) are
// compiled once in the library, not in every student's file.
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState();
};

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT: implicit
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& o)
      : params_(o.params_), options_(o.options_ ? o.options_->clone() : nullptr) {}
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;
  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  Optimizer(std::vector<Tensor> parameters, std::unique_ptr<OptimizerOptions> defaults)
      : Optimizer(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(parameters))}, std::move(defaults)) {}
  Optimizer(const Optimizer&) = delete;
  Optimizer(Optimizer&&) = default;
  virtual ~Optimizer();

  void add_param_group(const OptimizerParamGroup& group);
  void add_parameters(const std::vector<Tensor>& parameters);
  // Runs the closure (with grad mode on) if there is one, updates every
  // parameter that has a gradient, and returns the closure's loss.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  // LibTorch 1.13's: gradients are detached and zeroed, not dropped.
  void zero_grad();

  const std::vector<Tensor>& parameters() const noexcept { return param_groups_.at(0).params(); }
  std::vector<Tensor>& parameters() noexcept { return param_groups_.at(0).params(); }
  size_t size() const noexcept;
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  // Keyed by the parameter's identity, as LibTorch keys it.
  using State = std::unordered_map<std::string, std::unique_ptr<OptimizerParamState>>;
  State& state() noexcept { return state_; }
  const State& state() const noexcept { return state_; }

 protected:
  static std::string state_key(const Tensor& p);
  // Runs the closure under grad mode and returns its loss (undefined without one).
  static Tensor run_closure(const LossClosure& closure);
  std::vector<OptimizerParamGroup> param_groups_;
  State state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

// The three virtual functions each built-in options struct defines in optim.cpp.
#define GRADLAB_OPTIONS_VIRTUALS                                      \
  std::unique_ptr<OptimizerOptions> clone() const override;           \
  double get_lr() const override;                                     \
  void set_lr(double lr) override

struct SGDOptions : OptimizerOptions {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_OPTIONS_VIRTUALS;
  GRADLAB_ARG(double, lr);
  GRADLAB_ARG(double, momentum) = 0;
  GRADLAB_ARG(double, dampening) = 0;
  GRADLAB_ARG(double, weight_decay) = 0;
  GRADLAB_ARG(bool, nesterov) = false;
};
struct SGDParamState : OptimizerParamState {
  ~SGDParamState() override;
  GRADLAB_ARG(Tensor, momentum_buffer);
};
class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

using betas_t = std::tuple<double, double>;
// Adam's and AdamW's options differ only in weight_decay's default.
#define GRADLAB_ADAM_OPTIONS(Name, default_weight_decay)                                     \
  struct Name : OptimizerOptions {                                                         \
    Name(double lr = 1e-3) : lr_(lr) {} /* NOLINT: implicit, as LibTorch's */               \
    GRADLAB_OPTIONS_VIRTUALS;                                                              \
    GRADLAB_ARG(double, lr);                                                               \
    GRADLAB_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);                             \
    GRADLAB_ARG(double, eps) = 1e-8;                                                       \
    GRADLAB_ARG(double, weight_decay) = default_weight_decay;                              \
    GRADLAB_ARG(bool, amsgrad) = false;                                                    \
  }
GRADLAB_ADAM_OPTIONS(AdamOptions, 0);
GRADLAB_ADAM_OPTIONS(AdamWOptions, 1e-2);
#undef GRADLAB_ADAM_OPTIONS
struct AdamParamState : OptimizerParamState {
  ~AdamParamState() override;
  GRADLAB_ARG(int64_t, step) = 0;
  GRADLAB_ARG(Tensor, exp_avg);
  GRADLAB_ARG(Tensor, exp_avg_sq);
  GRADLAB_ARG(Tensor, max_exp_avg_sq);
};
using AdamWParamState = AdamParamState;

class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  Adam(std::vector<Tensor> params, AdamOptions defaults = {})
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};
class AdamW : public Optimizer {
 public:
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {})
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

struct RMSpropOptions : OptimizerOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_OPTIONS_VIRTUALS;
  GRADLAB_ARG(double, lr);
  GRADLAB_ARG(double, alpha) = 0.99;
  GRADLAB_ARG(double, eps) = 1e-8;
  GRADLAB_ARG(double, weight_decay) = 0;
  GRADLAB_ARG(double, momentum) = 0;
  GRADLAB_ARG(bool, centered) = false;
};
struct RMSpropParamState : OptimizerParamState {
  ~RMSpropParamState() override;
  GRADLAB_ARG(int64_t, step) = 0;
  GRADLAB_ARG(Tensor, square_avg);
  GRADLAB_ARG(Tensor, momentum_buffer);
  GRADLAB_ARG(Tensor, grad_avg);
};
// Writes into p itself, as LibTorch 1.13's (the parameter's version moves).
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

struct AdagradOptions : OptimizerOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_OPTIONS_VIRTUALS;
  GRADLAB_ARG(double, lr);
  GRADLAB_ARG(double, lr_decay) = 0;
  GRADLAB_ARG(double, weight_decay) = 0;
  GRADLAB_ARG(double, initial_accumulator_value) = 0;
  GRADLAB_ARG(double, eps) = 1e-10;
};
struct AdagradParamState : OptimizerParamState {
  ~AdagradParamState() override;
  GRADLAB_ARG(int64_t, step) = 0;
  GRADLAB_ARG(Tensor, sum);
};
// Its state is made when it is built (the sum starts at
// initial_accumulator_value), and it writes into p itself (the version moves).
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;

 private:
  AdagradParamState& state_of(const Tensor& p, const AdagradOptions& o);
};

// Learning-rate schedules: step() sets every group's lr to get_lrs().
// LibTorch's StepLR multiplies by gamma at the steps whose count (before
// the step) is a non-zero multiple of step_size: after step_size + 1 calls.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}
  virtual ~LRScheduler();
  void step();

 protected:
  virtual std::vector<double> get_lrs() = 0;
  std::vector<double> get_current_lrs() const;
  unsigned step_count_{};

 private:
  Optimizer& optimizer_;
};
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, unsigned step_size, double gamma = 0.1)
      : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {}

 private:
  std::vector<double> get_lrs() override;
  const unsigned step_size_;
  const double gamma_;
};

}  // namespace gradlab::optim
#undef GRADLAB_OPTIONS_VIRTUALS

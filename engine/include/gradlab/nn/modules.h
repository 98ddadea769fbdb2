// The modules a course builds a network from, as LibTorch 1.13 has them:
// Linear, the activations, Functional and Sequential. Each XImpl is the
// module; X (TORCH_MODULE's holder) is what students write.
#pragma once
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "gradlab/arg.h"
#include "gradlab/nn/module.h"

namespace gradlab {
// y = x W^T + b, recorded as ATen's linear records it (addmm for a matrix).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});
}  // namespace gradlab

namespace gradlab::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  GRADLAB_ARG(int64_t, in_features);
  GRADLAB_ARG(int64_t, out_features);
  GRADLAB_ARG(bool, bias) = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  // Registers fresh parameters and initialises them (reset_parameters).
  void reset();
  // Kaiming-uniform weight and uniform bias, bound 1/sqrt(in_features), from
  // the global generator: the same numbers as LibTorch after the same seed.
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;
};

struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_ARG(bool, inplace);
};
class ReLUImpl : public Module {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : Module("torch::nn::ReLUImpl"), options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  ReLUOptions options;
};

struct LeakyReLUOptions {
  GRADLAB_ARG(double, negative_slope) = 1e-2;
  GRADLAB_ARG(bool, inplace) = false;
};
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("torch::nn::LeakyReLUImpl"), options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_ARG(double, p);
  GRADLAB_ARG(bool, inplace) = false;
};
namespace functional {
struct DropoutFuncOptions {
  GRADLAB_ARG(double, p) = 0.5;
  GRADLAB_ARG(bool, training) = true;
  GRADLAB_ARG(bool, inplace) = false;
};
Tensor dropout(Tensor input, const DropoutFuncOptions& options = {});
}  // namespace functional
// Dropout while training (the mask is fresh every forward), the identity
// after eval().
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};

// Modules without options whose forward is one function of the input.
class TanhImpl : public Module {
 public:
  TanhImpl() : Module("torch::nn::TanhImpl") {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
};
class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("torch::nn::SigmoidImpl") {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
};
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("torch::nn::IdentityImpl") {}
  Tensor forward(const Tensor& input) { return input; }
  void pretty_print(std::ostream& os) const override;
};

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_ARG(int64_t, dim);
};
struct LogSoftmaxOptions {
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  GRADLAB_ARG(int64_t, dim);
};
class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("torch::nn::SoftmaxImpl"), options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  SoftmaxOptions options;
};
class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : Module("torch::nn::LogSoftmaxImpl"), options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  LogSoftmaxOptions options;
};

struct FlattenOptions {
  GRADLAB_ARG(int64_t, start_dim) = 1;
  GRADLAB_ARG(int64_t, end_dim) = -1;
};
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("torch::nn::FlattenImpl"), options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  FlattenOptions options;
};

// Wraps a function (with any extra arguments bound after the input) as a
// module, for Sequential: `Functional(torch::relu)`.
class FunctionalImpl : public Module {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function fn) : Module("torch::nn::FunctionalImpl"), fn_(std::move(fn)) {}
  template <class F, class Arg, class... Args>
  FunctionalImpl(F fn, Arg&& arg, Args&&... args)
      : FunctionalImpl(Function([fn, arg, args...](Tensor input) { return fn(input, arg, args...); })) {}
  Tensor forward(Tensor input) { return fn_(std::move(input)); }
  void pretty_print(std::ostream& os) const override;

 private:
  Function fn_;
};

// Any module whose forward takes and returns one tensor, type-erased: what
// Sequential keeps.
class AnyModule {
 public:
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  AnyModule(std::shared_ptr<M> m)  // NOLINT: implicit, as LibTorch's
      : module_(m), forward_([p = m.get()](const Tensor& x) -> Tensor { return p->forward(x); }) {
    static_assert(detail::has_plain_forward<M>,
                  "Can only store module with a forward() method that has a non-templatized argument type (as "
                  "LibTorch says): a Sequential cannot hold a Sequential, or a module whose forward is overloaded");
  }
  template <class M>
  AnyModule(const ModuleHolder<M>& holder) : AnyModule(holder.ptr()) {}  // NOLINT: implicit
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>, class = void>
  AnyModule(M&& m) : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(m))) {}  // NOLINT: implicit
  Tensor forward(const Tensor& x) const { return forward_(x); }
  const std::shared_ptr<Module>& ptr() const { return module_; }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
};

struct NamedAnyModule {
  template <class M>
  NamedAnyModule(std::string name, M&& module) : name(std::move(name)), module(std::forward<M>(module)) {}
  std::string name;
  AnyModule module;
};

// Runs its modules one after the other; they are registered as "0", "1", ...
// unless given names.
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("torch::nn::SequentialImpl") {}
  template <class First, class... Rest,
            class = std::enable_if_t<sizeof...(Rest) != 0 || !std::is_same_v<std::decay_t<First>, SequentialImpl>>>
  explicit SequentialImpl(First&& first, Rest&&... rest) : SequentialImpl() {
    push_back(AnyModule(std::forward<First>(first)));
    (push_back(AnyModule(std::forward<Rest>(rest))), ...);
  }
  SequentialImpl(std::initializer_list<NamedAnyModule> named);

  void push_back(AnyModule m) { push_back(std::to_string(modules_.size()), std::move(m)); }
  void push_back(std::string name, AnyModule m);
  template <class R = Tensor>
  R forward(const Tensor& input) {
    return run(input);
  }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  std::shared_ptr<Module> ptr(size_t i) const;
  std::shared_ptr<Module> operator[](size_t i) const { return ptr(i); }
  template <class T>
  T& at(size_t i) {
    const std::shared_ptr<Module> p = ptr(i);
    T* m = p->as<T>();
    GRADLAB_CHECK(m != nullptr, "Attempted to cast module of type ", p->name(), " to type ", type_name(typeid(T)));
    return *m;
  }
  std::vector<AnyModule>::const_iterator begin() const { return modules_.begin(); }
  std::vector<AnyModule>::const_iterator end() const { return modules_.end(); }
  void pretty_print(std::ostream& os) const override;

 private:
  Tensor run(const Tensor& input);
  std::vector<AnyModule> modules_;
};

// A list of modules, registered as "0", "1", ... in order; it has no
// forward: a network iterates it (`for (const auto& m : *layers)`).
class ModuleListImpl : public Module {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::iterator;
  using ConstIterator = std::vector<std::shared_ptr<Module>>::const_iterator;
  ModuleListImpl() : Module("torch::nn::ModuleListImpl") {}
  template <class... Modules, class = std::enable_if_t<(sizeof...(Modules) > 0)>>
  explicit ModuleListImpl(Modules&&... modules) : ModuleListImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  void push_back(std::shared_ptr<Module> module);
  template <class M>
  void push_back(const ModuleHolder<M>& holder) {
    push_back(std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void push_back(M&& module) {
    push_back(std::static_pointer_cast<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }
  template <class M>
  void push_back(std::shared_ptr<M> module) {
    push_back(std::static_pointer_cast<Module>(std::move(module)));
  }
  template <class Container>
  void extend(const Container& container) {
    for (const auto& m : container) push_back(m);
  }
  // LibTorch 1.13 renumbers after an insert by re-registering the name of
  // the insertion point only, so the registered children (what printing and
  // parameters() see) keep the old modules at the later names: copied as is.
  void insert(size_t index, std::shared_ptr<Module> module);
  template <class M>
  void insert(size_t index, const ModuleHolder<M>& holder) {
    insert(index, std::static_pointer_cast<Module>(holder.ptr()));
  }
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<M>>>>
  void insert(size_t index, M&& module) {
    insert(index, std::static_pointer_cast<Module>(std::make_shared<std::decay_t<M>>(std::forward<M>(module))));
  }

  Iterator begin() { return modules_.begin(); }
  Iterator end() { return modules_.end(); }
  ConstIterator begin() const { return modules_.begin(); }
  ConstIterator end() const { return modules_.end(); }
  template <class T>
  T& at(size_t i) {
    T* m = ptr(i)->as<T>();
    GRADLAB_CHECK(m != nullptr, "Unable to cast module[", i, "] to ", type_name(typeid(T)));
    return *m;
  }
  std::shared_ptr<Module> ptr(size_t i) const;
  template <class T>
  std::shared_ptr<T> ptr(size_t i) const {
    return std::dynamic_pointer_cast<T>(ptr(i));
  }
  std::shared_ptr<Module> operator[](size_t i) const { return ptr(i); }
  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  void pretty_print(std::ostream& os) const override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

#define GRADLAB_MODULE(Name)                                 \
  class Name : public ::gradlab::nn::ModuleHolder<Name##Impl> { \
   public:                                                   \
    using ::gradlab::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }
GRADLAB_MODULE(Linear);
GRADLAB_MODULE(ReLU);
GRADLAB_MODULE(LeakyReLU);
GRADLAB_MODULE(Dropout);
GRADLAB_MODULE(Tanh);
GRADLAB_MODULE(Sigmoid);
GRADLAB_MODULE(Identity);
GRADLAB_MODULE(Softmax);
GRADLAB_MODULE(LogSoftmax);
GRADLAB_MODULE(Flatten);
GRADLAB_MODULE(Functional);
GRADLAB_MODULE(ModuleList);
// Sequential's holder also takes the named form: Sequential({{"fc", Linear(2, 3)}, ...}).
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() = default;
  Sequential(std::initializer_list<NamedAnyModule> named)  // NOLINT: implicit, as LibTorch's
      : ModuleHolder(std::make_shared<SequentialImpl>(named)) {}
};

}  // namespace gradlab::nn
#undef GRADLAB_MODULE

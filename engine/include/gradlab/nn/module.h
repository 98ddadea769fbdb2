// torch::nn::Module as LibTorch 1.13 has it: a tree of named submodules, each
// owning named parameters (tensors that require grad) and buffers, in the
// order they were registered. parameters() walks the tree in that order, so an
// optimiser built from it sees the same tensors, in the same order, as
// LibTorch's. ModuleHolder is LibTorch's shared-pointer wrapper
// (`torch::nn::Linear` holds a `LinearImpl`), made by TORCH_MODULE.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "gradlab/nn/ordered_dict.h"
#include "gradlab/tensor.h"

namespace gradlab::nn {

template <class Contained>
class ModuleHolder;

namespace detail {
struct ModuleHolderIndicator {};
template <class T>
inline constexpr bool is_module_holder = std::is_base_of_v<ModuleHolderIndicator, std::decay_t<T>>;
template <class T, class Contained>
inline constexpr bool is_module_holder_of = std::is_base_of_v<ModuleHolder<Contained>, std::decay_t<T>>;
// LibTorch calls a holder only when its module has one forward that is not a
// template (it takes &M::forward): Sequential's, or an overloaded one, is not.
template <class M, class = void>
inline constexpr bool has_plain_forward = false;
template <class M>
inline constexpr bool has_plain_forward<M, std::void_t<decltype(&M::forward)>> = true;
}  // namespace detail

// A type's demangled name, gradlab's own classes named as the facade names them (torch::nn::...).
std::string type_name(const std::type_info& type);

class Module : public std::enable_shared_from_this<Module> {
 public:
  using ModuleApplyFunction = std::function<void(Module&)>;
  using NamedModuleApplyFunction = std::function<void(const std::string&, Module&)>;

  explicit Module(std::string name) : name_(std::move(name)) {}
  Module() = default;
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;
  virtual ~Module() = default;

  // The class's name, demangled (LibTorch's built-in modules give their own).
  const std::string& name() const noexcept;

  void apply(const ModuleApplyFunction& fn);
  void apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix = {});

  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& name_prefix = {},
                                                                 bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> children() const { return children_.values(); }
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const { return children_; }

  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }

  // Moves or converts every parameter in place (set_data: the tensors the
  // caller holds, and an optimiser built before, see the new data).
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);

  // LibTorch 1.13's default zeroes the gradients in place; set_to_none drops them.
  virtual void zero_grad(bool set_to_none = false);

  // `module.as<Linear>()` or `module.as<LinearImpl>()`: the module as that
  // type, or null when it is another.
  template <class M>
  auto* as() noexcept {
    if constexpr (detail::is_module_holder<M>)
      return dynamic_cast<typename M::ContainedType*>(this);
    else
      return dynamic_cast<M*>(this);
  }
  template <class M>
  const auto* as() const noexcept {
    return const_cast<Module*>(this)->as<M>();
  }

  virtual void pretty_print(std::ostream& os) const;

  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    check_child_name(name);
    return std::dynamic_pointer_cast<M>(children_.insert(std::move(name), std::move(module)));
  }
  template <class M>
  std::shared_ptr<M> register_module(std::string name, ModuleHolder<M> holder) {
    return register_module(std::move(name), holder.ptr());
  }
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    return std::dynamic_pointer_cast<M>(children_[name] = std::move(module));
  }
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, ModuleHolder<M> holder) {
    return replace_module(name, holder.ptr());
  }
  void unregister_module(const std::string& name);

 protected:
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};

 private:
  friend std::ostream& operator<<(std::ostream& os, const Module& m);
  static void check_child_name(const std::string& name);
  OrderedDict<std::string, Tensor> named_tensors(OrderedDict<std::string, Tensor> Module::*dict, bool recurse) const;
  void pretty_print_recursive(std::ostream& os, const std::string& indentation) const;
  template <class Fn>
  void to_impl(const Fn& convert);

  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  mutable std::optional<std::string> name_;
  bool is_training_ = true;
};

// Prints the module and its submodules, one per line, as LibTorch does.
std::ostream& operator<<(std::ostream& os, const Module& m);

template <class Contained>
class ModuleHolder : detail::ModuleHolderIndicator {
 public:
  using ContainedType = Contained;

  // A default-constructed holder holds a default-constructed module, where
  // the module has a default constructor; `Linear fc{nullptr}` holds none.
  ModuleHolder() : impl_(default_construct()) {}
  ModuleHolder(std::nullptr_t) : impl_(nullptr) {}  // NOLINT: implicit, as LibTorch's
  template <class Head, class... Tail,
            class = std::enable_if_t<sizeof...(Tail) != 0 || !(std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                                               std::is_convertible_v<Head, std::shared_ptr<Contained>> ||
                                                               detail::is_module_holder_of<Head, Contained>)>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT: implicit

  explicit operator bool() const noexcept { return !is_empty(); }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  const std::shared_ptr<Contained>& ptr() const {
    check_not_empty();
    return impl_;
  }
  Contained* get() {
    check_not_empty();
    return impl_.get();
  }
  const Contained* get() const {
    check_not_empty();
    return impl_.get();
  }
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    static_assert(detail::has_plain_forward<Contained>,
                  "LibTorch cannot call this holder: its module's forward() is a template or overloaded (as "
                  "Sequential's is). Call holder->forward(...) instead.");
    return get()->forward(std::forward<Args>(args)...);
  }
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  std::shared_ptr<Contained> impl_;

 private:
  void check_not_empty() const { GRADLAB_CHECK(!is_empty(), "Accessing empty ModuleHolder"); }
  static std::shared_ptr<Contained> default_construct() {
    static_assert(std::is_default_constructible_v<Contained>,
                  "this module has no default constructor: give it its arguments, or `= nullptr` for an empty holder");
    return std::make_shared<Contained>();
  }
};

template <class M>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<M>& holder) {
  return os << *holder;
}

}  // namespace gradlab::nn

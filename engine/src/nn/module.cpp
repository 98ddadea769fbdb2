// The module tree: registration, the walks that give parameters() its order,
// training mode, moving, zeroing and printing.
#include "gradlab/nn/module.h"

#include <typeinfo>

#include "gradlab/autograd.h"
#include "gradlab/function.h"  // demangle

namespace gradlab::nn {

namespace {
std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}
}  // namespace

std::string type_name(const std::type_info& type) {
  std::string n = autograd::demangle(type.name());
  const std::string ours = "gradlab::nn::";
  if (n.rfind(ours, 0) == 0) n = "torch::nn::" + n.substr(ours.size());
  return n;
}

const std::string& Module::name() const noexcept {
  if (!name_) name_ = type_name(typeid(*this));
  return *name_;
}

void Module::check_child_name(const std::string& name) {
  GRADLAB_CHECK(!name.empty(), "Submodule name must not be empty");
  GRADLAB_CHECK(name.find('.') == std::string::npos, "Submodule name must not contain a dot (got '", name, "')");
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  GRADLAB_CHECK(!name.empty(), "Parameter name must not be empty");
  GRADLAB_CHECK(name.find('.') == std::string::npos, "Parameter name must not contain a dot (got '", name, "')");
  if (!tensor.defined()) {
    if (requires_grad)
      warn({__func__, __FILE__, __LINE__},
           "An undefined tensor cannot require grad. Ignoring the `requires_grad=true` function parameter.");
  } else {
    tensor.set_requires_grad(requires_grad);
  }
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  GRADLAB_CHECK(!name.empty(), "Buffer name must not be empty");
  GRADLAB_CHECK(name.find('.') == std::string::npos, "Buffer name must not contain a dot (got '", name, "')");
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::unregister_module(const std::string& name) {
  GRADLAB_CHECK(children_.contains(name), "No Module with name `", name, "` is registered");
  children_.erase(name);
}

// Pre-order: the module, then each child's subtree in registration order.
void Module::apply(const ModuleApplyFunction& fn) {
  fn(*this);
  for (auto& child : children_) child.value()->apply(fn);
}
void Module::apply(const NamedModuleApplyFunction& fn, const std::string& name_prefix) {
  fn(name_prefix, *this);
  for (auto& child : children_) child.value()->apply(fn, join_name(name_prefix, child.key()));
}

// The defined tensors of one of a module's dicts (parameters_ or buffers_),
// its own or its whole subtree's, named by their path.
OrderedDict<std::string, Tensor> Module::named_tensors(OrderedDict<std::string, Tensor> Module::*dict,
                                                       bool recurse) const {
  OrderedDict<std::string, Tensor> r;
  auto own = [&r, dict](const std::string& prefix, const Module& m) {
    for (const auto& t : m.*dict)
      if (t.value().defined()) r.insert(join_name(prefix, t.key()), t.value());
  };
  if (!recurse) {
    own("", *this);
    return r;
  }
  const_cast<Module*>(this)->apply([&own](const std::string& prefix, Module& m) { own(prefix, m); });
  return r;
}
OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  return named_tensors(&Module::parameters_, recurse);
}
std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }
OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  return named_tensors(&Module::buffers_, recurse);
}
std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& name_prefix,
                                                                       bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> r;
  // The root is included only when it is owned by a shared_ptr (LibTorch
  // raises otherwise, since it hands out shared pointers to it).
  if (include_self) {
    std::shared_ptr<const Module> self = weak_from_this().lock();
    GRADLAB_CHECK(self != nullptr,
                  "It looks like you attempted to retrieve your top-level module as a shared_ptr, but it is not "
                  "stored in a shared_ptr. Use std::make_shared<",
                  name(), "> instead of creating your module on the stack, or alternatively do not try to access "
                  "your top-level module at all by passing /*include_self=*/false to modules() or named_modules()");
    r.insert(name_prefix, std::const_pointer_cast<Module>(self));
  }
  std::function<void(const std::string&, const Module&)> walk = [&](const std::string& prefix, const Module& m) {
    for (const auto& child : m.children_) {
      const std::string qualified = join_name(prefix, child.key());
      r.insert(qualified, child.value());
      walk(qualified, *child.value());
    }
  };
  walk(name_prefix, *this);
  return r;
}
std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules({}, include_self).values();
}

void Module::train(bool on) {
  for (auto& child : children_) child.value()->train(on);
  is_training_ = on;
}

// The module and every submodule: parameters keep their identity (set_data),
// buffers are replaced.
template <class Fn>
void Module::to_impl(const Fn& convert) {
  apply([&convert](Module& m) {
    for (auto& p : m.parameters_)
      if (p.value().defined()) p.value().set_data(convert(p.value()));
    for (auto& b : m.buffers_)
      if (b.value().defined()) b.value() = convert(b.value());
  });
}
void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  to_impl([&](const Tensor& t) { return t.data().to(device, dtype, non_blocking); });
}
void Module::to(ScalarType dtype, bool non_blocking) {
  to_impl([&](const Tensor& t) { return t.data().to(dtype, non_blocking); });
}
void Module::to(Device device, bool non_blocking) {
  to_impl([&](const Tensor& t) { return t.data().to(device, non_blocking); });
}

void Module::zero_grad(bool set_to_none) {
  for (auto& child : children_) child.value()->zero_grad(set_to_none);
  for (auto& p : parameters_) {
    if (!p.value().defined()) continue;
    Tensor& grad = p.value().mutable_grad();
    if (!grad.defined()) continue;
    grad = grad.detach();
    if (set_to_none)
      grad.reset();
    else
      grad.zero_();
  }
}

void Module::pretty_print(std::ostream& os) const { os << name(); }

void Module::pretty_print_recursive(std::ostream& os, const std::string& indentation) const {
  pretty_print(os);
  if (children_.is_empty()) return;
  os << "(\n";
  const std::string next = indentation + "  ";
  for (const auto& child : children_) {
    os << next << "(" << child.key() << "): ";
    child.value()->pretty_print_recursive(os, next);
    os << '\n';
  }
  os << indentation << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.pretty_print_recursive(os, "");
  return os;
}

}  // namespace gradlab::nn

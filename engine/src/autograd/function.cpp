// Custom functions' context and IValue.
#include "gradlab/function.h"

#include "ops/ops_internal.h"

namespace gradlab::autograd {

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string r = status == 0 && d ? d : name;
  std::free(d);
  return r;
}

namespace {
[[noreturn]] void bad_ivalue(const char* want) { throw Error(str_cat("IValue does not hold a ", want)); }
}  // namespace
IValue::IValue() = default;
IValue::IValue(double v) : v_(v) {}
IValue::IValue(int v) : v_(static_cast<int64_t>(v)) {}
IValue::IValue(int64_t v) : v_(v) {}
IValue::IValue(bool v) : v_(v) {}
IValue::IValue(std::string v) : v_(std::move(v)) {}
IValue::IValue(const char* v) : v_(std::string(v)) {}
IValue::IValue(Tensor v) : v_(std::move(v)) {}
IValue::IValue(const IValue&) = default;
IValue::IValue(IValue&&) noexcept = default;
IValue& IValue::operator=(const IValue&) = default;
IValue& IValue::operator=(IValue&&) noexcept = default;
IValue::~IValue() = default;
bool IValue::isDouble() const { return std::holds_alternative<double>(v_); }
bool IValue::isInt() const { return std::holds_alternative<int64_t>(v_); }
bool IValue::isTensor() const { return std::holds_alternative<Tensor>(v_); }

double IValue::toDouble() const {
  if (auto* d = std::get_if<double>(&v_)) return *d;
  if (auto* i = std::get_if<int64_t>(&v_)) return static_cast<double>(*i);
  bad_ivalue("number");
}
int64_t IValue::toInt() const {
  if (auto* i = std::get_if<int64_t>(&v_)) return *i;
  bad_ivalue("int");
}
bool IValue::toBool() const {
  if (auto* b = std::get_if<bool>(&v_)) return *b;
  bad_ivalue("bool");
}
const std::string& IValue::toStringRef() const {
  if (auto* s = std::get_if<std::string>(&v_)) return *s;
  bad_ivalue("string");
}
Tensor IValue::toTensor() const {
  if (auto* t = std::get_if<Tensor>(&v_)) return *t;
  bad_ivalue("Tensor");
}

AutogradContext::AutogradContext() = default;
AutogradContext::~AutogradContext() = default;

void AutogradContext::release() {
  for (auto& s : saved_) s.reset_data();
  released_ = true;
}

CppNodeBase::CppNodeBase() { takes_undefined_grads_ = true; }
CppNodeBase::~CppNodeBase() = default;
void CppNodeBase::release_variables() { ctx_.release(); }

void AutogradContext::commit_saved(const variable_list& outputs) {
  saved_.clear();
  for (const Tensor& t : to_save_) {
    bool is_output = false;
    for (const Tensor& o : outputs)
      if (t.defined() && o.defined() && t.unsafeGetTensorImpl()->storage == o.unsafeGetTensorImpl()->storage &&
          t.sizes().equals(o.sizes()))
        is_output = true;
    // Outputs are saved by the header that carries the history.
    const Tensor* src = &t;
    for (const Tensor& o : outputs)
      if (is_output && o.defined() && t.unsafeGetTensorImpl()->storage == o.unsafeGetTensorImpl()->storage) src = &o;
    saved_.emplace_back(*src, is_output);
  }
  to_save_.clear();
}

variable_list AutogradContext::get_saved_variables() const {
  variable_list r;
  auto node = node_.lock();
  for (const auto& s : saved_) r.push_back(s.unpack(node));
  return r;
}

bool AutogradContext::needs_input_grad(size_t i) const {
  auto node = node_.lock();
  if (node && i >= node->num_outputs()) throw Error("Index out of range");
  return node && node->task_should_compute_output(i);
}

// ------------------------------------------------------------ CppNodeBase
void CppNodeBase::materialize(variable_list& grads) {
  if (!ctx_.materialize_grads_) return;
  for (size_t i = 0; i < grads.size() && i < num_inputs(); ++i)
    if (!grads[i].defined()) {
      const InputMetadata& m = input_metadata(i);
      grads[i] = zeros(m.shape, TensorOptions(m.dtype).device(m.device));
    }
}

variable_list CppNodeBase::check_and_select(variable_list&& outs) const {
  const size_t expected = is_variable_input_.size();
  if (outs.size() > expected) {
    bool all_undefined = true;
    for (size_t i = expected; i < outs.size(); ++i) all_undefined &= !outs[i].defined();
    if (all_undefined) outs.resize(expected);
  }
  if (outs.size() != expected)
    throw std::runtime_error(str_cat("function ", name(), " returned an incorrect number of gradients (expected ",
                                     expected, ", got ", outs.size(), ")"));
  variable_list result;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (is_variable_input_[i]) {
      result.push_back(std::move(outs[i]));
    } else if (outs[i].defined()) {
      // (sic: LibTorch's wording)
      throw std::runtime_error(str_cat("function ", name(), " returned a gradient different that is defined at position ",
                                       i + 1, ", but the corresponding forward input was not a Variable"));
    }
  }
  return result;
}

// ------------------------------------------------------------ apply's two halves
namespace detail {

bool connect_inputs(CppNodeBase& node, const variable_list& inputs) {
  bool any = false;
  for (const Tensor& t : inputs) {
    const bool rg = t.defined() && t.requires_grad();
    any |= rg;
    node.add_next_edge(rg ? impl::gradient_edge(t) : Edge());
  }
  return any && ::gradlab::detail::grad_mode();
}

namespace {
bool holds(const variable_list& list, const Tensor& t) {
  for (const Tensor& x : list)
    if (x.defined() && x.unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return true;
  return false;
}
Tensor alias_view(const Tensor& t) { return make_view(t, t.sizes(), t.strides(), t.storage_offset()); }
}  // namespace

void wrap_outputs(const std::shared_ptr<CppNodeBase>& node, AutogradContext& ctx, const variable_list& inputs,
                  variable_list& outputs) {
  const variable_list dirty = std::move(ctx.dirty_);
  const variable_list non_differentiable = std::move(ctx.non_differentiable_);
  bool all_dirty_returned = true;
  for (const Tensor& d : dirty) {
    if (!d.defined()) continue;
    bump_version(d);
    all_dirty_returned = all_dirty_returned && holds(outputs, d);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& var = outputs[i];
    if (!var.defined()) {
      if (node) node->add_input_metadata_undefined();
      continue;
    }
    const bool is_input = holds(inputs, var);
    const bool is_modified = holds(dirty, var);
    const bool differentiable = node && !holds(non_differentiable, var) && is_floating(var.scalar_type());
    if (node) node->add_input_metadata(var);
    const auto nr = static_cast<uint32_t>(i);
    if (!differentiable) {
      if (!var.requires_grad()) {
        if (is_input && !is_modified) var = alias_view(var);
      } else if (is_input) {
        var = var.detach();
      } else if (!var.is_view()) {
        var.detach_();
      }
    } else if (is_modified) {
      if (var.is_leaf() && var.requires_grad())
        throw Error("a leaf Variable that requires grad has been used in an in-place operation.");
      if (!is_input)
        warn({"_process_backward_mode_ad", "../torch/csrc/autograd/custom_function.cpp", 245},
             "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there is no need "
             "to pass it to mark_dirty().");
      var.mutable_grad() = Tensor();
      var.unsafeGetTensorImpl()->hooks.reset();
      if (var.is_view() && var.unsafeGetTensorImpl()->base) {  // a view changed in place, as by an in-place op
        if (outputs.size() != 1)
          throw Error(
              "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot "
              "return more than one Tensor. This is not supported by the current autograd engine. You should either "
              "make sure the input is not a view (using .clone() for example) or make your Function only return one "
              "Tensor (potentially splitting it into two Functions: one doing the inplace that returns a single Tensor "
              "and a second one that does the other operations). You can ask on the forum "
              "https://discuss.pytorch.org/ if you need help to do this change.");
        rebase_view_history(var, node);
      } else {
        impl::move_history(var, node, nr);
      }
    } else if (is_input) {
      var = alias_view(var);
      impl::set_history(var, node, nr);
    } else {
      impl::set_history(var, node, nr);
    }
    // A view among the outputs may not be changed in place later: that
    // would put the view's own history over the Function's backward.
    if (differentiable && var.is_view() && var.unsafeGetTensorImpl()->base)
      var.unsafeGetTensorImpl()->creation_meta = CreationMeta::InCustomFunction;
  }
  // Every tensor marked dirty must come back as an output (PyTorch checks it last).
  GRADLAB_CHECK(all_dirty_returned,
                "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
                "are modified inplace must all be outputs of the Function.");
  ctx.commit_saved(node ? outputs : variable_list());
  // The tape: a custom Function's outputs are the student's own work (its
  // forward's ops are taped, its backward runs where no replay can follow),
  // written with their values and the node that now owns them.
  if (tape::on()) {
    tape::Inside inside;
    for (const Tensor& var : outputs) {
      if (!var.defined()) continue;
      tape::Event e("custom");
      e.key("node").text(node ? node->name() : std::string());
      e.key("in").open_list();
      for (const Tensor& in : inputs) e.tensor(in);
      e.close_list();
      e.key("id").output(var);
      e.contents(var);
      e.write();
    }
  }
}

}  // namespace detail

}  // namespace gradlab::autograd

// Custom functions' context and IValue.
#include "gradlab/function.h"

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

bool AutogradContext::needs_input_grad(size_t i) const { return i < needs_input_grad_.size() && needs_input_grad_[i]; }

}  // namespace gradlab::autograd

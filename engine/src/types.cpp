// Dtype tables, devices, options, scalars and the error/warning plumbing.
#include <atomic>
#include <array>
#include <cstdio>
#include <iostream>
#include <mutex>

#include "gradlab/array_ref.h"
#include "gradlab/error.h"
#include "gradlab/types.h"

namespace gradlab {

namespace {
struct DtypeInfo {
  ScalarType type;
  size_t size;
  const char* c10;
  const char* python;
  const char* cpp;
};
// Indexed by ScalarType; the static_assert keeps the table in step with the enum.
constexpr std::array<DtypeInfo, kNumScalarTypes> kDtypes{{
    {ScalarType::Bool, 1, "Bool", "torch.bool", "bool"},
    {ScalarType::Int, 4, "Int", "torch.int32", "int"},
    {ScalarType::Long, 8, "Long", "torch.int64", "long int"},
    {ScalarType::Float, 4, "Float", "torch.float32", "float"},
    {ScalarType::Double, 8, "Double", "torch.float64", "double"},
}};
constexpr bool table_in_order() {
  for (int i = 0; i < kNumScalarTypes; ++i)
    if (static_cast<int>(kDtypes[i].type) != i) return false;
  return true;
}
static_assert(table_in_order(), "kDtypes must follow the order of ScalarType");
constexpr bool sizes_agree() {
  for (int i = 0; i < kNumScalarTypes; ++i)
    if (kDtypes[i].size != element_size(kDtypes[i].type)) return false;
  return true;
}
static_assert(sizes_agree(), "element_size (types.h) must agree with kDtypes");
const DtypeInfo& info(ScalarType t) { return kDtypes[static_cast<int>(t)]; }
}  // namespace

bool is_floating(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double; }
bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::Int || t == ScalarType::Long || (include_bool && t == ScalarType::Bool);
}
const char* c10_name(ScalarType t) { return info(t).c10; }
const char* python_name(ScalarType t) { return info(t).python; }
const char* cpp_type_name(ScalarType t) { return info(t).cpp; }
ScalarType promote_types(ScalarType a, ScalarType b) { return a > b ? a : b; }
std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << c10_name(t); }

Device::Device(const std::string& spec) {
  if (spec == "cpu") {
    type_ = DeviceType::CPU;
  } else if (spec.rfind("cuda", 0) == 0) {
    type_ = DeviceType::CUDA;
    if (spec.size() > 5 && spec[4] == ':') index_ = static_cast<int8_t>(std::stoi(spec.substr(5)));
  } else {
    throw Error("Expected one of cpu, cuda device type at start of device string: " + spec);
  }
}
std::string Device::str() const {
  if (type_ == DeviceType::CPU) return "cpu";
  return index_ < 0 ? "cuda" : "cuda:" + std::to_string(index_);
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

namespace {
Device g_default_device{DeviceType::CPU};
}
Device TensorOptions::default_device() { return g_default_device; }
void TensorOptions::set_default_device(Device d) { g_default_device = d; }
ScalarType TensorOptions::dtype() const { return dtype_.value_or(ScalarType::Float); }
std::ostream& operator<<(std::ostream& os, const TensorOptions& o) {
  // LibTorch marks the fields that were not set with "(default)".
  os << "TensorOptions(dtype=" << cpp_type_name(o.dtype()) << (o.has_dtype() ? "" : " (default)")
     << ", device=" << o.device() << (o.has_device() ? "" : " (default)") << ", layout=Strided"
     << ", requires_grad=" << (o.requires_grad() ? "true" : "false") << " (default)"
     << ", pinned_memory=false (default), memory_format=(nullopt))";
  return os;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: return os << s.toDouble();
    case Scalar::Kind::Int: return os << s.toLong();
    case Scalar::Kind::Bool: return os << (s.toBool() ? "true" : "false");
  }
  return os;
}

std::string shape_str(IntArrayRef s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// ---------------------------------------------------------------- messages
namespace msg {
const char* const kSecondBackward =
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.";
const char* const kLeafInplace = "a leaf Variable that requires grad is being used in an in-place operation.";
const char* const kViewOfLeafInplace =
    "a view of a leaf Variable that requires grad is being used in an in-place operation.";
const char* const kNoGradFn = "does not require grad and does not have a grad_fn";
const char* const kImplicitScalar = "grad can be implicitly created only for scalar outputs";
const char* const kNonLeafGrad =
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for "
    "a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more informations.";
const char* const kOnlyFloatGrad = "Only Tensors of floating point and complex dtype can require gradients";
const char* const kUndefinedArg =
    "Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #";
const char* const kAnomalyHint =
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
    "torch.autograd.set_detect_anomaly(True).";
const char* const kCreateGraphCycle =
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
    "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
    "to None after use to break the cycle and avoid the leak.";
const char* const kAnomalyWarn =
    "This mode should be enabled only for debugging as the different tests will slow down your program "
    "execution.";
}  // namespace msg

void throw_error(const std::string& m) { throw Error(m); }

// ---------------------------------------------------------------- warnings
namespace {
WarningHandler g_default_handler;
thread_local WarningHandler* t_handler = nullptr;

const char* base_name(const char* path) {
  const char* b = path;
  for (const char* p = path; *p; ++p)
    if (*p == '/') b = p + 1;
  return b;
}
}  // namespace

void WarningHandler::process(const SourceLocation& loc, const std::string& msg, bool) {
  // LibTorch's own one-line form: "[W file:line] Warning: text (function f)".
  std::fprintf(stderr, "[W %s:%d] Warning: %s (function %s)\n", base_name(loc.file), loc.line,
               msg.c_str(), loc.function);
}
WarningHandler* get_warning_handler() { return t_handler ? t_handler : &g_default_handler; }
void set_warning_handler(WarningHandler* h) { t_handler = h; }
namespace {
std::atomic<bool> g_warn_always{false};
}  // namespace
void set_warn_always(bool on) noexcept { g_warn_always = on; }
bool get_warn_always() noexcept { return g_warn_always; }
void warn_once(bool& warned, SourceLocation loc, const std::string& m) {
  if (warned && !g_warn_always) return;
  warned = true;
  warn(loc, m);
}
void warn(SourceLocation loc, const std::string& m, bool verbatim) {
  get_warning_handler()->process(loc, m, verbatim);
}

WarningCollector::WarningCollector(bool forward) : prev_(get_warning_handler()), forward_(forward) {
  set_warning_handler(this);
}
WarningCollector::~WarningCollector() { set_warning_handler(prev_ == &g_default_handler ? nullptr : prev_); }
void WarningCollector::process(const SourceLocation& loc, const std::string& msg, bool verbatim) {
  warnings_.emplace_back(loc, msg, verbatim);
  if (forward_) prev_->process(loc, msg, verbatim);
}

}  // namespace gradlab

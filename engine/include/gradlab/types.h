// Element types, devices, tensor options and host scalars: the vocabulary that
// the tensor core, the facade and the printers share.
#pragma once
#include <cstdint>
#include <type_traits>
#include <optional>
#include <ostream>
#include <string>

namespace gradlab {

// Order matters: promotion picks the larger of two types within a category.
enum class ScalarType : int8_t { Bool = 0, Int = 1, Long = 2, Float = 3, Double = 4 };
constexpr int kNumScalarTypes = 5;

// Inline: every allocation asks, and the lessons' scalars make many.
constexpr size_t element_size(ScalarType t) {
  constexpr unsigned char kSizes[kNumScalarTypes] = {1, 4, 8, 4, 8};  // Bool, Int, Long, Float, Double
  return kSizes[static_cast<int>(t)];
}
bool is_floating(ScalarType t);
bool is_integral(ScalarType t, bool include_bool);
const char* c10_name(ScalarType t);      // "Float" (c10::toString)
const char* python_name(ScalarType t);   // "torch.float32"
const char* cpp_type_name(ScalarType t); // "float" (caffe2::TypeMeta name)
ScalarType promote_types(ScalarType a, ScalarType b);
std::ostream& operator<<(std::ostream& os, ScalarType t);

// What Tensor::dtype() returns (caffe2::TypeMeta): prints the C++ type name
// ("float"), compares equal to its ScalarType.
// Like LibTorch's, it does not turn into a ScalarType by itself: toScalarType().
struct TypeMeta {
  ScalarType type;
  ScalarType toScalarType() const { return type; }
  const char* name() const { return cpp_type_name(type); }
  friend bool operator==(TypeMeta a, ScalarType b) { return a.type == b; }
  friend bool operator==(TypeMeta a, TypeMeta b) { return a.type == b.type; }
};
inline std::ostream& operator<<(std::ostream& os, TypeMeta m) { return os << m.name(); }
inline ScalarType typeMetaToScalarType(TypeMeta m) { return m.type; }

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };

// LibTorch's c10::Device: a type and an index (-1: the current device),
// read through type() and index() as LibTorch's are.
class Device {
 public:
  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type_(t), index_(i) {}  // NOLINT
  explicit Device(const std::string& spec);
  DeviceType type() const noexcept { return type_; }
  int8_t index() const noexcept { return index_; }
  bool has_index() const noexcept { return index_ != -1; }
  void set_index(int8_t i) { index_ = i; }
  bool is_cpu() const noexcept { return type_ == DeviceType::CPU; }
  bool is_cuda() const noexcept { return type_ == DeviceType::CUDA; }
  bool operator==(const Device& o) const {
    return type_ == o.type_ && (type_ == DeviceType::CPU || ordinal() == o.ordinal());
  }
  bool operator!=(const Device& o) const { return !(*this == o); }
  // The GPU's number, the current one (0) where no index was given.
  int8_t ordinal() const noexcept { return index_ < 0 ? 0 : index_; }
  std::string str() const;  // "cpu", "cuda:0"

 private:
  DeviceType type_ = DeviceType::CPU;
  int8_t index_ = -1;
};
std::ostream& operator<<(std::ostream& os, const Device& d);

// The GPUs gradlab's CUDA backend can use. Without the backend (a build
// without the CUDA toolkit) or without a GPU, the count is 0.
bool cuda_built();                       // this build has the CUDA backend
int cuda_device_count();
std::string cuda_device_name(int index);  // e.g. "NVIDIA H100 80GB HBM3"; "" when there is none
std::string cuda_status();               // why there is no GPU, in the driver's words ("" when there is one)
void cuda_synchronize();                 // waits for the GPU's queued work (nothing without CUDA)

// A host number as the API passes it: remembers whether it was written as an
// integer, a floating-point number or a bool, because that decides promotion.
class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Double };
  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(double v) : kind_(Kind::Double), d_(v) {}  // NOLINT
  Scalar(float v) : kind_(Kind::Double), d_(v) {}   // NOLINT
  Scalar(int v) : kind_(Kind::Int), i_(v) {}        // NOLINT
  Scalar(long v) : kind_(Kind::Int), i_(v) {}       // NOLINT
  // c10::Scalar's integer types, and no others: an unsigned or long long
  // number (x / v.size()) is ambiguous in LibTorch, so it is here too.
  Scalar(int16_t v) : kind_(Kind::Int), i_(v) {}  // NOLINT
  Scalar(int8_t v) : kind_(Kind::Int), i_(v) {}   // NOLINT
  Scalar(uint8_t v) : kind_(Kind::Int), i_(v) {}  // NOLINT
  // Exactly bool, as c10::Scalar takes it: a plain Scalar(bool) would also
  // take a pointer (torch::pow(x, "2") would compile and mean x^true).
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Scalar(B v) : kind_(Kind::Bool), i_(v) {}  // NOLINT
  Kind kind() const { return kind_; }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  bool isIntegral(bool include_bool = false) const {
    return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
  }
  bool isBoolean() const { return kind_ == Kind::Bool; }
  double toDouble() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  float toFloat() const { return static_cast<float>(toDouble()); }
  int64_t toLong() const { return kind_ == Kind::Double ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return kind_ == Kind::Double ? d_ != 0 : i_ != 0; }
  template <class T>
  T to() const;
  // The dtype a 0-d tensor made from this number gets (torch::tensor(3.) is float).
  ScalarType default_type() const {
    return kind_ == Kind::Double ? ScalarType::Float
                                 : (kind_ == Kind::Int ? ScalarType::Long : ScalarType::Bool);
  }
  Scalar operator-() const {
    return kind_ == Kind::Double ? Scalar(-d_) : Scalar(static_cast<int64_t>(-i_));
  }

 private:
  Kind kind_;
  union {
    double d_;
    int64_t i_;
  };
};
template <> inline double Scalar::to<double>() const { return toDouble(); }
template <> inline float Scalar::to<float>() const { return toFloat(); }
template <> inline int64_t Scalar::to<int64_t>() const { return toLong(); }
template <> inline int Scalar::to<int>() const { return toInt(); }
template <> inline bool Scalar::to<bool>() const { return toBool(); }
std::ostream& operator<<(std::ostream& os, const Scalar& s);

// LibTorch's TensorOptions: each field is optional, so that "not said" can
// fall back to the default (or to another tensor's options in *_like).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}  // NOLINT
  TensorOptions(TypeMeta t) : dtype_(t.type) {}  // NOLINT: implicit, as LibTorch's (zeros({2}, x.dtype()))
  TensorOptions(DeviceType d) : device_(Device(d)) {}  // NOLINT
  TensorOptions(Device d) : device_(d) {}  // NOLINT
  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(std::optional<ScalarType> t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(TypeMeta t) const { return dtype(t.type); }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  ScalarType dtype() const;  // the default dtype when none was given
  Device device() const { return device_.value_or(default_device()); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  TensorOptions merged_with(ScalarType fallback) const {
    auto o = *this;
    if (!o.dtype_) o.dtype_ = fallback;
    return o;
  }
  // Where factories put tensors when no device is named: the grader's
  // `--device cuda` changes it for a whole student run.
  static Device default_device();
  static void set_default_device(Device d);

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<bool> requires_grad_;
};
std::ostream& operator<<(std::ostream& os, const TensorOptions& o);

}  // namespace gradlab

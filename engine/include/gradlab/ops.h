// Free functions: factories and the ops in their torch::op(...) spelling.
// Each op's forward and backward live together in engine/src/ops/<family>.cpp.
#pragma once
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

#include "gradlab/tensor.h"

namespace gradlab {

// torch::tensor's argument: a number, a (nested) braced list, or a vector.
// Each number keeps its C++ type (float, double, int, int64_t, bool), as
// LibTorch's does: a list mixing them is refused, and the tensor takes
// PyTorch's dtype for that type (int64 for integers, float32 for floats).
class TensorDataContainer {
 public:
  TensorDataContainer(double v) : scalar_(v), literal_(ScalarType::Double), kind_(Kind::Scalar) {}  // NOLINT
  TensorDataContainer(float v) : scalar_(v), literal_(ScalarType::Float), kind_(Kind::Scalar) {}    // NOLINT
  TensorDataContainer(int v) : scalar_(v), literal_(ScalarType::Int), kind_(Kind::Scalar) {}        // NOLINT
  TensorDataContainer(long v) : scalar_(v), literal_(ScalarType::Long), kind_(Kind::Scalar) {}      // NOLINT
  TensorDataContainer(bool v) : scalar_(v), literal_(ScalarType::Bool), kind_(Kind::Scalar) {}      // NOLINT
  TensorDataContainer(std::initializer_list<TensorDataContainer> l);  // NOLINT
  template <class T>
  TensorDataContainer(const std::vector<T>& v) : kind_(Kind::List), from_vector_(true) {  // NOLINT
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int> ||
                      std::is_same_v<T, int64_t>,
                  "torch::tensor takes a std::vector of float, double, int or int64_t, as LibTorch's does");
    for (const auto& x : v) list_.emplace_back(x);
    finish_list();
  }
  Tensor to_tensor(const TensorOptions& o) const;
  bool is_scalar() const { return kind_ == Kind::Scalar; }

 private:
  enum class Kind { Scalar, List };
  void finish_list();
  void fill(void* dst, ScalarType t, int64_t& pos) const;
  Scalar scalar_;
  ScalarType literal_ = ScalarType::Float;  // a number's C++ type; a list's elements'
  Kind kind_;
  bool from_vector_ = false;  // LibTorch copies a vector in one go (version 0)
  std::vector<TensorDataContainer> list_;
  DimVector sizes_;
};

// --- factories
Tensor tensor(const TensorDataContainer& data, const TensorOptions& o = {});
Tensor empty(IntArrayRef size, const TensorOptions& o = {});
Tensor zeros(IntArrayRef size, const TensorOptions& o = {});
Tensor ones(IntArrayRef size, const TensorOptions& o = {});
Tensor full(IntArrayRef size, Scalar v, const TensorOptions& o = {});
Tensor scalar_tensor(Scalar v, const TensorOptions& o = {});
Tensor arange(Scalar end, const TensorOptions& o = {});
Tensor arange(Scalar start, Scalar end, const TensorOptions& o = {});
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& o = {});
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o = {});
Tensor eye(int64_t n, const TensorOptions& o = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& o = {});
Tensor randn(IntArrayRef size, const TensorOptions& o = {});
Tensor rand(IntArrayRef size, const TensorOptions& o = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& o = ScalarType::Long);
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& o = ScalarType::Long);
Tensor empty_like(const Tensor& t, const TensorOptions& o = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& o = {});
Tensor ones_like(const Tensor& t, const TensorOptions& o = {});
Tensor full_like(const Tensor& t, Scalar v, const TensorOptions& o = {});
Tensor randn_like(const Tensor& t, const TensorOptions& o = {});
Tensor rand_like(const Tensor& t, const TensorOptions& o = {});
// Wraps memory the caller owns (no copy): float unless options say otherwise.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o = {});
// A random permutation of 0..n-1 (long unless the options say otherwise).
Tensor randperm(int64_t n, const TensorOptions& o = {});
Tensor bernoulli(const Tensor& p);            // p holds the probabilities
Tensor bernoulli(const Tensor& self, double p);  // self's shape and dtype
// Zeroes each element with probability p and scales the rest by 1/(1-p)
// when train: input times a bernoulli mask (MulBackward0), as ATen on the
// CPU. Without train (or p == 0) the input itself comes back.
Tensor dropout(const Tensor& input, double p, bool train);
Tensor& dropout_(Tensor& input, double p, bool train);
void manual_seed(uint64_t seed);
uint64_t initial_seed();

// --- elementwise
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
// other - alpha·self, one node (RsubBackward0/1); `2 - a` is not this (binary.cpp).
Tensor rsub(const Tensor& self, const Tensor& other, Scalar alpha = 1);
Tensor rsub(const Tensor& self, Scalar other, Scalar alpha = 1);
// self + value·t1·t2 and self + value·t1/t2, one node each (fused.cpp).
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1);
// out= forms: write the result into `out` (same shape); refused when autograd would record.
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& a, const Tensor& e);
Tensor pow(const Tensor& a, Scalar e);
Tensor pow(Scalar base, const Tensor& e);
Tensor square(const Tensor& a);
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  GRADLAB_WHEN_##free(Tensor name(const Tensor& a);)
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& a, Scalar min);
Tensor clamp_max(const Tensor& a, Scalar max);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool equal(const Tensor& a, const Tensor& b);
// equal_nan: a NaN facing a NaN counts as close (by default a NaN is close to nothing).
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

// --- linear algebra
Tensor mm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& a, const Tensor& v);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& bias, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1);
Tensor outer(const Tensor& a, const Tensor& b);

// --- shape
Tensor t(const Tensor& a);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor reshape(const Tensor& a, IntArrayRef shape);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor cat(TensorList tensors, int64_t dim = 0);
Tensor stack(TensorList tensors, int64_t dim = 0);
// The free spellings of the view methods.
inline Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) { return a.narrow(dim, start, length); }
inline Tensor select(const Tensor& a, int64_t dim, int64_t index) { return a.select(dim, index); }
inline Tensor permute(const Tensor& a, IntArrayRef dims) { return a.permute(dims); }
inline std::vector<Tensor> split(const Tensor& a, int64_t size, int64_t dim = 0) { return a.split(size, dim); }
inline std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0) { return a.chunk(chunks, dim); }
inline std::vector<Tensor> unbind(const Tensor& a, int64_t dim = 0) { return a.unbind(dim); }
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);

// --- reductions and nn
Tensor sum(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& a, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& a, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor max(const Tensor& a);
Tensor min(const Tensor& a);
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
// ATen's max.other / min.other: the elementwise maximum (MaximumBackward0).
inline Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
inline Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }
// Which elements are NaN, infinite or finite (bool tensors; integers are all finite).
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);
Tensor isfinite(const Tensor& a);
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& a, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor prod(const Tensor& a, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& a, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor amax(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false);
// As the methods: the whole tensor's with no argument or a bool, over dims with an int or a list.
inline Tensor var(const Tensor& a) { return a.var(); }
template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
Tensor var(const Tensor& a, B unbiased) { return a.var(unbiased); }
Tensor var(const Tensor& a, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
inline Tensor std(const Tensor& a) { return a.std(); }
template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
Tensor std(const Tensor& a, B unbiased) { return a.std(unbiased); }
Tensor std(const Tensor& a, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor norm(const Tensor& a, Scalar p = 2);
Tensor norm(const Tensor& a, std::optional<Scalar> p, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& a);
Tensor all(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& a);
Tensor any(const Tensor& a, int64_t dim, bool keepdim = false);

enum class Reduction { None, Mean, Sum };
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean);
// x where x > 0, else negative_slope * x (LeakyReluBackward0).
Tensor leaky_relu(const Tensor& x, Scalar negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, Scalar negative_slope = 0.01);  // LeakyReluBackward1, saves the result
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction r = Reduction::Mean);
// With class weights and an ignored class: (C), (N, C) or (N, C, d1, ...) inputs.
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const std::optional<Tensor>& weight, Reduction r,
                int64_t ignore_index = -100);
Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction r = Reduction::Mean);
// Targets as class indices or, shaped as the input, as probabilities.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, Reduction r,
                     int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                            Reduction r = Reduction::Mean);
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        Reduction r = Reduction::Mean);

// Internal-but-public: the gradient of sum over broadcast dims (sum_to_size).
Tensor sum_to_size(const Tensor& g, IntArrayRef shape);

}  // namespace gradlab

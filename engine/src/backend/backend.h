// The kernels a device must provide. Ops (engine/src/ops) decide shapes,
// dtypes and autograd; a backend only computes. The CPU backend is the
// reference every other backend is tested against.
#pragma once
#include <algorithm>

#include "gradlab/tensor.h"

namespace gradlab::backend {

enum class Unary : uint8_t {
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) Kind,
#include "gradlab/unary_ops.h"  // the table's ops first
#undef GRADLAB_UNARY
  Pow, /* x^a */ RPow, /* a^x */ Clamp /* a, b bounds */, Count
};
enum class Binary : uint8_t {
  Add, /* a + alpha*b */ Sub, Mul, Div, Pow, Max, Min,
  ReluGrad, /* b <= 0 ? 0 : a (relu's backward: a is the gradient, b the result; a NaN b passes a) */
  TanhGrad, /* a * (1 - b*b), PyTorch's tanh_backward */
  SigmoidGrad, /* a * (1 - b) * b, PyTorch's sigmoid_backward */
  PowGrad, /* a * (b^(alpha-1) * alpha): pow(x, alpha)'s backward, a the gradient, b = x */
  Gt, Lt, Ge, Le, Eq, Ne, Count
};

// Every kernel writes `out`, which the op allocated with the right shape and
// dtype; inputs already have out's dtype (comparisons: the common input dtype)
// and are broadcast to out's shape by stride tricks in the kernel.
// Whether a GEMM library (OpenBLAS, cuBLAS) reads a rows x cols operand with
// these strides in place: row- or column-major, the leading dimension at
// least the length of what it leads. Anything else (an expanded gradient, a
// strided slice) must be copied dense before such a call.
inline bool gemm_rows(int64_t s0, int64_t s1, int64_t cols) { return s1 == 1 && s0 >= std::max<int64_t>(cols, 1); }
inline bool gemm_readable(int64_t s0, int64_t s1, int64_t rows, int64_t cols) {
  return gemm_rows(s0, s1, cols) || gemm_rows(s1, s0, rows);
}
// Products with fewer multiply-adds than this run in the CPU backend's loop,
// which beats BLAS's call overhead there and reads any strides.
inline constexpr int64_t kBlasMinWork = 4096;

struct Backend {
  virtual ~Backend() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* p) = 0;
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;  // any dtypes, broadcast src
  virtual void fill(const Tensor& dst, Scalar v) = 0;
  virtual void unary(Unary op, const Tensor& out, const Tensor& in, double a, double b) = 0;
  virtual void binary(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) = 0;
  // out = a op s for a number s (not a comparison), a already of out's dtype:
  // s converts to that dtype as a wrapped number would. The default wraps s
  // in a 0-d tensor and calls binary(); the CPU backend skips the wrapping,
  // which costs more than the arithmetic on the lessons' scalars.
  virtual void binary_scalar(Binary op, const Tensor& out, const Tensor& a, Scalar s, double alpha);
  // where(cond, a, b)
  virtual void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) = 0;
  // Sums `in` into `out`, whose shape is in's with the reduced dims kept as 1;
  // or a 0-d `out`, which takes the whole sum.
  virtual void sum_to(const Tensor& out, const Tensor& in) = 0;
  // Along the last dim of a contiguous 2-D view [rows, n].
  virtual void max_min_lastdim(const Tensor& values, const Tensor& indices, const Tensor& in, bool is_max) = 0;
  virtual void softmax_lastdim(const Tensor& out, const Tensor& in, bool log) = 0;
  // out[m,n] = beta*out + a[m,k] @ b[k,n]; a, b may be transposed views.
  virtual void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double beta) = 0;
  // gemm with a and/or b read transposed (mm's backward: G Bᵀ and Aᵀ G). The
  // default makes transposed headers and calls gemm(); the CPU backend swaps
  // the strides it reads instead, which for small matrices saves more than
  // the product costs.
  virtual void gemm_transposed(const Tensor& out, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
                               double beta);
  virtual bool equal(const Tensor& a, const Tensor& b) = 0;
};

Backend& cpu_instance();
// Inline, as every op asks: the CPU case is a guarded static; other devices
// (and their errors) are in for_other_device.
inline Backend& cpu() {
  static Backend& b = cpu_instance();
  return b;
}
Backend& for_other_device(Device d);
inline Backend& for_device(Device d) { return d.is_cpu() ? cpu() : for_other_device(d); }
inline Backend& of(const Tensor& t) { return for_device(t.device()); }
// The CUDA backend (engine/src/backend/cuda), or null when this build has
// none or no GPU is present; cuda_stub.cpp stands in when CUDA is not built.
Backend* cuda_backend();

}  // namespace gradlab::backend

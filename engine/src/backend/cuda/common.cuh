// What the CUDA kernels share: error checking, launch sizes, and the
// geometry of N strided operands packed into a kernel argument.
#pragma once
#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "backend/backend.h"
#include "backend/dispatch.h"
#include "backend/strided_loop.h"

namespace gradlab::backend::cuda {

// Throws PyTorch's "CUDA error: ..." with where it happened.
void check(cudaError_t e, const char* where);
// After a launch: a bad configuration shows up here, not at the next call.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

constexpr int kThreads = 256;
inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  // Kernels loop with a grid stride, so the grid may be smaller than n.
  return static_cast<unsigned>(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

// After merging contiguous dims (StridedLoop), tensors of up to this many
// dims are handled; more is refused with a clear message.
constexpr int kMaxDims = 10;

// N operands walked together over ops[0]'s shape, as a kernel argument:
// element i's offset in each operand, from its index in ops[0]'s order.
template <int N>
struct Geometry {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};

  __device__ void offsets(int64_t i, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t s = sizes[d];
      const int64_t q = i / s;
      const int64_t r = i - q * s;
      i = q;
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
    }
  }
};

template <int N>
Geometry<N> geometry(const std::array<const Tensor*, N>& ops) {
  StridedLoop<N> loop(ops);
  Geometry<N> g;
  g.numel = ops[0]->numel();
  g.ndim = static_cast<int>(loop.shape.size());
  if (g.ndim > kMaxDims)
    throw Error(str_cat("CUDA kernel: a tensor of shape ", ops[0]->sizes(), " has ", g.ndim,
                        " dimensions that cannot be merged; gradlab's CUDA kernels handle at most ", kMaxDims,
                        ". Hint: call .contiguous() first."));
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = loop.shape[static_cast<size_t>(d)];
    for (int k = 0; k < N; ++k) g.strides[k][d] = loop.strides[static_cast<size_t>(k)][static_cast<size_t>(d)];
  }
  return g;
}

template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// A contiguous CUDA tensor: the engine's allocation path, so it is cached and
// freed like any other.
Tensor empty_cuda(IntArrayRef sizes, ScalarType dtype);

// Kernel families, one file each.
void copy_on_device(const Tensor& dst, const Tensor& src);  // both on the GPU, any dtypes, src broadcast
void fill(const Tensor& dst, Scalar v);
void unary(Unary op, const Tensor& out, const Tensor& in, double a, double b);
void binary(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha);
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void sum_to(const Tensor& out, const Tensor& in);
void max_min_lastdim(const Tensor& values, const Tensor& indices, const Tensor& in, bool is_max);
void softmax_lastdim(const Tensor& out, const Tensor& in, bool log);
bool equal(const Tensor& a, const Tensor& b);
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double beta);

}  // namespace gradlab::backend::cuda

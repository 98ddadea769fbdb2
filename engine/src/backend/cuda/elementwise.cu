// Elementwise kernels: one thread per output element (grid-stride), the
// arithmetic from scalar_ops.h, so the GPU computes the CPU's formulas.
// The op is a kernel argument, not a template parameter: a uniform branch
// costs nothing next to the memory traffic, and it keeps the build small.
#include "backend/cuda/common.cuh"
#include "backend/scalar_ops.h"

namespace gradlab::backend::cuda {
namespace {

template <class T>
__global__ void fill_kernel(Geometry<1> g, T* out, T value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[1];
    g.offsets(i, off);
    out[off[0]] = value;
  }
}

template <class D, class S>
__global__ void copy_kernel(Geometry<2> g, D* out, const S* in) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2];
    g.offsets(i, off);
    out[off[0]] = static_cast<D>(in[off[1]]);
  }
}

template <class T>
__global__ void unary_kernel(Geometry<2> g, Unary op, T* out, const T* in, double a, double b) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2];
    g.offsets(i, off);
    out[off[0]] = apply_unary<T>(op, in[off[1]], a, b);
  }
}

template <class T>
__global__ void binary_kernel(Geometry<3> g, Binary op, T* out, const T* x, const T* y, T alpha) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    out[off[0]] = apply_binary<T>(op, x[off[1]], y[off[2]], alpha);
  }
}

// Bool operands: PyTorch computes mul/min as "and" and add/max as "or".
__global__ void bool_binary_kernel(Geometry<3> g, bool is_and, bool* out, const bool* x, const bool* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    out[off[0]] = is_and ? (x[off[1]] && y[off[2]]) : (x[off[1]] || y[off[2]]);
  }
}

template <class T>
__global__ void compare_kernel(Geometry<3> g, Binary op, bool* out, const T* x, const T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    out[off[0]] = apply_compare<T>(op, x[off[1]], y[off[2]]);
  }
}

template <class T>
__global__ void where_kernel(Geometry<4> g, T* out, const bool* c, const T* x, const T* y) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[4];
    g.offsets(i, off);
    out[off[0]] = c[off[1]] ? x[off[2]] : y[off[3]];
  }
}

}  // namespace

void fill(const Tensor& dst, Scalar v) {
  if (dst.numel() == 0) return;
  dispatch_all(dst.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = v.isFloatingPoint() ? static_cast<T>(v.toDouble()) : static_cast<T>(v.toLong());
    const auto g = geometry<1>({&dst});
    fill_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, ptr<T>(dst), value);
    check_launch("fill");
  });
}

void copy_on_device(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.scalar_type() == src.scalar_type() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sizes() == src.sizes()) {
    check(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(dst.numel()) * element_size(dst.scalar_type()),
                          cudaMemcpyDeviceToDevice),
          "copy (device to device)");
    return;
  }
  dispatch_all(dst.scalar_type(), [&](auto dt) {
    using D = typename decltype(dt)::type;
    dispatch_all(src.scalar_type(), [&](auto st) {
      using S = typename decltype(st)::type;
      const auto g = geometry<2>({&dst, &src});
      copy_kernel<D, S><<<blocks_for(g.numel), kThreads>>>(g, ptr<D>(dst), ptr<S>(src));
      check_launch("copy");
    });
  });
}

void unary(Unary op, const Tensor& out, const Tensor& in, double a, double b) {
  dispatch_all(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("unary op not implemented for 'Bool'");
    } else {
      if (out.numel() == 0) return;
      const auto g = geometry<2>({&out, &in});
      unary_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, op, ptr<T>(out), ptr<T>(in), a, b);
      check_launch("unary");
    }
  });
}

void binary(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  if (out.numel() == 0) return;
  const auto g = geometry<3>({&out, &a, &b});
  if (is_compare(op)) {
    dispatch_all(a.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      compare_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, op, ptr<bool>(out), ptr<T>(a), ptr<T>(b));
      check_launch("compare");
    });
    return;
  }
  dispatch_all(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      const bool is_and = op == Binary::Mul || op == Binary::Min;
      bool_binary_kernel<<<blocks_for(g.numel), kThreads>>>(g, is_and, ptr<bool>(out), ptr<bool>(a), ptr<bool>(b));
    } else {
      binary_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, op, ptr<T>(out), ptr<T>(a), ptr<T>(b), static_cast<T>(alpha));
    }
    check_launch("binary");
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0) return;
  dispatch_all(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto g = geometry<4>({&out, &cond, &a, &b});
    where_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, ptr<T>(out), ptr<bool>(cond), ptr<T>(a), ptr<T>(b));
    check_launch("where");
  });
}

}  // namespace gradlab::backend::cuda

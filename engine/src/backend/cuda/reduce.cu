// Reductions on the GPU: sum over dims, max/min and softmax along the last
// dim, and equality. Sums accumulate in double (floating point) or int64, as
// the CPU backend does, so the two agree to rounding of the final cast.
#include <vector>

#include "backend/cuda/common.cuh"

namespace gradlab::backend::cuda {
namespace {

// Tree reduction of one value per thread; every thread gets the result.
template <class V, class Op>
__device__ V block_reduce(V v, Op op) {
  __shared__ V shm[kThreads];
  shm[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) shm[threadIdx.x] = op(shm[threadIdx.x], shm[threadIdx.x + s]);
    __syncthreads();
  }
  V r = shm[0];
  __syncthreads();  // shm is reused by the next call
  return r;
}

// in's dims split into kept ones (walked by output index) and reduced ones.
struct ReduceGeometry {
  int nk = 0, nr = 0;
  int64_t n_out = 1, n_red = 1;
  int64_t ksize[kMaxDims] = {}, kin[kMaxDims] = {}, kout[kMaxDims] = {};
  int64_t rsize[kMaxDims] = {}, rin[kMaxDims] = {};

  __device__ void out_offsets(int64_t o, int64_t& in_off, int64_t& out_off) const {
    in_off = out_off = 0;
    for (int d = nk - 1; d >= 0; --d) {
      const int64_t q = o / ksize[d], r = o - q * ksize[d];
      o = q;
      in_off += r * kin[d];
      out_off += r * kout[d];
    }
  }
  __device__ int64_t red_offset(int64_t i) const {
    int64_t off = 0;
    for (int d = nr - 1; d >= 0; --d) {
      const int64_t q = i / rsize[d], r = i - q * rsize[d];
      i = q;
      off += r * rin[d];
    }
    return off;
  }
};

ReduceGeometry reduce_geometry(const Tensor& out, const Tensor& in) {
  ReduceGeometry g;
  const int64_t nd = in.dim(), off = nd - out.dim();
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t os = d < off ? 1 : out.size(d - off);
    if (in.size(d) == 1) continue;  // contributes nothing to either walk
    if (g.nk >= kMaxDims || g.nr >= kMaxDims)
      throw Error(str_cat("CUDA sum: a tensor of shape ", in.sizes(), " has more than ", kMaxDims,
                          " dims to walk. Hint: reshape it first."));
    if (os == 1) {
      g.rsize[g.nr] = in.size(d);
      g.rin[g.nr++] = in.stride(d);
      g.n_red *= in.size(d);
    } else {
      g.ksize[g.nk] = in.size(d);
      g.kin[g.nk] = in.stride(d);
      g.kout[g.nk++] = out.stride(d - off);
      g.n_out *= in.size(d);
    }
  }
  return g;
}

// Few outputs: blocks share out the reduction (block b takes output b/chunks,
// part b%chunks) and either write the output or a partial sum.
template <class T, class Acc>
__global__ void sum_blocks_kernel(ReduceGeometry g, int64_t chunks, const T* in, T* out, Acc* partial) {
  const int64_t per = (g.n_red + chunks - 1) / chunks;
  for (int64_t p = blockIdx.x; p < g.n_out * chunks; p += gridDim.x) {
    const int64_t o = p / chunks, c = p - o * chunks;
    int64_t in_base, out_off;
    g.out_offsets(o, in_base, out_off);
    const int64_t lo = c * per, hi = lo + per < g.n_red ? lo + per : g.n_red;
    Acc acc = 0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) acc += static_cast<Acc>(in[in_base + g.red_offset(i)]);
    acc = block_reduce(acc, [](Acc a, Acc b) { return a + b; });
    if (threadIdx.x == 0) {
      if (partial) {
        partial[p] = acc;
      } else {
        out[out_off] = static_cast<T>(acc);
      }
    }
  }
}

template <class T, class Acc>
__global__ void sum_partials_kernel(ReduceGeometry g, int64_t chunks, const Acc* partial, T* out) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < g.n_out; o += int64_t{gridDim.x} * blockDim.x) {
    Acc acc = 0;
    for (int64_t c = 0; c < chunks; ++c) acc += partial[o * chunks + c];
    int64_t in_base, out_off;
    g.out_offsets(o, in_base, out_off);
    out[out_off] = static_cast<T>(acc);
  }
}

// Many outputs (a bias gradient: [batch, width] -> [width]): a thread per
// output; neighbouring threads read neighbouring elements.
template <class T, class Acc>
__global__ void sum_threads_kernel(ReduceGeometry g, const T* in, T* out) {
  for (int64_t o = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; o < g.n_out; o += int64_t{gridDim.x} * blockDim.x) {
    int64_t in_base, out_off;
    g.out_offsets(o, in_base, out_off);
    Acc acc = 0;
    for (int64_t i = 0; i < g.n_red; ++i) acc += static_cast<Acc>(in[in_base + g.red_offset(i)]);
    out[out_off] = static_cast<T>(acc);
  }
}

template <class T>
__device__ bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// The CPU's rule, made associative: the first NaN wins, otherwise the
// larger (smaller) value, and on a tie the lower index.
template <class T>
struct Best {
  T v;
  int64_t i;
};
template <class T>
__device__ Best<T> better(Best<T> a, Best<T> b, bool is_max) {
  if (a.i < 0) return b;
  if (b.i < 0) return a;
  const bool an = is_nan(a.v), bn = is_nan(b.v);
  if (an || bn) return an && (!bn || a.i < b.i) ? a : b;
  if (a.v == b.v) return a.i < b.i ? a : b;
  return (is_max ? a.v > b.v : a.v < b.v) ? a : b;
}

template <class T>
__global__ void max_min_kernel(int64_t rows, int64_t n, const T* in, T* values, int64_t* indices, bool is_max) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = in + r * n;
    Best<T> best{T(0), -1};
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) best = better(best, Best<T>{row[k], k}, is_max);
    best = block_reduce(best, [is_max](Best<T> a, Best<T> b) { return better(a, b, is_max); });
    if (threadIdx.x == 0) {
      if (values) values[r] = best.v;
      if (indices) indices[r] = best.i < 0 ? 0 : best.i;
    }
  }
}

template <class T>
__global__ void softmax_kernel(int64_t rows, int64_t n, const T* in, T* out, bool log) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = in + r * n;
    T* y = out + r * n;
    T mx = x[0];
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) mx = x[k] > mx ? x[k] : mx;
    mx = block_reduce(mx, [](T a, T b) { return b > a ? b : a; });
    double s = 0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) s += exp(static_cast<double>(x[k] - mx));
    s = block_reduce(s, [](double a, double b) { return a + b; });
    if (log) {
      const T ls = static_cast<T>(::log(s));
      for (int64_t k = threadIdx.x; k < n; k += blockDim.x) y[k] = x[k] - mx - ls;
    } else {
      for (int64_t k = threadIdx.x; k < n; k += blockDim.x) y[k] = static_cast<T>(exp(static_cast<double>(x[k] - mx)) / s);
    }
  }
}

template <class T>
__global__ void equal_kernel(Geometry<2> g, const T* a, const T* b, int* same) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[2];
    g.offsets(i, off);
    if (!(a[off[0]] == b[off[1]])) *same = 0;
  }
}

unsigned rows_grid(int64_t rows) { return static_cast<unsigned>(rows < 65535 ? (rows < 1 ? 1 : rows) : 65535); }

}  // namespace

void sum_to(const Tensor& out, const Tensor& in) {
  if (out.numel() == 0) return;
  dispatch_all(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    const ReduceGeometry g = reduce_geometry(out, in);
    if (g.n_out >= 2048) {
      sum_threads_kernel<T, Acc><<<blocks_for(g.n_out), kThreads>>>(g, ptr<T>(in), ptr<T>(out));
      check_launch("sum");
      return;
    }
    // About 64K elements a block: a whole-tensor sum of 16M elements uses 256 blocks.
    int64_t chunks = (g.n_red + 65535) / 65536;
    if (chunks > 1024) chunks = 1024;
    if (chunks <= 1) {
      sum_blocks_kernel<T, Acc><<<rows_grid(g.n_out), kThreads>>>(g, 1, ptr<T>(in), ptr<T>(out), nullptr);
      check_launch("sum");
      return;
    }
    Tensor partial = empty_cuda({g.n_out * chunks}, std::is_floating_point_v<T> ? ScalarType::Double : ScalarType::Long);
    sum_blocks_kernel<T, Acc><<<rows_grid(g.n_out * chunks), kThreads>>>(g, chunks, ptr<T>(in), ptr<T>(out), ptr<Acc>(partial));
    check_launch("sum (partial)");
    sum_partials_kernel<T, Acc><<<blocks_for(g.n_out), kThreads>>>(g, chunks, ptr<Acc>(partial), ptr<T>(out));
    check_launch("sum (final)");
  });
}

void max_min_lastdim(const Tensor& values, const Tensor& indices, const Tensor& in, bool is_max) {
  const int64_t n = in.size(in.dim() - 1);
  const int64_t rows = in.numel() / (n ? n : 1);
  if (rows == 0 || n == 0) return;
  dispatch_all(in.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_min_kernel<T><<<rows_grid(rows), kThreads>>>(rows, n, ptr<T>(in), values.defined() ? ptr<T>(values) : nullptr,
                                                     indices.defined() ? ptr<int64_t>(indices) : nullptr, is_max);
    check_launch(is_max ? "max" : "min");
  });
}

void softmax_lastdim(const Tensor& out, const Tensor& in, bool log) {
  const int64_t n = in.size(in.dim() - 1);
  const int64_t rows = in.numel() / (n ? n : 1);
  if (rows == 0 || n == 0) return;
  dispatch_floating(in.scalar_type(), log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    softmax_kernel<T><<<rows_grid(rows), kThreads>>>(rows, n, ptr<T>(in), ptr<T>(out), log);
    check_launch(log ? "log_softmax" : "softmax");
  });
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0) return true;
  Tensor flag = empty_cuda({}, ScalarType::Int);
  fill(flag, Scalar(1));
  dispatch_all(a.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto g = geometry<2>({&a, &b});
    equal_kernel<T><<<blocks_for(g.numel), kThreads>>>(g, ptr<T>(a), ptr<T>(b), ptr<int>(flag));
    check_launch("equal");
  });
  int same = 0;
  check(cudaMemcpy(&same, flag.data_ptr(), sizeof same, cudaMemcpyDeviceToHost), "equal (reading the result)");
  return same != 0;
}

}  // namespace gradlab::backend::cuda

// Matrix products on the GPU: float and double through cuBLAS, other dtypes
// (and layouts cuBLAS cannot express) through a plain kernel.
//
// cuBLAS is opened with dlopen at the first product, not linked: mapping it
// costs about 0.1 s, which every student program would pay at start-up even
// when it never touches the GPU.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "backend/cuda/common.cuh"

#ifndef GRADLAB_CUBLAS_DIR
#define GRADLAB_CUBLAS_DIR ""
#endif

namespace gradlab::backend::cuda {
namespace {

struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  cublasHandle_t handle = nullptr;
};

Cublas& cublas() {
  static Cublas c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (std::string name : {std::string("libcublas.so.") + std::to_string(CUBLAS_VER_MAJOR),
                              std::string(GRADLAB_CUBLAS_DIR) + "/libcublas.so." + std::to_string(CUBLAS_VER_MAJOR)}) {
      if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    }
    // Without cuBLAS, products still come out right, only slower: say so once.
    auto unusable = [](const std::string& why) {
      std::fprintf(stderr, "gradlab: %s; matrix products on the GPU use gradlab's plain kernel (slower)\n", why.c_str());
    };
    if (!lib) return unusable(std::string("cannot load cuBLAS (") + dlerror() + ")");
    c.create = reinterpret_cast<decltype(c.create)>(dlsym(lib, "cublasCreate_v2"));
    c.sgemm = reinterpret_cast<decltype(c.sgemm)>(dlsym(lib, "cublasSgemm_v2"));
    c.dgemm = reinterpret_cast<decltype(c.dgemm)>(dlsym(lib, "cublasDgemm_v2"));
    if (!c.create || !c.sgemm || !c.dgemm) return unusable("cuBLAS lacks cublasCreate_v2, cublasSgemm_v2 or cublasDgemm_v2");
    if (c.create(&c.handle) != CUBLAS_STATUS_SUCCESS) {
      c.handle = nullptr;
      unusable("cublasCreate failed");
    }
  });
  return c;
}

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(str_cat("CUDA error: ", what, " failed with cuBLAS status ", static_cast<int>(s),
                        " (CUBLAS_STATUS_* in cublas_api.h)"));
}

// One thread per output element; Acc as the CPU's plain loop accumulates.
template <class T, class Acc>
__global__ void gemm_kernel(int64_t m, int64_t n, int64_t k, const T* a, int64_t as0, int64_t as1, const T* b,
                            int64_t bs0, int64_t bs1, T* out, int64_t os0, int64_t os1, double beta) {
  for (int64_t idx = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; idx < m * n; idx += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = idx / n, j = idx - i * n;
    Acc acc = 0;
    for (int64_t p = 0; p < k; ++p) acc += static_cast<Acc>(a[i * as0 + p * as1]) * static_cast<Acc>(b[p * bs0 + j * bs1]);
    T& dst = out[i * os0 + j * os1];
    dst = static_cast<T>(beta == 0 ? acc : static_cast<Acc>(beta) * static_cast<Acc>(dst) + acc);
  }
}

// How cuBLAS reads a matrix it can read (gemm_readable): transposed or not,
// and the leading dimension.
bool blas_layout(int64_t s0, int64_t s1, int64_t rows, int64_t cols, bool& transposed, int64_t& ld) {
  if (gemm_rows(s0, s1, cols)) {
    transposed = false, ld = s0;
    return true;
  }
  if (gemm_rows(s1, s0, rows)) {
    transposed = true, ld = s1;
    return true;
  }
  return false;
}

}  // namespace

void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double beta) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (m == 0 || n == 0) return;
  // An operand cuBLAS cannot read (the expanded gradient sum() sends back, a
  // strided slice) is copied dense first, as on the CPU: the copy is O(n²),
  // the plain kernel would run the whole O(n³) product slowly.
  {
    const bool blas_type = out.scalar_type() == ScalarType::Float || out.scalar_type() == ScalarType::Double;
    const bool a_ok = gemm_readable(a.stride(0), a.stride(1), m, k), b_ok = gemm_readable(b.stride(0), b.stride(1), k, n);
    if (blas_type && k > 0 && (!a_ok || !b_ok)) {
      auto dense = [](const Tensor& x) {
        Tensor c = empty_tensor(x.sizes(), x.scalar_type(), x.device());
        copy_on_device(c, x);
        return c;
      };
      gemm(out, a_ok ? a : dense(a), b_ok ? b : dense(b), beta);
      return;
    }
  }
  dispatch_all(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // k == 0 (an empty sum) and layouts cuBLAS cannot take go to the kernel.
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      bool at = false, bt = false, ot = false;
      int64_t lda = 0, ldb = 0, ldo = 0;
      Cublas& c = cublas();
      if (k > 0 && c.handle && blas_layout(a.stride(0), a.stride(1), m, k, at, lda) &&
          blas_layout(b.stride(0), b.stride(1), k, n, bt, ldb) && blas_layout(out.stride(0), out.stride(1), m, n, ot, ldo) &&
          !ot) {
        // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
        const cublasOperation_t opa = at ? CUBLAS_OP_T : CUBLAS_OP_N, opb = bt ? CUBLAS_OP_T : CUBLAS_OP_N;
        const T one = 1, bt_ = static_cast<T>(beta);
        if constexpr (std::is_same_v<T, float>) {
          check_blas(c.sgemm(c.handle, opb, opa, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
                             ptr<T>(b), static_cast<int>(ldb), ptr<T>(a), static_cast<int>(lda), &bt_, ptr<T>(out),
                             static_cast<int>(ldo)),
                     "cublasSgemm");
        } else {
          check_blas(c.dgemm(c.handle, opb, opa, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
                             ptr<T>(b), static_cast<int>(ldb), ptr<T>(a), static_cast<int>(lda), &bt_, ptr<T>(out),
                             static_cast<int>(ldo)),
                     "cublasDgemm");
        }
        return;
      }
    }
    using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    gemm_kernel<T, Acc><<<blocks_for(m * n), kThreads>>>(m, n, k, ptr<T>(a), a.stride(0), a.stride(1), ptr<T>(b), b.stride(0),
                                                         b.stride(1), ptr<T>(out), out.stride(0), out.stride(1), beta);
    check_launch("matmul");
  });
}

}  // namespace gradlab::backend::cuda

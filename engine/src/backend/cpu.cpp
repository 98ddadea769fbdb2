// The CPU backend: the reference implementation of every kernel.
#include <cblas.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/dispatch.h"
#include "backend/scalar_ops.h"
#include "backend/strided_loop.h"

namespace gradlab::backend {
namespace {

// The typed data pointer: the offset scaled by sizeof(T), known here, rather
// than by a lookup of the dtype's size.
template <class T>
T* ptr(const Tensor& t) {
  const TensorImpl* i = t.unsafeGetTensorImpl();
  assert(element_size(i->dtype) == sizeof(T));
  return static_cast<T*>(i->storage->data) + i->offset;
}

// Whether every element of t is the one at its data pointer: a single
// element, or one broadcast by expand() (what sum's backward hands on).
inline bool is_uniform(const Tensor& t) {
  const TensorImpl* i = t.unsafeGetTensorImpl();
  if (i->numel == 1) return true;
  for (size_t d = 0; d < i->sizes.size(); ++d)
    if (i->strides[d] != 0 && i->sizes[d] != 1) return false;
  return true;
}

// Elementwise loops with the op resolved before the loop, so each (op, dtype)
// gets its own tight loop the compiler can vectorise; rows where every
// operand is contiguous or a broadcast scalar take a flat path.
template <class T, class F>
void map_unary(const Tensor& out, const Tensor& in, F f) {
  T* o = ptr<T>(out);
  const T* i = ptr<T>(in);
  const int64_t n = out.numel();
  if (n == 1) {  // the lessons' scalars: no loop set-up at all
    *o = f(*i);
    return;
  }
  if (in.numel() == n && out.is_contiguous() && in.is_contiguous()) {  // small tensors: no loop set-up either
    for (int64_t k = 0; k < n; ++k) o[k] = f(i[k]);
    return;
  }
  StridedLoop<2>({&out, &in}).run([&](int64_t n, const auto& bs, const auto& s) {
    T* __restrict po = o + bs[0];
    const T* __restrict pi = i + bs[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t k = 0; k < n; ++k) po[k] = f(pi[k]);
    } else {
      for (int64_t k = 0; k < n; ++k) po[k * s[0]] = f(pi[k * s[1]]);
    }
  });
}

template <class T, class F>
void map_binary(const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  T* o = ptr<T>(out);
  const T* pa = ptr<T>(a);
  const T* pb = ptr<T>(b);
  const int64_t n = out.numel();
  if (n == 1) {
    *o = f(*pa, *pb);
    return;
  }
  // Contiguous operands of the output's size, or a scalar beside one: a
  // flat loop without the strided set-up, which costs more than the
  // arithmetic for the lessons' small matrices.
  if (out.is_contiguous()) {
    const int64_t na = a.numel(), nb = b.numel();
    const bool fa = na == n && a.is_contiguous(), fb = nb == n && b.is_contiguous();
    if (fa && fb) {
      for (int64_t k = 0; k < n; ++k) o[k] = f(pa[k], pb[k]);
      return;
    }
    if (fa && is_uniform(b)) {
      const T y = *pb;
      for (int64_t k = 0; k < n; ++k) o[k] = f(pa[k], y);
      return;
    }
    if (fb && is_uniform(a)) {
      const T x = *pa;
      for (int64_t k = 0; k < n; ++k) o[k] = f(x, pb[k]);
      return;
    }
  }
  StridedLoop<3>({&out, &a, &b}).run([&](int64_t n, const auto& bs, const auto& s) {
    T* po = o + bs[0];
    const T* xa = pa + bs[1];
    const T* xb = pb + bs[2];
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t k = 0; k < n; ++k) po[k] = f(xa[k], xb[k]);
    } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const T y = *xb;
      for (int64_t k = 0; k < n; ++k) po[k] = f(xa[k], y);
    } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const T x = *xa;
      for (int64_t k = 0; k < n; ++k) po[k] = f(x, xb[k]);
    } else {
      for (int64_t k = 0; k < n; ++k) po[k * s[0]] = f(xa[k * s[1]], xb[k * s[2]]);
    }
  });
}

// Calls run(f) with f the scalar function of `op` as a lambda in which `op`
// is a compile-time constant: apply_unary/apply_binary's switch folds away
// once inlined, so each (op, dtype) gets its own loop without repeating the
// arithmetic here.
template <class T, class Run, size_t... I>
void with_unary_impl(Unary op, double a, double b, Run&& run, std::index_sequence<I...>) {
  (void)((static_cast<size_t>(op) == I &&
          (run([a, b](T x) { return apply_unary<T>(static_cast<Unary>(I), x, a, b); }), true)) ||
         ...);
}
template <class T, class Run>
void with_unary(Unary op, double a, double b, Run&& run) {
  with_unary_impl<T>(op, a, b, run, std::make_index_sequence<static_cast<size_t>(Unary::Count)>());
}

template <class T, class Run, size_t... I>
void with_binary_impl(Binary op, T alpha, Run&& run, std::index_sequence<I...>) {
  (void)((static_cast<size_t>(op) == I &&
          (run([alpha](T x, T y) { return apply_binary<T>(static_cast<Binary>(I), x, y, alpha); }), true)) ||
         ...);
}
template <class T, class Run>
void with_binary(Binary op, T alpha, Run&& run) {
  // Comparisons have their own kernel (bool output).
  with_binary_impl<T>(op, alpha, run, std::make_index_sequence<static_cast<size_t>(Binary::Gt)>());
}

// C = A B + beta C through OpenBLAS, when each operand is row- or column-major
// with a leading dimension BLAS accepts; false when it is not (the caller
// falls back to the loop).
template <class T>
bool blas_gemm(T* o, int64_t os0, int64_t os1, const T* pa, int64_t as0, int64_t as1, const T* pb, int64_t bs0,
               int64_t bs1, int64_t m, int64_t n, int64_t k, double beta) {
  const bool a_rows = gemm_rows(as0, as1, k), b_rows = gemm_rows(bs0, bs1, n);
  if (!gemm_readable(as0, as1, m, k) || !gemm_readable(bs0, bs1, k, n) || !gemm_rows(os0, os1, n)) return false;
  const auto ta = a_rows ? CblasNoTrans : CblasTrans, tb = b_rows ? CblasNoTrans : CblasTrans;
  const int lda = static_cast<int>(a_rows ? as0 : as1), ldb = static_cast<int>(b_rows ? bs0 : bs1);
  const int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k), ldo = static_cast<int>(os0);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta, tb, im, in, ik, 1.0f, pa, lda, pb, ldb, static_cast<float>(beta), o, ldo);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, im, in, ik, 1.0, pa, lda, pb, ldb, beta, o, ldo);
  }
  return true;
}

// C = A B + beta C by the plain loop, for small products and the types BLAS
// lacks. Each output is its sum over p in order, from zero, then beta * old +
// sum: the same rounding whatever the strides. (Arguments by value: the
// compiler then keeps them in registers instead of reloading them after
// every store.) k == 1, an outer product (what mm's backward makes of a
// matrix times a vector), gets a loop of its own.
template <class T, bool kBeta>
void loop_gemm_impl(T* o, int64_t os0, int64_t os1, const T* pa, int64_t as0, int64_t as1, const T* pb, int64_t bs0,
                    int64_t bs1, int64_t m, int64_t n, int64_t k, double beta) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  const Acc b = static_cast<Acc>(beta);
  auto store = [b](T& dst, Acc acc) { dst = static_cast<T>(kBeta ? b * static_cast<Acc>(dst) + acc : acc); };
  for (int64_t i = 0; i < m; ++i, pa += as0, o += os0) {
    const T* bj = pb;
    T* oj = o;
    if (k == 1) {
      const Acc ai = static_cast<Acc>(*pa);
      for (int64_t j = 0; j < n; ++j, bj += bs1, oj += os1) store(*oj, Acc(0) + ai * static_cast<Acc>(*bj));
      continue;
    }
    for (int64_t j = 0; j < n; ++j, bj += bs1, oj += os1) {
      Acc acc = 0;
      const T* ap = pa;
      const T* bp = bj;
      for (int64_t p = 0; p < k; ++p, ap += as1, bp += bs0) acc += static_cast<Acc>(*ap) * static_cast<Acc>(*bp);
      store(*oj, acc);
    }
  }
}
template <class T>
void loop_gemm(T* o, int64_t os0, int64_t os1, const T* pa, int64_t as0, int64_t as1, const T* pb, int64_t bs0,
               int64_t bs1, int64_t m, int64_t n, int64_t k, double beta) {
  if (beta == 0) {
    loop_gemm_impl<T, false>(o, os0, os1, pa, as0, as1, pb, bs0, bs1, m, n, k, beta);
  } else {
    loop_gemm_impl<T, true>(o, os0, os1, pa, as0, as1, pb, bs0, bs1, m, n, k, beta);
  }
}

class CpuBackend final : public Backend {
  // Large blocks are kept for reuse once freed: a training loop allocates
  // the same few big shapes every step, and fresh pages from the kernel cost
  // a page fault each (a 1024x1024 float matrix: 1024 faults). Small blocks
  // go straight to malloc, which already recycles them.
  static constexpr size_t kCachedMin = size_t{1} << 18;   // 256 KiB
  static constexpr size_t kCacheLimit = size_t{1} << 29;  // keep at most 512 MiB idle
  std::mutex cache_mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_blocks_;
  std::unordered_map<void*, size_t> block_sizes_;  // every live or cached large block
  size_t cached_bytes_ = 0;

 public:
  void* allocate(size_t nbytes) override {
    const size_t n = (nbytes + 63) / 64 * 64;
    if (n >= kCachedMin) {
      const size_t rounded = (n + kCachedMin - 1) / kCachedMin * kCachedMin;
      std::lock_guard<std::mutex> lock(cache_mutex_);
      auto it = free_blocks_.find(rounded);
      if (it != free_blocks_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= rounded;
        return p;
      }
      void* p = nullptr;
      if (posix_memalign(&p, 64, rounded) != 0) throw std::bad_alloc();
      block_sizes_.emplace(p, rounded);
      return p;
    }
    // Below a page, malloc's 16-byte alignment is enough and much cheaper
    // than posix_memalign; larger blocks are cache-line aligned for the kernels.
    void* p = nullptr;
    if (n < 4096) {
      p = std::malloc(n ? n : 16);
      if (!p) throw std::bad_alloc();
      return p;
    }
    if (posix_memalign(&p, 64, n) != 0) throw std::bad_alloc();
    return p;
  }
  void deallocate(void* p) override {
    if (!p) return;
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      auto it = block_sizes_.find(p);
      if (it != block_sizes_.end()) {
        if (cached_bytes_ + it->second <= kCacheLimit) {
          free_blocks_[it->second].push_back(p);
          cached_bytes_ += it->second;
          return;
        }
        block_sizes_.erase(it);
      }
    }
    std::free(p);
  }

  void copy(const Tensor& dst, const Tensor& src) override {
    dispatch_all(dst.scalar_type(), [&](auto dt) {
      using D = typename decltype(dt)::type;
      dispatch_all(src.scalar_type(), [&](auto st) {
        using S = typename decltype(st)::type;
        D* o = ptr<D>(dst);
        const S* i = ptr<S>(src);
        const int64_t n = dst.numel();
        if (src.numel() == n && dst.is_contiguous() && src.is_contiguous()) {
          if constexpr (std::is_same_v<D, S>) std::memcpy(o, i, static_cast<size_t>(n) * sizeof(D));
          else for (int64_t k = 0; k < n; ++k) o[k] = static_cast<D>(i[k]);
          return;
        }
        StridedLoop<2>({&dst, &src}).run([&](int64_t n, const auto& b, const auto& s) {
          D* po = o + b[0];
          const S* pi = i + b[1];
          if (s[0] == 1 && s[1] == 1 && std::is_same_v<D, S>) {
            std::memcpy(po, pi, static_cast<size_t>(n) * sizeof(D));
            return;
          }
          for (int64_t k = 0; k < n; ++k) po[k * s[0]] = static_cast<D>(pi[k * s[1]]);
        });
      });
    });
  }

  void fill(const Tensor& dst, Scalar v) override {
    dispatch_all(dst.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T value = v.isFloatingPoint() ? static_cast<T>(v.toDouble()) : static_cast<T>(v.toLong());
      T* o = ptr<T>(dst);
      if (dst.is_contiguous()) {
        const int64_t n = dst.numel();
        for (int64_t k = 0; k < n; ++k) o[k] = value;
        return;
      }
      StridedLoop<1>({&dst}).run([&](int64_t n, const auto& b, const auto& s) {
        for (int64_t k = 0; k < n; ++k) o[b[0] + k * s[0]] = value;
      });
    });
  }

  void unary(Unary op, const Tensor& out, const Tensor& in, double a, double b) override {
    dispatch_all(out.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        throw Error("unary op not implemented for 'Bool'");
      } else {
        with_unary<T>(op, a, b, [&](auto f) { map_unary<T>(out, in, f); });
      }
    });
  }

  void binary(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) override {
    if (is_compare(op)) {
      dispatch_all(a.scalar_type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        bool* o = ptr<bool>(out);
        const T* pa = ptr<T>(a);
        const T* pb = ptr<T>(b);
        StridedLoop<3>({&out, &a, &b}).run([&](int64_t n, const auto& bs, const auto& s) {
          for (int64_t k = 0; k < n; ++k)
            o[bs[0] + k * s[0]] = apply_compare<T>(op, pa[bs[1] + k * s[1]], pb[bs[2] + k * s[2]]);
        });
      });
      return;
    }
    dispatch_all(out.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        bool* o = ptr<bool>(out);
        const bool* pa = ptr<bool>(a);
        const bool* pb = ptr<bool>(b);
        StridedLoop<3>({&out, &a, &b}).run([&](int64_t n, const auto& bs, const auto& s) {
          for (int64_t k = 0; k < n; ++k) {
            bool x = pa[bs[1] + k * s[1]], y = pb[bs[2] + k * s[2]];
            o[bs[0] + k * s[0]] = (op == Binary::Mul || op == Binary::Min) ? (x && y) : (x || y);
          }
        });
      } else if (op == Binary::PowGrad) {  // the exponent stays a double, as in the forward
        map_binary<T>(out, a, b, [alpha](T g, T x) { return pow_grad<T>(g, x, alpha); });
      } else {
        const T al = static_cast<T>(alpha);
        with_binary<T>(op, al, [&](auto f) { map_binary<T>(out, a, b, f); });
      }
    });
  }

  void binary_scalar(Binary op, const Tensor& out, const Tensor& a, Scalar s, double alpha) override {
    if (out.scalar_type() == ScalarType::Bool) {  // bool's logical kernel takes tensors
      Backend::binary_scalar(op, out, a, s, alpha);
      return;
    }
    dispatch_all(out.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, bool>) {
        // The number as a wrapped 0-d tensor of its default dtype would hold it, then converted.
        const T y = s.isFloatingPoint() ? static_cast<T>(s.toDouble()) : static_cast<T>(s.toLong());
        with_binary<T>(op, static_cast<T>(alpha), [&](auto f) { map_unary<T>(out, a, [&](T x) { return f(x, y); }); });
      }
    });
  }

  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override {
    dispatch_all(out.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = ptr<T>(out);
      const bool* c = ptr<bool>(cond);
      const T* pa = ptr<T>(a);
      const T* pb = ptr<T>(b);
      StridedLoop<4>({&out, &cond, &a, &b}).run([&](int64_t n, const auto& bs, const auto& s) {
        for (int64_t k = 0; k < n; ++k)
          o[bs[0] + k * s[0]] = c[bs[1] + k * s[1]] ? pa[bs[2] + k * s[2]] : pb[bs[3] + k * s[3]];
      });
    });
  }

  void sum_to(const Tensor& out, const Tensor& in) override {
    // Accumulate in double (float inputs) or int64, in an output-shaped buffer
    // broadcast back over the input with stride 0 on the reduced dims.
    dispatch_all(out.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      const int64_t n_out = out.numel();
      if (n_out == 1) {
        Acc acc = 0;
        const T* pi = ptr<T>(in);
        if (in.is_contiguous()) {
          const int64_t n = in.numel();
          for (int64_t k = 0; k < n; ++k) acc += static_cast<Acc>(pi[k]);
          *ptr<T>(out) = static_cast<T>(acc);
          return;
        }
        StridedLoop<1>({&in}).run([&](int64_t n, const auto& bs, const auto& s) {
          const T* p = pi + bs[0];
          if (s[0] == 1) {
            for (int64_t k = 0; k < n; ++k) acc += static_cast<Acc>(p[k]);
          } else {
            for (int64_t k = 0; k < n; ++k) acc += static_cast<Acc>(p[k * s[0]]);
          }
        });
        *ptr<T>(out) = static_cast<T>(acc);
        return;
      }
      std::vector<Acc> acc(static_cast<size_t>(n_out), Acc(0));
      // A header over acc with out's contiguous strides, expanded to in's shape.
      DimVector ostr = contiguous_strides(out.sizes());
      DimVector bstr(in.sizes().size(), 0);
      for (size_t d = 0; d < bstr.size(); ++d) bstr[d] = out.size(static_cast<int64_t>(d)) == 1 ? 0 : ostr[d];
      Tensor view = empty_tensor({}, ScalarType::Long, Device());  // geometry carrier only
      view.impl()->sizes = DimVector(in.sizes());
      view.impl()->strides = bstr;
      view.impl()->refresh_contiguous();
      const T* pi = ptr<T>(in);
      StridedLoop<2>({&view, &in}).run([&](int64_t n, const auto& bs, const auto& s) {
        for (int64_t k = 0; k < n; ++k) acc[static_cast<size_t>(bs[0] + k * s[0])] += static_cast<Acc>(pi[bs[1] + k * s[1]]);
      });
      // out may be strided: write through a contiguous temporary walk.
      T* o = ptr<T>(out);
      int64_t idx = 0;
      StridedLoop<1>({&out}).run([&](int64_t n, const auto& bs, const auto& s) {
        for (int64_t k = 0; k < n; ++k) o[bs[0] + k * s[0]] = static_cast<T>(acc[static_cast<size_t>(idx++)]);
      });
    });
  }

  void max_min_lastdim(const Tensor& values, const Tensor& indices, const Tensor& in, bool is_max) override {
    dispatch_all(in.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = in.size(-1 + in.dim());
      const int64_t rows = in.numel() / (n ? n : 1);
      const T* pi = ptr<T>(in);
      T* pv = values.defined() ? ptr<T>(values) : nullptr;
      int64_t* px = indices.defined() ? ptr<int64_t>(indices) : nullptr;
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = pi + r * n;
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          if constexpr (std::is_floating_point_v<T>) {
            if (std::isnan(row[best])) break;
            if (std::isnan(row[k])) {
              best = k;
              break;
            }
          }
          if (is_max ? row[k] > row[best] : row[k] < row[best]) best = k;
        }
        if (pv) pv[r] = row[best];
        if (px) px[r] = best;
      }
    });
  }

  void softmax_lastdim(const Tensor& out, const Tensor& in, bool log) override {
    dispatch_floating(in.scalar_type(), log ? "log_softmax" : "softmax", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = in.size(in.dim() - 1);
      const int64_t rows = in.numel() / (n ? n : 1);
      const T* pi = ptr<T>(in);
      T* po = ptr<T>(out);
      for (int64_t r = 0; r < rows; ++r) {
        const T* x = pi + r * n;
        T* y = po + r * n;
        T mx = x[0];
        for (int64_t k = 1; k < n; ++k) mx = x[k] > mx ? x[k] : mx;
        double s = 0;
        for (int64_t k = 0; k < n; ++k) s += std::exp(static_cast<double>(x[k] - mx));
        if (log) {
          const T ls = static_cast<T>(std::log(s));
          for (int64_t k = 0; k < n; ++k) y[k] = x[k] - mx - ls;
        } else {
          for (int64_t k = 0; k < n; ++k) y[k] = static_cast<T>(std::exp(static_cast<double>(x[k] - mx)) / s);
        }
      }
    });
  }

  Tensor dense(const Tensor& t) {
    Tensor c = empty_tensor(t.sizes(), t.scalar_type(), t.device());
    copy(c, t);
    return c;
  }
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double beta) override {
    gemm_transposed(out, a, false, b, false, beta);
  }
  void gemm_transposed(const Tensor& out, const Tensor& a, bool ta, const Tensor& b, bool tb, double beta) override {
    // A transposed operand is the same memory read with its two strides swapped.
    const TensorImpl* ai = a.unsafeGetTensorImpl();
    const TensorImpl* bi = b.unsafeGetTensorImpl();
    const TensorImpl* oi = out.unsafeGetTensorImpl();
    const int64_t m = ai->sizes[ta], k = ai->sizes[!ta], n = bi->sizes[!tb];
    const int64_t as0 = ai->strides[ta], as1 = ai->strides[!ta], bs0 = bi->strides[tb], bs1 = bi->strides[!tb];
    const int64_t os0 = oi->strides[0], os1 = oi->strides[1];
    // A large product with an operand BLAS cannot read (the expanded gradient
    // sum() sends back, a strided slice): a dense copy of that operand, then
    // BLAS. The copy is O(n²) against the product's O(n³); the loop would
    // run the whole product at a fraction of BLAS's rate.
    const bool blas_type = oi->dtype == ScalarType::Float || oi->dtype == ScalarType::Double;
    const bool a_ok = gemm_readable(as0, as1, m, k), b_ok = gemm_readable(bs0, bs1, k, n);
    if (blas_type && m * n * k > kBlasMinWork && gemm_rows(os0, os1, n) && (!a_ok || !b_ok)) {
      gemm_transposed(out, a_ok ? a : dense(a), ta, b_ok ? b : dense(b), tb, beta);
      return;
    }
    dispatch_all(oi->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* o = ptr<T>(out);
      const T* pa = ptr<T>(a);
      const T* pb = ptr<T>(b);
      // Small products (the lessons' matrices): the loop beats BLAS's call overhead.
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (m * n * k > kBlasMinWork && blas_gemm(o, os0, os1, pa, as0, as1, pb, bs0, bs1, m, n, k, beta)) return;
      }
      loop_gemm(o, os0, os1, pa, as0, as1, pb, bs0, bs1, m, n, k, beta);
    });
  }

  bool equal(const Tensor& a, const Tensor& b) override {
    bool same = true;
    dispatch_all(a.scalar_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = ptr<T>(a);
      const T* pb = ptr<T>(b);
      StridedLoop<2>({&a, &b}).run([&](int64_t n, const auto& bs, const auto& s) {
        for (int64_t k = 0; k < n; ++k)
          if (!(pa[bs[0] + k * s[0]] == pb[bs[1] + k * s[1]])) same = false;
      });
    });
    return same;
  }
};
}  // namespace

Backend& cpu_instance() {
  static CpuBackend b;
  return b;
}

Backend& for_other_device(Device d) {
  Backend* b = cuda_backend();
  if (!b) {
    if (cuda_built())
      throw Error(str_cat("Could not run an operation on ", d.str(), ": no CUDA GPU is available on this machine (",
                          cuda_status(), "). Hint: check torch::cuda::is_available() before moving tensors to the GPU."));
    throw Error(str_cat("Could not run an operation on ", d.str(), ": this build of gradlab has no CUDA backend (",
                        "CMake did not find the CUDA toolkit, or GRADLAB_CUDA was OFF). Hint: check ",
                        "torch::cuda::is_available() before moving tensors to the GPU."));
  }
  if (d.ordinal() != 0)
    throw Error(str_cat("Could not run an operation on ", d.str(), ": gradlab's CUDA backend uses one GPU, cuda:0 (",
                        cuda_device_count(), " found). Hint: use torch::kCUDA, which is cuda:0."));
  return *b;
}

}  // namespace gradlab::backend

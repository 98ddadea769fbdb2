// The arithmetic of every elementwise kernel, one element at a time, shared
// by the CPU backend and the CUDA kernels (ggml's rule: the CPU backend is the
// reference, and a device computes the same formulas). Compiled by nvcc these
// are __host__ __device__. They are always inlined: the CPU kernels call them
// with the op fixed at compile time, and only inlined does the switch fold
// to the one case (left to itself the compiler calls the whole switch once
// per element, which for relu is most of the work).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/backend.h"

#if defined(__CUDACC__)
#define GRADLAB_HD __host__ __device__ __forceinline__
#else
#define GRADLAB_HD [[gnu::always_inline]] inline
#endif

namespace gradlab::backend {

template <class T>
GRADLAB_HD T apply_unary(Unary op, T x, double a, double b) {
  using C = std::conditional_t<std::is_floating_point_v<T>, T, double>;
  const C v = static_cast<C>(x);
  switch (op) {
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  case Unary::Kind:                                                                      \
    return static_cast<T>(formula);
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
    case Unary::Pow: {
      // Integer exponents as repeated products, like PyTorch's pow kernels.
      if (a == 2) return static_cast<T>(v * v);
      if (a == 3) return static_cast<T>(v * v * v);
      if (a == 0.5) return static_cast<T>(std::sqrt(v));
      if (a == 1) return x;
      if (a == -1) return static_cast<T>(C(1) / v);
      if (a == -2) return static_cast<T>(C(1) / (v * v));
      return static_cast<T>(std::pow(v, static_cast<C>(a)));
    }
    case Unary::RPow: return static_cast<T>(std::pow(static_cast<C>(a), v));
    case Unary::Clamp: {
      C r = v;
      if (!std::isnan(a) && r < static_cast<C>(a)) r = static_cast<C>(a);
      if (!std::isnan(b) && r > static_cast<C>(b)) r = static_cast<C>(b);
      if (std::isnan(static_cast<double>(v))) r = v;
      return static_cast<T>(r);
    }
    case Unary::Count: break;
  }
  return x;
}

// pow(x, e)'s backward with the roundings of its formula step by step,
// g * (x.pow(e - 1) * e): the power (as the forward computes powers), then
// the product with e in T, then with the gradient.
template <class T>
GRADLAB_HD T pow_grad(T g, T x, double e) {
  const T p = apply_unary<T>(Unary::Pow, x, e - 1, 0);
  return static_cast<T>(g * static_cast<T>(p * static_cast<T>(e)));
}

template <class T>
GRADLAB_HD T apply_binary(Binary op, T x, T y, T alpha) {
  switch (op) {
    case Binary::Add: return static_cast<T>(x + alpha * y);
    case Binary::Sub: return static_cast<T>(x - alpha * y);
    case Binary::Mul: return static_cast<T>(x * y);
    case Binary::Div:
      if constexpr (std::is_integral_v<T>) {
        return y == 0 ? T(0) : static_cast<T>(x / y);
      } else {
        return x / y;
      }
    case Binary::Pow:
      if constexpr (std::is_floating_point_v<T>) {
        return std::pow(x, y);
      } else {
        return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
    case Binary::Max:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
      }
      return x > y ? x : y;
    case Binary::Min:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
      }
      return x < y ? x : y;
    case Binary::ReluGrad: return y <= T(0) ? T(0) : x;
    case Binary::TanhGrad: return static_cast<T>(x * static_cast<T>(T(1) - static_cast<T>(y * y)));
    case Binary::SigmoidGrad: return static_cast<T>(static_cast<T>(x * static_cast<T>(T(1) - y)) * y);
    case Binary::PowGrad: return pow_grad<T>(x, y, static_cast<double>(alpha));
    default: break;
  }
  return x;
}

template <class T>
GRADLAB_HD bool apply_compare(Binary op, T x, T y) {
  switch (op) {
    case Binary::Gt: return x > y;
    case Binary::Lt: return x < y;
    case Binary::Ge: return x >= y;
    case Binary::Le: return x <= y;
    case Binary::Eq: return x == y;
    case Binary::Ne: return x != y;
    default: return false;
  }
}

GRADLAB_HD bool is_compare(Binary op) { return op >= Binary::Gt && op <= Binary::Ne; }

}  // namespace gradlab::backend

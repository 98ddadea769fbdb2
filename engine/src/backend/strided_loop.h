// Walks N operands of the same (broadcast) shape with their own strides.
// Dimensions that are contiguous for every operand are merged first, so the
// common cases (contiguous, scalar broadcast) run as one flat loop.
#pragma once
#include <array>
#include <cstdint>

#include "gradlab/tensor.h"

namespace gradlab::backend {

template <int N>
struct StridedLoop {
  DimVector shape;
  std::array<DimVector, N> strides;  // in elements; 0 where broadcast

  // `ops[0]` defines the shape; the others are broadcast to it.
  explicit StridedLoop(const std::array<const Tensor*, N>& ops) {
    const Tensor& ref = *ops[0];
    const int64_t nd = ref.dim();
    shape = DimVector(ref.sizes());
    for (int k = 0; k < N; ++k) {
      strides[k] = DimVector(static_cast<size_t>(nd), 0);
      const Tensor& t = *ops[k];
      const int64_t off = nd - t.dim();
      for (int64_t d = 0; d < t.dim(); ++d)
        strides[k][static_cast<size_t>(d + off)] = t.size(d) == 1 ? 0 : t.stride(d);
    }
    coalesce();
  }

  void coalesce() {
    // Drop size-1 dims, then merge d into d-1 when every operand allows it.
    size_t w = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (w > 0) {
        bool ok = true;
        for (int k = 0; k < N; ++k)
          if (strides[k][w - 1] != strides[k][d] * shape[d]) ok = false;
        if (ok) {
          shape[w - 1] *= shape[d];
          for (int k = 0; k < N; ++k) strides[k][w - 1] = strides[k][d];
          continue;
        }
      }
      shape[w] = shape[d];
      for (int k = 0; k < N; ++k) strides[k][w] = strides[k][d];
      ++w;
    }
    shape.resize(w);
    for (int k = 0; k < N; ++k) strides[k].resize(w);
  }

  // fn(i, offsets...) is called with the element offsets of each operand;
  // inner(n, bases, inner_strides) handles one innermost row.
  template <class Row>
  void run(Row&& row) const {
    const size_t nd = shape.size();
    std::array<int64_t, N> base{};
    if (nd == 0) {
      std::array<int64_t, N> st{};
      row(int64_t{1}, base, st);
      return;
    }
    std::array<int64_t, N> inner{};
    for (int k = 0; k < N; ++k) inner[k] = strides[k][nd - 1];
    const int64_t n = shape[nd - 1];
    if (nd == 1) {
      row(n, base, inner);
      return;
    }
    DimVector counter(nd - 1, 0);
    int64_t outer = 1;
    for (size_t d = 0; d + 1 < nd; ++d) outer *= shape[d];
    for (int64_t o = 0; o < outer; ++o) {
      row(n, base, inner);
      for (size_t d = nd - 1; d-- > 0;) {
        ++counter[d];
        for (int k = 0; k < N; ++k) base[k] += strides[k][d];
        if (counter[d] < shape[d]) break;
        for (int k = 0; k < N; ++k) base[k] -= strides[k][d] * shape[d];
        counter[d] = 0;
      }
    }
  }
};

}  // namespace gradlab::backend

// Allocation of the engine's small, short-lived objects (tensor headers,
// storages, version counters, graph nodes) from per-thread free lists. The
// lists themselves, and the inline paths the library takes to them, are
// internal (engine/src/pool.h): this header only declares the doors.
#pragma once
#include <cstddef>

namespace gradlab::detail {

// Out-of-line doors to the pool, for code outside the library (a custom
// Function's node made in the student's file).
void* pool_allocate(std::size_t n);
void pool_deallocate(void* p, std::size_t n) noexcept;

// A standard allocator over the pool, for shared_ptr control blocks.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
  T* allocate(std::size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { pool_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

}  // namespace gradlab::detail

// A class whose objects come from the pool. Its operator new and delete are
// inline, so that the pool's few instructions fold into the code that makes
// and destroys such objects; they are defined in the library only
// (engine/src/pooled.h), the one place that makes them and that defines
// their destructors, which is what uses these operators.
#define GRADLAB_POOLED                                  \
  static inline void* operator new(std::size_t n);      \
  static inline void operator delete(void* p, std::size_t n) noexcept;

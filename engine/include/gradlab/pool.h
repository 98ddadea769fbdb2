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

// A standard allocator over the pool, for shared_ptr control blocks; the
// two functions are the way in and out (these doors, or the library's inline
// paths: InlinePoolAllocator in engine/src/pool.h).
template <class T, void* (*Allocate)(std::size_t), void (*Deallocate)(void*, std::size_t) noexcept>
struct BasicPoolAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = BasicPoolAllocator<U, Allocate, Deallocate>;
  };
  BasicPoolAllocator() = default;
  template <class U>
  BasicPoolAllocator(const BasicPoolAllocator<U, Allocate, Deallocate>&) {}  // NOLINT
  T* allocate(std::size_t n) { return static_cast<T*>(Allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { Deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const BasicPoolAllocator<U, Allocate, Deallocate>&) const { return true; }
};
template <class T>
using PoolAllocator = BasicPoolAllocator<T, pool_allocate, pool_deallocate>;

}  // namespace gradlab::detail

// A class whose objects come from the pool. Its operator new and delete are
// inline, so that the pool's few instructions fold into the code that makes
// and destroys such objects; they are defined in the library only
// (engine/src/pooled.h), the one place that makes them and that defines
// their destructors, which is what uses these operators.
#define GRADLAB_POOLED                                  \
  static inline void* operator new(std::size_t n);      \
  static inline void operator delete(void* p, std::size_t n) noexcept;

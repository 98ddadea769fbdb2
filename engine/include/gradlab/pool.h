// Thread-local free lists for the engine's small, short-lived objects
// (tensor headers, storages, version counters, graph nodes). A graph of
// scalars creates and frees a dozen of these per op; malloc's general path
// for objects of this size (past its per-thread cache) costs more than the
// arithmetic. Blocks freed on another thread simply join that thread's list.
// Sanitizer builds bypass the pool so that use-after-free stays detectable.
#pragma once
#include <cstddef>

namespace gradlab::detail {

void* pool_alloc(std::size_t size);
void pool_free(void* p, std::size_t size) noexcept;

// Adds class-specific operator new/delete that use the pool.
#define GRADLAB_POOLED                                                                        \
  static void* operator new(std::size_t n) { return ::gradlab::detail::pool_alloc(n); }       \
  static void operator delete(void* p, std::size_t n) noexcept { ::gradlab::detail::pool_free(p, n); }

// A standard allocator over the pool, for shared_ptr control blocks.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
  T* allocate(std::size_t n) { return static_cast<T*>(pool_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { pool_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

}  // namespace gradlab::detail

// The pool's insides (the public doors are gradlab/pool.h). Thread-local free
// lists for the engine's small, short-lived objects
// (tensor headers, storages, version counters, graph nodes). A graph of
// scalars creates and frees a dozen of these per op; malloc's general path
// for objects of this size (past its per-thread cache) costs more than the
// arithmetic. Blocks freed on another thread simply join that thread's list.
// Sanitizer builds bypass the pool so that use-after-free stays detectable.
// The hit paths are inline: taking a block off a list is a few instructions,
// and a call into the library would double them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "gradlab/pool.h"

#if defined(__SANITIZE_ADDRESS__)
#define GRADLAB_NO_POOL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRADLAB_NO_POOL 1
#endif
#endif

namespace gradlab::detail {

inline constexpr std::size_t kPoolGranule = 32;
inline constexpr std::size_t kPoolClasses = 32;           // sizes up to 1 KiB
inline constexpr std::uint32_t kPoolMaxPerClass = 1 << 14;  // idle blocks kept per size class

struct PoolBlock {
  PoolBlock* next;
};
// Plain data declared with __thread, so that reaching it is a single
// TLS-relative load (an extern C++ thread_local goes through a wrapper call
// in case it has a dynamic initialiser); `armed` says that the thread's
// releaser, which hands the blocks back to malloc at thread exit, is set up.
struct PoolState {
  PoolBlock* head[kPoolClasses];
  std::uint32_t count[kPoolClasses];
  bool armed;
};
#if defined(__CUDACC__)
extern __thread PoolState t_pool;  // nvcc's front end rejects the attribute on a declaration
#else
extern __thread PoolState t_pool __attribute__((tls_model("initial-exec")));
#endif

// Size classes of kPoolGranule bytes: class c holds blocks of (c + 1) granules.
inline std::size_t pool_size_class(std::size_t n) { return (n + kPoolGranule - 1) / kPoolGranule - 1; }

void* pool_alloc_slow(std::size_t size);
void pool_free_slow(void* p, std::size_t size) noexcept;

inline void* pool_alloc(std::size_t n) {
#ifndef GRADLAB_NO_POOL
  const std::size_t c = pool_size_class(n);
  if (c < kPoolClasses) {
    PoolState& p = t_pool;
    if (PoolBlock* b = p.head[c]) {
      p.head[c] = b->next;
      --p.count[c];
      return b;
    }
  }
#endif
  return pool_alloc_slow(n);
}

inline void pool_free(void* ptr, std::size_t n) noexcept {
#ifndef GRADLAB_NO_POOL
  const std::size_t c = pool_size_class(n);
  if (ptr && c < kPoolClasses) {
    PoolState& p = t_pool;
    if (p.armed && p.count[c] < kPoolMaxPerClass) {
      auto* b = static_cast<PoolBlock*>(ptr);
      b->next = p.head[c];
      p.head[c] = b;
      ++p.count[c];
      return;
    }
  }
#endif
  pool_free_slow(ptr, n);
}

// Defines a GRADLAB_POOLED class's operator new and delete over the inline
// paths (see engine/src/pooled.h).
#define GRADLAB_DEFINE_POOLED(Class)                                                                  \
  inline void* Class::operator new(std::size_t n) { return ::gradlab::detail::pool_alloc(n); }        \
  inline void Class::operator delete(void* p, std::size_t n) noexcept { ::gradlab::detail::pool_free(p, n); }

// The library's allocator over the inline paths, for the control blocks of
// the nodes it makes itself (the public PoolAllocator calls out of line).
template <class T>
using InlinePoolAllocator = BasicPoolAllocator<T, pool_alloc, pool_free>;

// make_shared from the pool, its control block included (the library's nodes).
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(InlinePoolAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace gradlab::detail

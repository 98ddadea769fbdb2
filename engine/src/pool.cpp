#include "pool.h"

#include <cstdlib>
#include <new>

namespace gradlab::detail {

__thread PoolState t_pool __attribute__((tls_model("initial-exec")));

#ifndef GRADLAB_NO_POOL
namespace {
struct PoolReleaser {
  ~PoolReleaser() {
    for (std::size_t c = 0; c < kPoolClasses; ++c)
      while (PoolBlock* b = t_pool.head[c]) {
        t_pool.head[c] = b->next;
        std::free(b);
      }
    t_pool.armed = false;
  }
};

void arm() {
  thread_local PoolReleaser releaser;
  (void)releaser;
  t_pool.armed = true;
}
}  // namespace

// The list was empty (or the size is past the pool): a fresh block of the
// class's full size, so that it can join the list when freed.
void* pool_alloc_slow(std::size_t n) {
  const std::size_t c = pool_size_class(n);
  if (c < kPoolClasses) {
    if (!t_pool.armed) arm();
    if (void* m = std::malloc((c + 1) * kPoolGranule)) return m;
    throw std::bad_alloc();
  }
  if (void* m = std::malloc(n)) return m;
  throw std::bad_alloc();
}

// Past the pool's size, a full list, or a thread that is exiting.
void pool_free_slow(void* ptr, std::size_t) noexcept { std::free(ptr); }
#else
void* pool_alloc_slow(std::size_t n) {
  if (void* m = std::malloc(n)) return m;
  throw std::bad_alloc();
}
void pool_free_slow(void* p, std::size_t) noexcept { std::free(p); }
#endif

void* pool_allocate(std::size_t n) { return pool_alloc(n); }
void pool_deallocate(void* p, std::size_t n) noexcept { pool_free(p, n); }

}  // namespace gradlab::detail

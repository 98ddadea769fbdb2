#include "gradlab/pool.h"

#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define GRADLAB_NO_POOL 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRADLAB_NO_POOL 1
#endif
#endif

namespace gradlab::detail {

#ifndef GRADLAB_NO_POOL
namespace {
constexpr std::size_t kGranule = 32;
constexpr std::size_t kClasses = 32;          // sizes up to 1 KiB
constexpr std::size_t kMaxPerClass = 1 << 14;  // idle blocks kept per size class

struct FreeBlock {
  FreeBlock* next;
};

// Plain data, so that reaching it is a single TLS-relative load (no
// per-access initialisation guard); the blocks are handed back to malloc by
// a separate guard object, set up on the thread's first allocation.
struct Pool {
  FreeBlock* head[kClasses];
  std::size_t count[kClasses];
  bool armed;
};
__attribute__((tls_model("initial-exec"))) thread_local Pool t_pool;

struct PoolReleaser {
  ~PoolReleaser() {
    for (std::size_t c = 0; c < kClasses; ++c)
      while (FreeBlock* b = t_pool.head[c]) {
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

std::size_t size_class(std::size_t n) { return (n + kGranule - 1) / kGranule - 1; }
}  // namespace

void* pool_alloc(std::size_t n) {
  const std::size_t c = size_class(n);
  if (c < kClasses) {
    Pool& p = t_pool;
    if (!p.armed) arm();
    if (FreeBlock* b = p.head[c]) {
      p.head[c] = b->next;
      --p.count[c];
      return b;
    }
    if (void* m = std::malloc((c + 1) * kGranule)) return m;
    throw std::bad_alloc();
  }
  if (void* m = std::malloc(n)) return m;
  throw std::bad_alloc();
}

void pool_free(void* ptr, std::size_t n) noexcept {
  if (!ptr) return;
  const std::size_t c = size_class(n);
  if (c < kClasses) {
    Pool& p = t_pool;
    if (p.armed && p.count[c] < kMaxPerClass) {
      auto* b = static_cast<FreeBlock*>(ptr);
      b->next = p.head[c];
      p.head[c] = b;
      ++p.count[c];
      return;
    }
  }
  std::free(ptr);
}
#else
void* pool_alloc(std::size_t n) {
  if (void* m = std::malloc(n)) return m;
  throw std::bad_alloc();
}
void pool_free(void* p, std::size_t) noexcept { std::free(p); }
#endif

}  // namespace gradlab::detail

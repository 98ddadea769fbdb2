// Reference counting stored inside the object: one allocation per tensor,
// storage or version counter instead of two (shared_ptr's control block),
// which matters for graphs of scalars where allocation is most of the cost.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace gradlab {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;
  void incref() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  bool decref() const { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  int32_t use_count() const { return refs_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> refs_{0};
};

template <class T>
class IntrusivePtr {
 public:
  IntrusivePtr() = default;
  IntrusivePtr(std::nullptr_t) {}  // NOLINT
  explicit IntrusivePtr(T* p) : p_(p) {
    if (p_) p_->incref();
  }
  IntrusivePtr(const IntrusivePtr& o) : p_(o.p_) {
    if (p_) p_->incref();
  }
  IntrusivePtr(IntrusivePtr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  IntrusivePtr(const IntrusivePtr<U>& o) : p_(o.get()) {  // NOLINT
    if (p_) p_->incref();
  }
  IntrusivePtr& operator=(const IntrusivePtr& o) {
    IntrusivePtr(o).swap(*this);
    return *this;
  }
  IntrusivePtr& operator=(IntrusivePtr&& o) noexcept {
    IntrusivePtr(std::move(o)).swap(*this);
    return *this;
  }
  ~IntrusivePtr() { reset(); }
  void reset() {
    // Deleted as a RefCounted: the virtual destructor picks the class's own
    // operator delete where that destructor is defined (in the library), so
    // code outside it never names a pooled class's operator delete.
    if (p_ && p_->decref()) delete static_cast<const RefCounted*>(p_);
    p_ = nullptr;
  }
  void swap(IntrusivePtr& o) noexcept { std::swap(p_, o.p_); }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const IntrusivePtr& o) const { return p_ == o.p_; }
  bool operator!=(const IntrusivePtr& o) const { return p_ != o.p_; }
  // Hands the pointer over without touching the count (used to break long
  // chains iteratively in destructors).
  T* release() {
    T* p = p_;
    p_ = nullptr;
    return p;
  }

 private:
  T* p_ = nullptr;
};

// Without arguments the object is default-initialised (`new T`, not
// `new T()`): every field has its own initialiser, and value-initialisation
// would first zero the whole object, inline buffers included, which costs
// more than the rest of making a scalar tensor.
template <class T, class... Args>
IntrusivePtr<T> make_intrusive(Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return IntrusivePtr<T>(new T);
  } else {
    return IntrusivePtr<T>(new T(std::forward<Args>(args)...));
  }
}

}  // namespace gradlab

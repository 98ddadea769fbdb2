// Small value containers used by the tensor core: a non-owning view of int64
// lists (IntArrayRef, like c10's) and an inline-first vector for sizes/strides,
// so that shapes of ordinary tensors never touch the heap.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace gradlab {

namespace detail {
// Copies a tensor's sizes or strides: a handful of values, where a call to
// memmove (what GCC makes of a copy loop) costs more than the copy itself.
// Ranges may overlap only as memmove allows (dst below src).
inline void copy_dims(int64_t* dst, const int64_t* src, size_t n) {
  switch (n) {
    case 4: dst[0] = src[0]; dst[1] = src[1]; dst[2] = src[2]; dst[3] = src[3]; return;
    case 3: dst[0] = src[0]; dst[1] = src[1]; dst[2] = src[2]; return;
    case 2: dst[0] = src[0]; dst[1] = src[1]; return;
    case 1: dst[0] = src[0]; return;
    case 0: return;
    default: std::memmove(dst, src, n * sizeof(int64_t));
  }
}
}  // namespace detail

template <class T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T* data, size_t n) : data_(data), size_(n) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
// Like c10::ArrayRef, a braced list is viewed only for the full expression it appears in.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  ArrayRef(std::initializer_list<T> il) : data_(il.begin()), size_(il.size()) {}  // NOLINT
#pragma GCC diagnostic pop
  ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  template <size_t N>
  ArrayRef(const T (&arr)[N]) : data_(arr), size_(N) {}  // NOLINT

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i)  // a loop, not memcmp: shapes are short
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }
  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
  friend bool operator==(ArrayRef a, const std::vector<T>& b) { return a.equals(ArrayRef(b)); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;

inline std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

// Vector of int64 with inline storage for up to kInline entries (sizes and
// strides of tensors); grows onto the heap beyond that.
class DimVector {
 public:
  static constexpr size_t kInline = 6;
  DimVector() = default;
  DimVector(IntArrayRef a) { assign(a); }  // NOLINT
  DimVector(size_t n, int64_t v) { resize(n, v); }
  DimVector(std::initializer_list<int64_t> il) { assign(IntArrayRef(il)); }
  DimVector(const DimVector& o) { assign(o.ref()); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.ref());
    return *this;
  }
  DimVector(DimVector&& o) noexcept { move_from(o); }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      release();
      move_from(o);
    }
    return *this;
  }
  ~DimVector() { release(); }

  void assign(IntArrayRef a) {
    reserve(a.size());
    detail::copy_dims(ptr_, a.data(), a.size());
    size_ = a.size();
  }
  // Sets the size to n, leaving new entries unset for the caller to write.
  void resize_for_overwrite(size_t n) {
    reserve(n);
    size_ = n;
  }
  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) ptr_[i] = v;
    size_ = n;
  }
  void push_back(int64_t v) {
    reserve(size_ + 1);
    ptr_[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    std::memmove(ptr_ + pos + 1, ptr_ + pos, (size_ - pos) * sizeof(int64_t));
    ptr_[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    std::memmove(ptr_ + pos, ptr_ + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    --size_;
  }
  int64_t& operator[](size_t i) { return ptr_[i]; }
  int64_t operator[](size_t i) const { return ptr_[i]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return ptr_; }
  const int64_t* data() const { return ptr_; }
  int64_t* begin() { return ptr_; }
  int64_t* end() { return ptr_ + size_; }
  const int64_t* begin() const { return ptr_; }
  const int64_t* end() const { return ptr_ + size_; }
  int64_t back() const { return ptr_[size_ - 1]; }
  IntArrayRef ref() const { return IntArrayRef(ptr_, size_); }
  operator IntArrayRef() const { return ref(); }  // NOLINT
  std::vector<int64_t> vec() const { return ref().vec(); }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    auto* p = new int64_t[cap];
    if (size_) std::memcpy(p, ptr_, size_ * sizeof(int64_t));
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = p;
    cap_ = cap;
  }
  void release() {
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = inline_;
    cap_ = kInline;
    size_ = 0;
  }
  void move_from(DimVector& o) {
    if (o.ptr_ == o.inline_) {
      ptr_ = inline_;
      cap_ = kInline;
      size_ = o.size_;
      detail::copy_dims(inline_, o.inline_, size_);
    } else {
      ptr_ = o.ptr_;
      cap_ = o.cap_;
      size_ = o.size_;
      o.ptr_ = o.inline_;
      o.cap_ = kInline;
    }
    o.size_ = 0;
  }
  int64_t inline_[kInline];
  int64_t* ptr_ = inline_;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

// "[2, 3]" as PyTorch prints a size list inside messages.
std::string shape_str(IntArrayRef s);

}  // namespace gradlab

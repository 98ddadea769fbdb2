// A vector that keeps its first N elements inside the object. A graph node
// holds three short lists (its edges, the metadata of its inputs, the tensors
// it saved); as std::vectors they cost three heap allocations per node, which
// for the lessons' scalar graphs is a large share of building one. Only the
// operations the engine uses are provided, with std::vector's meaning.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace gradlab {

template <class T, size_t N>
class SmallVector {
  static_assert(N > 0, "SmallVector needs room for at least one element");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<T*>;
  using const_reverse_iterator = std::reverse_iterator<const T*>;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  explicit SmallVector(size_t n) { resize(n); }
  template <class It, class = decltype(*std::declval<It>())>
  SmallVector(It first, It last) {
    append(first, last);
  }
  SmallVector(std::initializer_list<T> il)
    requires std::is_trivially_copyable_v<T>
  {
    append(il.begin(), il.end());
  }
  // Braces list the elements: {a, b}. For elements with reference counts
  // (tensors, edges) this takes temporaries by move, where an
  // initializer_list could only copy them (a count up and down for each).
  template <class... A>
    requires(!std::is_trivially_copyable_v<T> && sizeof...(A) > 0 && (std::is_convertible_v<A&&, T> && ...))
  SmallVector(A&&... a) {  // NOLINT: implicit, like the initializer_list it replaces
    reserve(sizeof...(A));
    (emplace_back(std::forward<A>(a)), ...);
  }
  SmallVector(const std::vector<T>& v) {  // NOLINT: interchangeable with the std::vector LibTorch uses
    append(v.begin(), v.end());
  }
  SmallVector(const SmallVector& o) { append(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept(std::is_nothrow_move_constructible_v<T>) { take(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) {
      clear();
      append(o.begin(), o.end());
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &o) {
      clear();
      free_heap();
      take(o);
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    free_heap();
  }
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& at(size_t i) { return data_[check(i)]; }
  const T& at(size_t i) const { return data_[check(i)]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == cap_) {
      // Build the element first: args may refer into this vector.
      T tmp(std::forward<Args>(args)...);
      grow(cap_ * 2);
      return *new (data_ + size_++) T(std::move(tmp));
    }
    return *new (data_ + size_++) T(std::forward<Args>(args)...);
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { data_[--size_].~T(); }
  // Removes *pos, moving the later elements down; returns the element after it.
  T* erase(T* pos) {
    for (T* p = pos; p + 1 != end(); ++p) *p = std::move(*(p + 1));
    pop_back();
    return pos;
  }
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void resize(size_t n) {
    reserve(n);
    while (size_ < n) new (data_ + size_++) T();
    while (size_ > n) pop_back();
  }
  void clear() {
    if constexpr (std::is_trivially_destructible_v<T>) {
      size_ = 0;
    } else {
      while (size_ > 0) pop_back();
    }
  }

 private:
  // Adds [first, last) at the end, growing once when the count is known up front.
  template <class It>
  void append(It first, It last) {
    using Category = typename std::iterator_traits<It>::iterator_category;
    if constexpr (std::is_base_of_v<std::forward_iterator_tag, Category>)
      reserve(size_ + static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) emplace_back(*first);
  }
  size_t check(size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at: index out of range");
    return i;
  }
  bool on_heap() const { return data_ != inline_data(); }
  T* inline_data() { return std::launder(reinterpret_cast<T*>(inline_)); }
  const T* inline_data() const { return std::launder(reinterpret_cast<const T*>(inline_)); }
  void grow(size_t cap) {
    T* p = static_cast<T*>(::operator new(cap * sizeof(T), std::align_val_t(alignof(T))));
    for (size_t i = 0; i < size_; ++i) {
      new (p + i) T(std::move(data_[i]));
      data_[i].~T();
    }
    free_heap();
    data_ = p;
    cap_ = cap;
  }
  void free_heap() {
    if (on_heap()) ::operator delete(data_, std::align_val_t(alignof(T)));
    data_ = inline_data();
    cap_ = N;
  }
  // Takes o's elements: its heap block when it has one, else moves them one by one.
  void take(SmallVector& o) {
    if (o.on_heap()) {
      data_ = o.data_;
      cap_ = o.cap_;
      size_ = o.size_;
      o.data_ = o.inline_data();
      o.cap_ = N;
      o.size_ = 0;
      return;
    }
    for (size_t i = 0; i < o.size_; ++i) new (data_ + i) T(std::move(o.data_[i]));
    size_ = o.size_;
    o.clear();
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inline_data();
  size_t size_ = 0;
  size_t cap_ = N;
};

}  // namespace gradlab

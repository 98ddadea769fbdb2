// LibTorch's TORCH_ARG, for the options structs of modules and optimisers:
// `name(v)` sets and returns the options (so calls chain), `name()` reads.
#pragma once

#define GRADLAB_ARG(T, name)          \
 public:                              \
  auto& name(const T& v) {            \
    name##_ = v;                      \
    return *this;                     \
  }                                   \
  const T& name() const noexcept { return name##_; } \
  T& name() noexcept { return name##_; }             \
                                      \
 private:                             \
  T name##_


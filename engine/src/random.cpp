// PyTorch's CPU generator, reproduced so that seeded lessons give the same
// numbers: mt19937 words; uniform floats from the low 24 (float) or 53
// (double) bits; normals element by element through Box-Muller in double
// (caching the second value) for fewer than 16 elements, and from 16 on the
// vectorised float path: all uniforms first, then Box-Muller over blocks of
// 16 with the Cephes log/sin/cos polynomials of PyTorch's AVX2 kernel.
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>

#include "backend/dispatch.h"
#include "ops/ops_internal.h"

#include <pthread.h>

namespace gradlab {

namespace {
struct CpuGenerator {
  std::mt19937 engine{67280421310721ULL & 0xffffffffULL};
  uint64_t seed = 67280421310721ULL;
  std::optional<double> next_double_normal;
  std::mutex mu;
  uint32_t random() { return static_cast<uint32_t>(engine()); }
  uint64_t random64() {
    const uint64_t hi = random();
    const uint64_t lo = random();
    return (hi << 32) | lo;
  }
  float uniform_float() { return static_cast<float>(random() & ((1u << 24) - 1)) * (1.0f / (1u << 24)); }
  double uniform_double() {
    return static_cast<double>(random64() & ((1ULL << 53) - 1)) * (1.0 / static_cast<double>(1ULL << 53));
  }
  double normal_double() {
    if (next_double_normal) {
      double r = *next_double_normal;
      next_double_normal.reset();
      return r;
    }
    const double u1 = uniform_double();
    const double u2 = uniform_double();
    const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
    const double theta = 2.0 * M_PI * u1;
    next_double_normal = r * std::sin(theta);
    return r * std::cos(theta);
  }
};
CpuGenerator& gen() {
  // A process that forks (the grader replays a tape in a child) must not
  // leave the child a generator locked by a thread that is not there.
  static CpuGenerator g;
  static const bool fork_safe = [] {
    pthread_atfork([] { g.mu.lock(); }, [] { g.mu.unlock(); }, [] { g.mu.unlock(); });
    return true;
  }();
  (void)fork_safe;
  return g;
}

// ---- float32 Cephes kernels, operation for operation as in avx_mathfun.h.
inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float fmul_add(float a, float b, float c) { return std::fma(a, b, c); }

float cephes_logf(float x) {
  const bool invalid = x <= 0.0f;
  x = std::max(x, bits_to_float(0x00800000u));
  int32_t e_int = static_cast<int32_t>(float_to_bits(x) >> 23);
  x = bits_to_float((float_to_bits(x) & ~0x7f800000u) | float_to_bits(0.5f));
  e_int -= 0x7f;
  float e = static_cast<float>(e_int);
  e = e + 1.0f;
  const bool lt = x < 0.707106781186547524f;
  const float tmp = lt ? x : 0.0f;
  x = x - 1.0f;
  e = e - (lt ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = 7.0376836292E-2f;
  y = fmul_add(y, x, -1.1514610310E-1f);
  y = fmul_add(y, x, 1.1676998740E-1f);
  y = fmul_add(y, x, -1.2420140846E-1f);
  y = fmul_add(y, x, 1.4249322787E-1f);
  y = fmul_add(y, x, -1.6668057665E-1f);
  y = fmul_add(y, x, 2.0000714765E-1f);
  y = fmul_add(y, x, -2.4999993993E-1f);
  y = fmul_add(y, x, 3.3333331174E-1f);
  y = y * x;
  y = y * z;
  y = fmul_add(e, -2.12194440e-4f, y);
  y = fmul_add(z, -0.5f, y);
  x = x + y;
  x = fmul_add(e, 0.693359375f, x);
  return invalid ? std::numeric_limits<float>::quiet_NaN() : x;
}

void cephes_sincosf(float xin, float* s, float* c) {
  uint32_t sign_sin = float_to_bits(xin) & 0x80000000u;
  float x = std::fabs(xin);
  float y = x * 1.27323954473516f;
  int32_t j = static_cast<int32_t>(y);
  j = (j + 1) & ~1;
  y = static_cast<float>(j);
  const uint32_t swap_sign_sin = static_cast<uint32_t>(j & 4) << 29;
  const bool poly = (j & 2) == 0;
  x = fmul_add(y, -0.78515625f, x);
  x = fmul_add(y, -2.4187564849853515625e-4f, x);
  x = fmul_add(y, -3.77489497744594108e-8f, x);
  const uint32_t sign_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  sign_sin ^= swap_sign_sin;
  const float z = x * x;
  float yc = 2.443315711809948E-005f;
  yc = fmul_add(yc, z, -1.388731625493765E-003f);
  yc = fmul_add(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = yc * z;
  yc = fmul_add(z, -0.5f, yc);
  yc = yc + 1.0f;
  float ys = -1.9515295891E-4f;
  ys = fmul_add(ys, z, 8.3321608736E-3f);
  ys = fmul_add(ys, z, -1.6666654611E-1f);
  ys = ys * z;
  ys = fmul_add(ys, x, x);
  const float sin_v = poly ? ys : yc;
  const float cos_v = poly ? yc : ys;
  *s = bits_to_float(float_to_bits(sin_v) ^ sign_sin);
  *c = bits_to_float(float_to_bits(cos_v) ^ sign_cos);
}

void normal_fill_16_float(float* data, float mean, float std) {
  const float two_pi = static_cast<float>(2.0 * M_PI);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_logf(u1));
    const float theta = two_pi * u2;
    float s, c;
    cephes_sincosf(theta, &s, &c);
    data[j] = fmul_add(radius * c, std, mean);
    data[j + 8] = fmul_add(radius * s, std, mean);
  }
}

void normal_fill_16_double(double* data, double mean, double std) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1 - data[j];
    const double u2 = data[j + 8];
    const double radius = std::sqrt(-2 * std::log(u1));
    const double theta = 2.0 * M_PI * u2;
    data[j] = radius * std::cos(theta) * std + mean;
    data[j + 8] = radius * std::sin(theta) * std + mean;
  }
}

template <class T>
void normal_fill(T* data, int64_t n, double mean, double std) {
  CpuGenerator& g = gen();
  auto uniform = [&]() -> T {
    if constexpr (std::is_same_v<T, float>) return g.uniform_float();
    else return g.uniform_double();
  };
  auto block = [&](T* p) {
    if constexpr (std::is_same_v<T, float>) normal_fill_16_float(p, static_cast<float>(mean), static_cast<float>(std));
    else normal_fill_16_double(p, mean, std);
  };
  for (int64_t i = 0; i < n; ++i) data[i] = uniform();
  for (int64_t i = 0; i + 16 <= n; i += 16) block(data + i);
  if (n % 16 != 0) {
    T* tail = data + n - 16;  // the last 16 values are drawn again
    for (int i = 0; i < 16; ++i) tail[i] = uniform();
    block(tail);
  }
}

// Fills a CPU tensor in place with the generator (it must be contiguous for the vector path).
void fill_normal(const Tensor& t, double mean, double std) {
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  dispatch_floating(t.scalar_type(), "normal_kernel_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.data_ptr());
    if (t.numel() >= 16 && t.is_contiguous()) {
      normal_fill<T>(p, t.numel(), mean, std);
    } else {
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(g.normal_double() * std + mean);
    }
  });
}

void fill_uniform(const Tensor& t, double from, double to) {
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  dispatch_floating(t.scalar_type(), "uniform_kernel_cpu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, float>) {
        p[i] = g.uniform_float() * static_cast<float>(to - from) + static_cast<float>(from);
      } else {
        p[i] = g.uniform_double() * (to - from) + from;
      }
    }
  });
}

// Generated on the CPU, then copied: the same seed gives the same values on every device.
Tensor generate(IntArrayRef size, const TensorOptions& o, void (*fill)(const Tensor&, double, double), double a,
                double b) {
  Tensor cpu_t = empty_tensor(size, o.dtype(), Device(DeviceType::CPU));
  fill(cpu_t, a, b);
  Tensor r = o.device().is_cpu() ? cpu_t : cpu_t.to(o.device());
  if (o.requires_grad()) r.set_requires_grad(true);
  return r;
}
}  // namespace

void manual_seed(uint64_t seed) {
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  g.seed = seed;
  g.engine.seed(static_cast<uint32_t>(seed & 0xffffffffULL));
  g.next_double_normal.reset();
}
uint64_t initial_seed() { return gen().seed; }

Tensor randn(IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("randn", randn(size, o));
  return generate(size, o, fill_normal, 0, 1);
}
Tensor rand(IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("rand", rand(size, o));
  return generate(size, o, fill_uniform, 0, 1);
}
Tensor randn_like(const Tensor& t, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("randn_like", randn_like(t, o));
  return randn(t.sizes(), TensorOptions(o.dtype_opt().value_or(t.scalar_type())).device(o.has_device() ? o.device() : t.device()).requires_grad(o.requires_grad()));
}
Tensor rand_like(const Tensor& t, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("rand_like", rand_like(t, o));
  return rand(t.sizes(), TensorOptions(o.dtype_opt().value_or(t.scalar_type())).device(o.has_device() ? o.device() : t.device()).requires_grad(o.requires_grad()));
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("randint", randint(low, high, size, o));
  GRADLAB_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  Tensor cpu_t = empty_tensor(size, o.has_dtype() ? o.dtype() : ScalarType::Long, Device(DeviceType::CPU));
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  const uint64_t range = static_cast<uint64_t>(high - low);
  dispatch_all(cpu_t.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu_t.data_ptr());
    for (int64_t i = 0; i < cpu_t.numel(); ++i) {
      // PyTorch draws 64 bits only for ranges of 2^32 and more.
      const uint64_t r = range >= (1ULL << 32) ? g.random64() : g.random();
      p[i] = static_cast<T>(static_cast<int64_t>(r % range) + low);
    }
  });
  return o.device().is_cpu() ? cpu_t : cpu_t.to(o.device());
}
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("randint", randint(high, size, o));
  return randint(0, high, size, o);
}

// PyTorch's CPU randperm: 0..n-1, then for each position i a swap with
// i + (a 32-bit draw mod the n - i positions left).
Tensor randperm(int64_t n, const TensorOptions& o) {
  GRADLAB_TAPE_NEW("randperm", randperm(n, o));
  GRADLAB_CHECK(n >= 0, "Trying to create tensor with negative dimension ", n, ": [", n, "]");
  Tensor cpu_t = empty_tensor({n}, o.has_dtype() ? o.dtype() : ScalarType::Long, Device(DeviceType::CPU));
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  dispatch_all(cpu_t.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu_t.data_ptr());
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(i);
    for (int64_t i = 0; i + 1 < n; ++i) {
      const int64_t z = static_cast<int64_t>(g.random() % static_cast<uint64_t>(n - i));
      std::swap(p[i], p[z + i]);
    }
  });
  return o.device().is_cpu() ? cpu_t : cpu_t.to(o.device());
}

namespace {
// Writes numbers drawn on the CPU (as PyTorch draws them) into a tensor in
// place, on its device. In-place methods are const, as in LibTorch: the
// handle is const, the tensor is not.
Tensor& store_drawn(const Tensor& t, const Tensor& drawn) {
  Tensor& self = const_cast<Tensor&>(t);
  {
    autograd::NoGradGuard ng;
    backend::of(self).copy(self, drawn.to(self.device()));
  }
  bump_version(self);
  return self;
}
// Refills a tensor in place from the generator.
Tensor& refill(const Tensor& t, void (*fill)(const Tensor&, double, double), double p, double q) {
  check_inplace(t);
  return store_drawn(t, generate(t.sizes(), TensorOptions(t.scalar_type()), fill, p, q));
}

// One draw per element, in order: 1 where a uniform double in [0, 1) falls
// below p (PyTorch's default CPU kernel; Debian's build has no MKL path).
void fill_bernoulli(const Tensor& t, double p, double) {
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  dispatch_all(t.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = static_cast<T*>(t.data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<T>(g.uniform_double() < p);
  });
}
// Per-element probabilities (broadcast to `sizes`), drawn on the CPU: a
// double probability is compared with a uniform double, any other with a
// uniform float, as PyTorch's CPU kernel.
Tensor draw_bernoulli(IntArrayRef sizes, ScalarType dtype, const Tensor& p) {
  Tensor probs = p.detach().to(Device(DeviceType::CPU)).expand(sizes).contiguous();
  Tensor drawn = empty_tensor(sizes, dtype, Device(DeviceType::CPU));
  CpuGenerator& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  dispatch_floating(probs.scalar_type(), "bernoulli_tensor_cpu_p_", [&](auto ptag) {
    using P = typename decltype(ptag)::type;
    const P* pr = probs.data_ptr<P>();
    dispatch_all(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(drawn.data_ptr());
      for (int64_t i = 0; i < drawn.numel(); ++i) {
        if constexpr (std::is_same_v<P, double>) out[i] = static_cast<T>(g.uniform_double() < pr[i]);
        else out[i] = static_cast<T>(g.uniform_float() < static_cast<float>(pr[i]));
      }
    });
  });
  return drawn;
}
void check_probability(double p) {
  GRADLAB_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
}
}  // namespace

Tensor& Tensor::uniform_(double from, double to) const {
  GRADLAB_TAPE_REFILL("uniform_", uniform_(from, to), *this);
  return refill(*this, fill_uniform, from, to);
}
Tensor& Tensor::bernoulli_(double p) const {
  GRADLAB_TAPE_REFILL("bernoulli_", bernoulli_(p), *this);
  check_probability(p);
  return refill(*this, fill_bernoulli, p, 0);
}
Tensor& Tensor::bernoulli_(const Tensor& p) const {
  GRADLAB_TAPE_REFILL("bernoulli_", bernoulli_(p), *this);
  check_inplace(*this);
  return store_drawn(*this, draw_bernoulli(sizes(), scalar_type(), p));
}
// The out-of-place forms are one ATen function each: the result is fresh,
// at version 0.
Tensor Tensor::bernoulli() const {
  GRADLAB_TAPE_NEW("bernoulli", bernoulli());
  return draw_bernoulli(sizes(), scalar_type(), *this).to(device());
}
Tensor bernoulli(const Tensor& p) { return p.bernoulli(); }
Tensor bernoulli(const Tensor& self, double p) {
  GRADLAB_TAPE_NEW("bernoulli", bernoulli(self, p));
  check_probability(p);
  return generate(self.sizes(), TensorOptions(self.scalar_type()).device(self.device()), fill_bernoulli, p, 0);
}
Tensor& Tensor::normal_(double mean, double std) const {
  GRADLAB_TAPE_REFILL("normal_", normal_(mean, std), *this);
  return refill(*this, fill_normal, mean, std);
}

}  // namespace gradlab

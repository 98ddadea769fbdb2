// The tensor: a strided view over reference-counted storage, plus the autograd
// fields PyTorch keeps on every variable (requires_grad, grad, grad_fn,
// output_nr, version counter, view base). Tensor is a handle; TensorImpl is
// shared by copies of the handle, exactly like at::Tensor.
#pragma once
#include <cassert>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gradlab/array_ref.h"
#include "gradlab/error.h"
#include "gradlab/intrusive.h"
#include "gradlab/pool.h"
#include "gradlab/types.h"

namespace gradlab {

namespace autograd {
class Node;
struct Edge;
}  // namespace autograd

struct StorageImpl : RefCounted {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  void (*deleter)(void*, Device) = nullptr;  // null: memory not owned (from_blob, inline)
  // Small CPU tensors (the scalars of the lessons) keep their bytes here:
  // one allocation instead of two for every intermediate.
  static constexpr size_t kInlineBytes = 64;
  alignas(16) unsigned char inline_bytes[kInlineBytes];
  // The version counter of the tensors over this memory (see TensorImpl::version).
  uint32_t version = 0;
  ~StorageImpl() override;
  GRADLAB_POOLED
};
IntrusivePtr<StorageImpl> allocate_storage(size_t nbytes, Device device);

// A version counter of its own, for a tensor that shares memory but not
// history with others (x.data()): its views and detach()es share it.
struct VersionCounter : RefCounted {
  uint32_t version = 0;
  ~VersionCounter() override;  // out of line: its deleting destructor lives in the library
  GRADLAB_POOLED
};

struct TensorImpl;
namespace autograd {
struct TensorHooks;  // see autograd.h
}

// How a view was made decides what in-place ops on it may do (PyTorch's CreationMeta).
enum class CreationMeta : uint8_t { Default, NoGradMode, InferenceMode, MultiOutput, InCustomFunction };

struct TensorImpl : RefCounted {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;  // in elements
  int64_t numel = 0;
  ScalarType dtype = ScalarType::Float;
  IntrusivePtr<StorageImpl> storage;
  // Bumped by every in-place op, shared by a tensor, its views and its
  // detach()es. Almost always one counter per memory block, so it lives in
  // the storage (no allocation of its own); `separate_version`, when set,
  // replaces it.
  IntrusivePtr<VersionCounter> separate_version;
  uint32_t& version() const { return separate_version ? separate_version->version : storage->version; }

  // autograd
  bool requires_grad = false;  // leaves only; non-leaves require grad through grad_fn
  bool retains_grad = false;
  bool is_view = false;
  bool inference = false;
  bool wrapped_number = false;
  CreationMeta creation_meta = CreationMeta::Default;
  uint32_t output_nr = 0;
  uint32_t attr_version = 0;  // views: the version their grad_fn was set at
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;
  // A leaf's AccumulateGrad, kept for the next graph after the last one that
  // used it died (owned; see impl::grad_accumulator).
  autograd::Node* parked_accumulator = nullptr;
  bool had_accumulator = false;  // one was built before: the leaf outlives graphs
  bool contiguous = true;        // see is_contiguous()
  IntrusivePtr<TensorImpl> grad;
  IntrusivePtr<TensorImpl> base;  // views: the tensor that owns the viewed memory
  // register_hook's and retain_grad's list for the current grad_fn (or, on a
  // leaf, for its accumulator); null until the first one.
  std::shared_ptr<autograd::TensorHooks> hooks;
  // Its number on the op tape (gradlab/tape.h), 0 until the tape first sees it.
  uint64_t tape_id = 0;

  ~TensorImpl() override;
  GRADLAB_POOLED
  // Every kernel asks whether its operands are contiguous, so the answer is
  // kept (as PyTorch keeps is_contiguous_): whatever sets sizes or strides
  // calls refresh_contiguous(). Debug builds check that it was called.
  bool is_contiguous() const {
    assert(contiguous == compute_contiguous() && "sizes or strides changed without refresh_contiguous()");
    return contiguous;
  }
  void refresh_contiguous() { contiguous = compute_contiguous(); }
  bool compute_contiguous() const {
    // As in PyTorch, a tensor without elements is contiguous whatever its
    // strides: there is nothing to lay out (and walking a [2^40, 0] shape
    // index by index would take hours).
    for (int64_t s : sizes)
      if (s == 0) return true;
    int64_t expected = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] == 1) continue;
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  void* data_ptr() const {
    return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(element_size(dtype));
  }
  Device device() const { return storage->device; }
};

class Tensor;
using TensorList = ArrayRef<Tensor>;
namespace detail {
// PyTorch's error for an undefined tensor argument (number `arg`, named `name`).
[[noreturn]] void throw_undefined(int arg, const char* name);
}  // namespace detail

namespace indexing {
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step) {}
  std::optional<int64_t> start, stop, step;
};
struct EllipsisIndexType {};
// As in LibTorch, None is nullopt: it means "no bound" in a Slice and a new
// dim as an index.
inline constexpr EllipsisIndexType Ellipsis{};
inline constexpr std::nullopt_t None = std::nullopt;
class TensorIndex;
}  // namespace indexing

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  // LibTorch's assignment rules: assigning to a named tensor rebinds the
  // handle; assigning to a temporary (x[0] = ...) writes into its memory.
  Tensor& operator=(const Tensor& o) & = default;
  Tensor& operator=(Tensor&& o) & noexcept = default;
  Tensor& operator=(const Tensor& o) &&;
  Tensor& operator=(Scalar v) &&;

  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl() const { return impl_; }
  bool defined() const { return static_cast<bool>(impl_); }
  void reset() { impl_.reset(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  int64_t use_count() const { return impl_ ? impl_->use_count() : 0; }

  // --- metadata
  IntArrayRef sizes() const { return impl()->sizes; }
  IntArrayRef strides() const { return impl()->strides; }
  // In-range dims are read directly (shape code calls these in its inner
  // loops); negative or out-of-range ones go through wrap_dim and its error.
  int64_t size(int64_t dim) const {
    const DimVector& s = impl()->sizes;
    return static_cast<uint64_t>(dim) < s.size() ? s[static_cast<size_t>(dim)] : size_slow(dim);
  }
  int64_t stride(int64_t dim) const {
    const DimVector& s = impl()->strides;
    return static_cast<uint64_t>(dim) < s.size() ? s[static_cast<size_t>(dim)] : stride_slow(dim);
  }
  int64_t dim() const { return static_cast<int64_t>(impl()->sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl()->numel; }
  int64_t storage_offset() const { return impl()->offset; }
  ScalarType scalar_type() const { return impl()->dtype; }
  TypeMeta dtype() const { return TypeMeta{impl()->dtype}; }
  Device device() const { return impl()->device(); }
  TensorOptions options() const;
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_floating_point() const { return is_floating(scalar_type()); }
  bool is_contiguous() const { return impl()->is_contiguous(); }
  bool is_inference() const { return impl()->inference; }
  bool is_nonzero() const;
  std::string toString() const;  // "CPUFloatType"
  template <class T>
  T* data_ptr() const;
  void* data_ptr() const { return impl()->data_ptr(); }
  template <class T>
  T item() const;
  Scalar item() const;

  // --- autograd
  bool requires_grad() const {  // inline: every op asks it of every input
    const TensorImpl* i = impl_.get();
    return i && (i->requires_grad || i->grad_fn || (i->is_view && view_requires_grad()));
  }
  Tensor& requires_grad_(bool r = true) const;
  Tensor& set_requires_grad(bool r) const;
  bool is_leaf() const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  void retain_grad() const;
  bool retains_grad() const;
  // A function of the gradient flowing into this tensor, run before it goes
  // on (or into .grad, for a leaf): returns nothing, or a replacement of the
  // same shape and type. The answer is the index remove_hook takes.
  template <class F>
  unsigned register_hook(F&& hook) const;
  void remove_hook(unsigned pos) const;
  unsigned _register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, std::optional<TensorList> inputs = std::nullopt) const;
  int64_t _version() const;
  bool is_view() const { return impl()->is_view; }
  bool _is_view() const { return is_view(); }
  const Tensor& _base() const;
  uint32_t output_nr() const { return impl()->output_nr; }
  Tensor detach() const;
  Tensor& detach_() const;
  Tensor data() const;           // shares storage, fresh version counter, no autograd
  // Points this tensor at new_data's memory, shape and dtype, keeping its
  // autograd identity (grad, requires_grad, hooks): how Module::to moves parameters.
  void set_data(const Tensor& new_data) const;
  Tensor variable_data() const;  // same as data()
  Tensor tensor_data() const;    // shares storage and version counter

  // --- copies and conversions
  Tensor clone() const;
  Tensor contiguous() const;
  Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device d, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device d, ScalarType t, bool non_blocking = false, bool copy = false) const;
  // torch::kCPU / torch::kCUDA name a DeviceType, which converts to both a
  // Device and TensorOptions: these settle it, as LibTorch does.
  Tensor to(DeviceType d, bool non_blocking = false, bool copy = false) const { return to(Device(d), non_blocking, copy); }
  Tensor to(DeviceType d, ScalarType t, bool non_blocking = false, bool copy = false) const {
    return to(Device(d), t, non_blocking, copy);
  }
  Tensor to(const TensorOptions& o, bool non_blocking = false, bool copy = false) const;
  // To other's dtype and device.
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const {
    return to(other.device(), other.scalar_type(), non_blocking, copy);
  }
  Tensor cpu() const;
  Tensor cuda() const;
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& o) const { return to(o.scalar_type()); }
  Tensor _float() const { return to(ScalarType::Float); }
  Tensor to_double() const { return to(ScalarType::Double); }

  // --- views and shape
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor view_as(const Tensor& o) const { return view(o.sizes()); }
  Tensor reshape_as(const Tensor& o) const { return reshape(o.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor t() const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor& squeeze_(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(IntArrayRef size, bool implicit = false) const;
  Tensor expand_as(const Tensor& o) const { return expand(o.sizes()); }
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor operator[](const Tensor& index) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> idx) const;
  Tensor index(ArrayRef<indexing::TensorIndex> idx) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> idx, const Tensor& v) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> idx, Scalar v) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> idx, const Tensor& v) const;
  Tensor& index_put_(ArrayRef<indexing::TensorIndex> idx, Scalar v) const;
  Tensor repeat(IntArrayRef repeats) const;

  // --- arithmetic (out of place)
  Tensor add(const Tensor& o, Scalar alpha = 1) const;
  Tensor add(Scalar o, Scalar alpha = 1) const;
  Tensor sub(const Tensor& o, Scalar alpha = 1) const;
  Tensor sub(Scalar o, Scalar alpha = 1) const;
  Tensor mul(const Tensor& o) const;
  Tensor mul(Scalar o) const;
  Tensor div(const Tensor& o) const;
  Tensor div(Scalar o) const;
  Tensor pow(const Tensor& e) const;
  Tensor pow(Scalar e) const;
  Tensor square() const { return pow(2); }
  // neg(), exp(), log(), ... and their in-place forms: the unary op table.
#define GRADLAB_UNARY(name, Kind, grad_fn, saves, ints, free, inplace, fused, formula, derivative) \
  Tensor name() const;                                                                   \
  GRADLAB_WHEN_##inplace(Tensor& name##_() const;)
#include "gradlab/unary_ops.h"
#undef GRADLAB_UNARY
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  // PyTorch's other names for the same ops (gradlab/other_names.h), and the
  // ones whose arguments differ.
#define GRADLAB_OTHER_UNARY(name, op, free_inplace) \
  Tensor name() const { return op(); }          \
  Tensor& name##_() const { return op##_(); }
#define GRADLAB_OTHER_BINARY(name, op, inplace)                                     \
  Tensor name(const Tensor& o) const { return op(o); }                              \
  Tensor name(Scalar o) const { return op(o); }                                     \
  GRADLAB_WHEN_##inplace(Tensor& name##_(const Tensor& o) const { return op##_(o); } \
                         Tensor& name##_(Scalar o) const { return op##_(o); })
#include "gradlab/other_names.h"
#undef GRADLAB_OTHER_UNARY
#undef GRADLAB_OTHER_BINARY
  Tensor clip(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const { return clamp(min, max); }
  Tensor& clip_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const { return clamp_(min, max); }
  Tensor subtract(const Tensor& o, Scalar alpha = 1) const { return sub(o, alpha); }
  Tensor subtract(Scalar o, Scalar alpha = 1) const { return sub(o, alpha); }
  Tensor& subtract_(const Tensor& o, Scalar alpha = 1) const { return sub_(o, alpha); }
  Tensor& subtract_(Scalar o, Scalar alpha = 1) const { return sub_(o, alpha); }
  Tensor swapaxes(int64_t a, int64_t b) const { return transpose(a, b); }
  Tensor swapdims(int64_t a, int64_t b) const { return transpose(a, b); }
  // x.contiguous().view(-1), as ATen writes it (a copy only where needed).
  Tensor ravel() const { return contiguous().view({-1}); }
  // `value` where `mask` (bool, broadcast to this tensor's shape) holds.
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;  // a 0-d value
  Tensor& masked_fill_(const Tensor& mask, Scalar value) const;
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // where(condition, *this, other)
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  // Along one dim by position: out[i][j] = x[i][index[i][j]] for dim 1.
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  // (values, indices); ties keep their order, NaN counts as the largest.
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_(int64_t dim, const Tensor& index, Scalar value) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor& masked_scatter_(const Tensor& mask, const Tensor& source) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;  // no dims: all of them
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  // var/std of the whole tensor take a bool only, as LibTorch's: an int
  // names a dim (x.var(1) is the variance over dim 1).
  Tensor var() const { return spread_of_all(true, false); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor var(B unbiased) const { return spread_of_all(unbiased, false); }
  Tensor var(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std() const { return spread_of_all(true, true); }
  template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
  Tensor std(B unbiased) const { return spread_of_all(unbiased, true); }
  Tensor std(IntArrayRef dims, bool unbiased = true, bool keepdim = false) const;
  Tensor spread_of_all(bool unbiased, bool is_std) const;  // var or std of every element
  Tensor norm(Scalar p = 2) const;
  Tensor norm(std::optional<Scalar> p, IntArrayRef dims, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  // Factories with this tensor's dtype and device unless `o` names others.
  Tensor new_empty(IntArrayRef size, const TensorOptions& o = {}) const;
  Tensor new_zeros(IntArrayRef size, const TensorOptions& o = {}) const;
  Tensor new_ones(IntArrayRef size, const TensorOptions& o = {}) const;
  Tensor new_full(IntArrayRef size, Scalar value, const TensorOptions& o = {}) const;
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;

  // --- linear algebra
  Tensor mm(const Tensor& o) const;
  Tensor matmul(const Tensor& o) const;
  Tensor mv(const Tensor& v) const;
  Tensor dot(const Tensor& o) const;
  Tensor bmm(const Tensor& o) const;

  // --- reductions
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& o) const { return maximum(o); }
  Tensor min(const Tensor& o) const { return minimum(o); }
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;

  // --- comparisons (no gradient)
  Tensor gt(const Tensor& o) const;
  Tensor gt(Scalar o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(Scalar o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(Scalar o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(Scalar o) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(Scalar o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(Scalar o) const;
  bool equal(const Tensor& o) const;
  bool allclose(const Tensor& o, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool all_true() const;  // every element nonzero (host-side check)

  // --- in place
  Tensor& zero_() const;
  Tensor& fill_(Scalar v) const;
  Tensor& fill_(const Tensor& value) const;  // a 0-d value, which gets the gradient's sum
  Tensor& add_(const Tensor& o, Scalar alpha = 1) const;
  Tensor& add_(Scalar o, Scalar alpha = 1) const;
  Tensor& sub_(const Tensor& o, Scalar alpha = 1) const;
  Tensor& sub_(Scalar o, Scalar alpha = 1) const;
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1) const;
  Tensor& mul_(const Tensor& o) const;
  Tensor& mul_(Scalar o) const;
  Tensor& div_(const Tensor& o) const;
  Tensor& div_(Scalar o) const;
  Tensor& pow_(Scalar e) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_min_(Scalar min) const;
  Tensor& clamp_max_(Scalar max) const;
  Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor& uniform_(double from = 0, double to = 1) const;
  Tensor& normal_(double mean = 0, double std = 1) const;
  // 1 with probability p, else 0, drawn as PyTorch's CPU generator draws.
  Tensor& bernoulli_(double p = 0.5) const;
  Tensor& bernoulli_(const Tensor& p) const;  // per-element probabilities
  Tensor bernoulli() const;                   // self holds the probabilities
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(Scalar o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(Scalar o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(Scalar o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(Scalar o) { return div_(o); }

 private:
  const IntrusivePtr<TensorImpl>& checked() const {
    if (!impl_) detail::throw_undefined(0, "self");
    return impl_;
  }
  int64_t size_slow(int64_t dim) const;
  int64_t stride_slow(int64_t dim) const;
  bool view_requires_grad() const;
  IntrusivePtr<TensorImpl> impl_;
};

namespace indexing {
// One entry of x.index({...}): an integer, a slice, None, an ellipsis, a bool or a tensor.
class TensorIndex {
 public:
  enum class Kind { Int, Slice, None, Ellipsis, Bool, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Int), int_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Int), int_(i) {}      // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}        // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  // "..." is the ellipsis; any other string is an error, not a bool.
  TensorIndex(const char* str);  // NOLINT
  TensorIndex(bool b) : kind_(Kind::Bool), int_(b) {}      // NOLINT
  TensorIndex(gradlab::Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT
  Kind kind() const { return kind_; }
  int64_t integer() const { return int_; }
  const Slice& slice() const { return slice_; }
  const gradlab::Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t int_ = 0;
  Slice slice_;
  gradlab::Tensor tensor_;
};
}  // namespace indexing

// Free-function forms and operators.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
// A number on the left compares as ATen's operators do: 0 < x is x > 0.
inline Tensor operator>(Scalar a, const Tensor& b) { return b < a; }
inline Tensor operator<(Scalar a, const Tensor& b) { return b > a; }
inline Tensor operator>=(Scalar a, const Tensor& b) { return b <= a; }
inline Tensor operator<=(Scalar a, const Tensor& b) { return b >= a; }
inline Tensor operator==(Scalar a, const Tensor& b) { return b == a; }
inline Tensor operator!=(Scalar a, const Tensor& b) { return b != a; }

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Makes a tensor header over fresh storage (no autograd, version 0).
Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device);
// A header viewing `src`'s memory with new geometry (no autograd fields).
Tensor alias_with_geometry(const Tensor& src, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
DimVector contiguous_strides(IntArrayRef sizes);
int64_t numel_of(IntArrayRef sizes);
int64_t wrap_dim(int64_t dim, int64_t ndim);
// Every op checks its arguments: inline, so that the check is a compare and
// a branch, and the message is built out of line only when it fails.
inline void check_defined(const Tensor& t, int arg = 0, const char* name = "self") {
  if (!t.defined()) detail::throw_undefined(arg, name);
}

// LibTorch takes hooks of both kinds: void(Tensor), which only looks, and
// Tensor(Tensor), whose answer (when defined) replaces the gradient.
template <class F>
unsigned Tensor::register_hook(F&& hook) const {
  if constexpr (std::is_void_v<std::invoke_result_t<std::decay_t<F>&, Tensor>>) {
    return _register_hook([fn = std::forward<F>(hook)](const Tensor& g) mutable {
      fn(g);
      return Tensor();
    });
  } else {
    return _register_hook([fn = std::forward<F>(hook)](const Tensor& g) mutable { return Tensor(fn(g)); });
  }
}

}  // namespace gradlab

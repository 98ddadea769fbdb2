// Tensor core: storage, headers, metadata, and the autograd fields' rules
// (requires_grad, grad, retain_grad, detach).
#include "gradlab/tensor.h"

#include "gradlab/tape.h"

#include "backend/backend.h"
#include "backend/dispatch.h"
#include "gradlab/autograd.h"
#include "gradlab/ops.h"
#include "ops/ops_internal.h"

namespace gradlab {

VersionCounter::~VersionCounter() = default;

StorageImpl::~StorageImpl() {
  if (deleter && data) deleter(data, device);
}

namespace {
// Memory from the device's backend, owned by the storage.
IntrusivePtr<StorageImpl> backend_storage(size_t nbytes, Device device) {
  if (nbytes > tape::detail::g_storage_limit)
    throw tape::LimitExceeded(
        str_cat("a tensor of ", nbytes, " bytes is beyond the replay's limit of ", tape::detail::g_storage_limit));
  auto s = make_intrusive<StorageImpl>();
  // A tensor's device always has its index, as in PyTorch: torch::kCUDA
  // means the current GPU, and the tensor is on cuda:0.
  s->device = device.is_cuda() ? Device(DeviceType::CUDA, device.ordinal()) : device;
  s->nbytes = nbytes;
  s->data = backend::for_device(device).allocate(nbytes);
  s->deleter = [](void* p, Device d) { backend::for_device(d).deallocate(p); };
  return s;
}

// A small CPU tensor's bytes live inside its storage object: one allocation.
// Inline here, since every op's result (empty_tensor) comes through.
[[gnu::always_inline]] inline IntrusivePtr<StorageImpl> new_storage(size_t nbytes, Device device) {
  if (!device.is_cpu() || nbytes > StorageImpl::kInlineBytes) return backend_storage(nbytes, device);
  auto s = make_intrusive<StorageImpl>();
  s->device = device;
  s->nbytes = nbytes;
  s->data = s->inline_bytes;
  return s;
}
}  // namespace

IntrusivePtr<StorageImpl> allocate_storage(size_t nbytes, Device device) { return new_storage(nbytes, device); }

TensorImpl::~TensorImpl() {
  // Taped once, forgotten always (even with no tape on now): its address may
  // come back as another tensor's under a later tape.
  // (And while a tape is on, whatever its number says: a number the
  // program wiped must not leave the tape watching a slot that is gone.)
  if (tape_id != 0 || tape::detail::g_sink) tape::detail::forget(this, tape_id);
  if (hooks) hooks->owner = nullptr;
  if (parked_accumulator) autograd::impl::delete_parked_accumulator(parked_accumulator);
}

namespace {
// Writes the row-major strides of `sizes` into `out` and returns the number
// of elements, in one pass and without a temporary vector (empty_tensor
// calls this for every result).
// A negative size makes the result negative.
[[gnu::always_inline]] inline int64_t fill_contiguous_strides(IntArrayRef sizes, DimVector& out) {
  out.resize_for_overwrite(sizes.size());
  int64_t acc = 1, numel = 1;
  bool negative = false;
  for (size_t d = sizes.size(); d-- > 0;) {
    out[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
    numel *= sizes[d];
    negative |= sizes[d] < 0;
  }
  return negative ? -1 : numel;
}
}  // namespace

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector s;
  fill_contiguous_strides(sizes, s);
  return s;
}

int64_t numel_of(IntArrayRef sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    throw Error(str_cat("Dimension out of range (expected to be in range of [", -n, ", ", n - 1, "], but got ",
                        dim, ")"));
  return dim < 0 ? dim + n : dim;
}

void detail::throw_undefined(int arg, const char* name) {
  throw Error(str_cat(msg::kUndefinedArg, arg, " '", name, "'"));
}

namespace {
[[noreturn, gnu::noinline]] void throw_negative_size(IntArrayRef sizes) {
  for (auto s : sizes)
    GRADLAB_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  throw Error("negative dimension");  // not reached: the loop threw
}
}  // namespace

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  auto impl = make_intrusive<TensorImpl>();
  impl->sizes.assign(sizes);
  impl->numel = fill_contiguous_strides(sizes, impl->strides);
  if (impl->numel < 0) throw_negative_size(sizes);
  impl->dtype = dtype;
  const size_t nbytes = static_cast<size_t>(impl->numel) * element_size(dtype);
  impl->storage = new_storage(nbytes, device);
  impl->inference = detail::inference_mode();
  return Tensor(std::move(impl));
}

Tensor alias_with_geometry(const Tensor& src, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  auto impl = make_intrusive<TensorImpl>();
  const TensorImpl* s = src.unsafeGetTensorImpl();
  impl->sizes.assign(sizes);
  impl->strides.assign(strides);
  impl->refresh_contiguous();
  impl->numel = numel_of(sizes);
  impl->offset = offset;
  impl->dtype = s->dtype;
  impl->storage = s->storage;
  impl->separate_version = s->separate_version;
  impl->inference = s->inference;
  return Tensor(std::move(impl));
}

int64_t Tensor::size_slow(int64_t d) const { return impl()->sizes[static_cast<size_t>(wrap_dim(d, dim()))]; }
int64_t Tensor::stride_slow(int64_t d) const { return impl()->strides[static_cast<size_t>(wrap_dim(d, dim()))]; }
TensorOptions Tensor::options() const { return TensorOptions().dtype(scalar_type()).device(device()); }

std::string Tensor::toString() const {
  return str_cat(device().is_cuda() ? "CUDA" : "CPU", c10_name(scalar_type()), "Type");
}

bool Tensor::is_nonzero() const {
  checked();
  GRADLAB_CHECK(numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  GRADLAB_CHECK(numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return item().toBool();
}

template <class T>
T* Tensor::data_ptr() const {
  GRADLAB_CHECK(scalar_type() == scalar_type_of<T>(), "expected scalar type ", c10_name(scalar_type_of<T>()),
                " but found ", c10_name(scalar_type()));
  return static_cast<T*>(impl()->data_ptr());
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template int32_t* Tensor::data_ptr<int32_t>() const;
template bool* Tensor::data_ptr<bool>() const;

Scalar Tensor::item() const {
  GRADLAB_TAPE("item", item(), *this);
  checked();
  if (numel() != 1) throw Error(str_cat("a Tensor with ", numel(), " elements cannot be converted to Scalar"));
  Tensor c = device().is_cpu() ? *this : to(Device(DeviceType::CPU));
  return dispatch_all(c.scalar_type(), [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    T v = *static_cast<const T*>(c.impl()->data_ptr());
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_floating_point_v<T>) return Scalar(static_cast<double>(v));
    else return Scalar(static_cast<int64_t>(v));
  });
}
template <class T>
T Tensor::item() const {
  return item().to<T>();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template int Tensor::item<int>() const;
template bool Tensor::item<bool>() const;

// ------------------------------------------------------------ autograd fields
// A view made under no_grad records no graph, yet PyTorch reports that it
// requires grad when its base does (it stays a leaf).
bool Tensor::view_requires_grad() const { return base_in_graph(impl_.get()); }

bool Tensor::is_leaf() const { return checked()->grad_fn == nullptr; }

Tensor& Tensor::set_requires_grad(bool r) const {
  GRADLAB_TAPE("set_requires_grad", set_requires_grad(r), *this, r);
  checked();
  if (r && !is_floating(scalar_type())) throw Error(msg::kOnlyFloatGrad);
  if (r && impl_->inference && !autograd::InferenceMode::is_enabled())
    throw Error("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
  // LibTorch lets this through on a non-leaf without changing anything.
  if (impl_->grad_fn) return const_cast<Tensor&>(*this);
  impl_->requires_grad = r;
  return const_cast<Tensor&>(*this);
}

Tensor& Tensor::requires_grad_(bool r) const {
  GRADLAB_TAPE("requires_grad_", requires_grad_(r), *this, r);
  checked();
  if (!is_leaf() && !r)
    throw std::runtime_error(
        "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
        "subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  return set_requires_grad(r);
}

namespace {
// A Tensor is its IntrusivePtr and nothing else, so an impl's grad (or base)
// pointer can be read as a Tensor handle in place, without a copy or a
// refcount change: grad() returns a reference, as LibTorch's does.
static_assert(sizeof(Tensor) == sizeof(IntrusivePtr<TensorImpl>) && alignof(Tensor) == alignof(IntrusivePtr<TensorImpl>));
static_assert(std::is_standard_layout_v<Tensor> && std::is_standard_layout_v<IntrusivePtr<TensorImpl>>);
Tensor& as_tensor(IntrusivePtr<TensorImpl>& p) { return reinterpret_cast<Tensor&>(p); }
}  // namespace

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  TensorImpl* impl = checked().get();
  if (stale_view(impl)) refresh_view_history(*this);
  if (tape::on() && impl->grad_fn) tape::read_grad_fn(*this, impl->grad_fn.get());
  return impl->grad_fn;
}

const Tensor& Tensor::grad() const {
  if (tape::on()) {
    // A reference to the slot is in the program's hands now: an assignment
    // through it (const_cast) is caught as mutable_grad's are.
    const Tensor& g = tape::record("grad", [&]() -> const Tensor& { return grad(); }, *this);
    tape::watch_grad_slot(*this);
    return g;
  }
  checked();
  // A Tensor handle over the impl's grad pointer, without copying it.
  const Tensor& g = as_tensor(impl_->grad);
  if (!g.defined() && !is_leaf() && !impl_->retains_grad)
    warn({"grad", "<include>/ATen/core/TensorBody.h", 480}, msg::kNonLeafGrad);
  return g;
}

Tensor& Tensor::mutable_grad() const {
  checked();
  if (tape::on()) {
    // The program holds the slot now: what it assigns there is written at
    // the next event (set_grad).
    Tensor& slot = tape::record("mutable_grad", [&]() -> Tensor& { return mutable_grad(); }, *this);
    tape::watch_grad_slot(*this);
    return slot;
  }
  return as_tensor(impl_->grad);
}

void Tensor::retain_grad() const {
  GRADLAB_TAPE("retain_grad", retain_grad(), *this);
  checked();
  if (!requires_grad()) throw Error("can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf() || impl_->retains_grad) return;
  impl_->retains_grad = true;
  autograd::impl::hooks_of(*this).entries.push_back({{}, true});
}

unsigned Tensor::_register_hook(std::function<Tensor(const Tensor&)> hook) const {
  checked();
  if (!requires_grad()) throw Error("cannot register a hook on a variable that doesn't require gradient");
  auto& entries = autograd::impl::hooks_of(*this).entries;
  entries.push_back({std::move(hook), false});
  return static_cast<unsigned>(entries.size() - 1);
}

void Tensor::remove_hook(unsigned pos) const {
  checked();
  autograd::TensorHooks* h = impl_->hooks.get();
  if (!h || pos >= h->entries.size()) throw Error(str_cat("Invalid index, no hook at position ", pos));
  h->entries[pos] = {};
}

bool Tensor::retains_grad() const { return checked()->retains_grad; }

int64_t Tensor::_version() const {
  const TensorImpl* i = checked().get();
  if (i->inference) throw Error("Inference tensors do not track version counter.");
  return i->version();
}

const Tensor& Tensor::_base() const { return as_tensor(checked()->base); }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  GRADLAB_TAPE("backward", backward(gradient, retain_graph, create_graph, inputs), *this, gradient, retain_graph,
               create_graph, inputs);
  if (!impl_) throw Error("cannot call get_autograd_meta() on undefined tensor");
  if (inputs && inputs->empty()) throw Error("'inputs' argument to backward cannot be empty");
  // Views of this tensor and its gradient: no lists are built for the common case.
  autograd::backward_impl(TensorList(*this), gradient.defined() ? TensorList(gradient) : TensorList(), retain_graph,
                          create_graph, inputs ? *inputs : TensorList());
}

Tensor Tensor::tensor_data() const {
  const TensorImpl* s = checked().get();
  Tensor r = alias_with_geometry(*this, s->sizes, s->strides, s->offset);
  r.impl()->wrapped_number = s->wrapped_number;
  return r;
}

Tensor Tensor::detach() const {
  GRADLAB_TAPE("detach", detach(), *this);
  // Shares storage and version counter; no history.
  // LibTorch reports it as no view (is_view() false), and in-place ops on it are allowed.
  return tensor_data();
}

Tensor& Tensor::detach_() const {
  GRADLAB_TAPE("detach_", detach_(), *this);
  checked();
  if (impl_->is_view && impl_->base)
    throw Error(
        "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
        "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
        "detach_() cannot be called on these gradients. To fix this error, please refer to the "
        "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  impl_->grad_fn.reset();
  impl_->requires_grad = false;
  impl_->output_nr = 0;
  return const_cast<Tensor&>(*this);
}

Tensor Tensor::data() const {
  GRADLAB_TAPE("data", data(), *this);
  // A new version counter: changes through .data() are invisible to autograd.
  Tensor r = tensor_data();
  r.impl()->separate_version = make_intrusive<VersionCounter>();
  return r;
}
Tensor Tensor::variable_data() const { return data(); }

void Tensor::set_data(const Tensor& new_data) const {
  GRADLAB_TAPE("set_data", set_data(new_data), *this, new_data);
  GRADLAB_CHECK(defined(), "set_data: the tensor is undefined");
  GRADLAB_CHECK(new_data.defined(), "set_data: new_data is undefined");
  TensorImpl* me = impl().get();
  const TensorImpl* src = new_data.impl().get();
  // The version counter keeps its count (LibTorch's shallow copy keeps the
  // counter itself): a graph that saved this tensor still checks against it.
  const uint32_t version = me->version();
  me->sizes = src->sizes;
  me->strides = src->strides;
  me->offset = src->offset;
  me->numel = src->numel;
  me->dtype = src->dtype;
  me->storage = src->storage;
  me->separate_version = make_intrusive<VersionCounter>();
  me->separate_version->version = version;
  me->refresh_contiguous();
}

// ------------------------------------------------------------ assignment into memory
Tensor& Tensor::operator=(const Tensor& o) && {
  copy_(o);
  return *this;
}
Tensor& Tensor::operator=(Scalar v) && {
  fill_(v);
  return *this;
}

Tensor Tensor::operator[](const Tensor& index) const { return this->index({index}); }

}  // namespace gradlab

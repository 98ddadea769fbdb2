// Shared machinery of the ops: recording nodes, broadcasting, dtype
// promotion, the in-place rules and views.
#include "backend/dispatch.h"
#include "ops/ops_internal.h"

namespace gradlab {

using autograd::Edge;

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!detail::grad_mode()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

bool needs_grad(TensorList inputs) {
  if (!detail::grad_mode()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

namespace {
Edge edge_of(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return Edge();
  return autograd::impl::gradient_edge(t);
}
}  // namespace

void connect(autograd::Node& node, std::initializer_list<const Tensor*> inputs) {
  auto& edges = node.mutable_next_edges();
  edges.reserve(inputs.size());
  for (const Tensor* t : inputs) edges.push_back(edge_of(*t));
}

void connect(autograd::Node& node, TensorList inputs) {
  auto& edges = node.mutable_next_edges();
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(edge_of(t));
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  if (a.equals(b)) return DimVector(a);
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(str_cat("The size of tensor a (", da, ") must match the size of tensor b (", db,
                          ") at non-singleton dimension ", i));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[shape.size() - 1 - i];
    const int64_t d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}

Tensor sum_to(const Tensor& g, IntArrayRef shape) {
  if (g.sizes().equals(shape)) return g;
  if (shape.empty()) return g.sum();  // as at::sum_to: one whole sum (SumBackward0), no view
  // Leading dims that broadcasting added, then dims that were 1.
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  DimVector dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && g.size(lead + static_cast<int64_t>(i)) != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  if (lead > 0 || !r.sizes().equals(shape)) r = r.view(shape);
  return r;
}
Tensor sum_to_size(const Tensor& g, IntArrayRef shape) { return sum_to(g, shape); }

Tensor new_empty(IntArrayRef sizes, ScalarType dtype, Device device) { return empty_tensor(sizes, dtype, device); }

namespace {
// Whether t's elements fill its span of memory once each, in some order of
// its dimensions (PyTorch's is_non_overlapping_and_dense).
bool dense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return t.size(a) < 2 ? false : t.size(b) < 2 ? true : t.stride(a) < t.stride(b);
  });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.size(d) == 1) continue;
    if (t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

Tensor empty_with_strides(IntArrayRef shape, IntArrayRef strides, ScalarType dtype, Device device) {
  Tensor flat = empty_tensor({numel_of(shape)}, dtype, device);
  return alias_with_geometry(flat, shape, strides, 0);
}
}  // namespace

// The layout TensorIterator gives an output it allocates (LibTorch 1.13's
// fast_set_up, then reorder_dimensions and allocate_or_resize_outputs): the
// inputs' strides when they all share them and are dense, else dense strides
// in the order of dimensions the inputs' strides sort them into, the first
// input with an opinion deciding. x.t() * 2 is transposed too, so a reshape
// of it copies (UnsafeViewBackward0) where a contiguous one would not.
Tensor empty_following(IntArrayRef shape, ScalarType dtype, Device device, std::initializer_list<const Tensor*> ins) {
  const int64_t n = static_cast<int64_t>(shape.size());
  bool contiguous = true, same = true, all_dense = true;
  const Tensor* first = nullptr;
  for (const Tensor* t : ins) {
    if (!t->defined()) continue;
    contiguous &= t->is_contiguous();
    same &= t->sizes().equals(shape);
    all_dense &= dense(*t);
    if (first && !first->strides().equals(t->strides())) same = false;
    if (!first) first = t;
  }
  if (n <= 1 || contiguous || !first) return empty_tensor(shape, dtype, device);
  if (same && all_dense) return empty_with_strides(shape, first->strides(), dtype, device);
  // Each input's strides over the output's dimensions (0 where it broadcasts).
  auto stride = [&](const Tensor* t, int64_t d) -> int64_t {
    const int64_t k = d - (n - t->dim());
    if (k < 0 || (t->size(k) == 1 && shape[static_cast<size_t>(d)] != 1)) return 0;
    return t->stride(k);
  };
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const Tensor* t : ins) {
      if (!t->defined()) continue;
      const int64_t s0 = stride(t, d0), s1 = stride(t, d1);
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[static_cast<size_t>(d0)] > shape[static_cast<size_t>(d1)]) return 1;
    }
    return 0;
  };
  std::vector<int64_t> perm(static_cast<size_t>(n));  // perm[0]: the fastest dimension
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = n - 1 - i;
  for (int64_t i = 1; i < n; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[static_cast<size_t>(d0)], perm[static_cast<size_t>(d1)]);
      if (c > 0) {
        std::swap(perm[static_cast<size_t>(d0)], perm[static_cast<size_t>(d1)]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool inverted = true;
  for (int64_t j = 0; j < n; ++j) inverted &= perm[static_cast<size_t>(j)] == n - 1 - j;
  if (inverted) return empty_tensor(shape, dtype, device);
  DimVector strides(shape);
  int64_t next = 1;
  for (int64_t j = 0; j < n; ++j) {
    const size_t d = static_cast<size_t>(perm[static_cast<size_t>(j)]);
    strides[d] = next;
    next *= shape[d];
  }
  return empty_with_strides(shape, strides.ref(), dtype, device);
}

// empty_like's MemoryFormat::Preserve: a dense tensor's own strides.
Tensor empty_preserving(const Tensor& t, ScalarType dtype, Device device) {
  if (t.is_contiguous() || !dense(t)) return empty_tensor(t.sizes(), dtype, device);
  return empty_with_strides(t.sizes(), t.strides(), dtype, device);
}

Tensor unary_kernel(backend::Unary op, const Tensor& x, double a, double b) {
  Tensor out = empty_following(x.sizes(), x.scalar_type(), x.device(), {&x});
  backend::of(x).unary(op, out, x, a, b);
  return out;
}

namespace {
Tensor as_type(const Tensor& t, ScalarType s) { return t.scalar_type() == s ? t : t.detach().to(s); }
}  // namespace

Tensor binary_kernel(backend::Binary op, const Tensor& a, const Tensor& b, ScalarType out_type, double alpha) {
  // The common case first: operands of the result's dtype, on one device, of
  // the same shape (no broadcasting, no conversion, nothing to decide).
  if (a.scalar_type() == out_type && b.scalar_type() == out_type && a.device() == b.device() &&
      a.sizes().equals(b.sizes()) && op < backend::Binary::Gt) {
    Tensor out = empty_following(a.sizes(), out_type, a.device(), {&a, &b});
    backend::of(a).binary(op, out, a, b, alpha);
    return out;
  }
  if (a.device() != b.device() && !(b.dim() == 0 && b.device().is_cpu()) && !(a.dim() == 0 && a.device().is_cpu()))
    throw Error(str_cat("Expected all tensors to be on the same device, but found at least two devices, ",
                        a.device().is_cuda() ? a.device().str() : b.device().str(), " and cpu!"));
  const bool compare = op >= backend::Binary::Gt;
  const ScalarType compute = compare ? promote_types(a.scalar_type(), b.scalar_type()) : out_type;
  const Device dev = a.dim() == 0 && a.device().is_cpu() ? b.device() : a.device();
  Tensor out = empty_following(broadcast_shapes(a.sizes(), b.sizes()).ref(), out_type, dev, {&a, &b});
  // Operands already of the compute dtype and on the device pass by reference
  // (the common case: no handle copies); others are converted into `tmp`.
  Tensor tmp_a, tmp_b;
  auto prepare = [&](const Tensor& t, Tensor& tmp) -> const Tensor& {
    if (t.scalar_type() == compute && t.device() == dev) return t;
    return tmp = as_type(t, compute).to(dev);
  };
  backend::for_device(dev).binary(op, out, prepare(a, tmp_a), prepare(b, tmp_b), alpha);
  return out;
}

void backend::Backend::gemm_transposed(const Tensor& out, const Tensor& a, bool trans_a, const Tensor& b,
                                       bool trans_b, double beta) {
  auto t = [](const Tensor& m) {
    return alias_with_geometry(m, {m.size(1), m.size(0)}, {m.stride(1), m.stride(0)}, m.storage_offset());
  };
  gemm(out, trans_a ? t(a) : a, trans_b ? t(b) : b, beta);
}

// The number goes straight into out's dtype, as the CPU backend's own kernel
// takes it: a double never passes through float on the way (a float64
// tensor times log(2.5) on the GPU was off by float's rounding).
void backend::Backend::binary_scalar(Binary op, const Tensor& out, const Tensor& a, Scalar s, double alpha) {
  binary(op, out, a, scalar_like(s, a, out.scalar_type()), alpha);
}

Tensor on_host(const Tensor& t) {
  autograd::NoGradGuard ng;
  return t.contiguous().to(Device(DeviceType::CPU));
}

Tensor scalar_like(Scalar s, const Tensor& like, ScalarType dtype) {
  Tensor t = gradlab::new_empty({}, dtype, like.device());
  backend::of(t).fill(t, s);
  t.impl()->wrapped_number = true;
  return t;
}

namespace {
// PyTorch's categories: a 0-d tensor or a number only decides the result
// type when it is of a higher category (bool < integer < floating).
int category(ScalarType t) { return t == ScalarType::Bool ? 0 : (is_floating(t) ? 2 : 1); }
}  // namespace

// Every binary op asks this first, so it is where an undefined operand is
// refused (as LibTorch's dispatcher refuses it) before anything reads it.
ScalarType result_type(const Tensor& a, const Tensor& b) {
  check_defined(a, 0, "self");
  check_defined(b, 1, "other");
  const bool a0 = a.dim() == 0, b0 = b.dim() == 0;
  if (a0 == b0) return promote_types(a.scalar_type(), b.scalar_type());
  const Tensor& dim_t = a0 ? b : a;
  const Tensor& zero_t = a0 ? a : b;
  if (category(zero_t.scalar_type()) > category(dim_t.scalar_type())) {
    // A wrapped number of a higher category gives the default dtype of that category.
    if (zero_t.unsafeGetTensorImpl()->wrapped_number && is_floating(zero_t.scalar_type())) return ScalarType::Float;
    return zero_t.scalar_type();
  }
  return dim_t.scalar_type();
}

ScalarType result_type(const Tensor& a, Scalar b) {
  check_defined(a, 0, "self");
  const ScalarType t = a.scalar_type();
  const int cb = b.isFloatingPoint() ? 2 : (b.isBoolean() ? 0 : 1);
  if (cb > category(t)) return cb == 2 ? ScalarType::Float : ScalarType::Long;
  return t;
}

void check_can_cast(ScalarType result, ScalarType out, OutName name) {
  GRADLAB_CHECK(category(result) <= category(out), "result type ", c10_name(result),
                " can't be cast to the desired output type ",
                name == OutName::CppType ? cpp_type_name(out) : c10_name(out));
}

Tensor ones_like_nograd(const Tensor& t) {
  Tensor r = gradlab::new_empty(t.sizes(), t.scalar_type(), t.device());
  backend::of(r).fill(r, 1);
  return r;
}

// ------------------------------------------------------------ in-place rules
namespace {
std::string view_rebase_error(const TensorImpl* view, bool indirect);
}  // namespace

void check_inplace(const Tensor& self, Overlap overlap) {
  check_defined(self);
  TensorImpl* impl = self.unsafeGetTensorImpl();
  if (impl->inference && !detail::inference_mode())
    throw Error(
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
        "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
  if (detail::grad_mode()) {
    if (impl->is_view && impl->base) {
      // LibTorch's check_inplace, in its order and before anything is
      // written: a view it may not rebase (made under no_grad, or one of
      // several outputs) first, then a view of a leaf.
      if (impl->creation_meta != CreationMeta::Default && self.requires_grad())
        throw Error(view_rebase_error(impl, /*indirect=*/false));
      TensorImpl* base = impl->base.get();
      if (!base->grad_fn && base->requires_grad) throw Error(msg::kViewOfLeafInplace);
    }
    if (!impl->grad_fn && impl->requires_grad) throw Error(msg::kLeafInplace);
  }
  if (overlap == Overlap::Refused) check_no_internal_overlap(self);
}

// An expanded tensor holds each value once for many elements: writing it
// in place would write the same memory several times (PyTorch's internal
// overlap check, after autograd's).
void check_no_internal_overlap(const Tensor& self) {
  const TensorImpl* impl = self.unsafeGetTensorImpl();
  for (size_t d = 0; d < impl->sizes.size(); ++d)
    GRADLAB_CHECK(impl->strides[d] != 0 || impl->sizes[d] <= 1,
                  "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.");
}

namespace {
// The element range [first, last] a non-empty tensor spans in its storage.
std::pair<int64_t, int64_t> span_of(const TensorImpl* t) {
  int64_t last = t->offset;
  for (size_t d = 0; d < t->sizes.size(); ++d) last += (t->sizes[d] - 1) * t->strides[d];
  return {t->offset, last};
}
}  // namespace

void check_no_partial_overlap(const Tensor& written, const Tensor& read) {
  const TensorImpl* w = written.unsafeGetTensorImpl();
  const TensorImpl* r = read.unsafeGetTensorImpl();
  if (w == r || !w->storage || w->storage.get() != r->storage.get() || written.numel() == 0 || read.numel() == 0) return;
  if (w->offset == r->offset && w->sizes.ref().equals(r->sizes.ref()) && w->strides.ref().equals(r->strides.ref()))
    return;  // the same memory, whole
  const auto [w0, w1] = span_of(w);
  const auto [r0, r1] = span_of(r);
  GRADLAB_CHECK(r1 < w0 || w1 < r0,
                "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
                "memory location. Please clone() the tensor before performing the operation.");
}

void bump_version(const Tensor& self) { self.unsafeGetTensorImpl()->version()++; }

namespace {
// Where a view lies in its base: its geometry, the offset counted from the base's.
struct Region {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;
};
// CopySlices: the region written in place, and the in-place op's own node,
// whose saved tensors go with the graph.
struct CopySlicesState : Region {
  std::shared_ptr<autograd::Node> fn;
  void release_variables() { fn->release_variables(); }
};
// AsStrided (the view's new history): its region and the base's shape.
struct AsStridedState : Region {
  DimVector base_sizes;
};

// Gradient of an in-place op applied through a view: the base's gradient with
// the op's backward applied to the viewed region.
GradList copy_slices_backward(Op<CopySlicesState>& n, Grads& g) {
  const Tensor& grad = g[0];
  GradList out(n.num_outputs());
  if (!grad.defined()) return out;
  Tensor result = grad.clone();
  Tensor region = alias_with_geometry(result, n.sizes, n.strides, n.offset);
  variable_list res = n.fn->apply({region.clone()});
  for (size_t i = 0; i < res.size(); ++i) {
    if (i == 0) {
      if (res[0].defined()) {
        autograd::NoGradGuard ng;
        region.copy_(res[0]);
      } else {
        region.zero_();
      }
      out[0] = result;
    } else if (i < out.size()) {
      out[i] = res[i];
    }
  }
  return out;
}

GradList as_strided_backward(Op<AsStridedState>& n, Grads& g) {
  // Scatter the view's gradient into a zero tensor of the base's geometry.
  Tensor base_grad = zeros(n.base_sizes.ref(), TensorOptions(g[0].scalar_type()).device(g[0].device()));
  Tensor view = alias_with_geometry(base_grad, n.sizes, n.strides, n.offset);
  {
    autograd::NoGradGuard ng;
    view.add_(g[0]);
  }
  return {base_grad};
}
}  // namespace

namespace {
// PyTorch's refusal of in-place changes that reach a view made in no_grad
// mode or by an op with several view outputs (split, chunk, unbind): on the
// view itself (direct) or through its base or a sibling view (indirect).
std::string view_rebase_error(const TensorImpl* view, bool indirect) {
  std::string msg = view->grad_fn ? str_cat("Output ", view->output_nr, " of ", view->grad_fn->name(), " is a view and ")
                                  : std::string("A view was created in no_grad mode and ");
  msg += indirect ? "its base or another view of its base has been modified inplace" : "is being modified inplace";
  if (view->creation_meta == CreationMeta::MultiOutput)
    return msg + ". This view is the output of a function that returns multiple views. Such functions do not "
                 "allow the output views to be modified inplace. You should replace the inplace operation by an "
                 "out-of-place one.";
  if (view->creation_meta == CreationMeta::InCustomFunction)
    return msg + ". This view was created inside a custom Function (or because an input was returned as-is) and the "
                 "autograd logic to handle view+inplace would override the custom backward associated with the custom "
                 "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
                 "the output of the custom Function.";
  return msg + " with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
               "You can clarify your code by moving both the view and the inplace either both inside the no_grad "
               "block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
               "tracked).";
}

Region region_in_base(const Tensor& view, const Tensor& base) {
  return {DimVector(view.sizes()), DimVector(view.strides()),
          view.unsafeGetTensorImpl()->offset - base.unsafeGetTensorImpl()->offset};
}
}  // namespace

void refresh_view_history(const Tensor& view) {
  TensorImpl* impl = view.unsafeGetTensorImpl();
  const bool in_graph = base_in_graph(impl);
  if (!impl->grad_fn && !in_graph) return;  // outside any graph: nothing to redo
  if (impl->creation_meta != CreationMeta::Default) throw Error(view_rebase_error(impl, /*indirect=*/true));
  // The view's values now come from its base's new history: read it, as
  // PyTorch does, as an as_strided of the base.
  Tensor base(impl->base);
  auto as = detail::make_pooled<Op<AsStridedState>>("AsStridedBackward0", as_strided_backward,
                                                    AsStridedState{region_in_base(view, base), DimVector(base.sizes())});
  as->mutable_next_edges().push_back(in_graph ? autograd::impl::gradient_edge(base) : autograd::Edge());
  autograd::impl::rebase_history(view, as);
}

void check_rebase(const Tensor& self, const std::shared_ptr<autograd::Node>& fn) {
  const TensorImpl* impl = self.unsafeGetTensorImpl();
  if (fn && impl->is_view && impl->base && impl->creation_meta != CreationMeta::Default)
    throw Error(view_rebase_error(impl, /*indirect=*/false));
}

void finish_inplace(const Tensor& self, const std::shared_ptr<autograd::Node>& fn) {
  TensorImpl* impl = self.unsafeGetTensorImpl();
  if (impl->is_view && impl->base && impl->creation_meta != CreationMeta::Default)
    throw Error(view_rebase_error(impl, /*indirect=*/false));
  if (!(impl->is_view && impl->base)) {
    autograd::impl::rebase_history(self, fn);
    return;
  }
  // fn's own metadata must describe the view's value it differentiates.
  fn->add_input_metadata(self);
  rebase_view_history(self, fn);
}

// In-place through a view: the base's history becomes CopySlices(base's old
// history, fn), and the view reads from it. So `p[1] = q` puts q in p's graph
// even when p was outside any graph (its edge is then empty). fn's first
// edge is the view's, the one CopySlices sends to the base instead.
void rebase_view_history(const Tensor& self, const std::shared_ptr<autograd::Node>& fn) {
  TensorImpl* impl = self.unsafeGetTensorImpl();
  Tensor base(impl->base);
  const Region region = region_in_base(self, base);
  auto cs = detail::make_pooled<Op<CopySlicesState>>("torch::autograd::CopySlices", copy_slices_backward,
                                                     CopySlicesState{region, fn});
  auto& edges = cs->mutable_next_edges();
  edges.push_back(base_in_graph(impl) ? autograd::impl::gradient_edge(base) : autograd::Edge());
  for (size_t i = 1; i < fn->untaped_next_edges().size(); ++i) edges.push_back(fn->untaped_next_edges()[i]);
  autograd::impl::rebase_history(base, cs);

  auto as = detail::make_pooled<Op<AsStridedState>>("AsStridedBackward0", as_strided_backward,
                                                    AsStridedState{region, DimVector(base.sizes())});
  as->mutable_next_edges().push_back(autograd::Edge(cs, 0));
  autograd::impl::rebase_history(self, as);
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor v = alias_with_geometry(base, sizes, strides, offset);
  TensorImpl* vi = v.unsafeGetTensorImpl();
  TensorImpl* bi = base.unsafeGetTensorImpl();
  vi->is_view = true;
  vi->base = bi->is_view && bi->base ? bi->base : base.impl();
  vi->creation_meta = detail::grad_mode() ? CreationMeta::Default : CreationMeta::NoGradMode;
  vi->attr_version = vi->version();
  return v;
}

}  // namespace gradlab

// Views and shape ops: view, reshape, transpose, squeeze, expand, select,
// slice, split; plus clone, contiguous, dtype/device copies, cat and stack.
// A view shares storage and the version counter with its base.
#include <algorithm>
#include <numeric>

#include "ops/ops_internal.h"

namespace gradlab {

namespace {

// As LibTorch 1.13's infer_size, errors included: two of them are plain
// std::runtime_errors there, not c10::Errors.
DimVector infer_size(IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw std::runtime_error("only one dimension can be inferred");
      infer = static_cast<int>(i);
    } else {
      GRADLAB_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (numel != known && (infer < 0 || known == 0 || numel % known != 0))
    throw std::runtime_error(str_cat("shape '", shape, "' is invalid for input of size ", numel));
  if (infer >= 0) {
    GRADLAB_CHECK(known != 0, "cannot reshape tensor of 0 elements into shape ", shape,
                  " because the unspecified dimension size -1 can be any value and is ambiguous");
    out[static_cast<size_t>(infer)] = numel / known;
  }
  return out;
}

// Strides for viewing `t` as `shape` without copying, if possible (PyTorch's computeStride).
std::optional<DimVector> view_strides(const Tensor& t, IntArrayRef shape) {
  if (t.numel() == 0 || t.is_contiguous()) return contiguous_strides(shape);
  IntArrayRef old_sizes = t.sizes(), old_strides = t.strides();
  DimVector new_strides(shape.size(), 0);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[static_cast<size_t>(d)];
    if (d == 0 || (old_sizes[static_cast<size_t>(d - 1)] != 1 &&
                   old_strides[static_cast<size_t>(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1)) {
        new_strides[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= shape[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[static_cast<size_t>(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

GradList reshape_bw(Op<InputSizes>& n, Grads& g) { return {g[0].reshape(n.sizes)}; }
// The two dims a transpose swapped.
struct DimPair {
  int64_t d0, d1;
};
GradList transpose_bw(Op<DimPair>& n, Grads& g) { return {g[0].transpose(n.d0, n.d1)}; }
GradList t_bw(PlainOp&, Grads& g) { return {g[0].t()}; }
// The order permute put the dims in (wrapped).
struct DimOrder {
  DimVector dims;
};
GradList permute_bw(Op<DimOrder>& n, Grads& g) {
  DimVector inv(n.dims.size(), 0);
  for (size_t i = 0; i < n.dims.size(); ++i) inv[static_cast<size_t>(n.dims[i])] = static_cast<int64_t>(i);
  return {g[0].permute(inv)};
}
// The one dim an op added, removed or ran along (unsqueeze, stack, cat).
struct AlongDim {
  int64_t dim;
};
GradList unsqueeze_bw(Op<AlongDim>& n, Grads& g) { return {g[0].squeeze(n.dim)}; }
GradList expand_bw(Op<InputSizes>& n, Grads& g) { return {sum_to(g[0], n.sizes)}; }
// repeat: the gradient sums the copies. The dims repeat put in front are
// summed away one by one; each other dim d repeated r > 1 times is read as
// [r, s_d] and summed over r, all in one reshape and one sum, as PyTorch's
// repeat_backward does (so its graph under create_graph is PyTorch's too).
struct Repeats {
  DimVector sizes;    // the input's
  DimVector repeats;  // as given
};
GradList repeat_bw(Op<Repeats>& n, Grads& g) {
  if (std::find(n.repeats.begin(), n.repeats.end(), 0) != n.repeats.end())
    return {zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()))};
  Tensor grad = g[0];
  const size_t front = n.repeats.size() - n.sizes.size();
  for (size_t i = 0; i < front; ++i) grad = grad.sum({0});
  DimVector split, summed;
  for (size_t d = 0; d < n.sizes.size(); ++d) {
    if (n.repeats[front + d] != 1) {
      summed.push_back(static_cast<int64_t>(split.size()));
      split.push_back(n.repeats[front + d]);
    }
    split.push_back(n.sizes[d]);
  }
  if (!summed.empty()) grad = grad.reshape(split).sum(summed);
  return {grad};
}
// select and slice: the input's shape and where the view lies in it.
struct Selection {
  DimVector sizes;
  int64_t dim = 0;
  int64_t start = 0;  // select's index
  int64_t end = 0;
  int64_t step = 1;
  bool is_slice = false;
};
Tensor select_again(const Selection& s, const Tensor& t) {
  return s.is_slice ? t.slice(s.dim, s.start, s.end, s.step) : t.select(s.dim, s.start);
}
// The backward's own backward (create_graph): it is linear in g, so its
// gradient is the same selection of the incoming one.
GradList select_backward_bw(Op<Selection>& n, Grads& g) { return {select_again(n, g[0])}; }
// select/slice: the gradient lands in the selected region of a zero tensor.
// Under create_graph that is an op of its own, as PyTorch's select_backward.
// Written below autograd, as inside PyTorch's select_backward kernel: no
// node, and no version step (the gradient is at version 0).
GradList select_bw(Op<Selection>& n, Grads& g) {
  Tensor r = zeros(n.sizes, TensorOptions(g[0].scalar_type()).device(g[0].device()));
  {
    autograd::NoGradGuard ng;
    backend::of(r).copy(select_again(n, r), g[0]);
  }
  const char* name = n.is_slice ? "SliceBackwardBackward0" : "SelectBackwardBackward0";
  if (auto fn = record(name, {&g[0]}, select_backward_bw, static_cast<const Selection&>(n))) finish(std::move(fn), r);
  return {r};
}
GradList identity_bw(PlainOp&, Grads& g) { return {g[0]}; }
GradList to_copy_bw(Op<Origin>& n, Grads& g) { return {g[0].to(n.dtype).to(Device(n.device))}; }
// cat, split and unbind: the dim, and the length of each part along it.
struct Parts {
  int64_t dim = 0;
  DimVector lengths;
  bool unbind = false;  // the parts lost the dim (unbind) or kept it (split)
};
GradList cat_bw(Op<Parts>& n, Grads& g) {
  GradList r;
  int64_t start = 0;
  for (size_t i = 0; i < n.lengths.size(); ++i) {
    r.push_back(g[0].narrow(n.dim, start, n.lengths[i]));
    start += n.lengths[i];
  }
  return r;
}
// Each input's gradient is its select of g, as in PyTorch (not one unbind).
GradList stack_bw(Op<AlongDim>& n, Grads& g) {
  GradList r;
  for (int64_t i = 0; i < g[0].size(n.dim); ++i) r.push_back(g[0].select(n.dim, i));
  return r;
}
// Multi-output split/unbind: undefined output gradients count as zeros.
GradList split_bw(Op<Parts>& n, Grads& g) {
  const int64_t dim = n.dim;
  variable_list parts;
  for (size_t i = 0; i < n.lengths.size(); ++i) {
    if (i < g.size() && g[i].defined()) {
      parts.push_back(g[i]);
    } else {
      DimVector s(n.input_metadata(i).shape);
      parts.push_back(zeros(s, TensorOptions(n.input_metadata(i).dtype).device(n.input_metadata(i).device)));
    }
  }
  return {n.unbind ? stack(parts, dim) : cat(parts, dim)};
}

template <class State = NoState, class Make = State>
Tensor view_op(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset, const char* name,
               GradList (*bw)(Op<State>&, Grads&), Make&& state = State{}) {
  Tensor v = make_view(self, sizes, strides, offset);
  if (auto fn = record(name, {&self}, bw, std::forward<Make>(state))) finish(std::move(fn), v);
  return v;
}
}  // namespace

Tensor Tensor::view(IntArrayRef shape) const {
  GRADLAB_TAPE("view", view(shape), *this, shape);
  checked();
  DimVector s = infer_size(shape, numel());
  auto st = view_strides(*this, s);
  GRADLAB_CHECK(st.has_value(),
                "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                "across two contiguous subspaces). Use .reshape(...) instead.");
  return view_op(*this, s, *st, storage_offset(), "ViewBackward0", reshape_bw, sizes_of(*this));
}

Tensor Tensor::reshape(IntArrayRef shape) const {
  GRADLAB_TAPE("reshape", reshape(shape), *this, shape);
  checked();
  DimVector s = infer_size(shape, numel());
  if (auto st = view_strides(*this, s))
    return view_op(*this, s, *st, storage_offset(), "ReshapeAliasBackward0", reshape_bw, sizes_of(*this));
  Tensor c = clone();
  Tensor out = alias_with_geometry(c, s, contiguous_strides(s), 0);
  if (auto fn = record("UnsafeViewBackward0", {&c}, reshape_bw, sizes_of(c))) finish(std::move(fn), out);
  return out;
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  GRADLAB_TAPE("flatten", flatten(start_dim, end_dim), *this, start_dim, end_dim);
  checked();
  if (dim() == 0) return reshape({1});
  start_dim = wrap_dim(start_dim, dim());
  end_dim = wrap_dim(end_dim, dim());
  GRADLAB_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (start_dim == end_dim) return *this;
  DimVector s;
  for (int64_t d = 0; d < start_dim; ++d) s.push_back(size(d));
  int64_t m = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) m *= size(d);
  s.push_back(m);
  for (int64_t d = end_dim + 1; d < dim(); ++d) s.push_back(size(d));
  return reshape(s);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  GRADLAB_TAPE("transpose", transpose(d0, d1), *this, d0, d1);
  checked();
  const int64_t nd = dim();
  d0 = wrap_dim(d0, nd);
  d1 = wrap_dim(d1, nd);
  DimVector s(sizes()), st(strides());
  if (nd > 0) {
    std::swap(s[static_cast<size_t>(d0)], s[static_cast<size_t>(d1)]);
    std::swap(st[static_cast<size_t>(d0)], st[static_cast<size_t>(d1)]);
  }
  return view_op(*this, s, st, storage_offset(), "TransposeBackward0", transpose_bw, DimPair{d0, d1});
}

Tensor Tensor::t() const {
  GRADLAB_TAPE("t", t(), *this);
  checked();
  GRADLAB_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  DimVector s(sizes()), st(strides());
  std::reverse(s.begin(), s.end());
  std::reverse(st.begin(), st.end());
  return view_op(*this, s, st, storage_offset(), "TBackward0", t_bw);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  GRADLAB_TAPE("permute", permute(dims), *this, dims);
  checked();
  GRADLAB_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = ", dim(), " is not equal to len(dims) = ", dims.size());
  DimVector s, st, wrapped;
  for (auto d : dims) {
    int64_t w = wrap_dim(d, dim());
    GRADLAB_CHECK(std::find(wrapped.begin(), wrapped.end(), w) == wrapped.end(),
                  "permute(): duplicate dims are not allowed.");
    wrapped.push_back(w);
    s.push_back(size(w));
    st.push_back(stride(w));
  }
  return view_op(*this, s, st, storage_offset(), "PermuteBackward0", permute_bw, [&] { return DimOrder{wrapped}; });
}

Tensor Tensor::squeeze() const {
  GRADLAB_TAPE("squeeze", squeeze(), *this);
  checked();
  DimVector s, st;
  for (int64_t d = 0; d < dim(); ++d)
    if (size(d) != 1) {
      s.push_back(size(d));
      st.push_back(stride(d));
    }
  return view_op(*this, s, st, storage_offset(), "SqueezeBackward0", reshape_bw, sizes_of(*this));
}

Tensor Tensor::squeeze(int64_t d) const {
  GRADLAB_TAPE("squeeze", squeeze(d), *this, d);
  checked();
  d = wrap_dim(d, dim());
  DimVector s(sizes()), st(strides());
  if (dim() > 0 && size(d) == 1) {
    s.erase(static_cast<size_t>(d));
    st.erase(static_cast<size_t>(d));
  }
  return view_op(*this, s, st, storage_offset(), "SqueezeBackward1", reshape_bw, sizes_of(*this));
}

Tensor& Tensor::squeeze_(int64_t d) const {
  checked();
  d = wrap_dim(d, dim());
  auto fn = record("SqueezeBackward3", {this}, reshape_bw, sizes_of(*this));
  if (dim() > 0 && size(d) == 1) {
    impl()->sizes.erase(static_cast<size_t>(d));
    impl()->strides.erase(static_cast<size_t>(d));
    impl()->refresh_contiguous();
  }
  Tensor& self = const_cast<Tensor&>(*this);
  bump_version(self);
  if (fn) autograd::impl::rebase_history(self, fn);
  return self;
}

Tensor Tensor::unsqueeze(int64_t d) const {
  GRADLAB_TAPE("unsqueeze", unsqueeze(d), *this, d);
  checked();
  d = wrap_dim(d, dim() + 1);
  DimVector s(sizes()), st(strides());
  const int64_t new_stride = d >= dim() ? 1 : size(d) * stride(d);
  s.insert(static_cast<size_t>(d), 1);
  st.insert(static_cast<size_t>(d), new_stride);
  return view_op(*this, s, st, storage_offset(), "UnsqueezeBackward0", unsqueeze_bw, AlongDim{d});
}

Tensor Tensor::repeat(IntArrayRef repeats) const {
  GRADLAB_TAPE("repeat", repeat(repeats), *this, repeats);
  checked();
  GRADLAB_CHECK(static_cast<int64_t>(repeats.size()) >= dim(),
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const size_t pad = repeats.size() - static_cast<size_t>(dim());
  DimVector target, interleaved, strides;
  for (size_t i = 0; i < repeats.size(); ++i) {
    GRADLAB_CHECK(repeats[i] >= 0, "Trying to create tensor with negative dimension ", repeats[i], ": ", repeats);
    const int64_t s = i < pad ? 1 : size(static_cast<int64_t>(i - pad));
    target.push_back(s * repeats[i]);
    interleaved.push_back(repeats[i]);
    interleaved.push_back(s);
    strides.push_back(0);  // every repeat reads the same input
    strides.push_back(i < pad ? 0 : stride(static_cast<int64_t>(i - pad)));
  }
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = alias_with_geometry(*this, interleaved, strides, storage_offset()).contiguous().view(target);
  }
  out = out.tensor_data();
  if (auto fn = record("RepeatBackward0", {this}, repeat_bw, [&] { return Repeats{DimVector(sizes()), DimVector(repeats)}; }))
    finish(std::move(fn), out);
  return out;
}

Tensor Tensor::expand(IntArrayRef size_arg, bool) const {
  GRADLAB_TAPE("expand", expand(size_arg), *this, size_arg);
  checked();
  GRADLAB_CHECK(size_arg.size() >= static_cast<size_t>(dim()), "expand(", toString(), "{", sizes(),
                "}, size=", size_arg, "): the number of sizes provided (", size_arg.size(),
                ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
  const size_t nd = size_arg.size();
  const size_t off = nd - static_cast<size_t>(dim());
  DimVector s(nd, 0), st(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    int64_t want = size_arg[i];
    if (i < off) {
      GRADLAB_CHECK(want >= 0, "The expanded size of the tensor (", want, ") isn't allowed in a leading, non-existing dimension ", i);
      s[i] = want;
      st[i] = 0;
      continue;
    }
    const int64_t have = sizes()[i - off];
    if (want == -1) want = have;
    GRADLAB_CHECK(have == want || have == 1, "The expanded size of the tensor (", want,
                  ") must match the existing size (", have, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", size_arg, ".  Tensor sizes: ", sizes());
    s[i] = want;
    st[i] = have == want ? strides()[i - off] : 0;
  }
  return view_op(*this, s, st, storage_offset(), "ExpandBackward0", expand_bw, sizes_of(*this));
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  GRADLAB_TAPE("select", select(d, index), *this, d, index);
  checked();
  GRADLAB_CHECK(dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  d = wrap_dim(d, dim());
  const int64_t n = size(d);
  GRADLAB_CHECK(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ", sizes(),
                " at dimension ", d);
  if (index < 0) index += n;
  DimVector s(sizes()), st(strides());
  s.erase(static_cast<size_t>(d));
  st.erase(static_cast<size_t>(d));
  return view_op(*this, s, st, storage_offset() + index * stride(d), "SelectBackward0", select_bw,
                 [&] { return Selection{DimVector(sizes()), d, index}; });
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt, int64_t step) const {
  GRADLAB_TAPE("slice", slice(d, start_opt, end_opt, step), *this, d, start_opt, end_opt, step);
  checked();
  GRADLAB_CHECK(dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  GRADLAB_CHECK(step > 0, "slice step must be positive");
  d = wrap_dim(d, dim());
  const int64_t n = size(d);
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  DimVector s(sizes()), st(strides());
  s[static_cast<size_t>(d)] = (end - start + step - 1) / step;
  st[static_cast<size_t>(d)] *= step;
  return view_op(*this, s, st, storage_offset() + start * stride(d), "SliceBackward0", select_bw,
                 [&] { return Selection{DimVector(sizes()), d, start, end, step, /*is_slice=*/true}; });
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  GRADLAB_TAPE("narrow", narrow(d, start, length), *this, d, start, length);
  checked();
  GRADLAB_CHECK(dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t n = size(d);
  if (start != n) start = wrap_dim(start, n);  // a negative start counts from the end; n itself is allowed
  GRADLAB_CHECK(length >= 0 && start <= n - length, "start (", start, ") + length (", length,
                ") exceeds dimension size (", n, ").");
  return slice(d, start, start + length);
}

namespace {
std::vector<Tensor> multi_output_views(const Tensor& self, int64_t dim, const std::vector<int64_t>& starts,
                                       const std::vector<int64_t>& lengths, bool unbind) {
  std::vector<Tensor> out;
  auto fn = record(unbind ? "UnbindBackward0" : "SplitBackward0", {&self}, split_bw,
                   [&] { return Parts{dim, DimVector(IntArrayRef(lengths)), unbind}; });
  for (size_t i = 0; i < starts.size(); ++i) {
    DimVector s(self.sizes()), st(self.strides());
    const int64_t off = self.storage_offset() + starts[i] * self.stride(dim);
    if (unbind) {
      s.erase(static_cast<size_t>(dim));
      st.erase(static_cast<size_t>(dim));
    } else {
      s[static_cast<size_t>(dim)] = lengths[i];
    }
    Tensor v = make_view(self, s, st, off);
    v.unsafeGetTensorImpl()->creation_meta = CreationMeta::MultiOutput;
    if (fn) finish(fn, v, static_cast<uint32_t>(i));
    out.push_back(v);
  }
  return out;
}
}  // namespace

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const {
  GRADLAB_TAPE("split", split(split_size, d), *this, split_size, d);
  checked();
  d = wrap_dim(d, dim());
  GRADLAB_CHECK(split_size > 0 || size(d) == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ", size(d));
  std::vector<int64_t> starts, lengths;
  for (int64_t s = 0; s < size(d); s += split_size) {
    starts.push_back(s);
    lengths.push_back(std::min(split_size, size(d) - s));
  }
  return multi_output_views(*this, d, starts, lengths, false);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  GRADLAB_TAPE("chunk", chunk(chunks, d), *this, chunks, d);
  checked();
  GRADLAB_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  d = wrap_dim(d, dim());
  return split((size(d) + chunks - 1) / chunks, d);
}

std::vector<Tensor> Tensor::unbind(int64_t d) const {
  GRADLAB_TAPE("unbind", unbind(d), *this, d);
  checked();
  d = wrap_dim(d, dim());
  std::vector<int64_t> starts, lengths;
  for (int64_t s = 0; s < size(d); ++s) {
    starts.push_back(s);
    lengths.push_back(1);
  }
  return multi_output_views(*this, d, starts, lengths, true);
}

// ------------------------------------------------------------ copies
Tensor Tensor::clone() const {
  GRADLAB_TAPE("clone", clone(), *this);
  checked();
  Tensor out = gradlab::new_empty(sizes(), scalar_type(), device());
  backend::of(*this).copy(out, *this);
  if (auto fn = record("CloneBackward0", {this}, identity_bw)) finish(fn, out);
  return out;
}

Tensor Tensor::contiguous() const {
  GRADLAB_TAPE("contiguous", contiguous(), *this);
  checked();
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::to(const TensorOptions& o, bool, bool copy) const {
  GRADLAB_TAPE("to", to(o, false, copy), *this, o, copy);
  checked();
  GRADLAB_CHECK(!o.requires_grad(),
                "Operators taking TensorOptions cannot take a TensorOptions with options.requires_grad set as true. "
                "This isn't implemented yet.");
  const ScalarType t = o.has_dtype() ? o.dtype() : scalar_type();
  const Device d = o.has_device() ? o.device() : device();
  if (!copy && t == scalar_type() && d == device()) return *this;
  Tensor out = gradlab::new_empty(sizes(), t, d);
  if (d == device()) {
    backend::of(*this).copy(out, *this);
  } else {
    // Cross-device copies go through the non-CPU backend, which knows both sides.
    backend::Backend& b = d.is_cpu() ? backend::of(*this) : backend::for_device(d);
    b.copy(out, *this);
  }
  if (is_floating(t) && is_floating(scalar_type())) {
    if (auto fn = record("ToCopyBackward0", {this}, to_copy_bw, Origin{scalar_type(), device().type()}))
      finish(std::move(fn), out);
  }
  return out;
}
Tensor Tensor::to(ScalarType t, bool nb, bool copy) const { return to(TensorOptions(t), nb, copy); }
Tensor Tensor::to(Device d, bool nb, bool copy) const { return to(TensorOptions(d), nb, copy); }
Tensor Tensor::to(Device d, ScalarType t, bool nb, bool copy) const { return to(TensorOptions(t).device(d), nb, copy); }
Tensor Tensor::cpu() const { return to(Device(DeviceType::CPU)); }
Tensor Tensor::cuda() const { return to(Device(DeviceType::CUDA, 0)); }

// ------------------------------------------------------------ cat / stack
Tensor cat(TensorList tensors, int64_t dim) {
  GRADLAB_TAPE("cat", cat(tensors, dim), tensors, dim);
  GRADLAB_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    GRADLAB_CHECK(!tensors[i].defined() || tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i,
                  ") cannot be concatenated");
  const Tensor& first = tensors[0];
  dim = wrap_dim(dim, first.dim());
  ScalarType rt = first.scalar_type();
  int64_t total = 0;
  DimVector lengths;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_defined(t, static_cast<int>(i), "tensors");
    GRADLAB_CHECK(t.dim() == first.dim(), "Tensors must have same number of dimensions: got ", first.dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      GRADLAB_CHECK(d == dim || t.size(d) == first.size(d), "Sizes of tensors must match except in dimension ", dim,
                    ". Expected size ", first.size(d), " but got size ", t.size(d), " for tensor number ", i,
                    " in the list.");
    rt = promote_types(rt, t.scalar_type());
    total += t.size(dim);
    lengths.push_back(t.size(dim));
  }
  DimVector s(first.sizes());
  s[static_cast<size_t>(dim)] = total;
  Tensor out = gradlab::new_empty(s, rt, first.device());
  int64_t start = 0;
  for (const Tensor& t : tensors) {
    Tensor region = alias_with_geometry(out, t.sizes(), out.strides(), start * out.stride(dim));
    backend::of(out).copy(region, t);
    start += t.size(dim);
  }
  if (auto fn = record("CatBackward0", tensors, cat_bw, [&] { return Parts{dim, lengths}; })) finish(std::move(fn), out);
  return out;
}

Tensor stack(TensorList tensors, int64_t dim) {
  GRADLAB_TAPE("stack", stack(tensors, dim), tensors, dim);
  GRADLAB_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  dim = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    GRADLAB_CHECK(tensors[i].sizes().equals(tensors[0].sizes()), "stack expects each tensor to be equal size, but got ",
                  tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
    parts.push_back(tensors[i].detach().unsqueeze(dim));
  }
  Tensor out;
  {
    autograd::NoGradGuard ng;
    out = cat(parts, dim);
  }
  if (auto fn = record("StackBackward0", tensors, stack_bw, AlongDim{dim})) finish(std::move(fn), out);
  return out;
}

Tensor t(const Tensor& a) { return a.t(); }
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) { return a.transpose(d0, d1); }
Tensor reshape(const Tensor& a, IntArrayRef s) { return a.reshape(s); }
Tensor flatten(const Tensor& a, int64_t s, int64_t e) { return a.flatten(s, e); }
Tensor squeeze(const Tensor& a) { return a.squeeze(); }
Tensor squeeze(const Tensor& a, int64_t d) { return a.squeeze(d); }
Tensor unsqueeze(const Tensor& a, int64_t d) { return a.unsqueeze(d); }

}  // namespace gradlab

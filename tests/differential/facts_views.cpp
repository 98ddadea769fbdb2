// The third differential program: views and in-place changes, where a wrong
// graph gives a wrong gradient without any error. A view whose base (or a
// sibling view) changed in place reads its history anew, as an
// AsStridedBackward0 of the base; a write through a view puts the source in
// the base's graph (CopySlices), even for a base outside any graph; views
// made in no_grad mode or by split/chunk/unbind refuse such changes with
// PyTorch's errors; and a leaf's first gradient is copied as LibTorch copies
// it. Advanced indexing and index_put_ are here too: an index read or write
// by tensors is a graph node of its own whose gradient scatters or gathers.
// Built against gradlab and LibTorch; compare.cpp checks they agree.
#include "facts_common.h"

namespace {

using namespace facts;
using namespace torch::indexing;

Tensor leaf4() { return torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::requires_grad()); }

void stale_views() {
  {  // the base changed after the view was taken
    Tensor w = leaf4(), base = w * 1, v = base[1];
    base.mul_(2);
    fact("stale.view", v);
    v.backward();
    fact("stale.leaf", w);
  }
  {  // a sibling view changed: the other view reads the base's CopySlices
    Tensor w = leaf4(), base = w * 1, v1 = base.narrow(0, 0, 2), v2 = base.narrow(0, 2, 2);
    v1.mul_(3);
    emit("sibling.graph", {{"graph", graph_desc(v2.grad_fn())}});
    (v2 * v2).sum().backward();
    fact("sibling.leaf", w);
    fact("sibling.base", base);
  }
  {  // a view of a view
    Tensor w = leaf4(), base = w * 1, vv = base.view({2, 2})[0];
    base.add_(1);
    emit("nested.graph", {{"graph", graph_desc(vv.grad_fn())}});
    vv.sum().backward();
    fact("nested.leaf", w);
  }
  {  // changed through a detached alias: the same memory, so the view is stale too
    Tensor w = leaf4(), base = w * 1, v = base[0];
    base.detach().mul_(2);
    fact("detached.view", v);
    v.backward();
    fact("detached.leaf", w);
  }
  {  // a view changed under no_grad reads its new history in grad mode
    Tensor w = leaf4(), base = w * 1, v = base[0];
    {
      torch::NoGradGuard ng;
      v.mul_(2);
    }
    fact("nograd_inplace.view", v);
    base.sum().backward();
    fact("nograd_inplace.leaf", w);
  }
  {  // a hook on the view's old history is not called for its new one
    Tensor w = leaf4(), base = w * 1, v = base[1];
    std::vector<std::string> seen;
    v.register_hook([&seen](Tensor) { seen.push_back("hook"); });
    base.mul_(2);
    (v * 3).backward();
    emit("stale.hook", {{"calls", seen}});
    fact("stale.hook.leaf", w);
  }
  {  // the version error names the saved view's current history
    Tensor w = leaf4(), base = w * 1, v = base.view({2, 2});
    Tensor y = v.exp();
    Tensor z = v * y;
    base.mul_(2);
    attempt("stale.saved_view", [&] { z.sum().backward(); });
  }
}

void writes_into_views() {
  {  // p[1] = q: q joins p's graph even though p was in none
    Tensor q = torch::tensor(7.0, torch::requires_grad()), p = torch::zeros({3});
    p[1] = q;
    fact("setitem.base", p);
    (p * torch::tensor({1.0, 2.0, 3.0})).sum().backward();
    fact("setitem.source", q);
  }
  {  // a view of such a base, taken before the write
    Tensor w = leaf4(), b = torch::zeros({4}), v = b.narrow(0, 0, 2);
    b.copy_(w);
    fact("copy_into_base.view", v);
    (v * v).sum().backward();
    fact("copy_into_base.leaf", w);
  }
  {  // expanded tensors refuse in-place writes, but fill_ and zero_ write one value
    Tensor a = torch::tensor({1.f, 2.f, 3.f}), ex = a.expand({2, 3});
    attempt("expanded.add_", [&] { ex.add_(1); });
    attempt("expanded.copy_", [&] { ex.copy_(torch::ones({2, 3})); });
    attempt("expanded.fill_", [&] { ex.fill_(2); });
    fact("expanded.base", a);
  }
}

void view_errors() {
  Tensor w = leaf4();
  {  // made in no_grad mode, changed in grad mode: directly and through the base
    Tensor base = w * 1, v, base2 = w * 1, v2;
    {
      torch::NoGradGuard ng;
      v = base[0];
      v2 = base2[0];
    }
    fact("nograd_view", v);
    attempt("nograd_view.inplace", [&] { v.mul_(2); });
    base2.mul_(2);
    attempt("nograd_view.base_changed", [&] { (void)v2.grad_fn(); });
    attempt("nograd_view.base_changed.use", [&] { (v2 * 2).sum().backward(); });
  }
  {  // several views from one op (split, chunk, unbind)
    Tensor base = w * 1;
    auto parts = base.split(2);
    attempt("split.inplace", [&] { parts[0].mul_(2); });
    attempt("chunk.inplace", [&] { base.chunk(2)[1].add_(1); });
    attempt("unbind.inplace", [&] { (w * 1).view({2, 2}).unbind(0)[0].zero_(); });
    base.mul_(2);
    attempt("split.base_changed", [&] { (void)parts[1].grad_fn(); });
  }
  attempt("leaf_view.inplace", [&] { w[0].mul_(2); });
  {  // found by the fuzzer: refused before anything is written, and the
     // no_grad rule before the view-of-a-leaf one
    Tensor v, u, base = w * 1;
    {
      torch::NoGradGuard ng;
      v = w.unsqueeze(0);
      u = base.reshape({-1});
    }
    attempt("nograd_view_of_leaf.inplace", [&] { v.mul_(2); });
    attempt("nograd_view.refused_first", [&] { u.add_(1); });
    fact("nograd_view.after_refusal", u);
    fact("nograd_view.base_after_refusal", base);
    Tensor plain = torch::ones({4}), pv;
    {
      torch::NoGradGuard ng;
      pv = plain[0];
    }
    attempt("nograd_view.other_operand_requires_grad", [&] { pv.add_(w[0]); });
    fact("nograd_view.other_operand.after", plain);
  }
  {  // found by the fuzzer: a copy onto the same memory read the same way
     // returns at once, even when it is expanded (sum's gradient is)
    Tensor x = torch::ones({2, 3}, torch::requires_grad());
    Tensor g = torch::autograd::grad({x.sum()}, {x})[0];
    attempt("copy_onto_itself.expanded", [&] { g.copy_(g); });
    emit("copy_onto_itself.version", {{"version", g._version()}, {"strides", g.strides().vec()}});
    attempt("copy_onto_other.expanded", [&] { g.copy_(torch::zeros({2, 3})); });
    Tensor s = torch::tensor({0.5, 1.5, 2.5});
    attempt("copy_of_own_element", [&] { s.copy_(s[0].detach()); });
    fact("copy_of_own_element.after", s);
  }
}

// Found by the fuzzer: the layout LibTorch's TensorIterator gives an op's
// result follows its inputs' (x.t() * 2 is transposed, so reshaping it
// copies), and the *_like factories keep a dense tensor's layout.
void layouts() {
  auto layout = [](const std::string& label, const Tensor& t) {
    emit(label, {{"strides", t.strides().vec()}, {"contiguous", t.is_contiguous()}});
  };
  Tensor x = torch::tensor({{1.0, -2.0, 3.0}, {0.5, 4.0, -1.0}}, torch::requires_grad()), xt = x.t();
  Tensor y = torch::ones({3, 2});
  layout("layout.scalar_op", xt * 1.25);
  layout("layout.unary", xt.exp());
  layout("layout.first_decides", xt + y);
  layout("layout.contiguous_first", y + xt);
  layout("layout.broadcast", xt + torch::ones({2}));
  layout("layout.rsub", 2 - xt);
  layout("layout.empty_like", torch::empty_like(xt));
  layout("layout.zeros_like", torch::zeros_like(xt));
  layout("layout.ones_like", torch::ones_like(xt));
  layout("layout.not_dense", torch::empty_like(x.detach().narrow(1, 0, 2)));
  Tensor r = (xt * 1.25).reshape({-1});
  fact("layout.reshape_copies", r);
  attempt("layout.view_refused", [&] { (void)(xt * 1.25).view({-1}); });
  r.sum().backward();
  fact("layout.leaf", x);
}

// Found by the fuzzer: each node lets go of what it saved as soon as it has
// run, so a backward that failed half-way has freed the graph above the
// failure, and the next backward through it says so before it finds a saved
// tensor changed in place.
void freed_before_failure() {
  Tensor p = torch::tensor({0.375, -1.75, -1.875}, torch::requires_grad());
  Tensor q = p / p.sigmoid(), d = q.detach(), r = q / d.sigmoid();
  {
    torch::NoGradGuard ng;
    p.add_(3.5);
  }
  attempt("freed.first", [&] { r.sum().backward(); });
  {
    torch::NoGradGuard ng;
    d.mul_(3);
  }
  attempt("freed.second", [&] { r.backward(torch::ones_like(r)); });
}

Tensor m34() { return torch::arange(12, torch::kDouble).reshape({3, 4}).requires_grad_(); }
// x.index with tensors: PyTorch applies ints and slices first, then all
// tensor indices at once (one IndexBackward0); masks become positions.
void advanced_indexing() {
  {  // the hand-written NLL: rows and targets, two tensors
    Tensor x = m34(), h = x * 1;
    Tensor picked = h.index({torch::arange(3), torch::tensor({1, 0, 3})});
    fact("adv.rows_cols", picked);
    (picked * picked).sum().backward();
    fact("adv.rows_cols.leaf", x);
  }
  {  // broadcast index tensors: a column of rows against a row of columns
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index({torch::tensor({0, 2}).view({2, 1}), torch::tensor({1, 1, 3})});
    fact("adv.broadcast", r);
    r.sum().backward();
    fact("adv.broadcast.leaf", x);
  }
  {  // slices first, then the tensor: PyTorch slices, then indexes once
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index({torch::tensor({2, 0}), Slice(1, 3)});
    fact("adv.tensor_slice", r);
    emit("adv.tensor_slice.graph", {{"graph", graph_desc(r.grad_fn())}});
    r.pow(2).sum().backward();
    fact("adv.tensor_slice.leaf", x);
  }
  {
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index({Slice(), torch::tensor({3, 3, 0})});
    fact("adv.slice_tensor", r);
    emit("adv.slice_tensor.graph", {{"graph", graph_desc(r.grad_fn())}});
    r.sum().backward();
    fact("adv.slice_tensor.leaf", x);
  }
  {  // an int and a tensor
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index({1, torch::tensor({0, 3})});
    fact("adv.int_tensor", r);
    emit("adv.int_tensor.graph", {{"graph", graph_desc(r.grad_fn())}});
  }
  {  // non-adjacent tensor indices in 3-D: the indexed dims go first
    Tensor x = torch::arange(24, torch::kDouble).reshape({2, 3, 4}).requires_grad_();
    Tensor r = x.index({torch::tensor({1, 0}), Slice(), torch::tensor({2, 3})});
    fact("adv.nonadjacent", r);
    (r * torch::arange(6, torch::kDouble).view({2, 3})).sum().backward();
    fact("adv.nonadjacent.leaf", x);
    Tensor r2 = x.index({Slice(), torch::tensor({0, 2}), torch::tensor({1, 1})});
    fact("adv.adjacent_last", r2);
  }
  {  // a 2-D mask, and a mask then a slice
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index({h > 4});
    fact("adv.mask2d", r);
    r.sum().backward();
    fact("adv.mask2d.leaf", x);
    fact("adv.mask_rows", h.index({torch::tensor({true, false, true}), Slice(0, 2)}));
    fact("adv.mask_cols", h.index({Slice(), torch::tensor({false, true, true, false})}));
  }

  {  // the spellings around one index: an int tensor, a 0-d tensor, bools, a full explicit slice
    Tensor x = m34(), h = x * 1;
    attempt("adv.int32_index", [&] { fact("adv.int32_index.value", h.index({torch::tensor({2, 0}, torch::kInt)})); });
    fact("adv.zero_dim_long", h.index({torch::tensor(1)}));
    fact("adv.true", h.index({true}));
    fact("adv.false", h.index({false}));
    fact("adv.full_slice", h.index({Slice(0, 3)}));
    fact("adv.full_slice_none", h.index({Slice(0, None)}));
    fact("adv.zero_dim_bool", h.index({torch::tensor(true)}));
    Tensor h2 = x * 1;
    h2.index_put_({false}, 5.0);
    fact("put.false", h2);
    h2.index_put_({torch::tensor(1)}, 5.0);
    fact("put.zero_dim_long", h2);
    h2.index_put_({torch::tensor({1}), torch::tensor({2})}, torch::tensor({{{9.0}}}, torch::kDouble));
    fact("put.prefix_ones", h2);
  }
  attempt("adv.broadcast_error", [] { (void)m34().index({torch::tensor({0, 1}), torch::tensor({0, 1, 2})}); });
  attempt("adv.out_of_bounds", [] { (void)m34().index({torch::tensor({0, 3})}); });
  attempt("adv.out_of_bounds_second", [] { (void)m34().index({torch::tensor({0, 1}), torch::tensor({0, 4})}); });
  attempt("adv.float_index", [] { (void)m34().index({torch::tensor({0.0, 1.0})}); });
  attempt("adv.mask_shape", [] { (void)m34().index({torch::tensor({true, false})}); });
  attempt("adv.too_many", [] { (void)m34().index({torch::tensor({0}), torch::tensor({0}), torch::tensor({0})}); });
}
// index_put_ with tensor indices (IndexPutBackward0), and without (LibTorch
// copy_to: copy_, fill_ of a 0-d value, or view + expand + copy_).
void index_put() {
  {  // the mask spelling students reach for: x[x < 0] = 0
    Tensor x = torch::tensor({-1.0, 2.0, -3.0, 4.0}, torch::requires_grad());
    Tensor h = x * 2;
    h.index_put_({h < 0}, 0);
    fact("put.mask_scalar", h);
    emit("put.mask_scalar.graph", {{"graph", graph_desc(h.grad_fn())}});
    (h * h).sum().backward();
    fact("put.mask_scalar.leaf", x);
  }
  {  // values that need a gradient, broadcast to the indexed shape
    Tensor x = m34(), v = torch::tensor({10.0, 20.0, 30.0, 40.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor h = x * 1;
    h.index_put_({torch::tensor({2, 0})}, v);
    fact("put.rows_values", h);
    emit("put.rows_values.graph", {{"graph", graph_desc(h.grad_fn())}});
    (h * torch::arange(12, torch::kDouble).view({3, 4})).sum().backward();
    fact("put.rows_values.leaf", x);
    fact("put.rows_values.values", v);
  }
  {  // two tensors, a 0-d value tensor
    Tensor x = m34(), v = torch::tensor(7.0, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor h = x * 1;
    h.index_put_({torch::tensor({0, 1, 2}), torch::tensor({3, 2, 1})}, v);
    fact("put.pairs", h);
    h.sum().backward();
    fact("put.pairs.leaf", x);
    fact("put.pairs.value", v);
  }
  {  // a slice before the tensor: the write goes through a view (CopySlices)
    Tensor x = m34();
    Tensor h = x * 1;
    h.index_put_({Slice(1, 3), torch::tensor({0, 2})}, -1.0);
    fact("put.slice_tensor", h);
    emit("put.slice_tensor.graph", {{"graph", graph_desc(h.grad_fn())}});
    h.sum().backward();
    fact("put.slice_tensor.leaf", x);
  }
  {  // a leaf that needs no gradient gains one from the values
    Tensor base = torch::zeros({4}), v = torch::tensor({1.0, 2.0}, torch::requires_grad());
    base.index_put_({torch::tensor({3, 1})}, v * 3);
    fact("put.into_plain", base);
    base.sum().backward();
    fact("put.into_plain.values", v);
  }
  {  // create_graph through both backwards
    Tensor x = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
    Tensor h = x * x;
    h.index_put_({torch::tensor({1})}, x.index({torch::tensor({0})}) * 5);
    Tensor g = torch::autograd::grad({h.pow(2).sum()}, {x}, {}, true, true)[0];
    fact("put.second.grad", g);
    emit("put.second.graph", {{"graph", graph_desc(g.grad_fn())}});
    g.sum().backward();
    fact("put.second.leaf", x);
  }

  {  // writes without tensor indices: LibTorch's copy_to picks copy_, fill_ or view+expand+copy_
    Tensor x = m34(), t = torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor h = x * 1;
    h.index_put_({Slice(0, 2)}, t * 2);
    emit("put.copy_to.expand", {{"graph", graph_desc(h.grad_fn())}});
    h.index_put_({2}, t.view({1, 4}) * 3);
    emit("put.copy_to.view", {{"graph", graph_desc(h.grad_fn())}});
    h.index_put_({Slice(1, 3), 0}, t.sum());
    emit("put.copy_to.fill", {{"graph", graph_desc(h.grad_fn())}});
    h.index_put_({0, 0}, t.sum());
    emit("put.copy_to.zero_dim", {{"graph", graph_desc(h.grad_fn())}});
    h.index_put_({"..."}, 1.5);
    emit("put.copy_to.ellipsis", {{"graph", graph_desc(h.grad_fn())}});
    fact("put.copy_to.result", h);
    (h * torch::arange(12, torch::kDouble).view({3, 4})).sum().backward();
    fact("put.copy_to.values", t);
    attempt("put.fill_tensor_dims", [&] { h.detach().fill_(t); });
  }
  {  // a 0-d input broadcast: its gradient is one whole sum under create_graph
    Tensor s = torch::tensor(2.0, torch::requires_grad()), v = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
    Tensor g = torch::autograd::grad({(s * v * v).sum()}, {s}, {}, true, true)[0];
    emit("sum_to.zero_dim.graph", {{"graph", graph_desc(g.grad_fn())}});
    fact("sum_to.zero_dim", g);
  }
  attempt("put.leaf", [] {
    Tensor x = torch::ones({3}, torch::requires_grad());
    x.index_put_({torch::tensor({0})}, 2.0);
  });
  attempt("put.value_shape", [] { m34().detach().index_put_({torch::tensor({0, 1})}, torch::ones({3}, torch::kDouble)); });
  attempt("put.value_dtype", [] { m34().detach().index_put_({torch::tensor({0, 1})}, torch::ones({4}, torch::kFloat)); });
  attempt("put.out_of_bounds", [] { m34().detach().index_put_({torch::tensor({5})}, 1.0); });
  {
    Tensor y = torch::zeros({2, 2}, torch::kLong);
    y.index_put_({torch::tensor({true, false})}, 2.5);
    fact("put.long_scalar", y);
  }
}
void first_gradients() {
  {  // create_graph: the first gradient is a copy_ into a fresh tensor
    Tensor u = torch::tensor({1.0, 2.0}, torch::requires_grad());
    (u * u).sum().backward({}, c10::nullopt, true);
    fact("create_graph.grad", u.grad());
    emit("create_graph.graph", {{"graph", graph_desc(u.grad().grad_fn())}});
    (u * u).sum().backward({}, c10::nullopt, true);
    fact("create_graph.grad.second", u.grad());
    u.mutable_grad() = Tensor();  // the grad's graph holds u: break the cycle, as PyTorch's warning advises
  }
  {  // a gradient that cannot be stolen (sum()'s expanded one) is copied
    Tensor x = torch::tensor({1.0, 2.0}, torch::requires_grad());
    x.sum().backward();
    emit("copied.version", {{"version", x.grad()._version()}});
  }
}

}  // namespace

int main() {
  std::cout.precision(17);
  stale_views();
  writes_into_views();
  view_errors();
  layouts();
  freed_before_failure();
  first_gradients();
  advanced_indexing();
  index_put();
  return 0;
}

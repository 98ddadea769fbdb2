// The third differential program: views and in-place changes, where a wrong
// graph gives a wrong gradient without any error. A view whose base (or a
// sibling view) changed in place reads its history anew, as an
// AsStridedBackward0 of the base; a write through a view puts the source in
// the base's graph (CopySlices), even for a base outside any graph; views
// made in no_grad mode or by split/chunk/unbind refuse such changes with
// PyTorch's errors; and a leaf's first gradient is copied as LibTorch copies
// it. Built against gradlab and LibTorch; compare.cpp checks they agree.
#include "facts_common.h"

namespace {

using namespace facts;

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
  first_gradients();
  return 0;
}

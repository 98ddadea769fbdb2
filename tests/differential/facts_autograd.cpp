// The second differential program: the parts of autograd's contract that a
// course uses to let students watch gradients flow (tensor hooks) and to
// write their own ops (custom Functions: mark_dirty, mark_non_differentiable,
// materialised and undefined gradients, TensorList arguments, re-entrant
// backward), plus LibTorch's argument errors and spellings. Built against
// gradlab and against LibTorch; compare.cpp checks that both print the same.
#include <torch/csrc/autograd/functions/basic_ops.h>

#include "facts_common.h"

namespace {

using namespace facts;
using torch::autograd::AutogradContext;
using torch::autograd::Function;
using torch::autograd::variable_list;

Tensor leaf3() { return torch::tensor({1., 2., 3.}, torch::dtype(torch::kDouble).requires_grad(true)); }

void emit_values(const std::string& label, const std::vector<double>& v) { emit(label, {{"values", v}}); }

// ----------------------------------------------------------------- hooks
void hooks_on_leaves() {
  Tensor x = leaf3();
  const auto h = x.register_hook([](Tensor g) { return g * 2; });
  emit("hook.leaf.index", {{"index", h}});
  (x * x).sum().backward();
  fact("hook.leaf.first", x);
  (x * 3).sum().backward();  // a new graph: the leaf's hook still holds
  fact("hook.leaf.second_graph", x);
  x.remove_hook(h);
  (x * 1).sum().backward();
  fact("hook.leaf.removed", x);
  attempt("hook.leaf.remove_again", [&] { x.remove_hook(h); });
  attempt("hook.remove_bad_index", [&] { x.remove_hook(7); });
  const auto h2 = x.register_hook([](Tensor g) { return g + 100; });
  emit("hook.leaf.index_after_remove", {{"index", h2}});

  // autograd::grad on a leaf with a hook.
  Tensor w = leaf3();
  w.register_hook([](Tensor g) { return g * 10; });
  fact("hook.grad_api.leaf", torch::autograd::grad({(w * w).sum()}, {w})[0]);
  fact("hook.grad_api.leaf_grad_untouched", w);
}

void hooks_on_nonleaves() {
  Tensor x = leaf3();
  std::vector<double> seen;
  int calls = 0;
  Tensor y = x * 2;
  y.register_hook([&](Tensor g) {
    seen = values(g);
    ++calls;
  });
  (y * y + y).sum().backward();  // two uses of y: the hook sees their sum, once
  emit("hook.void.seen", {{"values", seen}, {"calls", calls}});
  fact("hook.void.x", x);

  // Hooks run in the order they were registered, each on the previous result.
  Tensor x2 = leaf3();
  Tensor c = x2 * 2;
  c.register_hook([](Tensor g) { return g + 1; });
  c.register_hook([](Tensor g) { return g * 3; });
  c.sum().backward();
  fact("hook.chain.x", x2);

  // A hook returning an undefined tensor leaves the gradient as it was.
  Tensor x3 = leaf3();
  Tensor u = x3 * 2;
  u.register_hook([](Tensor) { return Tensor(); });
  u.sum().backward();
  fact("hook.undefined_return.x", x3);

  // retain_grad and hooks, registered in both orders.
  for (bool retain_first : {true, false}) {
    Tensor x4 = leaf3();
    Tensor a = x4 * 2;
    if (retain_first) a.retain_grad();
    const auto index = a.register_hook([](Tensor g) { return g * 10; });
    if (!retain_first) a.retain_grad();
    (a * a).sum().backward();
    const std::string order = retain_first ? "retain_first" : "hook_first";
    fact("hook.retain." + order + ".a", a);
    fact("hook.retain." + order + ".x", x4);
    emit("hook.retain." + order + ".index", {{"index", index}});
  }

  // autograd::grad on a non-leaf with a hook.
  Tensor x5 = leaf3();
  Tensor v = x5 * 2;
  v.register_hook([](Tensor g) { return g * 10; });
  fact("hook.grad_api.nonleaf", torch::autograd::grad({(v * v).sum()}, {v})[0]);
  Tensor v2 = x5 * 2;
  v2.register_hook([](Tensor g) { return g * 10; });
  fact("hook.grad_api.through_nonleaf", torch::autograd::grad({(v2 * v2).sum()}, {x5})[0]);
}

void hooks_and_inplace() {
  // A hook registered before an in-place op sees the gradient of the old
  // value; one registered after it sees the new value's.
  Tensor x = leaf3();
  Tensor d = x * 2;
  std::vector<double> before, after;
  const auto i0 = d.register_hook([&](Tensor g) {
    before = values(g);
    return g * 10;
  });
  d.mul_(3);
  const auto i1 = d.register_hook([&](Tensor g) {
    after = values(g);
    return g + 1;
  });
  (d * d).sum().backward();
  emit("hook.inplace.indices", {{"before_index", i0}, {"after_index", i1}});
  emit_values("hook.inplace.before", before);
  emit_values("hook.inplace.after", after);
  fact("hook.inplace.x", x);

  // retain_grad follows the tensor through the in-place op; a hook too.
  Tensor x2 = leaf3();
  Tensor r = x2 * 2;
  r.retain_grad();
  r.register_hook([](Tensor g) { return g * 10; });
  r.add_(1);
  const auto after_inplace = r.register_hook([](Tensor g) { return g * 100; });
  emit("hook.inplace.retained_index", {{"index", after_inplace}});
  (r * 1).sum().backward();
  fact("hook.inplace.retained", r);
  fact("hook.inplace.retained_x", x2);
}

// Hooks on the node itself: a pre-hook scales what flows in, a post-hook
// sees what the node produced and what it was given.
struct ScalePre : torch::autograd::FunctionPreHook {
  double k;
  explicit ScalePre(double k) : k(k) {}
  variable_list operator()(const variable_list& grads) override {
    variable_list r;
    for (const Tensor& g : grads) r.push_back(g.defined() ? g * k : g);
    return r;
  }
};
struct RecordPost : torch::autograd::FunctionPostHook {
  std::vector<double>* out_seen;
  std::vector<double>* in_seen;
  RecordPost(std::vector<double>* o, std::vector<double>* i) : out_seen(o), in_seen(i) {}
  variable_list operator()(const variable_list& outputs, const variable_list& inputs) override {
    *out_seen = values(outputs[0]);
    *in_seen = values(inputs[0]);
    variable_list r = outputs;
    r[0] = r[0] + 1;
    return r;
  }
};

void node_hooks() {
  Tensor x = leaf3();
  Tensor y = x * x;
  std::vector<double> out_seen, in_seen;
  y.grad_fn()->add_pre_hook(std::make_unique<ScalePre>(3.0));
  const auto key = y.grad_fn()->add_post_hook(std::make_unique<RecordPost>(&out_seen, &in_seen));
  emit("node_hook.counts", {{"pre", y.grad_fn()->pre_hooks().size()}, {"post", y.grad_fn()->post_hooks().size()}});
  y.sum().backward({}, true);
  emit_values("node_hook.post.outputs", out_seen);
  emit_values("node_hook.post.inputs", in_seen);
  fact("node_hook.x", x);
  emit("node_hook.del", {{"first", y.grad_fn()->del_post_hook(key)}, {"again", y.grad_fn()->del_post_hook(key)}});
  x.mutable_grad() = Tensor();
  y.sum().backward();
  fact("node_hook.x_after_del", x);
}

void hook_errors() {
  attempt("hook.err.no_grad", [] { torch::ones({2}).register_hook([](Tensor g) { return g; }); });
  Tensor x = leaf3();
  Tensor y = x * 2;
  y.register_hook([](Tensor) { return torch::ones({2}, torch::kDouble); });
  attempt("hook.err.shape", [&] { y.sum().backward(); });
  Tensor x2 = leaf3();
  Tensor z = x2 * 2;
  z.register_hook([](Tensor g) { return g.to(torch::kFloat); });
  attempt("hook.err.dtype", [&] { z.sum().backward(); });
  Tensor x3 = leaf3();
  x3.register_hook([](Tensor) { return torch::ones({4}, torch::kDouble); });
  attempt("hook.err.leaf_shape", [&] { (x3 * 2).sum().backward(); });
}

// ----------------------------------------------------------- custom Functions
struct DoubleInPlace : Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor v) {
    v.mul_(2);
    ctx->mark_dirty({v});
    return v;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

// Changes its input in place but returns another tensor: PyTorch refuses.
struct DirtyNotReturned : Function<DirtyNotReturned> {
  static Tensor forward(AutogradContext* ctx, Tensor v) {
    v.mul_(2);
    ctx->mark_dirty({v});
    return v * 3;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

// Changes its input in place and also returns a second tensor.
struct DirtyAndCopy : Function<DirtyAndCopy> {
  static variable_list forward(AutogradContext* ctx, Tensor v) {
    v.mul_(2);
    ctx->mark_dirty({v});
    return {v, v * 1};
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2 + g[1]}; }
};

struct NonDiffMixed : Function<NonDiffMixed> {
  static std::vector<double> seen_a;
  static variable_list forward(AutogradContext* ctx, Tensor input) {
    Tensor a = input + 1, b = input * 3;
    ctx->mark_non_differentiable({a});
    return {a, b};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    seen_a = g[0].defined() ? values(g[0]) : std::vector<double>{-1};
    return {g[1] * 3};
  }
};
std::vector<double> NonDiffMixed::seen_a;

struct TwoOutputs : Function<TwoOutputs> {
  static bool materialize;
  static bool first_defined;
  static variable_list forward(AutogradContext* ctx, Tensor input) {
    ctx->set_materialize_grads(materialize);
    return {input * 2, input * 3};
  }
  static variable_list backward(AutogradContext*, variable_list g) {
    first_defined = g[0].defined();
    Tensor r = g[1] * 3;
    if (g[0].defined()) r = r + g[0] * 2;
    return {r};
  }
};
bool TwoOutputs::materialize = true;
bool TwoOutputs::first_defined = false;

// Backward returns an undefined gradient: Python's `return None`.
struct NoGrad : Function<NoGrad> {
  static Tensor forward(AutogradContext*, Tensor x) { return x * 1; }
  static variable_list backward(AutogradContext*, variable_list) { return {Tensor()}; }
};

struct SumList : Function<SumList> {
  static Tensor forward(AutogradContext* ctx, torch::TensorList xs, double scale) {
    ctx->saved_data["n"] = static_cast<int64_t>(xs.size());
    ctx->saved_data["scale"] = scale;
    Tensor s = xs[0] * scale;
    for (size_t i = 1; i < xs.size(); ++i) s = s + xs[i] * scale;
    return s;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list r;
    for (int64_t i = 0; i < ctx->saved_data["n"].toInt(); ++i) r.push_back(g[0] * ctx->saved_data["scale"].toDouble());
    r.push_back(Tensor());
    return r;
  }
};

struct Needs : Function<Needs> {
  static std::vector<bool> seen;
  static Tensor forward(AutogradContext*, Tensor a, Tensor b) { return a * b; }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad({{0, 1}}),
            ctx->needs_input_grad({{1, 2}}), ctx->needs_input_grad({{0, 1}, {1, 2}})};
    return {g[0], g[0]};
  }
};
std::vector<bool> Needs::seen;

struct WrongCount : Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x) { return x * 1; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

struct GradForNumber : Function<GradForNumber> {
  static Tensor forward(AutogradContext*, Tensor x, double k) { return x * k; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0], g[0]}; }
};

struct Identity : Function<Identity> {
  static Tensor forward(AutogradContext*, Tensor x) { return x; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2}; }
};

// Each level's backward runs a whole backward of its own.
struct Reenter : Function<Reenter> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    {
      torch::AutoGradMode enable(true);
      ctx->saved_data["x"] = torch::autograd::make_variable(x.tensor_data(), true) - 1;
    }
    return ctx->saved_data["x"].toTensor().detach();
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor x = ctx->saved_data["x"].toTensor();
    if (x.item<double>() > 0) {
      torch::AutoGradMode enable(true);
      apply(x).sum().backward();
    }
    return g;
  }
};

void custom_functions() {
  Tensor x = leaf3();
  Tensor c = x.clone();
  const auto v0 = c._version();
  Tensor out = DoubleInPlace::apply(c);
  emit("fn.dirty.version", {{"bumped", c._version() > v0}, {"same_values", torch::equal(out, c)}});
  fact("fn.dirty.out", out);
  fact("fn.dirty.input_after", c);
  out.sum().backward();
  fact("fn.dirty.x", x);
  attempt("fn.dirty.leaf", [] { DoubleInPlace::apply(leaf3()); });
  attempt("fn.dirty.not_returned", [] { (void)DirtyNotReturned::apply(leaf3() * 1); });
  // A view changed in place inside a Function: the base's history becomes
  // CopySlices around the Function's node, the view's AsStridedBackward0.
  for (const bool through_view : {true, false}) {
    const std::string tag = through_view ? "fn.dirty.view.base" : "fn.dirty.view.out";
    Tensor xv = leaf3();
    Tensor base = xv.clone();
    Tensor view = base.narrow(0, 1, 2);
    Tensor vout = DoubleInPlace::apply(view);
    fact(tag + ".out", vout);
    fact(tag + ".base", base);
    emit(tag + ".graph", {{"base", graph_desc(base.grad_fn())}, {"out", graph_desc(vout.grad_fn())}});
    Tensor weighted = through_view ? base * torch::arange(3) : vout * torch::arange(2);
    weighted.sum().backward();
    fact(tag + ".x", xv);
  }
  attempt("fn.dirty.view.two_outputs", [] { DirtyAndCopy::apply(leaf3().clone().narrow(0, 0, 2)); });

  Tensor x2 = leaf3();
  variable_list outs = NonDiffMixed::apply(x2);
  fact("fn.nondiff.a", outs[0]);
  fact("fn.nondiff.b", outs[1]);
  (outs[0] * outs[1]).sum().backward();
  emit_values("fn.nondiff.seen_a", NonDiffMixed::seen_a);
  fact("fn.nondiff.x", x2);

  for (bool m : {true, false}) {
    TwoOutputs::materialize = m;
    Tensor x3 = leaf3();
    variable_list o = TwoOutputs::apply(x3);
    o[1].sum().backward();
    const std::string tag = m ? "on" : "off";
    emit("fn.materialize." + tag, {{"first_defined", TwoOutputs::first_defined}});
    fact("fn.materialize." + tag + ".x", x3);
  }

  // An undefined gradient from a custom backward meets every kind of op's backward.
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> before = {
      {"mul", [](const Tensor& t) { return t * t; }},
      {"pow", [](const Tensor& t) { return t.pow(2); }},
      {"exp", [](const Tensor& t) { return t.exp(); }},
      {"relu", [](const Tensor& t) { return t.relu(); }},
      {"sum", [](const Tensor& t) { return t.sum(0, true); }},
      {"mm", [](const Tensor& t) { return t.unsqueeze(0).mm(t.unsqueeze(1)); }},
      {"view", [](const Tensor& t) { return t.view({3, 1}); }},
      {"index", [](const Tensor& t) { return t.slice(0, 0, 2); }},
  };
  for (const auto& [name, f] : before) {
    Tensor a = leaf3();
    attempt("fn.undefined." + name, [&, f = f] { NoGrad::apply(f(a)).sum().backward(); });
    fact("fn.undefined." + name + ".a", a);
    Tensor b = leaf3();
    attempt("fn.undefined_mixed." + name, [&, f = f] {
      Tensor m = f(b);
      (NoGrad::apply(m) + m).sum().backward();
    });
    fact("fn.undefined_mixed." + name + ".b", b);
  }

  // LibTorch's UndefinedGrad feeds an undefined gradient into a custom
  // backward: materialised as zeros, or passed on undefined.
  for (bool m : {true, false}) {
    TwoOutputs::materialize = m;
    Tensor u = leaf3();
    variable_list o = TwoOutputs::apply(u);
    Tensor through = torch::autograd::UndefinedGrad().apply({o[0]})[0];
    fact(std::string("fn.undefined_grad_node.out.") + (m ? "on" : "off"), through);
    (through + o[1]).sum().backward();
    emit(std::string("fn.undefined_grad_node.") + (m ? "on" : "off"), {{"first_defined", TwoOutputs::first_defined}});
    fact(std::string("fn.undefined_grad_node.u.") + (m ? "on" : "off"), u);
  }

  Tensor p = leaf3(), q = leaf3();
  Tensor s = SumList::apply(torch::TensorList{p, q}, 2.0);
  fact("fn.tensorlist.out", s);
  s.sum().backward();
  fact("fn.tensorlist.p", p);
  fact("fn.tensorlist.q", q);

  Tensor na = leaf3(), nb = torch::ones({3}, torch::kDouble);
  Needs::apply(na, nb).sum().backward();
  emit("fn.needs_input_grad", {{"values", Needs::seen}});
  // With autograd::grad over one input, the other's gradient is not wanted.
  Tensor nc = leaf3(), nd = leaf3();
  torch::autograd::grad({Needs::apply(nc, nd).sum()}, {nc});
  emit("fn.needs_input_grad.grad_api", {{"values", Needs::seen}});
  Tensor ne = leaf3(), nf = leaf3();
  Needs::apply(ne, nf).sum().backward({}, false, false, {nf});  // one tensor as the inputs list
  emit("fn.needs_input_grad.backward_inputs", {{"values", Needs::seen}});

  attempt("fn.err.wrong_count", [] { WrongCount::apply(leaf3()).sum().backward(); });
  attempt("fn.err.grad_for_number", [] { GradForNumber::apply(leaf3(), 2.0).sum().backward(); });

  Tensor xi = leaf3();
  Tensor same = Identity::apply(xi);
  fact("fn.identity.out", same);
  same.sum().backward();
  fact("fn.identity.x", xi);

  Tensor r = torch::tensor({3.}, torch::dtype(torch::kDouble).requires_grad(true));
  attempt("fn.reentrant", [&] { Reenter::apply(r).sum().backward(); });
  fact("fn.reentrant.r", r);
  Tensor deep = torch::tensor({4000.}, torch::dtype(torch::kDouble).requires_grad(true));
  attempt("fn.reentrant_deep", [&] { Reenter::apply(deep).sum().backward(); });
  fact("fn.reentrant_deep.r", deep);
}

// ------------------------------------------------- spellings and argument errors
struct CountWarnings : c10::WarningHandler {
  std::vector<std::string> seen;
  void process(const c10::SourceLocation&, const std::string& msg, const bool) override { seen.push_back(msg); }
};

// backward(create_graph=true) warns once a process (TORCH_WARN_ONCE), with
// either spelling; WarnAlways makes it warn each time; grad never warns.
void warnings_once() {
  CountWarnings w;
  c10::Warning::WarningHandlerGuard guard(&w);
  Tensor x = leaf3();
  Tensor z = x * x;
  std::vector<size_t> counts;
  z.sum().backward({}, true, true);
  counts.push_back(w.seen.size());
  z.sum().backward({}, true, true);
  counts.push_back(w.seen.size());
  torch::autograd::backward({z.sum()}, {}, true, true);
  counts.push_back(w.seen.size());
  {
    c10::Warning::WarnAlways always(true);
    z.sum().backward({}, true, true);
    counts.push_back(w.seen.size());
  }
  torch::autograd::grad({z.sum()}, {x}, {}, true, true);
  counts.push_back(w.seen.size());
  emit("warn_once.create_graph", {{"counts", counts}, {"first", w.seen.empty() ? "" : w.seen[0].substr(0, 60)},
                                  {"warn_always_after", c10::Warning::get_warnAlways()}});
  // What the warning asks for: the gradient holds a graph that holds the
  // leaf, a cycle; resetting .grad breaks it (LeakSanitizer checks in CI).
  x.mutable_grad() = Tensor();
}

void spellings_and_errors() {
  warnings_once();
  {
    // A hook taking at::TensorBase, and hooks meeting an undefined gradient.
    Tensor x = at::zeros({}, at::kCPU);
    x.requires_grad_();
    int calls = 0;
    x.register_hook([&](at::TensorBase) { ++calls; });
    x.register_hook([](at::Tensor g) -> at::Tensor { return g; });
    attempt("hook.undefined_grad", [&] { torch::autograd::UndefinedGrad().apply({x})[0].backward(); });
    emit("hook.undefined_grad.calls", {{"calls", calls}, {"grad_defined", x.grad().defined()}});
  }
  {
    at::NoGradGuard guard;
    fact("at.no_grad", leaf3() * 2);
  }
  {
    c10::NoGradGuard guard;
    fact("c10.no_grad", leaf3() * 2);
  }
  emit("at.allclose", {{"same", at::allclose(torch::ones({2}), torch::ones({2}))}});
  {
    at::AutoGradMode off(false);
    fact("at.autograd_mode", leaf3() * 2);
  }
  at::TensorOptions o = at::TensorOptions().dtype(at::kDouble);
  fact("at.options", torch::ones({2}, o.requires_grad(true)));
  fact("at.requires_grad", torch::ones({2}, at::requires_grad()));
  Tensor base = torch::ones({2}, torch::kDouble);
  fact("make_variable.rg", torch::autograd::make_variable(base, true));
  fact("make_variable.plain", torch::autograd::make_variable(base));

  Tensor x = leaf3();
  attempt("err.grad_no_inputs", [&] { torch::autograd::grad({(x * 2).sum()}, {}); });
  attempt("err.backward_empty_inputs",
          [&] { (x * 2).sum().backward({}, false, false, std::vector<Tensor>{}); });
  attempt("err.to_requires_grad",
          [&] { (void)torch::ones({2}).to(torch::TensorOptions().dtype(torch::kDouble).requires_grad(true)); });
  attempt("err.grad_of_nonscalar_without_grad_outputs", [&] { torch::autograd::grad({x * 2}, {x}); });

  // Anomaly mode names the op whose backward made a NaN.
  {
    torch::autograd::DetectAnomalyGuard anomaly;
    Tensor z = torch::tensor({0.}, torch::dtype(torch::kDouble).requires_grad(true));
    attempt("anomaly.nan", [&] { (z.sqrt() * 0).sum().backward(); });
    Tensor w = torch::tensor({1., 4.}, torch::dtype(torch::kDouble).requires_grad(true));
    attempt("anomaly.clean", [&] { w.sqrt().sum().backward(); });
    fact("anomaly.clean.w", w);
  }
  {
    torch::autograd::DetectAnomalyGuard anomaly(/*check_nan=*/false);
    Tensor z = torch::tensor({0.}, torch::dtype(torch::kDouble).requires_grad(true));
    emit("anomaly.no_nan_check.mode", {{"enabled", torch::autograd::AnomalyMode::is_enabled()},
                                       {"check_nan", torch::autograd::AnomalyMode::should_check_nan()}});
    attempt("anomaly.no_nan_check", [&] { (z.sqrt() * 0).sum().backward(); });
  }
  emit("anomaly.after.mode", {{"enabled", torch::autograd::AnomalyMode::is_enabled()},
                              {"check_nan", torch::autograd::AnomalyMode::should_check_nan()}});
  emit("at.native.is_nonzero", {{"one", at::native::is_nonzero(torch::ones({1}))},
                                {"zero", at::native::is_nonzero(torch::zeros({}))}});
  {
    // A NaN in a second-order backward: the warnings name the node and the
    // first-order node whose backward built it.
    torch::autograd::DetectAnomalyGuard anomaly;
    CountWarnings w;
    c10::Warning::WarningHandlerGuard guard(&w);
    Tensor x = torch::tensor({0.}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor y = x.pow(1.5);
    Tensor g = torch::autograd::grad({y}, {x}, {}, true, true)[0];
    attempt("anomaly.double_backward_nan",
            [&] { torch::autograd::grad({g}, {x}, {torch::tensor({0.}, torch::kDouble)}); });
    std::vector<std::string> heads;
    for (const std::string& m : w.seen) heads.push_back(m.substr(0, m.find(":\n") + 1));
    emit("anomaly.double_backward_nan.warnings", {{"messages", heads}});
  }
  {  // the guard's own warning is TORCH_WARN_ONCE: the guards above gave it already
    CountWarnings w;
    c10::Warning::WarningHandlerGuard guard(&w);
    { torch::autograd::DetectAnomalyGuard a; }
    { torch::autograd::DetectAnomalyGuard b; }
    emit("anomaly.guard_warns_once", {{"later_warnings", w.seen.size()}});
  }
  Tensor z = torch::tensor({0.}, torch::dtype(torch::kDouble).requires_grad(true));
  attempt("anomaly.off", [&] { (z.sqrt() * 0).sum().backward(); });
  fact("anomaly.off.z", z);
}

}  // namespace

// ------------------------------------ a custom Function's arguments and outputs
struct ReturnsView : Function<ReturnsView> {
  static Tensor forward(AutogradContext*, Tensor x) { return x.narrow(0, 0, 2); }
  static variable_list backward(AutogradContext*, variable_list g) {
    return {torch::cat({g[0], torch::zeros({1}, g[0].options())})};
  }
};
// A std::vector of tensors is no input of the node (a TensorList is).
struct VectorArg : Function<VectorArg> {
  static Tensor forward(AutogradContext* ctx, std::vector<Tensor> xs, Tensor y) {
    emit("fn.args.vector.needs0", {{"value", ctx->needs_input_grad(0)}});
    attempt("fn.args.vector.needs1", [&] { (void)ctx->needs_input_grad(1); });
    return xs[0] * 2 + y;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {Tensor(), g[0]}; }
};
struct OptionalArg : Function<OptionalArg> {
  static Tensor forward(AutogradContext*, c10::optional<Tensor> x, Tensor y) { return x.value() * 2 + y; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2, g[0]}; }
};
// Saves its output and its input; reads what comes back in backward.
struct SavesOutput : Function<SavesOutput> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y, x});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    variable_list s = ctx->get_saved_variables();
    fact("fn.saved.output", s[0]);
    fact("fn.saved.input", s[1]);
    attempt("fn.needs.out_of_range", [&] { (void)ctx->needs_input_grad(3); });
    return {g[0] * s[0]};
  }
};

void function_arguments() {
  Tensor b = leaf3() * 1;
  Tensor view = ReturnsView::apply(b);
  fact("fn.view_out", view);
  attempt("fn.view_out.inplace", [&] { view.mul_(2); });
  fact("fn.view_out.detached_input", ReturnsView::apply(leaf3().detach()));
  attempt("fn.input_as_is.inplace", [] { Identity::apply(leaf3() * 1).add_(1); });

  Tensor a = leaf3(), y = leaf3();
  Tensor out = VectorArg::apply(std::vector<Tensor>{a}, y);
  fact("fn.args.vector.out", out);
  out.sum().backward();
  fact("fn.args.vector.a", a);
  fact("fn.args.vector.y", y);

  Tensor a2 = leaf3(), y2 = leaf3();
  Tensor out2 = OptionalArg::apply(c10::optional<Tensor>(a2), y2);
  fact("fn.args.optional.out", out2);
  out2.sum().backward();
  fact("fn.args.optional.a", a2);
  fact("fn.args.optional.y", y2);

  Tensor x = leaf3();
  SavesOutput::apply(x).sum().backward();
  fact("fn.saved.x", x);
}

// backward(inputs=) with a non-leaf input turns retain_grad on for it: its
// hooks run before its .grad is filled. Inference tensors outside the mode.
void inputs_and_inference() {
  Tensor x = leaf3();
  Tensor y = x * 2;
  std::vector<double> seen;
  y.register_hook([&](Tensor g) {
    for (double v : values(g)) seen.push_back(v);
    return g * 10;
  });
  (y * y).sum().backward({}, false, false, {y});
  emit_values("inputs.nonleaf.hook_saw", seen);
  fact("inputs.nonleaf.y", y);
  fact("inputs.nonleaf.x", x);

  Tensor t;
  {
    c10::InferenceMode on;
    t = torch::ones({2});
    {
      c10::InferenceMode off(false);
      emit("inference.nested_off", {{"tensor", torch::ones({2}).is_inference()}, {"enabled", c10::InferenceMode::is_enabled()}});
    }
    emit("inference.after_nested", {{"enabled", c10::InferenceMode::is_enabled()}});
  }
  emit("inference.tensor", {{"is_inference", t.is_inference()}});
  attempt("inference.requires_grad_", [&] { t.requires_grad_(); });
  attempt("inference.inplace", [&] { t.add_(1); });
}

int main() {
  std::cout.precision(17);
  torch::manual_seed(0);
  hooks_on_leaves();
  hooks_on_nonleaves();
  hooks_and_inplace();
  node_hooks();
  hook_errors();
  custom_functions();
  function_arguments();
  inputs_and_inference();
  spellings_and_errors();
  return 0;
}

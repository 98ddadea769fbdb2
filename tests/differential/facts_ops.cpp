// Differential facts for ops beyond the lessons that students reach for:
// each op's value, grad_fn, next functions and gradients, its in-place form
// and its free function, built against the engine and against LibTorch 1.13.
// Also gather, index_select, scatter_add, logsumexp, cumsum, flip, tril/triu,
// where with numbers and the new_* factories; prod, amax/amin, var/std, norm,
// all/any, outer, addmm and the binary cross-entropies.
#include "facts_common.h"

using namespace facts;

namespace {

Tensor leaf(std::initializer_list<int64_t> shape, double scale = 1.0) {
  return (torch::randn(shape, torch::kDouble) * scale).requires_grad_();
}
// Inside (-1, 1), where asin, acos and atanh are defined.
Tensor unit_leaf(std::initializer_list<int64_t> shape) { return (torch::rand(shape, torch::kDouble) * 1.8 - 0.9).requires_grad_(); }

// The op on a leaf: its output, then the leaf's gradient.
void op(const std::string& name, const Tensor& in, const std::function<Tensor(const Tensor&)>& fwd) {
  Tensor out;
  attempt(name + ".forward", [&] { out = fwd(in); });
  if (!out.defined()) return;
  fact(name + ".out", out);
  if (!out.requires_grad()) return;
  attempt(name + ".backward", [&] { out.backward(torch::ones_like(out)); });
  fact(name + ".in", in);
}

// The in-place form on a non-leaf copy of the input: version, grad_fn, and the
// gradient that reaches the leaf through it (computed from the value before).
void inplace(const std::string& name, const Tensor& in, const std::function<void(Tensor&)>& fwd) {
  Tensor t = in * 1;
  attempt(name + ".inplace", [&] { fwd(t); });
  fact(name + ".inplace.out", t);
  if (!t.requires_grad()) return;
  attempt(name + ".inplace.backward", [&] { t.sum().backward(); });
  fact(name + ".inplace.in", in);
}

void unary() {
  torch::manual_seed(3);
  const Tensor halves = torch::tensor({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51}, torch::kDouble).requires_grad_();
  op("round", halves, [](const Tensor& a) { return a.round(); });
  op("round.free", leaf({5}, 3), [](const Tensor& a) { return torch::round(a); });
  fact("round.int", torch::round(torch::tensor({-3, 0, 7})));
  op("ceil", leaf({5}, 3), [](const Tensor& a) { return a.ceil(); });
  op("trunc", leaf({5}, 3), [](const Tensor& a) { return torch::trunc(a); });
  op("floor.free", leaf({5}, 3), [](const Tensor& a) { return torch::floor(a); });
  op("sign.free", leaf({5}), [](const Tensor& a) { return torch::sign(a); });
  op("sinh", leaf({5}), [](const Tensor& a) { return a.sinh(); });
  op("cosh", leaf({5}), [](const Tensor& a) { return torch::cosh(a); });
  op("asin", unit_leaf({5}), [](const Tensor& a) { return a.asin(); });
  op("acos", unit_leaf({5}), [](const Tensor& a) { return torch::acos(a); });
  op("atan", leaf({5}, 2), [](const Tensor& a) { return a.atan(); });
  op("erf", leaf({5}), [](const Tensor& a) { return torch::erf(a); });
  op("reciprocal.free", leaf({5}), [](const Tensor& a) { return torch::reciprocal(a); });
  op("rsqrt.free", (leaf({5}).detach().abs() + 0.1).requires_grad_(), [](const Tensor& a) { return torch::rsqrt(a); });
  op("expm1.free", leaf({5}), [](const Tensor& a) { return torch::expm1(a); });
  fact("asin.float", torch::asin(torch::tensor({0.25f, -0.5f})));
  fact("sinh.int", torch::sinh(torch::tensor({1, 2})));
  // Second derivatives: the recorded backward's graph and values.
  for (const char* name : {"asin", "acos", "atan", "erf", "sinh"}) {
    Tensor a = std::string(name) == "sinh" || std::string(name) == "erf" ? leaf({4}) : unit_leaf({4});
    Tensor y = std::string(name) == "asin"   ? a.asin()
               : std::string(name) == "acos" ? a.acos()
               : std::string(name) == "atan" ? a.atan()
               : std::string(name) == "erf"  ? a.erf()
                                             : a.sinh();
    Tensor g = torch::autograd::grad({y.sum()}, {a}, {}, true, true)[0];
    fact(std::string(name) + ".grad_graph", g);
    emit(std::string(name) + ".grad_graph.desc", {{"graph", graph_desc(g.grad_fn())}});
    fact(std::string(name) + ".second", torch::autograd::grad({g.sum()}, {a})[0]);
  }
}

void unary_inplace() {
  torch::manual_seed(4);
  inplace("sin_", leaf({4}), [](Tensor& t) { t.sin_(); });
  inplace("cos_", leaf({4}), [](Tensor& t) { t.cos_(); });
  inplace("tan_", leaf({4}), [](Tensor& t) { t.tan_(); });
  inplace("sign_", leaf({4}), [](Tensor& t) { t.sign_(); });
  inplace("floor_", leaf({4}, 3), [](Tensor& t) { t.floor_(); });
  inplace("ceil_", leaf({4}, 3), [](Tensor& t) { t.ceil_(); });
  inplace("round_", leaf({4}, 3), [](Tensor& t) { t.round_(); });
  inplace("trunc_", leaf({4}, 3), [](Tensor& t) { t.trunc_(); });
  inplace("reciprocal_", leaf({4}), [](Tensor& t) { t.reciprocal_(); });
  inplace("rsqrt_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.rsqrt_(); });
  inplace("log1p_", (leaf({4}).detach().abs()).requires_grad_(), [](Tensor& t) { t.log1p_(); });
  inplace("expm1_", leaf({4}), [](Tensor& t) { t.expm1_(); });
  inplace("log2_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.log2_(); });
  inplace("log10_", (leaf({4}).detach().abs() + 0.1).requires_grad_(), [](Tensor& t) { t.log10_(); });
  inplace("sinh_", leaf({4}), [](Tensor& t) { t.sinh_(); });
  inplace("cosh_", leaf({4}), [](Tensor& t) { t.cosh_(); });
  inplace("asin_", unit_leaf({4}), [](Tensor& t) { t.asin_(); });
  inplace("acos_", unit_leaf({4}), [](Tensor& t) { t.acos_(); });
  inplace("atan_", leaf({4}), [](Tensor& t) { t.atan_(); });
  inplace("erf_", leaf({4}), [](Tensor& t) { t.erf_(); });
  // On a leaf that requires grad: PyTorch's error, the leaf unchanged.
  Tensor l = leaf({3});
  attempt("sin_.leaf", [&] { l.sin_(); });
  fact("sin_.leaf.after", l);
}

// Integer and bool tensors with numbers keep PyTorch's dtypes; in-place ops
// refuse a result their tensor cannot hold.
void promotion() {
  Tensor i = torch::tensor({1, 2, 3}), bo = torch::tensor({true, false});
  fact("int_plus_int", i + 1);
  fact("int_sub_method", i.sub(1));
  fact("int32_plus_int", torch::tensor({1, 2}, torch::kInt) + 1);
  fact("arange_plus_int", torch::arange(5) + 1);
  fact("int_add_alpha", i.add(1, 3));
  fact("bool_plus_int", bo + 1);
  fact("bool_plus_bool", bo + true);
  fact("bool_times_float", bo * 2.5);
  fact("clamp.int_float_bounds", torch::tensor({1, 5, 9}).clamp(2.5, 6));
  fact("clamp_min.int_float", torch::tensor({1, 5, 9}).clamp_min(2.5));
  fact("clamp.int_int_bounds", torch::tensor({1, 5, 9}).clamp(2, 6));
  attempt("add_.float_into_long", [] { torch::tensor({1, 2}).add_(1.5); });
  attempt("mul_.float_into_long", [] { auto k = torch::tensor({1, 2}); k *= 0.5; });
  attempt("div_.into_long", [] { torch::tensor({1, 2}).div_(2); });
  attempt("add_.float_tensor_into_int32", [] { auto k = torch::tensor({1, 2}, torch::kInt); k += torch::ones({2}); });
  attempt("sin_.long", [] { torch::tensor({1, 2}).sin_(); });
  attempt("pow.int_negative", [] { (void)torch::tensor({2, 3}).pow(-1); });
  fact("pow.int_float_negative", torch::tensor({2, 4}).pow(-0.5));
  fact("mean.empty", torch::empty({0}).mean());
  fact("relu.nan", torch::tensor({NAN, -1.0f, 2.0f}).relu());
  Tensor n = torch::tensor({NAN, -1.0f, 2.0f}, torch::requires_grad());
  n.relu().sum().backward();
  fact("relu.nan.grad", n);
}

// Shapes and indexing: LibTorch's results and its errors (a few are plain
// std::runtime_errors there).
void shapes() {
  using namespace torch::indexing;
  Tensor y = torch::arange(6, torch::kFloat).view({2, 3}), z = torch::arange(6, torch::kFloat);
  attempt("view.bad_shape", [&] { (void)torch::arange(12).view({5, -1}); });
  attempt("reshape.bad_shape", [&] { (void)torch::arange(12).reshape({5, 2}); });
  attempt("view.two_inferred", [&] { (void)torch::arange(12).view({-1, -1}); });
  attempt("view.empty_inferred", [&] { (void)torch::empty({0}).view({0, -1}); });
  attempt("operator[].out_of_range", [&] { (void)y[5]; });
  attempt("select.out_of_range", [&] { (void)y.select(1, 3); });
  attempt("index.out_of_range", [&] { (void)y.index({Slice(), 4}); });
  fact("index.ellipsis", y.index({"...", 0}));
  attempt("index.bad_string", [&] { (void)y.index({"..", 0}); });
  fact("index.slice_none", y.index({Slice(1, None)}));
  fact("index.slice_none_newaxis", y.index({Slice(None, 2), None}));
  attempt("index.negative_step", [&] { (void)y.index({Slice(None, None, -1)}); });
  fact("narrow.negative_start", z.narrow(0, -2, 2));
  fact("narrow.at_end", z.narrow(0, 6, 0));
  attempt("narrow.past_end", [&] { (void)z.narrow(0, 5, 3); });
  attempt("narrow.negative_length", [&] { (void)z.narrow(0, 1, -1); });
  attempt("narrow.start_out_of_range", [&] { (void)z.narrow(0, 7, 0); });
  attempt("permute.duplicate", [&] { (void)y.permute({0, 0}); });
  attempt("cat.zero_dim", [] { (void)torch::cat({torch::tensor(1.0), torch::tensor(2.0)}); });
  attempt("neg.bool", [] { (void)-torch::tensor({true}); });
  attempt("mv.size_mismatch", [] { (void)torch::matmul(torch::ones({2, 3}), torch::ones({2})); });
  Tensor x = torch::arange(6, torch::kDouble).view({2, 3}).requires_grad_();
  Tensor r = x.repeat({2, 1, 2});
  fact("repeat", r);
  (r * torch::arange(r.numel(), torch::kDouble).view(r.sizes())).sum().backward();
  fact("repeat.grad", x);
  fact("repeat.ones", x.repeat({1, 1}));
  fact("repeat.zero", x.detach().repeat({0, 2}));
  attempt("repeat.fewer_dims", [&] { (void)x.repeat({2}); });
}

// Second derivatives: grad with create_graph, then the gradient of a
// weighted sum of that gradient. `whole_graph` also compares the whole graph
// of both, for the ops whose backward is an op of its own in PyTorch
// (tanh_backward, select_backward, nll_loss_backward, ...); elsewhere only the
// top node, its next functions and the values are compared.
void second(const std::string& name, std::initializer_list<int64_t> shape, bool whole_graph,
            const std::function<Tensor(const Tensor&)>& f) {
  const std::vector<double> at = {0.5, -1.0, 2.0, 1.5, -0.3, 0.8};
  Tensor x = torch::tensor(at, torch::kDouble).reshape(shape).detach().requires_grad_();
  Tensor g = torch::autograd::grad({f(x)}, {x}, {}, true, true)[0];
  fact(name + ".grad", g);
  if (whole_graph) emit(name + ".grad.graph", json{{"graph", graph_desc(g.grad_fn())}});
  if (!g.requires_grad()) return;
  Tensor w = torch::arange(1, g.numel() + 1, torch::kDouble).reshape(g.sizes());
  Tensor gg = torch::autograd::grad({(g * w).sum()}, {x}, {}, true, true, true)[0];
  fact(name + ".second", gg);
  if (whole_graph && gg.defined()) emit(name + ".second.graph", json{{"graph", graph_desc(gg.grad_fn())}});
}

void second_derivatives() {
  using torch::indexing::Slice;
  namespace F = torch::nn::functional;
  second("2nd.tanh", {6}, true, [](const Tensor& x) { return (x.tanh() * x).sum(); });
  second("2nd.sigmoid", {6}, true, [](const Tensor& x) { return (x.sigmoid() * x).sum(); });
  second("2nd.relu", {6}, true, [](const Tensor& x) { return (x.relu() * x).sum(); });
  second("2nd.softmax", {2, 3}, true, [](const Tensor& x) { return (torch::softmax(x, 1) * x).sum(); });
  second("2nd.log_softmax", {2, 3}, true, [](const Tensor& x) { return (torch::log_softmax(x, 0) * x).sum(); });
  second("2nd.mse_loss", {2, 3}, true, [](const Tensor& x) { return torch::mse_loss(x * x, x); });
  second("2nd.cross_entropy", {2, 3}, true, [](const Tensor& x) { return F::cross_entropy(x * x, torch::tensor({2, 0})); });
  second("2nd.nll_loss", {2, 3}, true, [](const Tensor& x) { return F::nll_loss(x * x, torch::tensor({2, 0})); });
  second("2nd.stack", {6}, true, [](const Tensor& x) { return torch::stack({x, x * x}).pow(3).sum(); });
  second("2nd.select", {2, 3}, true, [](const Tensor& x) { return (x.pow(2)[1] * x[0]).sum(); });
  second("2nd.slice", {2, 3}, true,
         [](const Tensor& x) { return (x.pow(2).index({Slice(), Slice(0, 2)}) * x.narrow(1, 1, 2)).sum(); });
  second("2nd.index_tensor", {6}, true, [](const Tensor& x) {
    return (x.pow(2).index({torch::tensor({0, 2, 2})}) * x.index({torch::tensor({1, 2, 3})})).sum();
  });
  second("2nd.unbind_split", {2, 3}, true, [](const Tensor& x) {
    return (x.pow(2).unbind(0)[0] * x[1]).sum() + (x.pow(2).split(1, 1)[2] * x).sum();
  });
  second("2nd.matmul", {2, 3}, true,
         [](const Tensor& x) { return torch::matmul(x, x[0]).pow(2).sum() + x[1].dot(x[1] * x[0]); });
  second("2nd.mm", {2, 3}, false, [](const Tensor& x) { return x.mm(x.t()).pow(2).sum(); });
  second("2nd.repeat", {2, 3}, true, [](const Tensor& x) { return (x.pow(2).repeat({2, 1}) * x.repeat({2, 1})).sum(); });
  second("2nd.max_min", {2, 3}, true,
         [](const Tensor& x) { return (x * x).max() + std::get<0>((x * x).min(1)).sum(); });
  // The derivative formulas' own graphs (PyTorch's order of operations).
  second("2nd.scalar_ops", {6}, true, [](const Tensor& x) { return ((x * x) * 3 + (x * x) / 3 - 2 * x).sum(); });
  second("2nd.pow", {6}, true, [](const Tensor& x) { return x.pow(3).sum() + x.abs().pow(2.5).sum(); });
  second("2nd.pow_tensor", {6}, false, [](const Tensor& x) { return (x * x + 1).pow(x).sum(); });
  second("2nd.div", {6}, false, [](const Tensor& x) { return (x / x.exp()).sum(); });
  second("2nd.clamp", {6}, true, [](const Tensor& x) { return (x.clamp(0, 1.5) * x).sum(); });
  second("2nd.unary", {6}, true, [](const Tensor& x) {
    return (x.exp() + x.sin() + x.cos() + x.abs() + (x * x + 1).reciprocal() + (x * x + 1).rsqrt() + x.tan() +
            (x * x + 1).log1p() + x.expm1() + (x * x + 1).log2() + x.sinh() + x.cosh() + x.atan() +
            (x * 0.3).asin() + (x * 0.3).acos() + x.erf())
        .sum();
  });
  // Whole graphs differ below the top (pow_tensor and div above too): the
  // order of the two gradients summed where a product uses one tensor twice
  // (mm), and the third-level formulas of quotients; the values, the top
  // nodes and their next functions agree.
  second("2nd.sqrt_div", {6}, false, [](const Tensor& x) { return ((x * x + 1).sqrt() / (x * x + 2)).sum(); });
}

// In-place ops whose result type the tensor cannot hold: each family's own
// message (clamp names the C++ type, pow_ its kernel's check).
void inplace_cast_errors() {
  auto longs = [] { return torch::tensor({1, 2, 3}); };
  attempt("cast.clamp_", [&] { longs().clamp_(0.5, 2.5); });
  attempt("cast.clamp_min_", [&] { longs().clamp_min_(0.5); });
  attempt("cast.clamp_max_", [&] { longs().clamp_max_(2.5); });
  attempt("cast.pow_", [&] { longs().pow_(0.5); });
  attempt("cast.sqrt_", [&] { longs().sqrt_(); });
  attempt("cast.add_", [&] { longs().add_(0.5); });
  attempt("cast.div_", [&] { longs().div_(2); });
  attempt("cast.add_tensor", [&] { longs().add_(torch::ones({3})); });
  attempt("cast.int.clamp_", [] { torch::tensor({1, 2}, torch::kInt).clamp_(0.5, 2.5); });
  attempt("cast.bool.clamp_", [] { torch::tensor({true, false}).clamp_(0.5, 2.5); });
  attempt("cast.bool.add_", [] { torch::tensor({true, false}).add_(1); });
  // A braced list is written element by element (its version counts them),
  // a std::vector copied in one go.
  fact("factory.tensor.vector", torch::tensor(std::vector<double>{1, 2, 3}));
  fact("factory.tensor.vector_long", torch::tensor(std::vector<int64_t>{1, 2}));
  fact("factory.tensor.vector_grad", torch::tensor(std::vector<double>{1, 2}, torch::requires_grad()));
  fact("factory.tensor.braced", torch::tensor({1.0, 2.0}));
  fact("factory.tensor.scalar", torch::tensor(3.5));
}

// The losses spelled with their reductions: ATen's number, the functional
// options, the modules (called, and through ->forward).
void loss_spellings() {
  namespace F = torch::nn::functional;
  Tensor x = torch::tensor({{1.0, 2.0, 0.5}, {0.1, -1.0, 2.0}}, torch::requires_grad());
  Tensor y = torch::tensor({{0.0, 1.0, 1.0}, {1.0, 0.0, 2.0}});
  Tensor t = torch::tensor({2, 0});
  fact("loss.aten.mse_sum", torch::mse_loss(x, y, at::Reduction::Sum));
  fact("loss.aten.mse_none", torch::mse_loss(x, y, at::Reduction::None));
  fact("loss.F.mse_sum", F::mse_loss(x, y, F::MSELossFuncOptions().reduction(torch::kSum)));
  fact("loss.F.mse_ctor_none", F::mse_loss(x, y, F::MSELossFuncOptions(torch::kNone)));
  fact("loss.F.cross_entropy_sum", F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(torch::kSum)));
  fact("loss.F.nll_none", F::nll_loss(x.log_softmax(1), t, F::NLLLossFuncOptions().reduction(torch::kNone)));
  torch::nn::MSELoss mse;
  fact("loss.module.mse", mse(x, y));
  fact("loss.module.mse_arrow", mse->forward(x, y));
  torch::nn::MSELoss mse_sum(torch::nn::MSELossOptions().reduction(torch::kSum));
  fact("loss.module.mse_sum", mse_sum(x, y));
  torch::nn::MSELoss mse_token(torch::kSum);
  fact("loss.module.mse_token", mse_token(x, y));
  torch::nn::NLLLoss nll(torch::nn::NLLLossOptions().reduction(torch::kSum));
  fact("loss.module.nll_sum", nll(x.log_softmax(1), t));
  torch::nn::CrossEntropyLoss ce;
  Tensor l = ce(x, t);
  fact("loss.module.cross_entropy", l);
  l.backward();
  fact("loss.module.cross_entropy.x", x);
}

Tensor m34() { return torch::arange(12, torch::kDouble).reshape({3, 4}).requires_grad_(); }
Tensor w34() { return torch::linspace(0.5, 2.0, 12, torch::kDouble).view({3, 4}); }
// Reading and writing by position (gather, index_select, scatter_add), where
// with numbers, scans and triangles, and the new_* factories.
void by_position() {
  {
    Tensor x = m34(), h = x * 1;
    Tensor r = h.gather(1, torch::tensor({{1}, {0}, {3}}));
    fact("gather.rows", r);
    (r * r).sum().backward();
    fact("gather.rows.leaf", x);
    Tensor x2 = m34();
    Tensor r2 = torch::gather(x2 * 1, 0, torch::tensor({{2, 0, 0, 1}, {2, 2, 1, 0}}));
    fact("gather.dim0", r2);
    (r2 * torch::arange(8, torch::kDouble).view({2, 4})).sum().backward();
    fact("gather.dim0.leaf", x2);
    Tensor g = torch::autograd::grad({(x2 * x2).gather(1, torch::tensor({{1, 1}, {0, 2}, {3, 3}})).sum()}, {x2}, {}, true, true)[0];
    fact("gather.second", g);
    emit("gather.second.graph", {{"graph", graph_desc(g.grad_fn())}});
  }
  attempt("gather.dtype", [] { (void)m34().gather(1, torch::tensor({{1}, {0}, {3}}, torch::kInt)); });
  attempt("gather.dims", [] { (void)m34().gather(1, torch::tensor({1, 0, 3})); });
  attempt("gather.range", [] { (void)m34().gather(1, torch::tensor({{1}, {0}, {4}})); });
  attempt("gather.size", [] { (void)m34().gather(1, torch::zeros({4, 1}, torch::kLong)); });
  {
    Tensor x = m34(), h = x * 1;
    Tensor r = h.index_select(1, torch::tensor({3, 0, 3}));
    fact("index_select", r);
    (r * w34().index({torch::indexing::Slice(), torch::indexing::Slice(0, 3)})).sum().backward();
    fact("index_select.leaf", x);
    fact("index_select.int", torch::index_select(x * 1, 0, torch::tensor({2}, torch::kInt)));
    fact("index_select.zero_dim", torch::index_select(x * 1, 0, torch::tensor(1)));
    Tensor g = torch::autograd::grad({(x * x).index_select(0, torch::tensor({1, 1})).sum()}, {x}, {}, true, true)[0];
    emit("index_select.second.graph", {{"graph", graph_desc(g.grad_fn())}});
  }
  attempt("index_select.range", [] { (void)m34().index_select(0, torch::tensor({3})); });
  attempt("index_select.matrix", [] { (void)m34().index_select(0, torch::zeros({1, 1}, torch::kLong)); });
  attempt("index_select.float", [] { (void)m34().index_select(0, torch::zeros({1})); });
  {
    Tensor x = m34(), h = x - 5;
    Tensor r = torch::where(h > 0, h, 0.5);
    fact("where.scalar_other", r);
    Tensor r2 = torch::where(h > 0, 2.0, h);
    fact("where.scalar_self", r2);
    fact("where.scalars", torch::where(h > 0, 1.0, -1.0));
    fact("where.scalars_int", torch::where(h > 0, 1, 0));
    (r * r2).sum().backward();
    fact("where.leaf", x);
  }
  {
    Tensor x = m34(), h = x / 4;
    Tensor r = h.logsumexp(1);
    fact("logsumexp", r);
    Tensor r2 = torch::logsumexp(h, torch::IntArrayRef({0, 1}), true);
    fact("logsumexp.all_keep", r2);
    (r.sum() + r2.sum()).backward();
    fact("logsumexp.leaf", x);
    fact("logsumexp.big", torch::tensor({1000.0, 1000.0}, torch::kDouble).logsumexp(0));
    Tensor g = torch::autograd::grad({h.logsumexp(1).sum()}, {x}, {}, true, true)[0];
    fact("logsumexp.second", g);
    emit("logsumexp.second.graph", {{"graph", graph_desc(g.grad_fn())}});
  }
  {
    Tensor x = m34(), h = x * 1;
    Tensor r = h.cumsum(1);
    fact("cumsum", r);
    (r * w34()).sum().backward();
    fact("cumsum.leaf", x);
    fact("cumsum.int", torch::tensor({1, 2, 3}).cumsum(0));
    fact("cumsum.dim0", torch::cumsum(x * 1, 0));
  }
  {
    Tensor x = m34(), h = x * 1;
    fact("tril", h.tril());
    fact("triu", torch::triu(h, 1));
    Tensor r = h.tril(-1) + h.triu(2);
    (r * w34()).sum().backward();
    fact("tril.leaf", x);
  }
  {
    Tensor x = m34();
    fact("new_zeros", x.new_zeros({2}));
    fact("new_ones", x.new_ones({2, 1}));
    fact("new_full", x.new_full({2}, 3.5));
    fact("new_empty", x.new_empty({0, 2}));
    fact("new_zeros.opts", x.new_zeros({2}, torch::kLong));
  }
}
// flip and scatter_add, the scans under create_graph, and the dtypes of
// where with numbers and of cumsum.
void scans_and_flips() {
  {
    Tensor x = m34(), h = x * 1;
    Tensor r = h.flip({0, 1});
    fact("flip", r);
    (r * w34()).sum().backward();
    fact("flip.leaf", x);
    fact("flip.none", torch::flip(x * 1, {}));
    Tensor z = torch::zeros({3, 4}, torch::kDouble).requires_grad_();
    Tensor s = z.scatter_add(1, torch::tensor({{0, 0}, {3, 1}, {2, 2}}), h.index({torch::indexing::Slice(), torch::indexing::Slice(0, 2)}) * 1);
    fact("scatter_add", s);
    Tensor g = torch::autograd::grad({(h * h).cumsum(1).sum() + (h * h).tril().sum() + h.pow(3).logsumexp(0).sum()}, {x}, {}, true, true)[0];
    fact("scans.second", g);
    emit("scans.second.graph", {{"graph", graph_desc(g.grad_fn())}});
    fact("where.long_and_float", torch::where(torch::tensor({true, false}), torch::tensor({1, 2}), 0.5));
    fact("cumsum.bool", torch::tensor({true, true, false}).cumsum(0));
    fact("cumsum.dtype", (x * 1).cumsum(0, torch::kFloat));
  }
}
Tensor v34() { return (torch::linspace(-1.5, 2.0, 12, torch::kDouble).view({3, 4})).requires_grad_(); }
// prod (zeros too), amax/amin (ties share), var/std (an int names a dim),
// norm for several p, all/any.
void more_reductions() {
  {
    Tensor x = v34(), h = x * 1;
    Tensor r = h.prod();
    fact("prod", r);
    r.backward();
    fact("prod.leaf", x);
    Tensor x2 = v34();
    Tensor r2 = (x2 * 1).prod(1, true);
    fact("prod.dim", r2);
    (r2 * torch::tensor({{1.0}, {2.0}, {3.0}}, torch::kDouble)).sum().backward();
    fact("prod.dim.leaf", x2);
    Tensor z = torch::tensor({2.0, 0.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    z.prod().backward();
    fact("prod.zero.leaf", z);
    fact("prod.int", torch::tensor({2, 3, 4}).prod());
  }
  {
    Tensor x = v34(), h = x * 1;
    Tensor r = h.amax(1);
    fact("amax", r);
    Tensor r2 = torch::amin(h, {0, 1}, true);
    fact("amin", r2);
    (r * torch::tensor({1.0, 2.0, 3.0}, torch::kDouble)).sum().backward();
    fact("amax.leaf", x);
    Tensor t = torch::tensor({1.0, 3.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    t.amax().backward();
    fact("amax.ties.leaf", t);
  }
  {
    Tensor x = v34(), h = x * 1;
    Tensor r = h.var();
    fact("var", r);
    Tensor r2 = h.std(1);
    fact("std.dim", r2);
    Tensor r3 = h.var(0, false, true);
    fact("var.biased_keep", r3);
    (r + r2.sum() + r3.sum()).backward();
    fact("var.leaf", x);
  }
  {
    Tensor x = v34(), h = x * 1;
    Tensor r = h.norm();
    fact("norm", r);
    Tensor r2 = h.norm(1, {1});
    fact("norm.p1.dim", r2);
    (r + r2.sum()).backward();
    fact("norm.leaf", x);
    Tensor zz = torch::zeros({3}, torch::dtype(torch::kDouble).requires_grad(true));
    zz.norm().backward();
    fact("norm.zero.leaf", zz);
  }
  {
    Tensor x = v34();
    fact("all", (x > -2).all());
    fact("any", (x > 1.9).any());
    fact("all.dim", (x > 0).all(1));
    fact("any.dim", torch::any(x > 1.5, 0));
    fact("any.float", x.detach().any());
  }
}
// outer (as ATen composes it), addmm, the binary cross-entropies.
void products_and_losses() {
  {
    Tensor a = torch::tensor({1.0, 2.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor b = torch::tensor({4.0, 5.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor r = torch::outer(a, b);
    fact("outer", r);
    (r * torch::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}, torch::kDouble)).sum().backward();
    fact("outer.a", a);
    fact("outer.b", b);
    emit("outer.graph", {{"graph", graph_desc(r.grad_fn())}});
  }
  {
    Tensor bias = torch::tensor({0.5, -0.5}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor x = v34(), w = torch::linspace(-1, 1, 8, torch::kDouble).view({4, 2}).requires_grad_();
    Tensor r = torch::addmm(bias, x, w);
    fact("addmm", r);
    r.pow(2).sum().backward();
    fact("addmm.bias", bias);
    fact("addmm.w", w);
    fact("addmm.scaled", torch::addmm(bias, x, w, 0.5, 2.0));
  }
  {
    Tensor p = torch::tensor({0.2, 0.7, 0.9}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor y = torch::tensor({0.0, 1.0, 1.0}, torch::kDouble);
    Tensor l = torch::binary_cross_entropy(p, y);
    fact("bce", l);
    l.backward();
    fact("bce.p", p);
    Tensor z = torch::tensor({-1.0, 0.5, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor l2 = torch::binary_cross_entropy_with_logits(z, y);
    fact("bce_logits", l2);
    l2.backward();
    fact("bce_logits.z", z);
    fact("bce.sum", torch::binary_cross_entropy(p, y, {}, at::Reduction::Sum));
    fact("bce.none", torch::binary_cross_entropy(p, y, {}, at::Reduction::None));
  }
}
// Weights, pos_weight and the target's gradient; second derivatives.
void more_losses_and_norms() {
  {
    Tensor x = v34(), h = x * 1;
    Tensor r = h.norm(3, {0}) + h.norm(INFINITY, {0}) + h.norm(0.5, {0}, false);
    fact("norm.p", r);
    r.sum().backward();
    fact("norm.p.leaf", x);
    Tensor z = torch::tensor({{2.0, 0.0}, {0.0, 0.0}}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor pz = z.prod(1);
    fact("prod.zeros.dim", pz);
    (pz * torch::tensor({3.0, 5.0}, torch::kDouble)).sum().backward();
    fact("prod.zeros.dim.leaf", z);
    fact("var.int", torch::var(v34(), 1));
    fact("std.unbiased_false", torch::std(v34(), false));
  }
  {
    Tensor x = torch::tensor({-1.0, 0.5, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor y = torch::tensor({0.0, 1.0, 0.25}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor w = torch::tensor({1.0, 2.0, 0.5}, torch::kDouble), pw = torch::tensor({3.0, 1.0, 2.0}, torch::kDouble);
    Tensor l = torch::binary_cross_entropy_with_logits(x, y, w, pw, at::Reduction::Mean);
    fact("bce_logits.weights", l);
    l.backward();
    fact("bce_logits.weights.x", x);
    fact("bce_logits.weights.y", y);
    Tensor p = torch::tensor({0.0, 1.0, 0.5}, torch::dtype(torch::kDouble).requires_grad(true));
    Tensor l2 = torch::binary_cross_entropy(p, torch::tensor({0.0, 1.0, 1.0}, torch::kDouble), w, at::Reduction::Sum);
    fact("bce.weight_edges", l2);
    l2.backward();
    fact("bce.weight_edges.p", p);
    Tensor wg = torch::tensor({2.0}, torch::requires_grad());
    attempt("bce.weight_grad", [&] { (void)torch::binary_cross_entropy(torch::tensor({0.5}), torch::tensor({1.0}), wg); });
    attempt("bce_logits.pos_weight_grad",
            [&] { (void)torch::binary_cross_entropy_with_logits(torch::tensor({0.5}), torch::tensor({1.0}), {}, wg); });
    {
      torch::NoGradGuard ng;
      attempt("bce.weight_grad.no_grad",
              [&] { (void)torch::binary_cross_entropy(torch::tensor({0.5}), torch::tensor({1.0}), wg); });
    }
    attempt("bce.range", [] { (void)torch::binary_cross_entropy(torch::tensor({1.5}), torch::tensor({1.0})); });
    attempt("bce.target_grad", [] {
      Tensor p = torch::tensor({0.5}, torch::requires_grad()), t = torch::tensor({1.0}, torch::requires_grad());
      torch::binary_cross_entropy(p, t).backward();
      fact("bce.target_grad.t", t);
    });
  }
  {
    Tensor x = v34();
    Tensor g = torch::autograd::grad({(x * x).var() + x.pow(2).prod(1).sum() + torch::addmm(x.sum(0), x.t(), x).sum()},
                                     {x}, {}, true, true)[0];
    fact("stats.second", g);
    g.sum().backward();
    fact("stats.second.leaf", x);
  }
}
}  // namespace

// sort, topk, scatter, masked_select/masked_scatter, diag, cumprod: values,
// indices (ties and NaN included), gradients, second derivatives, errors.
void choosing() {
  torch::manual_seed(21);
  const Tensor ties = torch::tensor({1.0f, 0.0f, 1.0f, 0.0f, 1.0f, 2.0f, 1.0f});
  fact("sort.ties", std::get<1>(ties.sort()));
  fact("sort.ties.descending", std::get<1>(ties.sort(0, true)));
  fact("argsort.ties", torch::argsort(ties, 0, true));
  fact("topk.ties", std::get<1>(ties.topk(3)));
  fact("topk.ties.smallest", std::get<1>(ties.topk(3, -1, false)));
  fact("topk.ties.unsorted", std::get<1>(ties.topk(4, 0, true, false)));
  const Tensor many = torch::randint(0, 5, {200}).to(torch::kFloat);
  fact("topk.partial_sort", std::get<1>(many.topk(3)));
  fact("topk.partial_sort.smallest", std::get<1>(torch::topk(many, 2, 0, false)));
  const Tensor nan = torch::tensor({1.0f, NAN, 0.0f, NAN, -1.0f});
  fact("sort.nan", std::get<1>(nan.sort()));
  fact("sort.nan.descending", std::get<1>(torch::sort(nan, 0, true)));
  fact("topk.nan", std::get<1>(nan.topk(3)));
  fact("topk.nan.smallest", std::get<1>(nan.topk(2, 0, false)));

  const Tensor w = torch::arange(1, 13, torch::kDouble).reshape({3, 4});
  op("sort.values", leaf({3, 4}), [&](const Tensor& a) { return std::get<0>(a.sort()) * w; });
  op("sort.dim0", leaf({3, 4}), [&](const Tensor& a) { return std::get<0>(a.sort(0, true)) * w; });
  op("topk.values", leaf({3, 4}), [&](const Tensor& a) { return std::get<0>(a.topk(2)) * w.narrow(1, 0, 2); });
  op("topk.dim0", leaf({3, 4}), [&](const Tensor& a) { return std::get<0>(a.topk(2, 0, false)) * w.narrow(0, 0, 2); });
  fact("topk.indices", std::get<1>(leaf({3, 4}).topk(2)));
  attempt("topk.k_too_large", [] { torch::ones({3}).topk(4); });

  const Tensor idx = torch::tensor({{1, 0}, {2, 2}, {0, 1}}, torch::kLong);
  op("scatter.src", leaf({3, 4}), [&](const Tensor& a) { return a.scatter(1, idx, a.narrow(1, 0, 2) * 3) * w; });
  op("scatter.value", leaf({3, 4}), [&](const Tensor& a) { return a.scatter(1, idx, 5.0) * w; });
  op("scatter.dim0", leaf({3, 4}), [&](const Tensor& a) {
    return torch::scatter(a, 0, torch::tensor({{2, 0, 1, 0}}, torch::kLong), a.narrow(0, 1, 1).exp()) * w;
  });
  inplace("scatter_.src", leaf({3, 4}), [&](Tensor& t) { t.scatter_(1, idx, t.narrow(1, 2, 2).detach() * 2); });
  inplace("scatter_.value", leaf({3, 4}), [&](Tensor& t) { t.scatter_(1, idx, -1.0); });
  Tensor onehot = torch::zeros({3, 4});
  onehot.scatter_(1, torch::tensor({{3}, {0}, {2}}, torch::kLong), 1.0);
  fact("scatter_.one_hot", onehot);
  attempt("scatter.leaf_inplace", [&] { leaf({3, 4}).scatter_(1, idx, 1.0); });
  attempt("scatter.bounds", [&] { torch::zeros({3, 4}).scatter(1, torch::tensor({{4}}, torch::kLong), 1.0); });
  attempt("scatter.dtype", [&] { torch::zeros({3, 4}).scatter(1, idx, torch::ones({3, 2}, torch::kDouble)); });
  attempt("scatter.index_dtype", [&] { torch::zeros({3, 4}).scatter(1, idx.to(torch::kInt), 1.0); });

  op("masked_select", leaf({3, 4}), [&](const Tensor& a) { return a.masked_select(a > 0) * 2; });
  op("masked_select.broadcast", leaf({3, 4}), [&](const Tensor& a) {
    return torch::masked_select(a, torch::tensor({true, false, true, true}));
  });
  op("masked_select.expanded", leaf({1, 4}),
     [&](const Tensor& a) { return a.masked_select(torch::tensor({{true}, {false}, {true}})).pow(2); });
  Tensor src = leaf({6});
  op("masked_scatter", leaf({2, 3}), [&](const Tensor& a) { return a.masked_scatter(a < 0, src) * 3; });
  fact("masked_scatter.src", src);
  inplace("masked_scatter_", leaf({2, 3}), [&](Tensor& t) { t.masked_scatter_(t.detach() > 0, src * 2); });
  fact("masked_scatter_.src", src);
  attempt("masked_select.not_bool", [] { torch::ones({2}).masked_select(torch::ones({2})); });

  op("diag.vector", leaf({3}), [&](const Tensor& a) { return torch::diag(a) * w.narrow(1, 0, 3); });
  op("diag.vector.offset", leaf({3}), [&](const Tensor& a) { return a.diag(-1) * torch::arange(16, torch::kDouble).reshape({4, 4}); });
  op("diag.matrix", leaf({3, 3}), [&](const Tensor& a) { return a.diag(1) * 3; });
  op("diag.rectangular", leaf({3, 4}), [&](const Tensor& a) { return a.diag(1).exp(); });
  op("diag.rectangular.below", leaf({3, 4}), [&](const Tensor& a) { return a.diag(-1) * 2; });
  attempt("diag.3d", [] { torch::ones({2, 2, 2}).diag(); });

  op("cumprod", leaf({3, 4}), [&](const Tensor& a) { return a.cumprod(1) * w; });
  op("cumprod.dim0", leaf({3, 4}), [&](const Tensor& a) { return torch::cumprod(a, 0) * w; });
  const Tensor zeros_in = torch::tensor({{2.0, 0.0, 3.0, -1.0}, {0.0, 1.5, 0.0, 2.0}, {1.0, 2.0, 3.0, 0.0}},
                                        torch::kDouble).requires_grad_();
  op("cumprod.zeros", zeros_in, [&](const Tensor& a) { return a.cumprod(1) * w; });
  fact("cumprod.int", torch::tensor({1, 2, 3, 4}).cumprod(0));

  // Second derivatives: sort's backward is a scatter, cumprod's a reversed cumsum over a quotient.
  for (const char* which : {"sort", "topk", "cumprod", "masked_select", "diag"}) {
    Tensor x = leaf({3, 3});
    Tensor y = std::string(which) == "sort"    ? std::get<0>(x.sort(1))
               : std::string(which) == "topk"  ? std::get<0>(x.topk(2, 0))
               : std::string(which) == "cumprod" ? x.cumprod(1)
               : std::string(which) == "diag"  ? x.diag()
                                               : x.masked_select(x > 0);
    Tensor g = torch::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
    fact(std::string(which) + ".double.g", g);
    fact(std::string(which) + ".double.gg", torch::autograd::grad({g.pow(3).sum()}, {x})[0]);
  }
}

// What a matrix product hands back: the gradient of w through w.t() comes out
// in w's layout (so AccumulateGrad takes it, at version 0), the dtype errors
// of each product, and undefined operands refused by name.
void products_contract() {
  torch::manual_seed(22);
  auto layout = [](const std::string& label, const Tensor& g) {
    emit(label, json{{"is_view", g.is_view()}, {"strides", g.strides().vec()}, {"version", g._version()},
                     {"values", values(g)}});
  };
  Tensor w = torch::randn({3, 4}, torch::requires_grad());
  Tensor b = torch::randn({3}, torch::requires_grad());
  const Tensor x = torch::randn({2, 4});
  torch::mm(x, w.t()).sum().backward();
  layout("mm.through_t.grad", w.grad());
  w.mutable_grad().reset();
  torch::addmm(b, x, w.t()).pow(2).sum().backward();
  layout("addmm.through_t.grad", w.grad());
  layout("addmm.bias.grad", b.grad());
  Tensor v = torch::randn({4, 3}, torch::requires_grad());
  torch::mm(x.t().contiguous().t(), v).sum().backward();
  layout("mm.column_major_a.grad", v.grad());
  Tensor u = torch::randn({4, 2}, torch::requires_grad());
  torch::mm(u.t(), torch::randn({4, 3})).sum().backward();
  layout("mm.a_through_t.grad", u.grad());
  Tensor z = torch::randn({3, 4}, torch::requires_grad());
  (z.t() * torch::randn({4, 3})).sum().backward();
  layout("mul.through_t.grad", z.grad());

  const Tensor d = torch::randn({4, 3}, torch::kDouble);
  attempt("mm.dtype", [&] { torch::mm(x, d); });
  attempt("addmm.dtype.mat", [&] { torch::addmm(b, x.to(torch::kDouble), w.t()); });
  attempt("addmm.dtype.self", [&] { torch::addmm(b.to(torch::kDouble), x, w.t()); });
  attempt("matmul.dtype", [&] { torch::matmul(x.unsqueeze(0), d); });
  attempt("mv.dtype", [&] { torch::mv(w, x[0].to(torch::kDouble)); });
  attempt("bmm.dtype", [&] { torch::bmm(x.unsqueeze(0), d.unsqueeze(0)); });
  attempt("dot.dtype", [&] { torch::dot(x[0], x[1].to(torch::kDouble)); });
  attempt("maximum.undefined_self", [&] { torch::maximum(Tensor(), x); });
  attempt("maximum.undefined_other", [&] { torch::maximum(x, Tensor()); });
  attempt("add.undefined", [&] { torch::add(x, Tensor()); });
  attempt("mul.undefined", [&] { Tensor() * x; });
  attempt("where.undefined", [&] { torch::where(x > 0, x, Tensor()); });
}

int main() {
  std::cout.precision(17);
  unary();
  unary_inplace();
  promotion();
  shapes();
  second_derivatives();
  inplace_cast_errors();
  loss_spellings();
  by_position();
  scans_and_flips();
  more_reductions();
  products_and_losses();
  more_losses_and_norms();
  choosing();
  products_contract();
  return 0;
}

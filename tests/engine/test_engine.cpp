// Engine behaviour beyond single ops: deep graphs, grad(), custom functions.
#include "reference.h"

#include <gradlab/failed_node.h>
#include <gradlab/node_count.h>

using torch::Tensor;

TEST_CASE("a chain of 1,000,000 ops builds, backpropagates and is freed", "[engine][deep]") {
  Tensor x = torch::tensor(1.0, torch::requires_grad());
  Tensor y = x;
  for (int i = 0; i < 1000000; ++i) y = y * 1.0;
  y.backward();
  CHECK(x.grad().item<float>() == 1.0f);
  y = Tensor();  // frees the chain without recursion
  CHECK(x.use_count() >= 1);
}

TEST_CASE("torch::autograd::grad and create_graph", "[engine][reference]") {
  Tensor x = torch::tensor(3., torch::requires_grad()), y = torch::tensor(4., torch::requires_grad());
  Tensor f = x * x * y;
  auto g = torch::autograd::grad({f}, {x, y}, {}, true);
  CHECK(g[0].item<float>() == 24);
  CHECK(g[1].item<float>() == 9);
  CHECK_FALSE(x.grad().defined());
  Tensor z = torch::tensor(1., torch::requires_grad());
  ref::check_run(ref::fact(ref::cpp(), "edge.autograd_grad", "unused"),
                 [&] { torch::autograd::grad({f}, {x, z}, {}, true); });
  Tensor g3 = torch::autograd::grad({x.pow(3)}, {x}, {}, std::nullopt, true)[0];
  CHECK(g3.item<float>() == 27);
  g3.backward();
  CHECK(x.grad().item<float>() == 18);  // d(3x^2)/dx = 6x
}

namespace {
struct MyExp : torch::autograd::Function<MyExp> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};
struct MulConst : torch::autograd::Function<MulConst> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, Tensor x, double k) {
    ctx->saved_data["k"] = k;
    return x * k;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list g) {
    return {g[0] * ctx->saved_data["k"].toDouble(), Tensor()};
  }
};
struct Bad : torch::autograd::Function<Bad> {
  static Tensor forward(torch::autograd::AutogradContext*, Tensor x) { return x * 2; }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext*, torch::autograd::variable_list g) {
    return {g[0], g[0]};
  }
};
}  // namespace

TEST_CASE("custom functions", "[engine][reference]") {
  const std::string c = "edge.custom_function";
  Tensor x = torch::tensor({0., 1.}, torch::requires_grad());
  Tensor y = MyExp::apply(x);
  Tensor z = MulConst::apply(y, 3.);
  CHECK(y.grad_fn()->name() == "torch::autograd::CppNode<(anonymous namespace)::MyExp>");
  z.sum().backward();
  CHECK(ref::flat(x.grad()) == std::vector<double>{3.0, 3.0 * std::exp(1.0f)});
  ref::check_run(ref::fact(ref::cpp(), c, "second_backward"), [&] { z.sum().backward(); });
  CHECK_THROWS_WITH(Bad::apply(x).sum().backward(),
                    "function torch::autograd::CppNode<(anonymous namespace)::Bad> returned an incorrect number of "
                    "gradients (expected 1, got 2)");
}

TEST_CASE("graph description is deterministic", "[engine][dot]") {
  auto build = [] {
    Tensor a = torch::tensor(1.0, torch::requires_grad()), b = torch::tensor(2.0, torch::requires_grad());
    Tensor d = (a + b) * a;
    return std::make_tuple(gradlab::to_dot(d, {{"a", a}, {"b", b}}), gradlab::walk_graph(d));
  };
  auto [dot1, walk1] = build();
  auto [dot2, walk2] = build();
  CHECK(dot1 == dot2);
  CHECK(walk1 ==
        "0  MulBackward0\n1   AddBackward0\n2    torch::autograd::AccumulateGrad\n2    "
        "torch::autograd::AccumulateGrad\n1   torch::autograd::AccumulateGrad\n");
  CHECK(dot1.find("fillcolor=lightblue") != std::string::npos);
  CHECK(dot1.find("a\\n ()") != std::string::npos);
}

TEST_CASE("the GPU: is_available, device_count, and what a CUDA request does without one", "[engine][cuda]") {
  const bool gpu = torch::cuda::is_available();
  CHECK(gpu == (torch::cuda::device_count() > 0));
  CHECK(gpu == gradlab::cuda_status().empty());
  if (gpu) {
    CHECK(torch::ones({2}, torch::kCUDA).is_cuda());
    CHECK_FALSE(gradlab::cuda_device_name(0).empty());
    return;
  }
  // No GPU: every way of reaching one fails with a clear error, never a crash.
  const std::string hint = "Hint: check torch::cuda::is_available() before moving tensors to the GPU.";
  CHECK_THROWS_WITH(torch::ones({2}, torch::kCUDA), Catch::Contains("Could not run an operation on cuda: ") && Catch::Contains(hint));
  CHECK_THROWS_WITH(torch::ones({2}).cuda(), Catch::Contains(hint));
  CHECK_THROWS_WITH(torch::ones({2}).to(torch::kCUDA), Catch::Contains(hint));
  CHECK_THROWS_AS(torch::randn({3}, torch::device(torch::kCUDA)), c10::Error);
  CHECK(gradlab::cuda_device_name(0).empty());
  torch::cuda::synchronize();  // nothing to wait for
}

// A leaf that outlives its graphs keeps its AccumulateGrad parked between
// them (impl::grad_accumulator). What PyTorch shows must not change: the
// leaf's weak reference expires with the graph, gradients land on the leaf,
// a leaf that only a graph holds still receives its gradient, and nothing leaks
// (the sanitizer build runs this too).
TEST_CASE("a parameter's AccumulateGrad across graphs", "[engine]") {
  using torch::autograd::AccumulateGrad;
  Tensor w = torch::tensor({1., 2., 3.}, torch::requires_grad());
  auto* impl = w.unsafeGetTensorImpl();
  for (int pass = 1; pass <= 3; ++pass) {
    Tensor y = (w * w).sum();
    auto acc = y.grad_fn()->next_edge(0).function->next_edge(0).function;
    REQUIRE(acc->name() == "torch::autograd::AccumulateGrad");
    CHECK(static_cast<AccumulateGrad*>(acc.get())->variable.is_same(w));
    CHECK(torch::autograd::impl::grad_accumulator(w) == acc);  // one per leaf while a graph lives
    CHECK(acc->input_metadata(0).shape.ref().equals(w.sizes()));
    y.backward();
    acc.reset();
    y = Tensor();
    CHECK(impl->grad_accumulator.expired());  // as in PyTorch: it died with the graph
    // The first graph's node is an ordinary one; from the second on it is parked.
    CHECK((impl->parked_accumulator != nullptr) == (pass > 1));
    for (int i = 0; i < 3; ++i) CHECK(w.grad()[i].item<float>() == 2.0f * (i + 1) * pass);
  }

  // Held only by a graph: the leaf lives on through its accumulator.
  Tensor y;
  {
    Tensor v = torch::ones({2}, torch::requires_grad());
    (v * 2).sum().backward();  // v's first graph: from now on its accumulator parks
    y = (v * 3).sum();
  }
  auto acc = y.grad_fn()->next_edge(0).function->next_edge(0).function;
  y.backward();
  const Tensor& v = static_cast<AccumulateGrad*>(acc.get())->variable;
  CHECK(v.grad()[0].item<float>() == 5.0f);
  // A caller's reference outlives the graph: still the same node, still holding v.
  y = Tensor();
  CHECK(static_cast<AccumulateGrad*>(acc.get())->variable.grad()[1].item<float>() == 5.0f);
  acc.reset();

  // A parked accumulator whose leaf changed shape is not reused.
  Tensor u = torch::ones({1, 3}, torch::requires_grad());
  (u * 2).sum().backward();
  (u * 2).sum().backward();
  REQUIRE(u.unsafeGetTensorImpl()->parked_accumulator != nullptr);
  u.set_requires_grad(false);
  u.squeeze_(0);
  u.set_requires_grad(true);
  u.mutable_grad() = Tensor();
  Tensor z = (u * 2).sum();
  auto acc_u = z.grad_fn()->next_edge(0).function->next_edge(0).function;
  CHECK(acc_u->input_metadata(0).shape.ref().equals(u.sizes()));
  z.backward();
  CHECK(u.grad().sizes().equals(std::vector<int64_t>{3}));
}

TEST_CASE("mm's backward gives the same gradients whatever the gradient's layout", "[engine]") {
  // Large enough for BLAS: an operand BLAS cannot read (stride 0, a stride-2
  // slice) is copied dense first; the values must not depend on the path.
  torch::manual_seed(11);
  Tensor a = torch::randn({64, 48}, torch::kDouble), b = torch::randn({48, 40}, torch::kDouble);
  Tensor dense = torch::randn({64, 40}, torch::kDouble);
  const std::vector<std::pair<const char*, Tensor>> layouts = {
      {"expanded from sum()", torch::ones({}, torch::kDouble).expand({64, 40})},
      {"transposed", dense.t().contiguous().t()},
      {"sliced", torch::cat({dense, dense}, 1).view({64, 2, 40}).select(1, 0)},
      {"row-sliced", torch::cat({dense, dense}, 1).slice(1, 0, 80, 2)}};
  for (const auto& [label, g] : layouts) {
    INFO(label);
    CHECK_FALSE(g.is_contiguous());
    Tensor a1 = a.clone().requires_grad_(), b1 = b.clone().requires_grad_();
    a1.mm(b1).backward(g);
    Tensor a2 = a.clone().requires_grad_(), b2 = b.clone().requires_grad_();
    a2.mm(b2).backward(g.contiguous());
    CHECK(torch::allclose(a1.grad(), a2.grad(), 1e-12, 1e-12));
    CHECK(torch::allclose(b1.grad(), b2.grad(), 1e-12, 1e-12));
    // and against the product written out: dA = G Bᵀ, dB = Aᵀ G
    CHECK(torch::allclose(a1.grad(), g.contiguous().mm(b.t().contiguous()), 1e-10, 1e-10));
  }
  // The natural spelling: sum() sends back an expanded gradient.
  Tensor a3 = a.clone().requires_grad_(), b3 = b.clone().requires_grad_();
  a3.mm(b3).sum().backward();
  CHECK(torch::allclose(a3.grad(), torch::ones({64, 40}, torch::kDouble).mm(b.t().contiguous()), 1e-10, 1e-10));
  // bmm's backward too, with the batch and its rows sliced.
  Tensor ba = torch::randn({3, 64, 48}, torch::kDouble), bb = torch::randn({3, 48, 40}, torch::kDouble);
  Tensor gs = torch::randn({3, 64, 80}, torch::kDouble).slice(2, 0, 80, 2);
  Tensor ba1 = ba.clone().requires_grad_(), bb1 = bb.clone().requires_grad_();
  ba1.bmm(bb1).backward(gs);
  CHECK(torch::allclose(ba1.grad(), gs.contiguous().bmm(bb.transpose(1, 2).contiguous()), 1e-10, 1e-10));
  CHECK(torch::allclose(bb1.grad(), ba.transpose(1, 2).contiguous().bmm(gs.contiguous()), 1e-10, 1e-10));
}

// The node that raised in a backward is kept for a grader's replay
// (gradlab/failed_node.h): the one that found its saved tensor changed, not
// the root's, and none after a clear or a backward that raised nothing.
TEST_CASE("the node a failed backward raised in", "[engine]") {
  gradlab::autograd::clear_failed_node();
  Tensor w = torch::ones({3}, torch::requires_grad()), a = torch::ones({3}, torch::requires_grad());
  Tensor e = a.exp();
  (w * 2).sum().backward();
  CHECK_FALSE(gradlab::autograd::last_failed_node());
  e += 1;
  CHECK_THROWS_WITH((e.sum() + w.sum()).backward(), Catch::Contains("modified by an inplace operation"));
  const auto failed = gradlab::autograd::last_failed_node();
  REQUIRE(failed);
  CHECK(failed->name() == "ExpBackward0");
  CHECK(failed->next_edges().at(0).function->name() == "torch::autograd::AccumulateGrad");
  // The saved tensor found changed is e's memory (exp saved its output).
  CHECK(gradlab::autograd::last_stale_storage() == e.unsafeGetTensorImpl()->storage.get());
  gradlab::autograd::clear_failed_node();
  CHECK_FALSE(gradlab::autograd::last_failed_node());
  CHECK(gradlab::autograd::last_stale_storage() == nullptr);
}

// Built-in op nodes that run their backward are counted whoever runs them
// (gradlab/node_count.h): the engine, or a program applying one by hand.
TEST_CASE("the built-in op nodes a backward runs are counted", "[engine]") {
  Tensor a = torch::tensor({1.0, 2.0}, torch::requires_grad()), b = torch::tensor({3.0, 4.0});
  const uint64_t before = gradlab::autograd::op_nodes_run();
  (a * b).sum().backward();  // SumBackward0, MulBackward0 (AccumulateGrad is no op's)
  CHECK(gradlab::autograd::op_nodes_run() - before == 2);
  Tensor r = torch::sigmoid(a);
  const uint64_t by_hand = gradlab::autograd::op_nodes_run();
  r.grad_fn()->apply({torch::ones_like(r)});
  CHECK(gradlab::autograd::op_nodes_run() - by_hand == 1);
}

// torch::Reduction is at::Reduction, as LibTorch's torch namespace takes in
// all of at's: the three spellings of a loss's reduction give one loss.
TEST_CASE("torch::Reduction::Mean, at::Reduction::Mean and the default are one loss", "[engine]") {
  const Tensor a = torch::tensor({1.0, 2.0, 4.0}), b = torch::tensor({0.0, 0.0, 1.0});
  CHECK(torch::mse_loss(a, b, torch::Reduction::Mean).item<double>() == Approx(14.0 / 3));
  CHECK(torch::mse_loss(a, b, at::Reduction::Mean).item<double>() == Approx(14.0 / 3));
  CHECK(torch::mse_loss(a, b).item<double>() == Approx(14.0 / 3));
  CHECK(torch::mse_loss(a, b, torch::Reduction::Sum).item<double>() == Approx(14.0));
  CHECK(torch::l1_loss(a, b, torch::Reduction::None).sizes() == a.sizes());
}

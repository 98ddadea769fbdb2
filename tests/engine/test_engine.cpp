// Engine behaviour beyond single ops: deep graphs, grad(), custom functions.
#include "reference.h"

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

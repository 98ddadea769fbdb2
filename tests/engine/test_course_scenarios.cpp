// The lessons' scenarios, replayed fact by fact against LibTorch's record
// (tests/reference/libtorch-cpp.json). Each statement is the C++ the record
// was measured with.
#include "scenario.h"

using ref::json;
using ref::Scenario;
using torch::Tensor;

namespace {
const char* kLibTorchPrint = "LibTorch's own operator<< format; the engine prints Python's repr (tested in [repr])";

// The lab's RNN cell, as the accumulation cases define it.
Tensor acc_forward(const Tensor& Wh, const Tensor& Wx, const Tensor& x, const Tensor& h) {
  Tensor i2h = Wx.mm(x), h2h = Wh.mm(h);
  Tensor next_h = (i2h + h2h).tanh();
  return next_h.sum();
}
}  // namespace

TEST_CASE("scenario: RNN cell with retain_grad on every intermediate", "[reference][course]") {
  Tensor Wh, Wx, x, h, i2h, h2h, next_h_a, next_h, out;
  Scenario s("course.lab2b.rnn_retain_grad");
  for (auto [n, t] : {std::pair{"Wh", &Wh}, {"Wx", &Wx}, {"x", &x}, {"h", &h}, {"i2h", &i2h}, {"h2h", &h2h},
                      {"next_h_a", &next_h_a}, {"next_h", &next_h}, {"out", &out}})
    s.var(n, *t);
  s.run("init", [&] {
    torch::manual_seed(0);
    Wh = torch::randn({3, 3}, torch::requires_grad());
    Wx = torch::randn({3, 2}, torch::requires_grad());
    x = torch::randn({2, 1});
    h = torch::randn({3, 1});
  });
  s.run("forward", [&] {
    i2h = Wx.mm(x);
    h2h = Wh.mm(h);
    next_h_a = i2h + h2h;
    next_h = next_h_a.tanh();
    out = next_h.sum();
    for (auto& t : {i2h, h2h, next_h_a, next_h, out}) const_cast<Tensor&>(t).retain_grad();
  });
  s.run("backward", [&] { out.backward(); });
  s.play();
}

TEST_CASE("scenario: mm with mismatched shapes", "[reference][course]") {
  Tensor Wx, x;
  Scenario s("course.lab2b.mm_shape_typo");
  s.run("init", [&] {
    Wx = torch::ones({2, 1});
    x = torch::randn({2, 1});
  });
  s.run("mm", [&] { (void)Wx.mm(x); });
  s.run("matmul", [&] { (void)Wx.matmul(x); });
  s.run("mm_1d", [&] { (void)torch::ones({3}).mm(torch::ones({3, 1})); });
  s.play();
}

TEST_CASE("scenario: gradients accumulate; zero_ between iterations", "[reference][course]") {
  // The same cell and leaves; the second case zeroes the gradient after each
  // pass, then tries zero_ on a fresh leaf whose grad is still undefined.
  for (const bool zero : {false, true}) {
    Tensor Wh, Wx, x, h, out;
    Scenario s(zero ? "course.lab2b.grad_zero_each_iter" : "course.lab2b.grad_accumulation");
    s.var("Wh", Wh);
    s.run("init", [&] {
      Wh = torch::ones({3, 3}, torch::requires_grad());
      Wx = torch::ones({3, 2});
      x = torch::zeros({2, 1});
      h = torch::ones({3, 1});
    });
    for (const char* it : {"iter_0", "iter_1", "iter_2"}) s.run(it, [&] {
        out = acc_forward(Wh, Wx, x, h);
        out.backward();
        if (zero) Wh.grad().zero_();
      });
    s.run("fresh_leaf", [&] { Wh = torch::ones({3, 3}, torch::requires_grad()); });
    s.run("zero_before_first_backward", [&] { Wh.grad().zero_(); });
    s.run("guarded_zero", [&] {
      if (Wh.grad().defined()) Wh.grad().zero_();
      out = acc_forward(Wh, Wx, x, h);
      out.backward();
    });
    s.run("set_to_none", [&] {
      Wh.mutable_grad().reset();
      out = acc_forward(Wh, Wx, x, h);
      out.backward();
    });
    s.play();
  }
}

TEST_CASE("scenario: reassigning y makes a new node", "[reference][course]") {
  Tensor w1, w2, x, y, y_first, out, out2;
  Scenario s("course.lab2b.explicit_reassignment");
  for (auto [n, t] : {std::pair{"w1", &w1}, {"w2", &w2}, {"x", &x}, {"y", &y}, {"y_first", &y_first},
                      {"out", &out}, {"out2", &out2}})
    s.var(n, *t);
  s.run("forward", [&] {
    w1 = torch::tensor(2., torch::requires_grad());
    w2 = torch::tensor(2., torch::requires_grad());
    x = torch::tensor(4., torch::requires_grad());
    y = w1 * x;
    y_first = y;
    y = w2 * y;
    y.retain_grad();
    out = y.pow(2);
  });
  s.run("backward", [&] { out.backward(); });
  s.value("dy", [&] { return json(y.grad().item<float>()); });
  s.value("y_first_is_not_y", [&] { return json(y_first.is_same(y)); });
  s.run("operator_pow_does_not_exist_use_pow", [&] { out2 = y * y; });
  s.play();
}

TEST_CASE("scenario: detach cuts a branch", "[reference][course]") {
  Tensor x, y, z, out;
  Scenario s("course.lab2b.detach");
  for (auto [n, t] : {std::pair{"x", &x}, {"y", &y}, {"z", &z}, {"out", &out}}) s.var(n, *t);
  s.run("full", [&] {
    x = torch::ones({10}, torch::requires_grad());
    y = x.pow(2);
    z = x.pow(3);
    out = (y + z).sum();
  });
  s.run("full_backward", [&] { out.backward(); });
  s.run("detached", [&] {
    x = torch::ones({10}, torch::requires_grad());
    y = x.detach().pow(2);
    z = x.pow(3);
    out = (y + z).sum();
  });
  s.run("detached_backward", [&] { out.backward(); });
  s.play();
}

TEST_CASE("scenario: requires_grad is contagious", "[reference][course]") {
  Tensor x, y, z, a, b;
  Scenario s("course.graphs.requires_grad_contagion");
  for (auto [n, t] : {std::pair{"x", &x}, {"y", &y}, {"z", &z}, {"a", &a}, {"b", &b}}) s.var(n, *t);
  s.run("init", [&] {
    torch::manual_seed(0);
    x = torch::randn({3, 3});
    y = torch::randn({3, 3});
    z = torch::randn({3, 3}, torch::requires_grad());
    a = x + y;
    b = a + z;
  });
  s.value("a_grad_fn_is_null", [&] { return json(a.grad_fn() == nullptr); });
  s.play();
}

TEST_CASE("scenario: backward of a non-scalar output", "[reference][course]") {
  Tensor a, w1, w2, w3, w4, b, c, d, L;
  Scenario s("course.graphs.nonscalar_backward");
  for (auto [n, t] : {std::pair{"a", &a}, {"w1", &w1}, {"d", &d}, {"L", &L}}) s.var(n, *t);
  auto setup = [&] {
    torch::manual_seed(0);
    a = torch::randn({3, 3}, torch::requires_grad());
    w1 = torch::randn({3, 3}, torch::requires_grad());
    w2 = torch::randn({3, 3}, torch::requires_grad());
    w3 = torch::randn({3, 3}, torch::requires_grad());
    w4 = torch::randn({3, 3}, torch::requires_grad());
    b = w1 * a;
    c = w2 * a;
    d = w3 * b + w4 * c;
  };
  s.run("setup_1", setup);
  s.run("L", [&] { L = 10 - d; });
  s.run("L_backward_error", [&] { L.backward(); });
  s.run("sum_fix", [&] {
    L = (10 - d).sum();
    L.backward();
  });
  s.run("setup_2", setup);
  s.run("ones_fix", [&] {
    L = 10 - d;
    L.backward(torch::ones(L.sizes()));
  });
  s.run("sgd_step_out_of_place", [&] {
    double learning_rate = 0.5;
    w1 = w1 - learning_rate * w1.grad();
  });
  s.play();
}

TEST_CASE("scenario: a second backward needs retain_graph", "[reference][course]") {
  Tensor a, w1, b, loss;
  Scenario s("course.graphs.second_backward");
  s.run("forward", [&] {
    torch::manual_seed(0);
    a = torch::randn({3, 3}, torch::requires_grad());
    w1 = torch::randn({3, 3}, torch::requires_grad());
    b = w1 * a;
    loss = b.sum();
  });
  s.run("backward_1", [&] { loss.backward(); });
  s.run("backward_2", [&] { loss.backward(); });
  s.run("forward_again", [&] {
    b = w1 * a;
    loss = b.sum();
  });
  s.run("retain_1", [&] { loss.backward({}, true); });
  s.run("retain_2", [&] { loss.backward(); });
  s.value("w1_grad_is_3x_a", [&] { return json(torch::allclose(w1.grad(), 3 * a)); });
  s.play();
}

TEST_CASE("scenario: NoGradGuard builds no graph", "[reference][course]") {
  Tensor w, x, y, y2;
  bool inside = true, outside = false;
  Scenario s("course.graphs.no_grad");
  for (auto [n, t] : {std::pair{"w", &w}, {"x", &x}, {"y", &y}, {"y2", &y2}}) s.var(n, *t);
  s.run("init", [&] {
    w = torch::tensor({1., 2.}, torch::requires_grad());
    x = torch::tensor({3., 4.});
  });
  s.run("inference", [&] {
    {
      torch::NoGradGuard no_grad;
      y = w * x;
      inside = torch::GradMode::is_enabled();
    }
    outside = torch::GradMode::is_enabled();
  });
  s.value("inside", [&] { return json(inside); });
  s.value("outside", [&] { return json(outside); });
  s.run("tracked", [&] { y2 = w * x; });
  s.play();
}

TEST_CASE("scenario: e = a*b + log(d)*c, with and without retain_grad", "[reference][course]") {
  for (const std::string id : {"course.graphs.abcd_log", "course.backprop2.abcd_no_retain"}) {
    Tensor a, b, c, d, u, t, v, e, a2, b2, c2;
    Scenario s(id);
    for (auto [n, p] : {std::pair{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}, {"u", &u}, {"t", &t}, {"v", &v},
                        {"e", &e}, {"c2", &c2}})
      s.var(n, *p);
    const bool retain = id == "course.graphs.abcd_log";
    s.run("forward", [&] {
      a = torch::tensor({2.0}, torch::requires_grad());
      b = torch::tensor({3.0}, torch::requires_grad());
      c = torch::tensor({5.0}, torch::requires_grad());
      d = torch::tensor({10.0}, torch::requires_grad());
      u = a * b;
      t = torch::log(d);
      v = t * c;
      if (retain) t.retain_grad();
      e = u + v;
      if (!retain) e.backward();
    });
    s.run("backward", [&] { e.backward(); });
    s.value("de_da", [&] { return json(a.grad().item<float>()); });
    s.value("de_db", [&] { return json(b.grad().item<float>()); });
    s.value("de_dc", [&] { return json(c.grad().item<float>()); });
    s.value("de_dd", [&] { return json(d.grad().item<float>()); });
    s.value("de_dt", [&] { return json(t.grad().item<float>()); });
    s.run("div_example", [&] {
      a2 = torch::tensor(6., torch::requires_grad());
      b2 = torch::tensor(3., torch::requires_grad());
      c2 = a2 / b2;
    });
    s.play();
  }
}

TEST_CASE("scenario: c = a + b; d = c * a, its next functions and walk", "[reference][course]") {
  Tensor a, b, c, d;
  Scenario s("course.demo.c_eq_a_plus_b");
  for (auto [n, p] : {std::pair{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}}) s.var(n, *p);
  s.run("forward", [&] {
    a = torch::tensor(1.0, torch::requires_grad());
    b = torch::tensor(2.0, torch::requires_grad());
    c = a + b;
    d = c * a;
  });
  s.skip("print_c", kLibTorchPrint).skip("print_d", kLibTorchPrint);
  s.run("backward", [&] { d.backward(); });
  s.value("dd_da", [&] { return json(a.grad().item<float>()); });
  s.value("dd_db", [&] { return json(b.grad().item<float>()); });
  s.value("d.next_functions", [&] { return ref::next_edges_record(d.grad_fn()); });
  s.value("c.next_functions", [&] { return ref::next_edges_record(d.grad_fn()->next_edge(0).function); });
  s.value("add_node_is_c_grad_fn", [&] { return json(d.grad_fn()->next_edge(0).function == c.grad_fn()); });
  s.value("accumulate_grad_a_shared", [&] {
    return json(d.grad_fn()->next_edge(1).function == c.grad_fn()->next_edge(0).function);
  });
  s.value("accumulate_grad_is_grad_accumulator", [&] {
    return json(d.grad_fn()->next_edge(1).function == torch::autograd::impl::grad_accumulator(a));
  });
  s.value("accumulate_grad_num_next_edges",
          [&] { return json(static_cast<int64_t>(d.grad_fn()->next_edge(1).function->num_outputs())); });
  s.value("walk_graph", [&] { return ref::walk_lines(d); });
  s.play();
}

TEST_CASE("scenario: relu(d.detach()) + c versus relu(d) + c", "[reference][course]") {
  Tensor a, b, c, d, e, f, g;
  Scenario s("course.demo.relu_detach");
  for (auto [n, p] : {std::pair{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}, {"e", &e}, {"f", &f}, {"g", &g}})
    s.var(n, *p);
  s.run("forward", [&] {
    a = torch::tensor(1.0, torch::requires_grad());
    b = torch::tensor(2.0, torch::requires_grad());
    c = torch::tensor(3.0, torch::requires_grad());
    d = a + b;
    e = torch::relu(d.detach()) + c;
    f = torch::relu(d) + c;
  });
  s.value("walk_e", [&] { return ref::walk_lines(e); });
  s.value("walk_f", [&] { return ref::walk_lines(f); });
  s.run("backward_e", [&] { e.backward(); });
  s.run("backward_f", [&] { f.backward(); });
  s.run("functional_spelling", [&] { g = torch::nn::functional::relu(d); });
  s.play();
}

TEST_CASE("scenario: the GAN pattern detaches the fake images for D's step", "[reference][course]") {
  Tensor G_w, D_w, noise, fake_images, fake_output, d_loss, g_loss;
  Scenario s("course.demo.gan_detach");
  s.var("G_w", G_w).var("D_w", D_w);
  auto setup = [&] {
    torch::manual_seed(0);
    G_w = torch::randn({4}, torch::requires_grad());
    D_w = torch::randn({4}, torch::requires_grad());
    noise = torch::randn({4});
    fake_images = (G_w * noise).tanh();
  };
  s.run("setup", setup).run("setup_no_detach", setup);
  s.run("d_step", [&] {
    fake_output = (D_w * fake_images.detach()).sigmoid();
    d_loss = fake_output.sum();
    d_loss.backward();
  });
  s.run("g_step", [&] {
    G_w.mutable_grad().reset();
    fake_output = (D_w * fake_images).sigmoid();
    g_loss = fake_output.sum();
    g_loss.backward();
  });
  s.run("d_step_no_detach", [&] {
    fake_output = (D_w * fake_images).sigmoid();
    d_loss = fake_output.sum();
    d_loss.backward();
  });
  s.run("g_step_no_detach", [&] {
    fake_output = (D_w * fake_images).sigmoid();
    g_loss = fake_output.sum();
    g_loss.backward();
  });
  s.play();
}

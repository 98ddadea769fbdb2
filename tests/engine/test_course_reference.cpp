// The course's scenarios in C++, checked fact by fact against LibTorch.
#include "reference.h"

using torch::Tensor;

namespace {
const ref::json& F(const std::string& c, const std::string& l) { return ref::fact(ref::cpp(), c, l); }
}  // namespace

TEST_CASE("lab exercise: f = (x^2 + y) z", "[reference][course]") {
  const std::string c = "course.lab2b.exercise";
  Tensor x = torch::tensor(-2.0, torch::requires_grad()), y = torch::tensor(2.0, torch::requires_grad()),
         z = torch::tensor(3.0, torch::requires_grad());
  Tensor p = x.pow(2), q = p + y, f = q * z;
  p.retain_grad();
  q.retain_grad();
  for (auto [label, t] : {std::pair{"before.p", p}, {"before.q", q}, {"before.f", f}})
    if (ref::cpp()["cases"][c]["facts"].contains(label)) ref::check_tensor(F(c, label), t);
  f.backward();
  for (const auto& [label, rec] : ref::cpp()["cases"][c]["facts"].items()) {
    if (rec["kind"] != "tensor" || label.rfind("after", 0) != 0) continue;
    const std::string e = rec["expr"];
    Tensor t = e == "x" ? x : e == "y" ? y : e == "z" ? z : e == "p" ? p : e == "q" ? q : f;
    ref::check_tensor(rec, t);
  }
  CHECK(x.grad().item<float>() == -12);
  CHECK(p.grad().item<float>() == 3);
}

TEST_CASE("RNN cell forward and backward, second backward error", "[reference][course]") {
  torch::manual_seed(0);
  Tensor Wh = torch::randn({3, 3}, torch::requires_grad()), Wx = torch::randn({3, 2}, torch::requires_grad());
  Tensor x = torch::randn({2, 1}), h = torch::randn({3, 1});
  ref::check_tensor(F("course.lab2b.rnn_forward", "init.Wh"), Wh);
  ref::check_tensor(F("course.lab2b.rnn_forward", "init.Wx"), Wx);
  ref::check_tensor(F("course.lab2b.rnn_forward", "init.x"), x);
  ref::check_tensor(F("course.lab2b.rnn_forward", "init.h"), h);
  Tensor i2h = Wx.mm(x), h2h = Wh.mm(h);
  ref::check_tensor(F("course.lab2b.rnn_forward", "mm.i2h"), i2h);
  Tensor next_h_a = i2h + h2h, next_h = next_h_a.tanh(), out = next_h.sum();
  out.backward();
  const auto& facts = ref::cpp()["cases"]["course.lab2b.rnn_backward"]["facts"];
  std::map<std::string, Tensor> env{{"Wx", Wx}, {"Wh", Wh}, {"x", x}, {"h", h}, {"i2h", i2h}, {"h2h", h2h},
                                    {"next_h_a", next_h_a}, {"next_h", next_h}, {"out", out}};
  bool second = false;
  for (const auto& [label, rec] : facts.items()) {
    if (rec["kind"] == "run" && rec["code"] == "out.backward()") {
      if (second) ref::check_run(rec, [&] { out.backward(); });
      second = true;
    }
  }
  for (const auto& [label, rec] : facts.items())
    if (rec["kind"] == "tensor" && label.rfind("after_backward", 0) == 0) ref::check_tensor(rec, env.at(rec["expr"]));
}

TEST_CASE("retain_graph allows a second backward; gradients accumulate", "[reference][course]") {
  torch::manual_seed(0);
  Tensor Wh = torch::randn({3, 3}, torch::requires_grad()), Wx = torch::randn({3, 2}, torch::requires_grad());
  Tensor x = torch::randn({2, 1}), h = torch::randn({3, 1});
  Tensor out = (Wx.mm(x) + Wh.mm(h)).tanh().sum();
  std::vector<ref::json> wh_facts, runs;
  for (const auto& [label, rec] : ref::cpp()["cases"]["course.lab2b.rnn_retain_graph"]["facts"].items()) {
    if (rec["kind"] == "tensor") wh_facts.push_back(rec);
    if (rec["kind"] == "run") runs.push_back(rec);
  }
  auto by_seq = [](const ref::json& a, const ref::json& b) { return a["seq"] < b["seq"]; };
  std::sort(wh_facts.begin(), wh_facts.end(), by_seq);
  std::sort(runs.begin(), runs.end(), by_seq);
  REQUIRE(runs.size() == 6);
  ref::check_run(runs[2], [&] { out.backward({}, true); });
  ref::check_tensor(wh_facts[0], Wh);
  ref::check_run(runs[3], [&] { out.backward({}, true); });
  ref::check_tensor(wh_facts[1], Wh);
  ref::check_run(runs[4], [&] { out.backward(); });
  ref::check_tensor(wh_facts[2], Wh);
  ref::check_run(runs[5], [&] { out.backward(); });
  ref::check_tensor(wh_facts[3], Wh);
}

TEST_CASE("in-place rules: leaves, versions, saved tensors", "[reference][course]") {
  Tensor x = torch::ones({3}, torch::requires_grad());
  const std::string c = "course.lab2b.inplace_ops";
  ref::check_run(F(c, "mul_"), [&] { x.mul_(10); });
  Tensor w = torch::ones({3}, torch::requires_grad());
  Tensor y = w * 2;
  ref::check_tensor(F(c, "nonleaf_before.y"), y);
  y.mul_(10);
  ref::check_tensor(F(c, "nonleaf_after_mul_.y"), y);
  y -= 10;
  ref::check_tensor(F(c, "nonleaf_after_isub.y"), y);
  y.sum().backward();
  CHECK(ref::flat(w.grad()) == std::vector<double>{20, 20, 20});

  Tensor xs = torch::tensor({1., 2., 3.}, torch::requires_grad());
  Tensor e = xs.exp();
  e.add_(1);
  ref::check_run(F("edge.inplace_version_counter", "exp_output_backward"), [&] { e.sum().backward(); });
  Tensor wv = torch::tensor({1., 2., 3.}, torch::requires_grad()), vv = torch::tensor({4., 5., 6.});
  Tensor prod = wv * vv;
  vv.mul_(2);
  ref::check_run(F("edge.inplace_version_counter", "saved_leaf_input"), [&] { prod.sum().backward(); });
}

TEST_CASE("in-place through a view of a non-leaf becomes CopySlices", "[reference][course]") {
  const std::string c = "edge.inplace_view_nonleaf";
  Tensor x = torch::tensor({1., 2., 3.}, torch::requires_grad());
  Tensor y = x * 2;
  y[0] = 0.;
  for (const auto& [label, rec] : ref::cpp()["cases"][c]["facts"].items()) {
    if (rec["kind"] == "tensor" && rec["seq"] == 1) ref::check_tensor(rec, y);
  }
  y.sum().backward();
  CHECK(ref::flat(x.grad()) == std::vector<double>{0, 2, 2});
  x.mutable_grad().reset();
  y = x * 2;
  Tensor v = y.slice(0, 1);
  v.mul_(10);
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  CHECK(y.grad_fn()->name() == "torch::autograd::CopySlices");
  y.sum().backward();
  CHECK(ref::flat(x.grad()) == std::vector<double>{2, 20, 20});
}

TEST_CASE("errors: implicit gradient, no grad_fn, wrong gradient shape", "[reference][course]") {
  const std::string c = "edge.backward_errors";
  Tensor x = torch::ones({3});
  ref::check_run(F(c, "no_requires_grad"), [&] { x.sum().backward(); });
  Tensor w = torch::ones({3}, torch::requires_grad());
  Tensor y = w * 2;
  ref::check_run(F(c, "nonscalar_wrong_shape"), [&] { y.backward(torch::ones({2})); });
  ref::check_run(F(c, "nonscalar_wrong_shape_2d"), [&] { y.backward(torch::ones({3, 1})); });
  Tensor L = 10 - w;
  CHECK_THROWS_WITH(L.backward(), "grad can be implicitly created only for scalar outputs");
}

TEST_CASE("printing matches Python's repr", "[reference][repr]") {
  const auto& facts = ref::py()["cases"]["repr.tensors"]["facts"];
  std::map<std::string, Tensor> samples{
      {"torch.tensor(3.)", torch::tensor(3.)},
      {"torch.tensor(-0.2160)", torch::tensor(-0.2160)},
      {"torch.tensor([1., 2.])", torch::tensor({1., 2.})},
      {"torch.tensor([0.1, 0.2, 0.3])", torch::tensor({0.1, 0.2, 0.3})},
      {"torch.tensor([1e-5, 1e5])", torch::tensor({1e-5, 1e5})},
      {"torch.arange(12.).reshape(3, 4)", torch::arange(12.).reshape({3, 4})},
      {"torch.arange(1001.)", torch::arange(1001.)},
      {"torch.tensor([1., 2.], requires_grad=True)", torch::tensor({1., 2.}, torch::requires_grad())},
  };
  int checked = 0;
  for (const auto& [label, rec] : facts.items()) {
    if (rec["kind"] != "value" && rec["kind"] != "tensor") continue;
    const std::string e = rec.value("expr", "");
    for (const auto& [expr, t] : samples) {
      if (e == "str(" + expr + ")" || e == "repr(" + expr + ")") {
        INFO(e);
        CHECK(gradlab::python_repr(t) == rec["result"].get<std::string>());
        ++checked;
      }
    }
  }
  CHECK(checked >= 1);
}

TEST_CASE("seeded randn/rand are PyTorch's, bit for bit", "[reference][rng]") {
  const auto& facts = ref::py()["cases"]["rng.seed0_values"]["facts"];
  auto bits = [](const Tensor& t) {
    std::vector<std::string> r;
    for (int64_t i = 0; i < t.numel(); ++i) {
      float f = t.data_ptr<float>()[i];
      uint32_t u;
      std::memcpy(&u, &f, 4);
      char buf[16];
      std::snprintf(buf, sizeof buf, "0x%08x", u);
      r.push_back(buf);
    }
    return r;
  };
  struct Draw {
    const char* label;
    std::function<Tensor()> make;
  };
  std::vector<Draw> draws = {
      {"randn_3x3.bits", [] { torch::manual_seed(0); return torch::randn({3, 3}); }},
      {"randn_3x3_then_3x2.bits", [] { torch::manual_seed(0); (void)torch::randn({3, 3}); return torch::randn({3, 2}); }},
      {"randn_15.bits", [] { torch::manual_seed(0); return torch::randn({15}); }},
      {"randn_16.bits", [] { torch::manual_seed(0); return torch::randn({16}); }},
      {"randn_17.bits", [] { torch::manual_seed(0); return torch::randn({17}); }},
      {"randn_4x4.bits", [] { torch::manual_seed(0); return torch::randn({4, 4}); }},
      {"rand_20.bits", [] { torch::manual_seed(0); return torch::rand({20}); }},
      {"randn_seed42_3.bits", [] { torch::manual_seed(42); return torch::randn({3}); }},
      {"normal_mean1_std2_x4.bits", [] { torch::manual_seed(0); return torch::empty({4}).normal_(1., 2.); }},
  };
  for (const auto& d : draws) {
    INFO(d.label);
    REQUIRE(facts.contains(d.label));
    CHECK(bits(d.make()) == facts[d.label]["result"].get<std::vector<std::string>>());
  }
}

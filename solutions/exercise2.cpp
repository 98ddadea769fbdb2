// Reference solution for exercise 2: backward, and backward a second time.
#include <gradlab/lab.h>

void exercise2(lab::Lab& lab) {
  torch::manual_seed(static_cast<uint64_t>(lab.given("seed")));  // the lesson's 0, or the variant's
  torch::Tensor Wh = torch::randn({3, 3}, torch::requires_grad());
  torch::Tensor Wx = torch::randn({3, 2}, torch::requires_grad());
  torch::Tensor x = torch::randn({2, 1});
  torch::Tensor h = torch::randn({3, 1});
  torch::Tensor i2h = Wx.mm(x);
  torch::Tensor h2h = Wh.mm(h);
  torch::Tensor next_h = (i2h + h2h).tanh();
  torch::Tensor out = next_h.sum();
  torch::Tensor out2;
  lab::Names names(lab, {{"Wx", Wx}, {"Wh", Wh}, {"x", x},
                          {"h", h}, {"next_h", next_h}, {"out", out}, {"out2", out2}});

  out.backward();
  lab.snapshot("Wx.grad after backward", Wx.grad());
  lab.snapshot("Wh.grad after backward", Wh.grad());

  lab.attempt("second backward", [&] { out.backward(); });

  out2 = (Wx.mm(x) + Wh.mm(h)).tanh().sum();
  out2.backward({}, /*retain_graph=*/true);
  lab.attempt("second backward with retain_graph", [&] { out2.backward(); });
}

// Reference solution for exercise 1: the RNN cell's forward pass.
#include <gradlab/lab.h>

void exercise1(lab::Lab& lab) {
  torch::manual_seed(static_cast<uint64_t>(lab.given("seed")));  // the lesson's 0, or the variant's
  torch::Tensor Wh = torch::randn({3, 3});
  torch::Tensor Wx = torch::randn({3, 2});
  torch::Tensor x = torch::randn({2, 1});
  torch::Tensor h = torch::randn({3, 1});
  torch::Tensor i2h, h2h, next_h, out;
  lab::Names names(lab, {{"Wh", Wh}, {"Wx", Wx}, {"x", x}, {"h", h},
                          {"i2h", i2h}, {"h2h", h2h}, {"next_h", next_h}, {"out", out}});

  Wx.requires_grad_();
  Wh.requires_grad_();

  i2h = Wx.mm(x);
  h2h = Wh.mm(h);
  next_h = (i2h + h2h).tanh();
  out = next_h.sum();
}

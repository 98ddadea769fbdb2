// Reference solution for exercise 4: gradients accumulate; zero_() resets them.
#include <gradlab/lab.h>

#include <string>

void exercise4(lab::Lab& lab) {
  torch::Tensor Wh = torch::ones({3, 3}, torch::requires_grad());
  torch::Tensor Wx = torch::ones({3, 2});
  // The statement's numbers: the lesson's, or this student's variant's.
  torch::Tensor x = torch::full({2, 1}, lab.given("x0"));
  torch::Tensor h = torch::ones({3, 1});
  lab::Names names(lab, {{"Wh", Wh}});
  auto forward = [&] { return (Wx.mm(x) + Wh.mm(h)).tanh().sum(); };

  for (int i = 0; i < 3; ++i) {
    torch::Tensor out = forward();
    out.backward();
    lab.snapshot("accumulate " + std::to_string(i + 1), Wh.grad());
  }
  for (int i = 0; i < 3; ++i) {
    Wh.grad().zero_();
    torch::Tensor out = forward();
    out.backward();
    lab.snapshot("zeroed " + std::to_string(i + 1), Wh.grad());
  }
}

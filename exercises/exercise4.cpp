// Exercise 4 — gradients accumulate until you zero them.
//
// The lab's RNN cell with constant inputs, so that every backward pass
// computes the same gradient: Wh = ones(3×3) requires grad, Wx = ones(3×2),
// x = 0 in both elements (2×1), h = ones(3×1). forward() builds the cell and returns out.
//
//   1. Three times: out = forward(), backward from out, then
//      lab.snapshot("accumulate " + std::to_string(i + 1), Wh.grad()).
//      Nothing resets Wh's gradient, so each backward adds to it: one
//      pass's gradient g (the same in every element), then 2g, then 3g.
//   2. Three more times, but first set Wh's gradient to zero in place
//      (it already exists from part 1), then forward, backward and
//      lab.snapshot("zeroed " + std::to_string(i + 1), Wh.grad()).
//      Now every snapshot shows the same g.
//
// Submit: fill in the blanks, then run `./grade exercise4`.
#include <gradlab/lab.h>

#include <string>

void exercise4(lab::Lab& lab) {
  torch::Tensor Wh = torch::ones({3, 3}, torch::requires_grad());
  torch::Tensor Wx = torch::ones({3, 2});
  torch::Tensor x = torch::full({2, 1}, 0.0);
  torch::Tensor h = torch::ones({3, 1});
  lab::Names names(lab, {{"Wh", Wh}});
  auto forward = [&] { return (Wx.mm(x) + Wh.mm(h)).tanh().sum(); };

  for (int i = 0; i < 3; ++i) {
    // START CODE HERE
    // 1. Forward, backward and the snapshot "accumulate N" (3 lines).

    // END CODE HERE
  }
  for (int i = 0; i < 3; ++i) {
    // START CODE HERE
    // 2. Zero the gradient, then forward, backward and the snapshot
    //    "zeroed N" (4 lines).

    // END CODE HERE
  }
}

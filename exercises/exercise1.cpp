// Exercise 1 — the forward pass builds the graph.
//
// The lab's RNN cell, one step:
//     i2h    = Wx · x            (Wx is 3×2, x is 2×1)
//     h2h    = Wh · h            (Wh is 3×3, h is 3×1)
//     next_h = tanh(i2h + h2h)   (3×1)
//     out    = Σ next_h          (a scalar)
//
// The four inputs are drawn for you (seeded, so everyone gets the same
// numbers), none of them tracked by autograd yet.
//
//   1. Wx and Wh are the cell's parameters: make autograd track them (each
//      leaf tensor has a method that switches requires_grad on in place).
//      x and h are data: leave them as they are.
//   2. Compute i2h, h2h, next_h and out with matrix products (mm), an
//      addition, tanh and a sum.
//
// Nothing runs backward here. Look at what the forward pass recorded: every
// result computed from a tensor that requires grad requires grad too, and
// remembers the operation that made it (its grad_fn); the four inputs are
// leaves with no grad_fn.
//
// Submit: fill in the blanks, then run `./grade exercise1`.
#include <gradlab/lab.h>

void exercise1(lab::Lab& lab) {
  torch::manual_seed(0);
  torch::Tensor Wh = torch::randn({3, 3});
  torch::Tensor Wx = torch::randn({3, 2});
  torch::Tensor x = torch::randn({2, 1});
  torch::Tensor h = torch::randn({3, 1});
  torch::Tensor i2h, h2h, next_h, out;
  lab::Names names(lab, {{"Wh", Wh}, {"Wx", Wx}, {"x", x}, {"h", h},
                          {"i2h", i2h}, {"h2h", h2h}, {"next_h", next_h}, {"out", out}});

  // START CODE HERE
  // 1. Wx and Wh require grad (2 lines).

  // 2. The forward pass (4 lines).

  // END CODE HERE
}

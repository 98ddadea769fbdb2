// Exercise 2 — the backward pass, and why a graph can be walked only once.
//
// The lab's RNN cell is built for you (seeded, so everyone gets the same
// numbers): Wx (3×2) and Wh (3×3) require grad, x (2×1) and h (3×1) do not;
// next_h = tanh(Wx·x + Wh·h) and out = Σ next_h.
//
//   1. Run backpropagation from out. Afterwards Wx and Wh hold d(out)/dWx and
//      d(out)/dWh; x, h and the intermediate results hold no gradient.
//   2. Backward frees the graph's saved tensors. Try a second backward from
//      out inside lab.attempt("second backward", [&] { ... }) so the grader
//      can see the error it raises.
//   3. Build the cell's output again as out2 (same formula, same tensors) and
//      call backward from it twice: the first call with retain_graph = true,
//      the second inside lab.attempt("second backward with retain_graph",
//      [&] { ... }). This time there is no error.
//
// Submit: fill in the blanks, then run `./grade exercise2`.
#include <gradlab/lab.h>

void exercise2(lab::Lab& lab) {
  torch::manual_seed(0);
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

  // START CODE HERE
  // 1. Backpropagate from out (1 line).

  // END CODE HERE
  lab.snapshot("Wx.grad after backward", Wx.grad());
  lab.snapshot("Wh.grad after backward", Wh.grad());

  // START CODE HERE
  // 2. A second backward from out, inside lab.attempt (1 line).

  // 3. out2, then two backward calls, the first keeping the graph (3 lines).

  // END CODE HERE
}

// Exercise 7 — detach cuts a branch out of the graph.
//
// x.detach() returns a tensor with x's data that autograd does not track:
// it requires no grad, has no grad_fn, and what is computed from it is not
// part of x's graph. It is a view of the same memory, not a copy; a copy
// needs x.detach().clone().
//
// With x = [1, 2, 3] (requires grad):
//   1. y = (x detached)², z = x³, out = Σ(y + z); backpropagate from out.
//      Only the z branch reaches x, so d(out)/dx = 3x² = [3, 12, 27]
//      (without detach it would be 2x + 3x²).
//   2. After backward: alias = x.detach() and copy = x.detach().clone().
//      Add 10 to alias in place and 100 to copy in place. The first change
//      shows up in x (same memory, and the same version counter); the second
//      does not. x's version counter reads 3 before these changes, not 0:
//      LibTorch's torch::tensor({1.0, 2.0, 3.0}) writes its three elements
//      into x in place, one bump each. The alias's change makes it 4.
//
// Submit: fill in the blanks, then run `./grade exercise7`.
#include <gradlab/lab.h>

void exercise7(lab::Lab& lab) {
  torch::Tensor x = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
  torch::Tensor y, z, out, alias, copy;
  lab::Names names(lab, {{"x", x}, {"y", y}, {"z", z}, {"out", out}, {"alias", alias}, {"copy", copy}});

  // START CODE HERE
  // 1. y, z, out and backward (4 lines).

  // END CODE HERE
  lab.snapshot("x.grad", x.grad());
  lab.snapshot("x before the changes", x);

  // START CODE HERE
  // 2. alias and copy, then change each in place (4 lines).

  // END CODE HERE
  lab.snapshot("x after the changes", x);
}

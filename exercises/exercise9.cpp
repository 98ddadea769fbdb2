// Exercise 9 — backward from a tensor that is not a scalar.
//
// backward() with no argument needs a scalar to start from: it seeds the
// walk with d(L)/d(L) = 1. From a 3×3 result there is no single "1" to
// start with, and autograd says so.
//
// forward() computes d = w·x for a seeded 3×3 parameter w and data x.
//
//   1. L = 10 − d (3×3). Try L.backward() inside
//      lab.attempt("backward of a 3×3", [&] { ... }) and see the error.
//   2. Fix it with a sum: backpropagate from (10 − d) summed to a scalar,
//      then lab.snapshot("w.grad via sum", w.grad()).
//   3. Reset w's gradient (it accumulates), build L = 10 − d again from a
//      fresh forward(), and this time hand backward the starting gradient
//      yourself: a 3×3 tensor of ones. Then
//      lab.snapshot("w.grad via explicit gradient", w.grad()).
//      Both snapshots hold the same numbers: summing first is the same as
//      starting from ones.
//
// Submit: fill in the blanks, then run `./grade exercise9`.
#include <gradlab/lab.h>

void exercise9(lab::Lab& lab) {
  torch::manual_seed(0);
  torch::Tensor w = torch::randn({3, 3}, torch::requires_grad());
  torch::Tensor x = torch::randn({3, 3});
  auto forward = [&] { return w.mm(x); };
  torch::Tensor L;
  lab::Names names(lab, {{"w", w}, {"L", L}});

  // START CODE HERE
  // 1. L and the failing backward inside lab.attempt (2 lines).

  // 2. Backward from the sum, and the snapshot (2 lines).

  // 3. Reset, L again, backward with a gradient of ones, snapshot (4 lines).

  // END CODE HERE
}

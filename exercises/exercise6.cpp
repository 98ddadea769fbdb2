// Exercise 6 — in-place operations and the version counter.
//
// An in-place operation (a method ending in _, or +=, -=, *=, /=) changes a
// tensor's data without making a new tensor. Autograd counts every such
// change in the tensor's version counter, and uses the counter to notice
// when a value it saved for backward was overwritten.
//
// w = [1, 1, 1] is a parameter; the loss is Σ(w·x)² with x = [1, 2, 3].
//
//   1. One step of gradient descent. Backpropagate from loss, then update
//      w in place: w ← w − lr·∇w with lr = 0.01, under a torch::NoGradGuard
//      so that the update itself is not recorded. w stays the same leaf
//      tensor, and its version goes from 0 to 1.
//   2. Outside any guard, multiply w by 10 in place, inside
//      lab.attempt("in-place on a leaf", [&] { ... }). Autograd refuses:
//      changing a leaf that requires grad would lose what its gradient is for.
//   3. e = w.exp() saves its own result for backward (d exp(w) = exp(w)).
//      Inside lab.attempt("backward after in-place", [&] { ... }), add 1 to e
//      in place, then backpropagate from e.sum(). Autograd sees that e's
//      version changed since it was saved and raises an error.
//
// Submit: fill in the blanks, then run `./grade exercise6`.
#include <gradlab/lab.h>

void exercise6(lab::Lab& lab) {
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  torch::Tensor x = torch::tensor({1.0, 2.0, 3.0});
  const double lr = 0.01;
  torch::Tensor loss = (w * x).pow(2).sum();
  lab::Names names(lab, {{"w", w}, {"loss", loss}});
  lab.snapshot("w before the step", w);

  // START CODE HERE
  // 1. Backward, then the update under a NoGradGuard (4 lines).

  // END CODE HERE
  lab.snapshot("w after the step", w);

  // START CODE HERE
  // 2. An in-place multiplication of w, inside lab.attempt (1 line).

  // 3. e = w.exp(); then, inside lab.attempt, e += 1 and backward (4 lines).

  // END CODE HERE
}

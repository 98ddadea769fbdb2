// Exercise 10 — no_grad for inference, and a few steps of training.
//
// A linear model pred = x·w + b is fitted to y = 2x + 1 on four points,
// starting from w = 0.5 and b = 0 (both parameters require grad).
//
//   1. Inference: inside a block that starts with torch::NoGradGuard, compute
//      pred_no_grad = x·w + b. Under the guard autograd records nothing: the
//      result requires no grad and has no grad_fn, though w and b do.
//   2. Training: five steps of gradient descent with lr = 0.05. Each step:
//      clear the gradients of w and b from the step before, compute
//      loss = torch::mse_loss(x·w + b, y), record it with
//      lab.value("loss", loss.item<double>()), backpropagate, and update w
//      and b in place under a NoGradGuard. The loss goes down every step,
//      and w and b stay leaves.
//
// Submit: fill in the blanks, then run `./grade exercise10`.
#include <gradlab/lab.h>

void exercise10(lab::Lab& lab) {
  torch::Tensor x = torch::tensor({{1.0}, {2.0}, {3.0}, {4.0}});
  torch::Tensor y = 2 * x + 1;
  torch::Tensor w = torch::tensor({0.5}, torch::requires_grad());
  torch::Tensor b = torch::tensor({0.0}, torch::requires_grad());
  const double lr = 0.05;
  torch::Tensor pred_no_grad;
  lab::Names names(lab, {{"pred_no_grad", pred_no_grad}, {"w", w}, {"b", b}, {"y", y}});

  // START CODE HERE
  // 1. Inference under a NoGradGuard (4 lines with the braces).

  // END CODE HERE

  for (int step = 0; step < 5; ++step) {
    // START CODE HERE
    // 2. Clear the gradients, loss, lab.value, backward, update (about 10 lines).

    // END CODE HERE
  }
}

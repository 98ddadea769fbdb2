// Reference solution for exercise 6: in-place updates, the version counter
// and the two errors in-place operations can raise.
#include <gradlab/lab.h>

void exercise6(lab::Lab& lab) {
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  torch::Tensor x = torch::tensor({1.0, 2.0, 3.0});
  const double lr = 0.01;
  torch::Tensor loss = (w * x).pow(2).sum();
  lab.snapshot("w before the step", w);

  loss.backward();
  {
    torch::NoGradGuard no_grad;
    w -= lr * w.grad();
  }
  lab.snapshot("w after the step", w);

  lab.attempt("in-place on a leaf", [&] { w.mul_(10); });

  torch::Tensor e = w.exp();
  lab.attempt("backward after in-place", [&] {
    e += 1;
    e.sum().backward();
  });

  lab.name("w", w);
}

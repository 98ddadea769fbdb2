// Reference solution for exercise 6: in-place updates, the version counter
// and the two errors in-place operations can raise.
#include <gradlab/lab.h>

void exercise6(lab::Lab& lab) {
  torch::Tensor w = torch::ones({3}, torch::requires_grad());
  // The statement's numbers: the lesson's, or this student's variant's.
  torch::Tensor x = torch::tensor({lab.given("x1"), lab.given("x2"), lab.given("x3")});
  const double lr = lab.given("lr");
  torch::Tensor loss = (w * x).pow(2).sum();
  lab::Names names(lab, {{"w", w}, {"loss", loss}});
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
}

// Reference solution for exercise 9: backward from a non-scalar.
#include <gradlab/lab.h>

void exercise9(lab::Lab& lab) {
  torch::manual_seed(static_cast<uint64_t>(lab.given("seed")));  // the lesson's 0, or the variant's
  torch::Tensor w = torch::randn({3, 3}, torch::requires_grad());
  torch::Tensor x = torch::randn({3, 3});
  auto forward = [&] { return w.mm(x); };
  torch::Tensor L;
  lab::Names names(lab, {{"w", w}, {"L", L}});

  L = 10 - forward();
  lab.attempt("backward of a 3×3", [&] { L.backward(); });

  (10 - forward()).sum().backward();
  lab.snapshot("w.grad via sum", w.grad());

  w.grad().zero_();
  L = 10 - forward();
  L.backward(torch::ones_like(L));
  lab.snapshot("w.grad via explicit gradient", w.grad());
}

// Reference solution for exercise 7: detach, and detach().clone().
#include <gradlab/lab.h>

void exercise7(lab::Lab& lab) {
  // The statement's numbers: the lesson's, or this student's variant's.
  torch::Tensor x = torch::tensor({lab.given("x1"), lab.given("x2"), lab.given("x3")}, torch::requires_grad());
  torch::Tensor y, z, out, alias, copy;
  lab::Names names(lab, {{"x", x}, {"y", y}, {"z", z}, {"out", out}, {"alias", alias}, {"copy", copy}});

  y = x.detach().pow(2);
  z = x.pow(3);
  out = (y + z).sum();
  out.backward();
  lab.snapshot("x.grad", x.grad());
  lab.snapshot("x before the changes", x);

  alias = x.detach();
  copy = x.detach().clone();
  alias.add_(10);
  copy.add_(100);
  lab.snapshot("x after the changes", x);
}

// Reference solution for exercise 3: f(x, y, z) = (x² + y) · z.
#include <gradlab/lab.h>

void exercise3(lab::Lab& lab) {
  torch::Tensor x, y, z, p, q, f;
  lab::Names names(lab, {{"x", x}, {"y", y}, {"z", z}, {"p", p}, {"q", q}, {"f", f}});

  // The statement's numbers: the lesson's, or this student's variant's.
  x = torch::tensor(lab.given("x"), torch::requires_grad());
  y = torch::tensor(lab.given("y"), torch::requires_grad());
  z = torch::tensor(lab.given("z"), torch::requires_grad());

  p = x.pow(2);
  q = p + y;
  f = q * z;

  p.retain_grad();
  q.retain_grad();

  f.backward();
}

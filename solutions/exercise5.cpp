// Reference solution for exercise 5: reassignment makes a new node.
#include <gradlab/lab.h>

void exercise5(lab::Lab& lab) {
  // The statement's numbers: the lesson's, or this student's variant's.
  torch::Tensor w1 = torch::tensor(lab.given("w1"), torch::requires_grad());
  torch::Tensor w2 = torch::tensor(lab.given("w2"), torch::requires_grad());
  torch::Tensor x = torch::tensor(lab.given("x"), torch::requires_grad());
  torch::Tensor y, y_first, out;
  lab::Names names(lab, {{"w1", w1}, {"w2", w2}, {"x", x}, {"y_first", y_first}, {"y", y}, {"out", out}});

  y = w1 * x;
  y_first = y;
  y = w2 * y;
  y.retain_grad();
  out = y.pow(2);
  out.backward();
}

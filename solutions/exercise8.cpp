// Reference solution for exercise 8: leaves, grad_fn and retain_grad.
#include <gradlab/lab.h>

void exercise8(lab::Lab& lab) {
  torch::Tensor a, b, c, d, u, t, v, e;
  lab::Names names(lab, {{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"u", u}, {"t", t}, {"v", v}, {"e", e}});

  // The statement's numbers: the lesson's, or this student's variant's.
  a = torch::tensor(lab.given("a"), torch::requires_grad());
  b = torch::tensor(lab.given("b"), torch::requires_grad());
  c = torch::tensor(lab.given("c"), torch::requires_grad());
  d = torch::tensor(lab.given("d"), torch::requires_grad());
  u = a * b;
  t = torch::log(d);
  t.retain_grad();
  v = t * c;
  e = u + v;
  for (auto& [name, tensor] : {std::pair{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"u", u}, {"t", t}, {"v", v}, {"e", e}})
    lab.snapshot(std::string(name) + " before backward", tensor);

  e.backward();
}

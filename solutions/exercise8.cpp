// Reference solution for exercise 8: leaves, grad_fn and retain_grad.
#include <gradlab/lab.h>

void exercise8(lab::Lab& lab) {
  torch::Tensor a, b, c, d, u, t, v, e;

  a = torch::tensor(2.0, torch::requires_grad());
  b = torch::tensor(3.0, torch::requires_grad());
  c = torch::tensor(5.0, torch::requires_grad());
  d = torch::tensor(10.0, torch::requires_grad());
  u = a * b;
  t = torch::log(d);
  t.retain_grad();
  v = t * c;
  e = u + v;
  for (auto& [name, tensor] : {std::pair{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"u", u}, {"t", t}, {"v", v}, {"e", e}})
    lab.snapshot(std::string(name) + " before backward", tensor);

  e.backward();

  lab.name("a", a);
  lab.name("b", b);
  lab.name("c", c);
  lab.name("d", d);
  lab.name("u", u);
  lab.name("t", t);
  lab.name("v", v);
  lab.name("e", e);
}

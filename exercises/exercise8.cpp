// Exercise 8 — leaves, grad_fn and retain_grad.
//
// e = a·b + log(d)·c with a = 2, b = 3, c = 5, d = 10: four scalar tensors
// (torch::tensor(2.0, ...); a one-element vector is accepted too), created by
// you and requiring grad. Name the pieces: u = a·b, t = log(d), v = t·c and
// e = u + v.
//
//   1. Build u, t, v and e, and ask autograd to keep t's gradient.
//   2. The starter then snapshots every tensor: the four inputs are leaves
//      without a grad_fn; u, t, v and e are not leaves and remember the
//      operation that made them.
//   3. Backpropagate from e. Backward fills in the gradients of the leaves,
//      de/da = b = 3, de/db = a = 2, de/dc = ln 10, de/dd = c/d = 0.5, and of
//      t, whose gradient you kept: de/dt = c = 5. It does not change which
//      tensors are leaves or what their grad_fn is.
//
// Submit: fill in the blanks, then run `./grade exercise8`.
#include <gradlab/lab.h>

void exercise8(lab::Lab& lab) {
  torch::Tensor a, b, c, d, u, t, v, e;
  lab::Names names(lab, {{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"u", u}, {"t", t}, {"v", v}, {"e", e}});

  // START CODE HERE
  // 1. a, b, c and d (4 lines), then u, t, v, e and t's retain_grad (5 lines).

  // END CODE HERE
  for (auto& [name, tensor] : {std::pair{"a", a}, {"b", b}, {"c", c}, {"d", d}, {"u", u}, {"t", t}, {"v", v}, {"e", e}})
    lab.snapshot(std::string(name) + " before backward", tensor);

  // START CODE HERE
  // 3. Backward (1 line).

  // END CODE HERE
}

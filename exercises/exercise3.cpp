// Exercise 3 — the lab's exercise: gradients by hand and by autograd.
//
// Build the function
//
//     f(x, y, z) = (x² + y) · z
//
// at x = -2, y = 2, z = 3, in two named steps: p = x² and q = p + y, then
// f = q · z. x, y and z are scalar leaf tensors whose gradients we want, so
// they must require grad. Write their values as floating-point numbers
// (-2.0, not -2): a tensor made from an integer holds integers, and only a
// floating-point tensor can require grad. p and q are intermediate results: autograd does not
// keep the gradient of a non-leaf tensor unless you ask it to, so ask for p's
// and q's before calling backward. Then run backward from f.
//
// Work it out on paper first; autograd should then agree with you:
//     df/dx = 2x·z = -12,  df/dy = z = 3,  df/dz = x² + y = 6,
//     df/dp = z = 3,       df/dq = z = 3.
//
// Submit: fill in the blanks below, then run `./grade exercise3`.
// Keep the lab::Names line: it tells the grader which tensor is which.
#include <gradlab/lab.h>

void exercise3(lab::Lab& lab) {
  torch::Tensor x, y, z, p, q, f;
  lab::Names names(lab, {{"x", x}, {"y", y}, {"z", z}, {"p", p}, {"q", q}, {"f", f}});

  // START CODE HERE
  // Create x, y and z as scalar tensors that require grad (3 lines).

  // Compute p, q and f (3 lines).

  // Keep the gradients of p and q (2 lines).

  // Run backpropagation from f (1 line).

  // END CODE HERE
}

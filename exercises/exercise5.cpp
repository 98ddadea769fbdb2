// Exercise 5 — assigning to a variable again makes a new node.
//
// In C++ as in Python, `y = w2 * y` does not change the tensor y held: it
// computes a new tensor, with a node of its own in the graph, and makes the
// name y refer to it. The old tensor lives on inside the graph.
//
// With w1 = 2, w2 = 2 and x = 4 (all three require grad):
//   1. y = w1·x. Keep a handle on this first tensor: y_first = y.
//   2. y = w2·y (the same name, a new node), and ask autograd to keep the
//      gradient of this new y.
//   3. out = y², then backpropagate from out.
//
// d(out)/dy is taken at the last y: 2·y = 2·16 = 32, not at the first y.
// The graph from out has two multiplication nodes, one per assignment.
//
// Submit: fill in the blanks, then run `./grade exercise5`.
#include <gradlab/lab.h>

void exercise5(lab::Lab& lab) {
  torch::Tensor w1 = torch::tensor(2.0, torch::requires_grad());
  torch::Tensor w2 = torch::tensor(2.0, torch::requires_grad());
  torch::Tensor x = torch::tensor(4.0, torch::requires_grad());
  torch::Tensor y, y_first, out;
  lab::Names names(lab, {{"w1", w1}, {"w2", w2}, {"x", x}, {"y_first", y_first}, {"y", y}, {"out", out}});

  // START CODE HERE
  // 1. y = w1·x and y_first (2 lines).

  // 2. y = w2·y, keeping its gradient (2 lines).

  // 3. out = y², and backward (2 lines).

  // END CODE HERE
}

// Exercise 13 — your own autograd function.
//
// When an operation is not built in, or you want to control its gradient,
// you write it as a torch::autograd::Function: a static forward that
// computes the result (and saves what backward will need in the context),
// and a static backward that receives d(loss)/d(output) and returns
// d(loss)/d(input), by the chain rule.
//
// Write MySigmoid, σ(x) = 1 / (1 + e^(−x)), whose derivative is σ(x)·(1 − σ(x)):
//   1. forward: compute the output, save it for backward (saving the output
//      rather than the input means backward does not recompute σ).
//   2. backward: read the saved output y and return grad_output · y · (1 − y).
//   3. In exercise13: y = MySigmoid::apply(x) for x = [-1, 0, 2] (requires
//      grad), then backpropagate from y.sum(). y's grad_fn is the node
//      autograd made for your function: torch::autograd::CppNode<MySigmoid>.
//
// Keep the name MySigmoid and define it at file scope (not inside a
// namespace), so its node gets that name. The grader also checks your
// backward against finite differences (gradcheck) on inputs of its own.
//
// Submit: fill in the blanks, then run `./grade exercise13`.
#include <gradlab/lab.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct MySigmoid : torch::autograd::Function<MySigmoid> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x) {
    // START CODE HERE
    // 1. The output, saved for backward (3 lines).
    return {};
    // END CODE HERE
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    // START CODE HERE
    // 2. The gradient of the input (2 lines).
    return {torch::Tensor()};
    // END CODE HERE
  }
};

void exercise13(lab::Lab& lab) {
  torch::Tensor x = torch::tensor({-1.0, 0.0, 2.0}, torch::requires_grad());
  torch::Tensor y;
  lab::Names names(lab, {{"x", x}, {"y", y}});

  // START CODE HERE
  // 3. y through MySigmoid, and backward from its sum (2 lines).

  // END CODE HERE

  lab.function("my_sigmoid", [](const torch::Tensor& t) { return MySigmoid::apply(t); });
}

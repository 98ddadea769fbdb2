// Reference solution for exercise 11: printing the backward graph by
// recursing over next_edges(), in the lessons' walk_graph format.
#include <gradlab/lab.h>

#include <iostream>
#include <memory>
#include <string>

void walk_graph(const std::shared_ptr<torch::autograd::Node>& node, int depth) {
  if (!node) return;
  std::cout << depth << " " << std::string(depth, ' ') << " " << node->name() << "\n";
  for (const auto& edge : node->next_edges()) walk_graph(edge.function, depth + 1);
}

void exercise11(lab::Lab& lab) {
  // The statement's numbers: the lesson's, or this student's variant's.
  torch::Tensor a = torch::tensor(lab.given("a"), torch::requires_grad());
  torch::Tensor b = torch::tensor(lab.given("b"), torch::requires_grad());
  torch::Tensor c = a + b;
  torch::Tensor d = c * a;
  lab::Names names(lab, {{"a", a}, {"b", b}, {"c", c}, {"d", d}});

  walk_graph(d.grad_fn(), 0);
  d.backward();

  lab.function("walk_graph", walk_graph);  // the grader also walks graphs of its own
}

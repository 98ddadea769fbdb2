// Exercise 11 — walk the backward graph yourself.
//
// Every tensor made by an operation holds its grad_fn: a node of the backward
// graph (a torch::autograd::Node). A node's next_edges() lead to the nodes
// that compute the gradients of its inputs; each edge's `function` is that
// node, or null where no gradient flows. A leaf that requires grad is
// reached through its AccumulateGrad node, which has no next edges.
//
// With a = 1 and b = 2 (both require grad): c = a + b and d = c·a.
//
//   1. Write walk_graph: print the node as one line, then walk each next
//      edge's function one level deeper. The lessons' format: the depth, a
//      space, as many spaces as the depth, a space, and the node's name().
//      The first three lines of d's graph (the whole walk has five: a and b
//      are reached twice between them):
//          0  MulBackward0
//          1   AddBackward0
//          2    torch::autograd::AccumulateGrad
//      A null node prints nothing.
//   2. Call walk_graph(d.grad_fn(), 0), then backpropagate from d:
//      d = (a + b)·a, so dd/da = 2a + b = 4 and dd/db = a = 1.
//
// The grader compares what your program prints with the reference's output,
// and runs your walk_graph on graphs of its own (a null edge, a deeper chain,
// a node with three inputs, a leaf's null grad_fn, and graphs it makes up
// for your file): write it for any graph.
//
// Submit: fill in the blanks, then run `./grade exercise11`.
#include <gradlab/lab.h>

#include <iostream>
#include <memory>
#include <string>

void walk_graph(const std::shared_ptr<torch::autograd::Node>& node, int depth) {
  // START CODE HERE
  // 1. Nothing for a null node; otherwise one line, then the next edges (5 lines).

  // END CODE HERE
}

void exercise11(lab::Lab& lab) {
  torch::Tensor a = torch::tensor(1.0, torch::requires_grad());
  torch::Tensor b = torch::tensor(2.0, torch::requires_grad());
  torch::Tensor c = a + b;
  torch::Tensor d = c * a;
  lab::Names names(lab, {{"a", a}, {"b", b}, {"c", c}, {"d", d}});

  // START CODE HERE
  // 2. Walk d's graph from depth 0, then backward (2 lines).

  // END CODE HERE

  lab.function("walk_graph", walk_graph);  // the grader also walks graphs of its own
}

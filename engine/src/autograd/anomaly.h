// Anomaly mode's record of where nodes come from (engine-internal): a node
// made while another node's backward ran (a create_graph backward) has that
// node as its parent, so that an error in a second-order backward can name
// the first-order node whose backward built it, as LibTorch's print_stack does.
#pragma once
#include <memory>

#include "gradlab/autograd.h"

namespace gradlab::autograd::anomaly {

// The node whose backward this thread is running (set only in anomaly mode).
struct EvaluatingScope {
  explicit EvaluatingScope(Node* n);
  ~EvaluatingScope();
  EvaluatingScope(const EvaluatingScope&) = delete;
  EvaluatingScope& operator=(const EvaluatingScope&) = delete;
  Node* prev;
};
// The parent recorded for `n`, or null.
std::shared_ptr<Node> parent_of(const Node* n);

}  // namespace gradlab::autograd::anomaly

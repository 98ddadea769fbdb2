// Which node of a backward raised, the last time one did (any thread). A
// grader's replay reads it after a backward that failed: an error about a
// saved tensor changed in place is about the tensor that node saved, not
// about whatever else the backward's root sums. Its own header, so that
// nothing a student includes declares it.
#pragma once
#include <memory>

namespace gradlab::autograd {

class Node;

// The node, while something still holds it; null when none raised since the
// last clear, or when it is gone.
std::shared_ptr<Node> last_failed_node();
// The storage of the saved tensor whose version check failed last (it was
// changed in place since it was saved), or null; an address to compare with
// the program's tensors', never to read through.
const void* last_stale_storage();
void clear_failed_node();  // both

}  // namespace gradlab::autograd

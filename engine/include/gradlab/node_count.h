// How many autograd nodes the process has made, on every thread. A grader's
// probe reads it around one call of a student's function: a custom
// Function's forward runs with grad mode off and makes one node, its own; a
// forward that switched grad mode back on and built a graph of its own
// (whose built-in backward its own backward could hand the work to) makes
// more. Its own header, so that nothing a student includes declares it.
#pragma once
#include <cstdint>

namespace gradlab::autograd {

uint64_t nodes_made();

// How many times a built-in op's node has run its backward, on every thread,
// whoever asked (the engine, or a program calling node->apply() itself). A
// probe reads it around one backward through a custom Function: the
// Function's own backward computes with plain ops and runs no built-in
// node; one that hands the derivative to a built-in op's node (made when and
// where it likes, its saved result planted) runs some.
uint64_t op_nodes_run();

}  // namespace gradlab::autograd

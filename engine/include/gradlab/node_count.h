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

}  // namespace gradlab::autograd

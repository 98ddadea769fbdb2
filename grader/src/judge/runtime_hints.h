// What autograd's own errors ask of a student, in one sentence of the
// course's C++. The engine raises PyTorch's messages word for word ("a leaf
// Variable that requires grad is being used in an in-place operation"),
// which say what went wrong but not what to write; an exception that
// escaped the exercise gets that sentence beside its message and its line.
#pragma once
#include <string>

namespace grader {

// The sentence for the first known error `message` contains; "" for others.
std::string runtime_hint(const std::string& message);

}  // namespace grader

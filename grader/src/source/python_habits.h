// What a PyTorch user brings from Python, said in the course's C++: the
// spellings that make a file fail to compile (x.requires_grad = true, x**2,
// keyword arguments, True, None, torch.tensor), and the Python spellings
// inside PyTorch's own messages (retain_graph=True). The compiler's text
// for the first kind ("reference to non-static member function must be
// called", "indirection requires pointer operand") names no fix a student
// coming from Python can find; one line in the course's spelling does.
#pragma once
#include <string>
#include <vector>

namespace grader {

struct HabitHint {
  int line = 0;      // in the student's file
  std::string hint;  // one line: what to write instead
};

// The Python habits on the lines the compiler found errors on (only there:
// the same tokens elsewhere may be right, `int** p` is C++), at most one
// hint per habit and line, in the file's order.
std::vector<HabitHint> python_habits(const std::string& source, const std::vector<int>& error_lines);

// `message` with the C++ spelling beside each Python one it names:
// "Specify retain_graph=True ..." gains "[in C++: f.backward({}, /*retain_graph=*/true)]".
std::string with_cpp_spelling(const std::string& message);

}  // namespace grader

// torchviz's drawing conventions for backward graphs, in one place: the
// engine's to_dot and the grader's report pictures both draw with these, so
// a graph looks the same in a student's own output and in their report.
#pragma once
#include <string>
#include <string_view>

namespace gradlab::dot_style {

// The graph and node defaults torchviz's make_dot sets.
inline constexpr const char* kGraphAttributes = "\tgraph [size=\"12,12\"]\n";
inline constexpr const char* kNodeAttributes =
    "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 shape=box style=filled]\n";
// The tensor a graph is drawn from, the leaves, and the operations (the
// default grey of a filled box).
inline constexpr const char* kRootFill = "darkolivegreen1";
inline constexpr const char* kLeafFill = "lightblue";
inline constexpr const char* kOpFill = "lightgrey";  // Graphviz's default fill, named

// A DOT double-quoted string's contents: quotes and backslashes escaped and a
// newline written as \n, so any text stays one label.
inline std::string quoted(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

// "(2, 3)": a shape as torchviz labels a tensor.
template <class Sizes>
std::string shape_text(const Sizes& s) {
  std::string r = "(";
  size_t i = 0;
  for (auto v : s) r += (i++ ? ", " : "") + std::to_string(v);
  return r + ")";
}

// "MulBackward0" for torch::autograd::MulBackward0; a template's name
// (CppNode<MySigmoid>) stays whole, as torchviz prints type(fn).__name__.
inline std::string short_name(const std::string& n) {
  const auto p = n.rfind("::");
  return p == std::string::npos || n.find('<') != std::string::npos ? n : n.substr(p + 2);
}

}  // namespace gradlab::dot_style

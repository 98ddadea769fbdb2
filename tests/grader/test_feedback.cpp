// The pieces of feedback that read the student's own text: the compiler's
// output, the blanks of a starter, typos of names, the program's line table.
#include "catch_compat.h"

#include "source/blanks.h"
#include "source/python_habits.h"
#include "judge/runtime_hints.h"
#include "compile/diagnostics.h"
#include "source/lines.h"
#include "cli/suggest.h"

TEST_CASE("a compile error is summarised at the student's line, candidates without header paths", "[feedback]") {
  // GCC 12's output for torch::pow(x, "2") (paths shortened).
  const std::string gcc =
      "sub.cpp: In function ‘void exercise3(lab::Lab&)’:\n"
      "sub.cpp:11:17: error: no matching function for call to ‘pow(gradlab::Tensor&, const char [2])’\n"
      "   11 |   p = torch::pow(x, \"2\");\n"
      "      |       ~~~~~~~~~~^~~~~~~~\n"
      "In file included from /e/include/torch/torch.h:13,\n"
      "/e/include/gradlab/ops.h:85:8: note: candidate: ‘gradlab::Tensor gradlab::pow(const Tensor&, Scalar)’\n"
      "   85 | Tensor pow(const Tensor& a, Scalar e);\n"
      "/e/include/gradlab/ops.h:85:36: note:   no known conversion for argument 2 from ‘const char [2]’ to ‘gradlab::Scalar’\n"
      "sub.cpp:12:3: error: ‘w’ was not declared in this scope\n";
  const auto s = grader::summarize_compile(gcc, "sub.cpp");
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0].line == 11);
  CHECK(s.errors[0].column == 17);
  CHECK(s.errors[0].message == "no matching function for call to ‘pow(torch::Tensor&, const char [2])’");
  REQUIRE(s.errors[0].candidates.size() == 1);
  CHECK(s.errors[0].candidates[0] ==
        "torch::Tensor torch::pow(const Tensor&, Scalar) — no known conversion for argument 2 from ‘const char [2]’ "
        "to ‘torch::Scalar’");
  CHECK(s.errors[0].excerpt.size() == 2);
  const std::string text = grader::compile_summary_text(s, "sub.cpp");
  CHECK(text.rfind("  sub.cpp:11:17: error: no matching function", 0) == 0);
  CHECK(text.find("/e/include") == std::string::npos);
  CHECK(text.find("then sub.cpp:12:3: error: ‘w’ was not declared") != std::string::npos);
}

TEST_CASE("clang's candidates: its reason beside the declaration it quotes", "[feedback]") {
  // clang 14's output for the same mistake (paths shortened).
  const std::string clang =
      "sub.cpp:11:7: error: no matching function for call to 'pow'\n"
      "  p = torch::pow(x, \"2\");\n"
      "      ^~~~~~~~~~\n"
      "/e/include/gradlab/ops.h:85:8: note: candidate function not viable: no known conversion from 'const char[2]' "
      "to 'const gradlab::Tensor' for 2nd argument\n"
      "Tensor pow(const Tensor& a, const Tensor& e);\n"
      "       ^\n"
      "/e/include/gradlab/ops.h:86:8: note: candidate function not viable: no known conversion from 'const char[2]' "
      "to 'gradlab::Scalar' for 2nd argument\n"
      "inline Tensor pow(const Tensor& a, Scalar e) { return a.pow(e); }\n"
      "       ^\n"
      "sub.cpp:12:11: error: use of undeclared identifier 'w'\n"
      "  q = p + w;\n"
      "          ^\n"
      "2 errors generated.\n";
  const auto s = grader::summarize_compile(clang, "sub.cpp", std::string(10, '\n') + "  p = torch::pow(x, \"2\");\n");
  REQUIRE(s.errors.size() == 2);
  CHECK(s.errors[0].line == 11);
  CHECK(s.errors[0].column == 7);
  CHECK(s.errors[0].message == "no matching function for call to 'pow'");
  CHECK(s.errors[0].candidates == std::vector<std::string>{
                                      "Tensor pow(const Tensor& a, const Tensor& e) — no known conversion from 'const "
                                      "char[2]' to 'const torch::Tensor' for 2nd argument",
                                      "Tensor pow(const Tensor& a, Scalar e) — no known conversion from 'const char[2]' "
                                      "to 'torch::Scalar' for 2nd argument"});
  // clang quotes the line without its number: the student's own line, numbered.
  CHECK(s.errors[0].excerpt == std::vector<std::string>{"   11 |   p = torch::pow(x, \"2\");"});
  CHECK(s.errors[1].line == 12);
  const std::string text = grader::compile_summary_text(s, "sub.cpp");
  CHECK(text.find("/e/include") == std::string::npos);
  CHECK(text.find("then sub.cpp:12:11: error: use of undeclared identifier 'w'") != std::string::npos);
}

TEST_CASE("an error found inside a header is placed at the student's line that led there", "[feedback]") {
  const std::string gcc =
      "/usr/include/c++/12/bits/stl_function.h: In instantiation of ‘constexpr bool std::less<_Tp>::operator()’:\n"
      "/usr/include/c++/12/bits/stl_map.h:509:32:   required from ‘std::map<...>::operator[]’\n"
      "sub.cpp:6:6:   required from here\n"
      "/usr/include/c++/12/bits/stl_function.h:408:22: error: cannot convert ‘gradlab::Tensor’ to ‘bool’ in return\n"
      "  408 |       { return __x < __y; }\n";
  const auto s = grader::summarize_compile(gcc, "sub.cpp", "a\nb\nc\nd\ne\n  m[x] = 1;\n");
  REQUIRE(s.errors.size() == 1);
  CHECK(s.errors[0].line == 6);
  CHECK(s.errors[0].inside == "stl_function.h");
  REQUIRE(s.errors[0].excerpt.size() == 1);
  CHECK(s.errors[0].excerpt[0] == "    6 |   m[x] = 1;");
  // clang names the student's line after the error, the chain of
  // instantiations between them.
  const std::string clang =
      "In file included from sub.cpp:1:\n"
      "/usr/include/c++/12/bits/stl_function.h:408:16: error: no viable conversion from returned value of type "
      "'gradlab::Tensor' to function return type 'bool'\n"
      "      { return __x < __y; }\n"
      "               ^~~~~~~~~\n"
      "/usr/include/c++/12/bits/stl_map.h:509:22: note: in instantiation of member function "
      "'std::less<gradlab::Tensor>::operator()' requested here\n"
      "sub.cpp:6:4: note: in instantiation of member function 'std::map<gradlab::Tensor, int>::operator[]' requested here\n"
      "  m[x] = 1;\n"
      "   ^\n";
  const auto c = grader::summarize_compile(clang, "sub.cpp", "a\nb\nc\nd\ne\n  m[x] = 1;\n");
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].line == 6);
  CHECK(c.errors[0].column == 4);
  CHECK(c.errors[0].inside == "stl_function.h");
  CHECK(c.errors[0].message.find("'torch::Tensor' to function return type 'bool'") != std::string::npos);
  CHECK(c.errors[0].excerpt == std::vector<std::string>{"    6 |   m[x] = 1;"});
  // Nothing GCC located in a file (a linker's message) gives no summary.
  CHECK(grader::summarize_compile("/usr/bin/ld: undefined reference to `exercise3(lab::Lab&)'\n", "sub.cpp").errors.empty());
}

TEST_CASE("a blank is empty by its content: comments and layout are nothing, the starter's code is nothing", "[feedback]") {
  const std::string starter =
      "void f() {\n  // START CODE HERE\n  // 1. Do it (2 lines).\n  return {};\n  // END CODE HERE\n}\n"
      "void g() {\n  // START CODE HERE\n  // 2. And this.\n\n  // END CODE HERE\n}\n";
  const auto blanks = grader::find_blanks(starter);
  REQUIRE(blanks.size() == 2);
  CHECK(blanks[0].start_line == 2);
  CHECK(blanks[0].end_line == 5);
  CHECK(blanks[0].code == "return { } ;");
  CHECK(blanks[0].comments == std::vector<std::pair<int, std::string>>{{3, "1. Do it (2 lines)."}});
  const auto recorded = grader::read_starter_record(grader::starter_record(starter));
  REQUIRE(recorded);
  REQUIRE(recorded->blanks.size() == 2);
  CHECK(recorded->blanks[0].prompts == std::vector<std::string>{"1. Do it (2 lines)."});
  CHECK(grader::untouched(blanks, &*recorded));
  // Without the starter's record, only blanks with no code at all are empty.
  CHECK_FALSE(grader::untouched(blanks, nullptr));
  CHECK(grader::untouched({blanks[1]}, nullptr));
  // The placeholder re-indented, comments of either kind and a line
  // commented out: still empty, and the student's comment is no prompt.
  std::string layout = starter;
  layout.replace(layout.find("  return {};"), 12, "\treturn   { /* later */ } ;\n  // x = 2;");
  layout.replace(layout.find("\n\n  // END"), 2, "\n  /* y = 1;\n  z = 2; */\n");
  const auto moved = grader::find_blanks(layout);
  CHECK(grader::untouched(moved, &*recorded));
  CHECK(grader::prompts(moved[0], &recorded->blanks[0]) == std::vector<std::pair<int, std::string>>{{3, "1. Do it (2 lines)."}});
  CHECK(grader::prompts(moved[0], nullptr).size() == 2);
  // Code in either blank is work: that blank is filled, the other empty.
  std::string started = starter;
  started.replace(started.find("\n\n  // END"), 2, "\n  y = 1;\n");
  CHECK_FALSE(grader::untouched(grader::find_blanks(started), &*recorded));
  CHECK(grader::empty_blanks(grader::find_blanks(started), &*recorded) == std::vector<bool>{true, false});
  std::string replaced = starter;
  replaced.replace(replaced.find("return {};"), 10, "return {1};");
  CHECK(grader::empty_blanks(grader::find_blanks(replaced), &*recorded) == std::vector<bool>{false, true});
  // A removed END marker is an edit, another number of blanks too, and a
  // file without blanks is not a starter.
  CHECK_FALSE(grader::untouched(grader::find_blanks(starter.substr(0, starter.rfind("// END"))), &*recorded));
  CHECK_FALSE(grader::untouched({blanks[1]}, &*recorded));
  CHECK_FALSE(grader::untouched(grader::find_blanks("void f() {}\n"), nullptr));
}

TEST_CASE("did you mean: the closest known word, or none", "[feedback]") {
  const std::vector<std::string> ex = {"exercise1", "exercise3", "exercise13"};
  CHECK(grader::closest("exercse3", ex) == "exercise3");
  CHECK(grader::closest("exrecise3", ex) == "exercise3");  // two letters swapped: one edit
  CHECK(grader::closest("--jnuit", {"--junit", "--json", "--out"}) == "--junit");
  CHECK(grader::closest("homework", ex).empty());
  CHECK(grader::edit_distance("ab", "ba") == 1);
  CHECK(grader::edit_distance("", "abc") == 3);
}

TEST_CASE("a program's offsets map to the student's lines, and nowhere else", "[feedback]") {
  const std::string objdump =
      "prog:     file format elf64-x86-64\n\nContents of the .debug_line section:\n\nexercise3.cpp:\n"
      "File name                            Line number    Starting address    View    Stmt\n"
      "exercise3.cpp                                  2              0x1179               x\n"
      "exercise3.cpp                                 15              0x1187               x\n"
      "exercise3.cpp                                  -              0x11fd\n"
      "tensor.h                                     120              0x1200               x\n"
      "tensor.h                                       -              0x1210\n";
  const std::string table = grader::line_table(objdump, "exercise3.cpp");
  CHECK(grader::student_lines(table, {0x1100, 0x1179, 0x1190, 0x11fd, 0x1205}) == std::vector<int>{0, 2, 15, 0, 0});
  CHECK(grader::student_lines("", {0x1179}) == std::vector<int>{0});
}

TEST_CASE("Python habits on the lines the compiler refused, and only there", "[feedback]") {
  const std::string src =
      "void f() {\n"
      "  x.requires_grad = true;\n"               // 2
      "  auto y = x**2 + x ** 3;\n"               // 3
      "  auto z = torch::tensor(1.0, requires_grad=True);\n"  // 4
      "  if (x.grad is None) {}\n"                // 5
      "  float** p = nullptr; int n = a * *q;\n"  // 6: C++, no power
      "  auto l = [=](int a = 3) { return g(a, b == c); };\n"  // 7: C++, no keyword
      "  auto w = torch.ones({2});\n"             // 8
      "  x.grad = y;\n"                           // 9
      "}\n";
  auto hints = [&](int line) {
    std::vector<std::string> out;
    for (const auto& h : grader::python_habits(src, {line})) {
      CHECK(h.line == line);
      out.push_back(h.hint);
    }
    return out;
  };
  auto says = [](const std::vector<std::string>& hs, const std::string& words) {
    for (const auto& h : hs)
      if (h.find(words) != std::string::npos) return true;
    return false;
  };
  CHECK(says(hints(2), "x.requires_grad_(true)"));
  CHECK(hints(3).size() == 1);  // the same habit twice on a line: one hint
  CHECK(says(hints(3), "x.pow(2)"));
  CHECK(says(hints(4), "torch::requires_grad()"));
  CHECK(says(hints(4), "lower case"));
  CHECK(says(hints(5), "x.grad()"));
  CHECK(says(hints(5), "defined()"));
  CHECK(hints(6).empty());
  CHECK(hints(7).empty());
  CHECK(says(hints(8), "torch::tensor(...)"));
  CHECK(says(hints(9), "zero_()"));
  CHECK(grader::python_habits(src, {}).empty());  // no error, no hint
}

TEST_CASE("PyTorch's Python spellings get the C++ one beside them, once", "[feedback]") {
  const std::string m = "Trying to backward through the graph a second time. Specify retain_graph=True if you need to.";
  const std::string said = grader::with_cpp_spelling(m);
  CHECK(said == m + " [in C++: f.backward({}, /*retain_graph=*/true)]");
  CHECK(grader::with_cpp_spelling(said) == said);
  CHECK(grader::with_cpp_spelling("a leaf Variable that requires grad is being used in an in-place operation.") ==
        "a leaf Variable that requires grad is being used in an in-place operation.");
}

// Autograd's own errors, as an escaped exception shows them, get the
// sentence that says what to write; other messages get none.
TEST_CASE("runtime hints for autograd's errors", "[grader][feedback]") {
  CHECK(grader::runtime_hint("a leaf Variable that requires grad is being used in an in-place operation.").find(
            "NoGradGuard") != std::string::npos);
  CHECK(grader::runtime_hint("Trying to backward through the graph a second time (or directly access saved tensors "
                             "after they have already been freed).")
            .find("retain_graph=true") != std::string::npos);
  CHECK(grader::runtime_hint("grad can be implicitly created only for scalar outputs").find("ones_like") !=
        std::string::npos);
  CHECK(grader::runtime_hint("element 0 of tensors does not require grad and does not have a grad_fn")
            .find("requires_grad()") != std::string::npos);
  CHECK(grader::runtime_hint("one of the variables needed for gradient computation has been modified by an inplace "
                             "operation: [CPUFloatType [3]]")
            .find("in place") != std::string::npos);
  CHECK(grader::runtime_hint("vector::_M_range_check: __n (which is 3) >= this->size() (which is 1)").empty());
}

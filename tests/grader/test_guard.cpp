// The rules for what a student's file may contain and define (guard.h):
// every file the course ships passes, each way around them we know of is
// refused with a message that says where and why.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "guard.h"

using grader::check_source;
using grader::check_symbols;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("every starter, solution and known-wrong file of the course passes the source rules", "[guard]") {
  size_t n = 0;
  for (const char* dir : {"exercises", "solutions"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(GRADLAB_SOURCE_DIR) + "/" + dir))
      if (e.path().extension() == ".cpp") {
        INFO(e.path());
        CHECK(check_source(slurp(e.path()), e.path().filename().string()) == "");
        ++n;
      }
  CHECK(n == 26);
}

TEST_CASE("includes: only the exercise header and the standard library's, named directly", "[guard]") {
  CHECK(check_source("#include <gradlab/lab.h>\n#include <vector>\n#  include <cmath>\n#include \"gradlab/lab.h\"\n",
                     "f.cpp") == "");
  CHECK_THAT(check_source("int x;\n#include \"../solutions/exercise3.cpp\"\n", "f.cpp"),
             Catch::StartsWith("f.cpp:2:10: error: #include \"../solutions/exercise3.cpp\" is not allowed"));
  CHECK_THAT(check_source("#include </etc/passwd>\n", "f.cpp"), Catch::Contains("#include </etc/passwd> is not allowed"));
  CHECK_THAT(check_source("#include \"vector\"\n", "f.cpp"), Catch::Contains("not allowed"));
  CHECK_THAT(check_source("#define F \"/etc/passwd\"\n#include F\n", "f.cpp"),
             Catch::Contains("f.cpp:2:10: error: #include must name a header directly"));
  CHECK_THAT(check_source("%:include \"x.h\"\n", "f.cpp"), Catch::Contains("is not allowed"));  // a digraph for #
  CHECK_THAT(check_source("#include_next <vector>\n", "f.cpp"), Catch::Contains("#include_next is not allowed"));
  CHECK_THAT(check_source("#import <vector>\n", "f.cpp"), Catch::Contains("#import is not allowed"));
}

TEST_CASE("assembly, pragmas, attributes and token pasting are refused, however spelled", "[guard]") {
  CHECK_THAT(check_source("asm(\".incbin \\\"/etc/passwd\\\"\");\n", "f.cpp"),
             Catch::StartsWith("f.cpp:1:1: error: `asm` is not allowed"));
  CHECK_THAT(check_source("void f() { __asm__ volatile(\"\"); }\n", "f.cpp"), Catch::Contains("`__asm__` is not allowed"));
  CHECK_THAT(check_source("void f() { as\\\nm(\"\"); }\n", "f.cpp"), Catch::Contains("f.cpp:1:12: error: `asm`"));
  CHECK_THAT(check_source("#pragma GCC optimize(\"O3\")\n", "f.cpp"), Catch::Contains("#pragma is not allowed"));
  CHECK_THAT(check_source("_Pragma(\"GCC poison x\")\n", "f.cpp"), Catch::Contains("`_Pragma` is not allowed"));
  CHECK_THAT(check_source("__attribute__((constructor)) void f() {}\n", "f.cpp"),
             Catch::Contains("`__attribute__` is not allowed"));
  CHECK_THAT(check_source("[[gnu::constructor]] void f() {}\n", "f.cpp"), Catch::Contains("the attribute [[gnu::constructor]] is not allowed"));
  CHECK_THAT(check_source("[[using gnu: section(\".x\")]] int v;\n", "f.cpp"), Catch::Contains("[[using …]]"));
  CHECK_THAT(check_source("#define CAT(a, b) a##b\nCAT(a, sm)(\"\");\n", "f.cpp"),
             Catch::Contains("f.cpp:1:20: error: token pasting (##) is not allowed"));
  CHECK_THAT(check_source("#line 1 \"other.cpp\"\n", "f.cpp"), Catch::Contains("#line is not allowed"));
  CHECK_THAT(check_source("#if __has_include(\"/etc/shadow\")\nint x;\n#endif\n", "f.cpp"),
             Catch::Contains("f.cpp:1:5: error: `__has_include` is not allowed"));
}

TEST_CASE("the forbidden words are only words: in comments, strings and numbers they are text", "[guard]") {
  CHECK(check_source("// asm and #pragma in a comment\n/* __attribute__ #include \"x\" */\n", "f.cpp") == "");
  CHECK(check_source("const char* s = \"asm(\\\"x\\\") #include </etc/passwd>\";\n", "f.cpp") == "");
  CHECK(check_source("auto r = R\"x(asm(\"\") )\" _Pragma)x\";\n", "f.cpp") == "");
  CHECK(check_source("int n = 1'000; char c = '\\''; // asm\n", "f.cpp") == "");
  CHECK(check_source("[[maybe_unused]] int v; [[nodiscard]] int f();\nint a[2]; int b = a[a[0]];\n", "f.cpp") == "");
  CHECK(check_source("int x = 1; # define N 3\n", "f.cpp") == "");  // '#' mid-line is no directive (the compiler judges it)
}

TEST_CASE("symbols: no main, no C-linkage definitions, nothing of the engine's or the grader's", "[guard]") {
  const std::string ok_plain =
      "_Z9exercise3RN3lab3LabE T 0000000000000000 0000000000000040\n"
      "_ZN5torch8autograd8FunctionI9MySigmoidE5applyIJRN7gradlab6TensorEEEEDaDpOT_ W 0000000000000000 0000000000000010\n"
      "_ZN9MySigmoid7forwardEPN5torch8autograd10AutogradContextEN7gradlab6TensorE T 0000000000000000 0000000000000010\n";
  CHECK(check_symbols(ok_plain, "f.cpp") == "");

  CHECK_THAT(check_symbols("main T 0 12\n", "f.cpp"), Catch::Contains("f.cpp: error: defines main()"));
  CHECK_THAT(check_symbols("write T 0 12\n", "f.cpp"),
             Catch::Contains("defines `write` with C linkage"));
  CHECK_THAT(check_symbols("__asan_default_options T 0 8\n", "f.cpp"),
             Catch::Contains("`__asan_default_options` with C linkage"));
  CHECK_THAT(check_symbols("_ZNK7gradlab6Tensor4itemEv T 0 5\n", "f.cpp"),
             Catch::Contains("defines gradlab::Tensor::item() const, which belongs to the engine"));
  CHECK_THAT(check_symbols("_ZN3lab12harness_mainEiPPcPFvRNS_3LabEE T 0 5\n", "f.cpp"),
             Catch::Contains("lab::harness_main"));
  CHECK(check_symbols("_Z5tableB D 0 8\n", "f.cpp") == "");  // a global of the student's own
  CHECK_THAT(check_symbols("resolver i 0 8\n", "f.cpp"), Catch::Contains("indirect function"));
  CHECK_THAT(check_symbols("_Znwm T 0 8\n", "f.cpp"),
             Catch::Contains("defines operator new(unsigned long), which would replace the allocator"));
}

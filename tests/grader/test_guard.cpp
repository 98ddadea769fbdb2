// The rules for what a student's file may contain and define (guard.h):
// every file the course ships passes, each way around them we know of is
// refused with a message that says where and why.
#include "catch_compat.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/guard.h"

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
  // Variables at file scope are unmangled: the student's own, unless the C
  // library has the name too or it is reserved.
  CHECK(check_symbols("lr D 0 8\nW B 0 8\nepochs R 0 4\n", "f.cpp") == "");
  CHECK_THAT(check_symbols("log B 0 8\n", "f.cpp"),
             Catch::Contains("defines a global variable `log`, a name the C or C++ library also defines"));
  CHECK_THAT(check_symbols("environ D 0 8\n", "f.cpp"), Catch::Contains("`environ`"));
  CHECK_THAT(check_symbols("_secret B 0 8\n", "f.cpp"), Catch::Contains("reserved for the compiler"));
  CHECK_THAT(check_symbols("lr T 0 8\n", "f.cpp"), Catch::Contains("defines `lr` with C linkage"));
  CHECK_THAT(check_symbols("resolver i 0 8\n", "f.cpp"), Catch::Contains("indirect function"));
  CHECK_THAT(check_symbols("_Znwm T 0 8\n", "f.cpp"),
             Catch::Contains("defines operator new(unsigned long), which would replace the allocator"));
}

// Issue 19: the guard must read the text the way GCC does (translation
// phases 1-3, -std=c++20). Each attack below was checked by hand with
// `g++ -std=c++20 -E` (or -fsyntax-only) to read as the comment says.
namespace {
std::string src(const std::string& text) { return check_source(text, "f.cpp"); }
// The errors other than the refusal of the macro itself: how the guard reads
// the lines a directive spans is tested with #define, which it then refuses.
std::string src_nm(const std::string& text) {
  std::istringstream in(src(text));
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("error: #define is not allowed") == std::string::npos &&
        line.find("error: #undef is not allowed") == std::string::npos)
      out += line + "\n";
  return out;
}
}  // namespace

TEST_CASE("phase 1: a BOM and \\r\\n are read as GCC reads them; a lone \\r, a NUL, other controls are refused", "[guard]") {
  CHECK_THAT(src("\xEF\xBB\xBF#include \"x.h\"\n"), Catch::StartsWith("f.cpp:1:10: error: #include \"x.h\" is not allowed"));
  // A lone \r ends a line for GCC, and for the guard, which refuses it too.
  CHECK_THAT(src("int x;\r#include </etc/passwd>\r"),
             Catch::StartsWith("f.cpp:1:7: error: a carriage return (\\r) that does not end a line with \\n is not "
                               "allowed") && Catch::Contains("f.cpp:2:10: error: #include </etc/passwd>"));
  CHECK_THAT(src("int x; // a comment\rasm(\"\");\r"), Catch::Contains("f.cpp:2:1: error: `asm` is not allowed"));
  // clang 14 takes \n\r after a backslash for one line end (a splice) where
  // GCC sees two: `gn\<LF><CR>u::section` is gnu:: to clang. Refused.
  CHECK_THAT(src("[[gn\\\n\ru::section(\".preinit_array\")]] int x;\n"),
             Catch::Contains("f.cpp:2:1: error: a carriage return"));
  // A NUL between a backslash and the line end splices for GCC, not for clang.
  const char nul[] = "// c \\\0\nasm(\"\");\n";
  CHECK_THAT(src(std::string(nul, sizeof nul - 1)), Catch::StartsWith("f.cpp:1:7: error: a NUL byte is not allowed"));
  CHECK_THAT(src(std::string("int x;\x1b[2J\n")), Catch::StartsWith("f.cpp:1:7: error: the control character 0x1B"));
  // At most a few such complaints, however many bytes: the rest are the same.
  CHECK(src(std::string(100000, '\0')).size() < 2000);
  CHECK_THAT(src("int x;\r\nas\\\r\nm(\"\");\r\n"), Catch::StartsWith("f.cpp:2:1: error: `asm`"));
  CHECK(src("\xEF\xBB\xBF#include <vector>\r\nint x; // it's fine\r\n") == "");
}

TEST_CASE("phase 2: a splice may have blanks before its line end, and joins comments and words", "[guard]") {
  CHECK_THAT(src("void f() { as\\ \t\nm(\"\"); }\n"), Catch::StartsWith("f.cpp:1:12: error: `asm`"));
  CHECK_THAT(src("as\\\f\v\nm(\"\");\n"), Catch::StartsWith("f.cpp:1:1: error: `asm`"));
  CHECK_THAT(src("#if __has_\\  \ninclude(\"/etc/shadow\")\n#endif\n"),
             Catch::StartsWith("f.cpp:1:5: error: `__has_include` is not allowed"));
  CHECK_THAT(src("_Pra\\ \ngma(\"weak write\")\n"), Catch::StartsWith("f.cpp:1:1: error: `_Pragma` is not allowed"));
  CHECK_THAT(src("# \\  \n include </etc/passwd>\n"), Catch::StartsWith("f.cpp:2:10: error: #include </etc/passwd>"));
  // A // comment ending in a splice goes on over the next line: what is there is comment.
  CHECK(src("int x; // note \\\nasm(\"\");\n") == "");
  CHECK(src("int x; // note \\ \t\n#include </etc/passwd>\n") == "");
  // "/\<newline>*" opens a comment.
  CHECK(src("int a = 4 /\\\n* asm */;\n") == "");
  CHECK_THAT(src("int a = 4 /\\ \n* 2 */;\nasm(\"\");\n"), Catch::StartsWith("f.cpp:3:1: error: `asm`"));
}

TEST_CASE("trigraphs are text: GCC ignores them under -std=c++20", "[guard]") {
  // With trigraphs on, ??/ would splice the comment over the asm line.
  CHECK_THAT(src("int x; // ?\?/\nasm(\"\");\n"), Catch::StartsWith("f.cpp:2:1: error: `asm`"));
  CHECK(src("const char* s = \"?\?=?\?/?\?'\"; // what?\?!\n") == "");
}

TEST_CASE("directives: blanks GCC allows before the name, digraphs, line markers", "[guard]") {
  CHECK_THAT(src("#\fpragma weak write\n"), Catch::StartsWith("f.cpp:1:1: error: #pragma is not allowed"));
  CHECK_THAT(src("#\vpragma weak write\n"), Catch::StartsWith("f.cpp:1:1: error: #pragma is not allowed"));
  CHECK_THAT(src("int x;\n  #/* c */\v include </etc/passwd>\n"), Catch::Contains("f.cpp:2:21: error: #include </etc/passwd>"));
  CHECK_THAT(src("#/*\n*/pragma weak write\n"), Catch::StartsWith("f.cpp:1:1: error: #pragma is not allowed"));
  // A comment over lines does not end the line for GCC: this # opens a directive.
  CHECK_THAT(src("/*\n*/ #include </etc/passwd>\n"), Catch::StartsWith("f.cpp:2:13: error: #include </etc/passwd>"));
  // Here GCC reads no directive (the line began with `int a;`), but the guard refuses it all the same.
  CHECK_THAT(src("int a; /*\n*/ # pragma weak write\n"), Catch::StartsWith("f.cpp:2:4: error: #pragma is not allowed"));
  CHECK(src_nm("#define S(x) /* a comment\n over lines */ #x\nconst char* s = S(y);\n") == "");
  CHECK_THAT(src("%:include \"x.h\"\n"), Catch::StartsWith("f.cpp:1:11: error: #include \"x.h\" is not allowed"));
  CHECK_THAT(src(" %:  pragma weak write\n"), Catch::StartsWith("f.cpp:1:2: error: #pragma is not allowed"));
  CHECK_THAT(src_nm("#define CAT(a, b) a %:%: b\n"), Catch::StartsWith("f.cpp:1:21: error: token pasting (##)"));
  CHECK_THAT(src("# 1 \"other.cpp\"\n"), Catch::StartsWith("f.cpp:1:1: error: `# 1` is not allowed"));
  CHECK(src_nm("#\n#  define N 3\n# /* c */ if N > 2\nint a[N];\n#endif\n") == "");
  // "<::" is '<' then "::" (no digraph): std::vector<::size_t> reads as written.
  CHECK(src("#include <vector>\n#include <cstddef>\nstd::vector<::size_t> v;\n") == "");
}

TEST_CASE("literals: raw strings, prefixes, suffixes and digit separators", "[guard]") {
  // GCC reverts splices inside a raw string: ")\<newline>a\"" does not close R"a(.
  CHECK(src("auto s = R\"a( )\\\na\" asm(\"\") )a\";\n") == "");
  CHECK_THAT(src("auto s = R\"a(\\\n)a\"; asm(\"\");\n"), Catch::StartsWith("f.cpp:2:6: error: `asm`"));
  CHECK(src("auto a = u8R\"(asm)\"; auto b = LR\"x(#include </etc/passwd>)x\"; auto c = u8\"asm\"; auto d = U'a';\n") == "");
  // A raw string may not span lines in a directive: GCC ends it with the line (an error), and the next lines are code.
  CHECK_THAT(src_nm("#define N R\"x(\n#include <../../solutions/exercise3.cpp>\n)x\"\n"),
             Catch::StartsWith("f.cpp:1:11: error: a raw string literal may not span lines in a directive") &&
                 Catch::Contains("\nf.cpp:2:10: error: #include <../../solutions/exercise3.cpp> is not allowed"));
  CHECK(src_nm("#define X R\"(a\\\nb)\"\nconst char* s = X;\n") == "");  // spliced: one line for the directive
  CHECK_THAT(src("auto s = R\"a b(x)a b\";\n"), Catch::StartsWith("f.cpp:1:10: error: malformed raw string literal"));
  CHECK_THAT(src("auto s = R\"x(never closed\n"), Catch::StartsWith("f.cpp:1:10: error: unterminated raw string"));
  // $ is a letter for GCC: $R"x( is a word then an ordinary string, not a raw string.
  CHECK_THAT(src_nm("#define $R\nconst char* s = $R\"x(\";\n#include <../../solutions/exercise3.cpp>\n// )x\";\n"),
             Catch::StartsWith("f.cpp:3:10: error: #include <../../solutions/exercise3.cpp>"));
  // "x"R"a(...)a": R is the first literal's suffix, or (if R names a macro) a raw string's prefix.
  CHECK_THAT(src("auto s = \"x\"R\"a(\" asm(\"\") )a\";\n"), Catch::StartsWith("f.cpp:1:13: error: a literal directly"));
  CHECK(src("auto s = \"x\"_sv; auto t = \"x\" R\"(y)\";\n") == "");
  // A digit separator is no quote: 1'000 and 0x1'F' leave the rest of the line code.
  CHECK_THAT(src("int n = 1'000'000; asm(\"\");\n"), Catch::StartsWith("f.cpp:1:20: error: `asm`"));
  CHECK_THAT(src("int n = 1'\"'; asm(\"\");\n"), Catch::StartsWith("f.cpp:1:15: error: `asm`"));
  CHECK(src("int n = 0x1'F; char c = 'a'; double d = 1'0.5e+3; // don't\n") == "");
  CHECK_THAT(src("int \xC3\xA9 = 1;\n"), Catch::StartsWith("f.cpp:1:5: error: stray"));
  // $, @ and ` are no basic characters: clang ends such a delimiter's literal
  // at the next quote, lines later, where GCC reads on.
  CHECK_THAT(src("const char* s = R\"$(\";\n#include \"/etc/hostname\"\n)$\";\n"),
             Catch::StartsWith("f.cpp:1:17: error: malformed raw string literal") &&
                 Catch::Contains("f.cpp:2:10: error: #include \"/etc/hostname\""));
  CHECK_THAT(src("auto s = R\"@(x)@\";\n"), Catch::StartsWith("f.cpp:1:10: error: malformed raw string literal"));
  CHECK(src("// caf\xC3\xA9\nconst char* s = \"caf\xC3\xA9\";\n") == "");
}

TEST_CASE("C++20 module lines are refused: an import names a file to look up", "[guard]") {
  CHECK_THAT(src("#include <gradlab/lab.h>\nimport \"/etc/hostname\";\n"),
             Catch::StartsWith("f.cpp:2:1: error: `import` is not allowed"));
  CHECK_THAT(src("import <vector>;\n"), Catch::StartsWith("f.cpp:1:1: error: `import`"));
  CHECK_THAT(src("export module lab;\n"), Catch::StartsWith("f.cpp:1:1: error: `export`"));
  CHECK_THAT(src("module;\n"), Catch::StartsWith("f.cpp:1:1: error: `module`"));
  // clang takes `import` anywhere a declaration may start, out of a macro too:
  // the word is refused wherever it stands.
  for (const char* text : {"int a; import \"/x.h\";\n", "int b; /*\n*/ import \"/x.h\";\n", "; export import \"/x.h\";\n",
                           "#define I import\nI \"/x.h\";\n", "#define I(x) x\nI(import) \"/x.h\";\n",
                           "%>\\\nimport \"F\";\n"})
    CHECK_THAT(src(text), Catch::Contains("error: `import` is not allowed") || Catch::Contains("error: `export` is not allowed"));
  // `module` is code where the line goes on as code.
  CHECK(src("struct M { int x; };\nint f(M* module) {\n  return module->x;\n}\n") == "");
}

TEST_CASE("numbers end where both compilers end them, or are refused", "[guard]") {
  // Found by differential fuzzing against clang 14 and GCC 12: each hid the
  // rest of its line from the guard, which took a quote for a literal's start.
  CHECK_THAT(src("#define D(...)\nD(1'$') asm(\"nop\"); D(' ')\n"), Catch::Contains("error: the number `1'$`"));
  CHECK_THAT(src("#define D(...)\nD(1$a'b') asm(\"nop\"); D(' ')\n"), Catch::Contains("error: the number `1$a'b`"));
  CHECK_THAT(src("#define D(...)\nD(1p-'a') asm(\"nop\"); D(' ')\n"), Catch::Contains("error: the number `1p-'a`"));
  // Two quotes: clang ends the number before them, GCC reads on through both.
  CHECK_THAT(src("#define D(...)\nD(1'''a') asm(\"nop\"); D(' ')\n"), Catch::Contains("error: adjacent digit separators"));
  CHECK_THAT(src("int a = 1'''a' R\"x(;\n#include \"/tmp/m.h\"\n)x\";\n"), Catch::Contains("error: adjacent digit separators"));
  // What students write stays fine: separators, exponents, hexadecimal floats.
  CHECK(src("double a = 1'000.5e-3, b = 0x1.8p+1, c = 1e+5; int d = 0b1010'1010; long e = 10'000'000LL;\n") == "");
}

TEST_CASE("a literal ends on its line: a backslash escapes no line end", "[guard]") {
  // A splice leaves a real backslash before the line end: both compilers end
  // the string there (unterminated) and read the next line as code.
  CHECK_THAT(src_nm("#define Q \"\\\\\n\n#include \"/tmp/m.h\"\nint y;\n"),
             Catch::StartsWith("f.cpp:1:11: error: a string or character literal that does not end on its line") &&
                 Catch::Contains("f.cpp:3:10: error: #include \"/tmp/m.h\""));
  CHECK_THAT(src("char c = '\\\\\n\n#include \"/tmp/m.h\"\n';\n"), Catch::Contains("does not end on its line"));
  CHECK_THAT(src("const char* s = \"no end;\nint x;\n"), Catch::Contains("does not end on its line"));
  CHECK(src("const char* s = \"a \\\" quote\", *t = \"a \\\\ backslash\"; char c = '\\'';\n") == "");
}

TEST_CASE("nothing follows the header on an #include line: GCC reads it as more header names", "[guard]") {
  CHECK_THAT(src("#include <vector> <a/*b>\n#include \"/tmp/m.h\"\n// */\nint y;\n"),
             Catch::StartsWith("f.cpp:1:19: error: nothing may follow the header's name"));
  CHECK_THAT(src("#include <vector> \"\\\" \" /*\n#include \"/tmp/m.h\"\n// */\n"),
             Catch::StartsWith("f.cpp:1:19: error: nothing may follow"));
  CHECK(src("#include <vector> // a comment\n#include <cmath> /* another */\n") == "");
}

TEST_CASE("#error is refused: clang reads the rest of its line as text, GCC opens comments in it", "[guard]") {
  CHECK_THAT(src("#error /*\n#include \"/usr/lib/os-release\"\n*/\nint y;\n"),
             Catch::StartsWith("f.cpp:1:1: error: #error is not allowed"));
  CHECK_THAT(src("#if 0\n#error nothing\n#endif\n"), Catch::Contains("#error is not allowed"));
}

TEST_CASE("sections: no .preinit_array, which would run before the grader's start-up", "[guard]") {
  // readelf -SW of an object with a function pointer put there (clang 14).
  const std::string preinit =
      "  [ 5] .preinit_array    PREINIT_ARRAY   0000000000000000 0000a0 000008 00  WA  0   0  8\n"
      "  [ 6] .rela.preinit_array RELA            0000000000000000 0002a0 000018 18   I 15   5  8\n"
      "  [ 8] .init_array       INIT_ARRAY      0000000000000000 0000a8 000008 00  WA  0   0  8\n";
  CHECK_THAT(grader::check_sections(preinit, "f.cpp"),
             Catch::StartsWith("f.cpp: error: the compiled file has a .preinit_array section"));
  // A file-scope initialiser gives .init_array, which runs after the libraries' own: fine.
  CHECK(grader::check_sections("  [ 8] .init_array       INIT_ARRAY      0000000000000000 0000a8 000008 00  WA  0   0  8\n",
                               "f.cpp") == "");
}

TEST_CASE("attributes: every attribute of every list, however spelled", "[guard]") {
  CHECK_THAT(src("[[maybe_unused, gnu::weak]] int v;\n"), Catch::StartsWith("f.cpp:1:17: error: the attribute [[gnu::weak]]"));
  CHECK_THAT(src("extern \"C\" [[maybe_unused, gnu::weak, gnu::alias(\"f\")]] int strlen(const char*);\n"),
             Catch::StartsWith("f.cpp:1:28: error: the attribute [[gnu::weak]] is not allowed") &&
                 Catch::Contains("\nf.cpp:1:39: error: the attribute [[gnu::alias]] is not allowed"));
  CHECK_THAT(src("[[using gnu: weak]] int v;\n"), Catch::StartsWith("f.cpp:1:3: error: the attribute list [[using …]]"));
  CHECK_THAT(src("[ [gnu::weak] ] int v;\n"), Catch::StartsWith("f.cpp:1:4: error: the attribute [[gnu::weak]]"));
  CHECK_THAT(src("<:<:__gnu__::weak:>:> int v;\n"), Catch::StartsWith("f.cpp:1:5: error: the attribute [[__gnu__::weak]]"));
  CHECK_THAT(src("[[weak]] int v;\n"), Catch::StartsWith("f.cpp:1:3: error: the attribute [[weak]]"));
  CHECK_THAT(src_nm("#define W gnu::weak\n[[W]] int v;\n"),
             Catch::StartsWith("f.cpp:1:11: error: `gnu` is not allowed") &&
                 Catch::Contains("\nf.cpp:2:3: error: the attribute [[W]]"));
  CHECK_THAT(src("#define OPEN [[\nOPEN gnu::weak]] int v;\n"), Catch::Contains("f.cpp:2:6: error: `gnu` is not allowed"));
  // clang's own attributes, however the list is opened.
  CHECK_THAT(src("#define OPEN [[\nOPEN clang::annotate(\"x\")]] int v;\n"),
             Catch::Contains("f.cpp:2:6: error: `clang` is not allowed"));
  CHECK_THAT(src("#define LB [\nLB LB _Clang::always_destroy ] ] int v;\n"),
             Catch::Contains("f.cpp:2:7: error: `_Clang` is not allowed"));
  // An attribute's arguments are words like any other: _Pragma runs wherever it stands.
  CHECK_THAT(src("[[nodiscard(_Pragma(\"weak write\") \"x\")]] int f();\n"),
             Catch::StartsWith("f.cpp:1:13: error: `_Pragma` is not allowed"));
  CHECK_THAT(src_nm("#define A(x, y) [[x ## y]]\n"), Catch::StartsWith("f.cpp:1:19: error: the attribute [[x]]") &&
                                                     Catch::Contains("f.cpp:1:21: error: token pasting"));
  for (const char* a : {"__attribute__((weak))", "__attribute__((__weak__))", "__attribute__((alias(\"f\")))",
                        "__attribute((constructor))", "__declspec(selectany)"}) {
    INFO(a);
    CHECK_THAT(src(std::string(a) + " int v;\n"), Catch::StartsWith("f.cpp:1:1: error: `__"));
  }
  CHECK(src("[[nodiscard(\"why\"), maybe_unused]] int f();\n[[noreturn]] void g();\n"
            "int h(int x) { switch (x) { case 1: [[fallthrough]]; default: return x; } }\n"
            "struct S { [[no_unique_address]] int e; };\nint a[2]; int b = a[a[0]];\n") == "");
}

TEST_CASE("operator new and delete are refused in every spelling, reserved names when defined", "[guard]") {
  for (const char* s : {"void* operator new(std::size_t n);", "void* operator new[](std::size_t n);",
                        "void* ::operator new(std::size_t, std::align_val_t);", "void operator delete(void*) noexcept;",
                        "void* operator/**/new(std::size_t);", "[[nodiscard]] void* operator \\\nnew(std::size_t);"}) {
    INFO(s);
    CHECK_THAT(src(std::string("#include <new>\n") + s + "\n"), Catch::Contains("error: `operator "));
  }
  // No macros at all: one rewrites the starter's own lines after it (a red
  // team's #define function(n, f) registered torch::sigmoid for the grader's
  // probes in place of the student's MySigmoid).
  CHECK_THAT(src("#define _GLIBCXX_DEBUG 1\n"), Catch::StartsWith("f.cpp:1:9: error: #define is not allowed"));
  CHECK_THAT(src("#undef __cplusplus\n"), Catch::StartsWith("f.cpp:1:8: error: #undef is not allowed"));
  CHECK_THAT(src("#define function(n, f) function(n, torch::sigmoid)\n"), Catch::Contains("a macro rewrites the lines after it"));
  CHECK(src("constexpr int kN = 3;\nconst char* f() { return __FILE__; }\nint l = __LINE__;\n") == "");
  CHECK(src("namespace {\nint counter = 0;\nauto twice = [](auto x) { return 2 * x; };\n}\n"
            "template <typename T> T sq(T x) { return x * x; }\n/* it's a comment with 'quotes' */\n") == "");
}

TEST_CASE("symbols: weak definitions of main, the allocator and C functions are refused too", "[guard]") {
  CHECK_THAT(check_symbols("main W 0 8\n", "f.cpp"), Catch::Contains("defines main()"));
  CHECK_THAT(check_symbols("write W 0 16\n", "f.cpp"), Catch::Contains("defines `write` with C linkage"));
  CHECK_THAT(check_symbols("malloc W 0 16\n", "f.cpp"), Catch::Contains("defines `malloc` with C linkage"));
  CHECK_THAT(check_symbols("_Znwm W 0 8\n", "f.cpp"), Catch::Contains("defines operator new(unsigned long)"));
  CHECK_THAT(check_symbols("_Znam T 0 8\n", "f.cpp"), Catch::Contains("defines operator new[](unsigned long)"));
  CHECK_THAT(check_symbols("_ZnwmSt11align_val_t T 0 8\n", "f.cpp"),
             Catch::Contains("defines operator new(unsigned long, std::align_val_t)"));
  CHECK_THAT(check_symbols("_ZdlPv W 0 8\n", "f.cpp"), Catch::Contains("defines operator delete(void*)"));
  CHECK_THAT(check_symbols("_ZNK7gradlab6Tensor8data_ptrIdEEPT_v T 0 8\n", "f.cpp"),
             Catch::Contains("which belongs to the engine"));
  CHECK_THAT(check_symbols("_ZN10__cxxabiv119__terminate_handlerE D 0 8\n", "f.cpp"),
             Catch::Contains("`__cxxabiv1` is reserved"));
  // What any honest file produces: placement new, the personality pointer, the library's instantiations.
  CHECK(check_symbols("_ZnwmPv W 0 12\nDW.ref.__gxx_personality_v0 V 0 8\n_ZNSt6vectorIiSaIiEE9push_backEOi W 0 31\n"
                      "_ZN9__gnu_cxx17__normal_iteratorIPivEppEv W 0 20\n_ZN12_GLOBAL__N_17counterE B 0 4\n"
                      "_ZN2my5tableE D 0 8\n__odr_asan._ZN2my5tableE B c1 1\n",
                      "f.cpp") == "");
}

TEST_CASE("declarations of the engine's own names are refused at their line", "[guard]") {
  CHECK_THAT(src("#include <gradlab/lab.h>\ninline bool gradlab::Tensor::is_leaf() const { return true; }\n"),
             Catch::StartsWith("f.cpp:2:13: error: declares gradlab::Tensor::is_leaf, which belongs to the engine"));
  CHECK_THAT(src("inline int lab::harness_main(int, char**, void (*)(lab::Lab&)) { return 0; }\n"),
             Catch::StartsWith("f.cpp:1:12: error: declares lab::harness_main"));
  CHECK_THAT(src("template <>\ndouble* gradlab::Tensor::data_ptr<double>() const { return nullptr; }\n"),
             Catch::StartsWith("f.cpp:2:9: error: declares gradlab::Tensor::data_ptr"));
  CHECK_THAT(src("bool torch::Tensor::operator()(int) const;\n"), Catch::StartsWith("f.cpp:1:6: error: declares torch::Tensor::operator"));
  CHECK_THAT(src("namespace gradlab { int x; }\n"), Catch::StartsWith("f.cpp:1:11: error: namespace gradlab belongs"));
  // What a file does with the engine's names: returns, parameters, initialisers, calls inside bodies.
  CHECK(src("namespace {\ngradlab::Tensor make(const gradlab::Tensor& t) { return gradlab::ones({2}) * t; }\n"
            "gradlab::Tensor g = gradlab::ones({2});\nstd::vector<gradlab::Tensor> v(3);\n"
            "struct S : torch::autograd::Function<S> { static gradlab::Tensor forward(int x); };\n"
            "gradlab::Tensor S::forward(int x) { return gradlab::Tensor(x); }\n}\n"
            "void exercise3(lab::Lab& lab) { auto t = torch::ones({2}); lab.check(\"t\", t); }\n"
            "[[maybe_unused]] static auto const keep = &gradlab::Tensor::is_leaf;\n") == "");
}

TEST_CASE("functions defined with C linkage are refused at their line, declared ones are not", "[guard]") {
  CHECK_THAT(src("#include <cstddef>\nextern \"C\" inline long write(int, const void*, std::size_t) { return 0; }\n"),
             Catch::StartsWith("f.cpp:2:1: error: defines a function with C linkage"));
  CHECK_THAT(src("extern \"C\" {\nint x;\nvoid* malloc(unsigned long n) { return nullptr; }\n}\n"),
             Catch::StartsWith("f.cpp:3:1: error: defines a function with C linkage"));
  CHECK(src("extern \"C\" int close(int);\nextern \"C\" {\nint fcntl(int, int, ...);\n}\n"
            "extern \"C++\" { int g() { return 2; } }\nnamespace { int f() { return 1; } }\n") == "");
}

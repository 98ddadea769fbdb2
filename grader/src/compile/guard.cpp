#include "compile/guard.h"

#include "source/guard_lex.h"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

namespace grader {
namespace {

// The standard library's headers (C++20), the C headers in their C++ form,
// and the two the course uses.
const std::set<std::string>& allowed_headers() {
  static const std::set<std::string> h = {
      "algorithm", "any", "array", "atomic", "barrier", "bit", "bitset", "cassert", "cctype", "cerrno", "cfenv",
      "cfloat", "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath", "codecvt", "compare", "complex",
      "concepts", "condition_variable", "coroutine", "csetjmp", "csignal", "cstdarg", "cstddef", "cstdint", "cstdio",
      "cstdlib", "cstring", "ctime", "cuchar", "cwchar", "cwctype", "deque", "exception", "execution", "expected",
      "filesystem", "format", "forward_list", "fstream", "functional", "future", "initializer_list", "iomanip", "ios",
      "iosfwd", "iostream", "istream", "iterator", "latch", "limits", "list", "locale", "map", "memory",
      "memory_resource", "mutex", "new", "numbers", "numeric", "optional", "ostream", "queue", "random", "ranges",
      "ratio", "regex", "scoped_allocator", "semaphore", "set", "shared_mutex", "source_location", "span", "sstream",
      "stack", "stdexcept", "stop_token", "streambuf", "string", "string_view", "syncstream", "system_error",
      "thread", "tuple", "type_traits", "typeindex", "typeinfo", "unordered_map", "unordered_set", "utility",
      "valarray", "variant", "vector", "version", "gradlab/lab.h", "torch/torch.h"};
  return h;
}

// Words that are never needed in an exercise, each with the door it opens.
const std::map<std::string, std::string>& forbidden_words() {
  static const std::string assembly = "inline assembly can copy any file into the program (.incbin)";
  static const std::string attribute = "compiler attributes can run code before the grader starts or change the link";
  static const std::string probe = "it would let the file probe which paths exist on the grader's machine";
  static const std::string modules =
      "C++20 modules are not used in an exercise (clang takes `import \"file\"` anywhere a declaration may start, "
      "even out of a macro, and looks the file up)";
  static const std::map<std::string, std::string> w = {
      {"import", modules},        {"export", modules},          {"__pragma", "pragmas change how the grader builds the program"},
      {"asm", assembly},          {"__asm", assembly},          {"__asm__", assembly},
      {"_Pragma", "pragmas change how the grader builds the program"},
      {"__attribute", attribute}, {"__attribute__", attribute}, {"__declspec", attribute},
      {"__has_include", probe},   {"__has_include_next", probe},
      {"gnu", "it names the compiler's own attributes ([[gnu::weak]], [[using gnu: alias(…)]]), which change the link"},
      {"__gnu__", "it names the compiler's own attributes ([[__gnu__::weak]]), which change the link"},
      {"clang", "it names clang's own attributes ([[clang::…]]), which change how the program is built"},
      {"_Clang", "it names clang's own attributes ([[_Clang::…]]), which change how the program is built"}};
  return w;
}

// Directives that may appear; #include is checked on its own.
const std::set<std::string>& allowed_directives() {
  // Not #error: clang reads the rest of its line as raw text, where GCC
  // still opens a comment there, so a /* after it hid lines from one of them.
  static const std::set<std::string> d = {"include", "define", "undef", "if",      "ifdef",
                                          "ifndef",  "elif",   "else",  "endif",   "elifdef", "elifndef"};
  return d;
}

// The attributes of the standard: they change nothing of how the program is
// linked or started. Everything else ([[gnu::weak]], [[using gnu: alias(…)]])
// is refused, whatever else stands in the same list.
const std::set<std::string>& standard_attributes() {
  static const std::set<std::string> a = {"noreturn", "carries_dependency", "deprecated", "fallthrough",
                                          "likely",   "unlikely",           "maybe_unused", "nodiscard",
                                          "no_unique_address", "assume"};
  return a;
}

const std::set<std::string>& engine_namespaces() {
  static const std::set<std::string> n = {"lab", "gradlab", "torch", "c10", "at"};
  return n;
}

// Names the implementation keeps for itself ([lex.name]): _Upper and __x.
bool reserved(const std::string& w) {
  return (w.size() > 1 && w[0] == '_' && std::isupper(static_cast<unsigned char>(w[1]))) ||
         w.find("__") != std::string::npos;
}

// The source rules, run on the tokens GCC will read (guard_lex.h).
class Rules {
 public:
  Rules(const std::string& text, const std::string& shown) : lexed_(lex(text)), t_(lexed_.tokens), shown_(shown) {}

  std::string run() {
    for (const auto& p : lexed_.problems) error(p.line, p.col, p.what);
    for (size_t k = 0; k < t_.size(); ++k) {
      const Token& tok = t_[k];
      // A # after a comment over lines opens no directive for GCC unless it is
      // the first token of its line; the guard reads one there all the same,
      // but never inside a directive (a macro's # stringizes).
      const bool hash = tok.kind == Token::Punct && tok.text == "#";
      if (hash && (tok.first || (tok.after_newline && !tok.in_directive))) {
        directive(k);
      } else if (tok.kind == Token::Punct && tok.text == "##") {
        error(tok, "token pasting (##) is not allowed in an exercise");
      } else if (tok.kind == Token::Ident) {
        if (!attribute_names_.count(k)) word(k);
      } else if (tok.kind == Token::Punct && tok.text == "[" && is(k + 1, Token::Punct, "[") && k >= attributes_end_) {
        attributes_end_ = attributes(k + 2);
      } else if (tok.kind == Token::Other && (tok.text[0] == '\\' || static_cast<unsigned char>(tok.text[0]) >= 0x80)) {
        error(tok, "stray `" + tok.text + "` outside a string or a comment: write the code in ASCII (an identifier "
                   "with \\u escapes or non-ASCII letters is not allowed)");
      }
    }
    engine_declarations();
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const auto& a, const auto& b) { return std::tie(a.line, a.col) < std::tie(b.line, b.col); });
    std::string out;
    for (const auto& e : errors_)
      out += shown_ + ":" + std::to_string(e.line) + ":" + std::to_string(e.col) + ": error: " + e.what + "\n";
    return out;
  }

 private:
  bool is(size_t k, Token::Kind kind, const char* text = nullptr) const {
    return k < t_.size() && t_[k].kind == kind && (!text || t_[k].text == text);
  }
  // The token k of the directive that starts at `hash`, if the directive has one.
  const Token* in_line(size_t k) const { return k < t_.size() && !t_[k].first ? &t_[k] : nullptr; }

  void error(int line, int col, const std::string& what) { errors_.push_back({line, col, what}); }
  void error(const Token& at, const std::string& what) { error(at.line, at.col, what); }

  void directive(size_t hash) {
    const Token* name = in_line(hash + 1);
    if (!name) return;  // the null directive
    if (name->kind != Token::Ident) {
      error(t_[hash], "`# " + name->text + "` is not allowed in an exercise (a line marker, like #line, changes the "
                      "names and lines the compiler reports)");
    } else if (name->text == "include") {
      include(in_line(hash + 2), *name);
      // GCC reads the rest of an #include line as header names too (where
      // "/*" in <a/*b> opens no comment); clang and the guard read tokens.
      if (const Token* extra = in_line(hash + 2) ? in_line(hash + 3) : nullptr)
        error(*extra, "nothing may follow the header's name on an #include line");
    } else if (!allowed_directives().count(name->text)) {
      error(t_[hash], "#" + name->text + " is not allowed in an exercise (only #include and "
                      "#if/#ifdef/#else/#endif)");
    } else if (name->text == "define" || name->text == "undef") {
      // A macro rewrites every line after it, the starter's own too: the
      // lab.function line that hands the grader the function it probes, the
      // lab.name calls (a red team's #define function(n, f) registered
      // torch::sigmoid in place of the student's MySigmoid).
      const Token* macro = in_line(hash + 2);
      error(macro ? *macro : t_[hash], "#" + name->text + " is not allowed in an exercise: a macro rewrites the lines "
                                       "after it, the starter's own too (the lab.name and lab.function calls the grader "
                                       "reads); write a constant (constexpr double lr = 0.05;) or a function instead");
    }
  }

  void include(const Token* h, const Token& name) {
    if (!h || h->kind != Token::Header) {
      const Token& at = h ? *h : name;
      return error(at, "#include must name a header directly, as in #include <vector> (a macro or a computed name "
                       "is not allowed)");
    }
    std::string header = h->text.substr(1, h->text.size() - 2);
    if (h->text[0] == '"' && header != "gradlab/lab.h") header = h->text;  // only the exercise header
    if (!allowed_headers().count(header))
      error(*h, "#include " + h->text + " is not allowed: an exercise may include only <gradlab/lab.h> and the "
                "standard library's headers (<vector>, <cmath>, <iostream>, ...)");
  }

  void word(size_t k) {
    const Token& tok = t_[k];
    if (auto it = forbidden_words().find(tok.text); it != forbidden_words().end())
      return error(tok, "`" + tok.text + "` is not allowed in an exercise: " + it->second);
    // A module declaration (`module x;`, `module;`, `module :private;`):
    // `module` first on its line and going on as such a line does
    // ([cpp.module]); `module->forward(x)` is code. (import and export are
    // forbidden words.)
    const bool module_line = tok.first && tok.text == "module" && k + 1 < t_.size() && !t_[k + 1].first &&
                             (t_[k + 1].kind == Token::Ident || t_[k + 1].kind == Token::Literal ||
                              t_[k + 1].kind == Token::Header || t_[k + 1].text == ":" || t_[k + 1].text == ";" ||
                              t_[k + 1].text == "<");
    if (module_line)
      return error(tok, "`module` at the start of a line is not allowed in an exercise: C++20 modules are not "
                        "used here");
    if (tok.text == "operator" && k + 1 < t_.size() && (t_[k + 1].text == "new" || t_[k + 1].text == "delete"))
      error(tok, "`operator " + t_[k + 1].text + "` is not allowed in an exercise: defining it would replace the "
                 "allocator of the whole program, the grader's part included (new and delete expressions are fine)");
  }

  // An attribute list from just after its "[[": every attribute in it is
  // checked. Its other words (arguments) are checked as anywhere else.
  // Returns where the list ends: a "[[" inside it (or a few thousand "[")
  // starts no second scan, so the rules stay linear in the file's size.
  size_t attributes(size_t k) {
    const size_t open = k - 2;
    const bool using_list = is(k, Token::Ident, "using");
    if (using_list)
      error(t_[k], "the attribute list [[using …]] is not allowed in an exercise (it names the compiler's own "
                   "attributes)");
    bool expect_name = !using_list;
    int depth = 0;
    for (; k < t_.size() && k - open < 4096 && (!t_[open].in_directive || !t_[k].first); ++k) {
      const Token& tok = t_[k];
      if (tok.kind == Token::Punct && (tok.text == "(" || tok.text == "[" || tok.text == "{")) ++depth;
      if (tok.kind == Token::Punct && (tok.text == ")" || tok.text == "]" || tok.text == "}")) {
        if (depth == 0) return k;
        --depth;
      }
      if (depth > 0) continue;
      if (tok.kind == Token::Punct && tok.text == ",") expect_name = !using_list;
      if (!expect_name || tok.kind != Token::Ident || tok.text == "using") continue;
      expect_name = false;
      attribute_names_.insert(k);
      if (is(k + 1, Token::Punct, "::") && k + 2 < t_.size()) {
        attribute_names_.insert(k + 2);
        error(tok, "the attribute [[" + tok.text + "::" + t_[k + 2].text + "]] is not allowed in an exercise "
                   "(standard attributes such as [[maybe_unused]] are)");
      } else if (!is(k + 1, Token::Punct, ":") && !standard_attributes().count(tok.text)) {
        error(tok, "the attribute [[" + tok.text + "]] is not allowed in an exercise (standard attributes such as "
                   "[[maybe_unused]] are)");
      }
    }
    return k;
  }

  // Declarations at namespace scope whose name is the engine's or the
  // grader's: `inline bool gradlab::Tensor::is_leaf() const {…}` is emitted
  // weak, like the header's own inline functions, so the symbol check cannot
  // tell it from them; reopening their namespaces; functions defined with C
  // linkage (declaring one is fine). Bodies of functions and classes are
  // skipped: only a declarator's own name is looked at. The symbol check
  // stays the wall for what macros spell; this says where.
  void engine_declarations() {
    bool assigned = false, declarator_seen = false;
    size_t statement = std::string::npos;  // where the current declaration starts
    std::vector<bool> c_linkage;  // the namespace-like bodies we are in: extern "C" { or not
    for (size_t k = 0; k < t_.size(); ++k) {
      const Token& tok = t_[k];
      if (tok.in_directive || tok.kind == Token::Other) continue;
      const bool punct = tok.kind == Token::Punct;
      if (statement == std::string::npos) statement = k;
      if (punct && (tok.text == ";" || tok.text == "}" || tok.text == "{")) {
        const bool c = is(statement, Token::Ident, "extern") && is(statement + 1, Token::Literal, "\"C\"");
        if (tok.text == "{" && namespace_brace(k)) {
          c_linkage.push_back(c);
        } else if (tok.text == "{") {
          if (declarator_seen && (c || (!c_linkage.empty() && c_linkage.back())))
            error(t_[statement], "defines a function with C linkage (extern \"C\"), which would replace the C "
                                 "library's or the grader's own function of that name; drop extern \"C\"");
          k = matching(k, "{", "}");
        } else if (tok.text == "}" && !c_linkage.empty()) {
          c_linkage.pop_back();
        }
        assigned = declarator_seen = false;
        statement = std::string::npos;
      } else if (punct && tok.text == "=") {
        assigned = true;
      } else if (tok.kind == Token::Ident && tok.text == "namespace" && k + 1 < t_.size() &&
                 engine_namespaces().count(t_[k + 1].text)) {
        error(t_[k + 1], "namespace " + t_[k + 1].text + " belongs to the engine or the grader: an exercise may "
                         "not add to it (define your own functions and types in a namespace of your own)");
      } else if (punct && tok.text == "(" && !assigned && !declarator_seen) {
        declarator_seen = true;
        declarator(k);
        k = matching(k, "(", ")");
      }
    }
  }

  // The name before the parameter list that opens at `paren`, if it is qualified by an engine namespace.
  void declarator(size_t paren) {
    size_t j = paren;
    auto skip_template_args = [&] {
      for (int depth = 0; j > 0;) {
        const std::string& x = t_[--j].text;
        if (x == ";" || x == "{" || x == "}") return;  // never past the declaration: linear in the file
        depth += x == ">" ? 1 : x == ">>" ? 2 : x == "<" ? -1 : 0;
        if (depth <= 0) return;
      }
    };
    auto name_at = [&] {  // from one past a name (and its template arguments) to its first token
      if (t_[j - 1].text == ">" || t_[j - 1].text == ">>") skip_template_args();
      if (j > 0) --j;
    };
    if (j == 0) return;
    name_at();
    if (j > 0 && t_[j - 1].text == "operator") --j;  // operator+, operator()
    std::string name = t_[j].text;
    while (j >= 2 && t_[j - 1].text == "::" &&
           (t_[j - 2].kind == Token::Ident || t_[j - 2].text == ">" || t_[j - 2].text == ">>")) {
      --j;
      name_at();
      name = t_[j].text + "::" + name;
    }
    if (name.find("::") != std::string::npos && engine_namespaces().count(t_[j].text))
      error(t_[j], "declares " + name + ", which belongs to the engine or the grader; an exercise may define only "
                   "its own functions and types");
  }

  // Whether the "{" at k opens a namespace's body (namespace x {, extern "C" {).
  bool namespace_brace(size_t k) const {
    size_t j = k;
    while (j > 0 && (t_[j - 1].kind == Token::Ident || t_[j - 1].text == "::") && t_[j - 1].text != "namespace") --j;
    if (j > 0 && t_[j - 1].text == "namespace") return true;
    return k >= 2 && t_[k - 1].kind == Token::Literal && t_[k - 2].text == "extern";
  }

  // The index of the bracket that closes the one at k (or the last token).
  size_t matching(size_t k, const char* open, const char* close) const {
    for (int depth = 0; k < t_.size(); ++k) {
      if (t_[k].kind != Token::Punct || t_[k].in_directive) continue;
      depth += t_[k].text == open ? 1 : t_[k].text == close ? -1 : 0;
      if (depth == 0) return k;
    }
    return t_.size() - 1;
  }

  struct Error {
    int line, col;
    std::string what;
  };
  Lexed lexed_;
  const std::vector<Token>& t_;
  std::string shown_;
  std::vector<Error> errors_;
  std::set<size_t> attribute_names_;  // checked as attributes, not as words
  size_t attributes_end_ = 0;
};

// The placement forms of operator new and delete: inline in <new>, emitted
// weak at -O0 by any `new (p) T`, and not replaceable.
const std::set<std::string>& placement_forms() {
  static const std::set<std::string> p = {"_ZnwmPv", "_ZnamPv", "_ZdlPvS_", "_ZdaPvS_"};
  return p;
}

// The first reserved part (__x, _Upper) of a demangled name's qualified name, or "".
std::string reserved_part(const std::string& pretty) {
  const std::string qualified = pretty.substr(0, pretty.find_first_of("(<"));
  for (size_t at = 0; at <= qualified.size();) {
    const size_t end = std::min(qualified.find("::", at), qualified.size());
    const std::string part = qualified.substr(at, end - at);
    if (reserved(part)) return part;
    at = end + 2;
  }
  return "";
}

// The outermost name of a mangled C++ name's nested-name ("gradlab" for
// _ZNK7gradlab6Tensor8data_ptrIdEEPT_v), read from the mangled name because
// the demangled one of a template starts with its return type.
std::string outer_namespace(const std::string& mangled) {
  size_t i = 2;  // after "_Z"
  if (mangled.compare(i, 1, "N") == 0)
    for (++i; i < mangled.size() && std::string("rVKRO").find(mangled[i]) != std::string::npos;) ++i;
  if (mangled.compare(i, 2, "St") == 0) return "std";
  size_t len = 0;
  for (; i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i])); ++i) len = len * 10 + (mangled[i] - '0');
  return len && i + len <= mangled.size() ? mangled.substr(i, len) : "";
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace

std::string check_source(const std::string& text, const std::string& shown) { return Rules(text, shown).run(); }

std::string check_symbols(const std::string& nm_output, const std::string& shown) {
  std::string out;
  for (const auto& line : lines(nm_output)) {
    // POSIX format: "NAME TYPE [VALUE SIZE]"; mangled names hold no spaces.
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || sp + 1 >= line.size()) continue;
    const std::string name = line.substr(0, sp);
    const char type = line[sp + 1];
    // Demangled here rather than by a second nm run: one process less per compile.
    std::string pretty = name;
    int status = -1;
    if (char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)) {
      if (status == 0) pretty = d;
      std::free(d);
    }
    // Weak definitions (inline functions, template instantiations) are most
    // often the same code as everyone's and may stand in any namespace; but
    // a weak main, allocator or C function still replaces the program's own
    // (an `extern "C" inline` function, [[gnu::weak]]), so those are checked.
    const bool weak = type == 'W' || type == 'V' || type == 'w' || type == 'v' || type == 'u';
    auto complain = [&](const std::string& what) { out += shown + ": error: " + what + "\n"; };
    if (type == 'i') {
      complain("defines " + pretty + " as an indirect function (GNU ifunc), which runs while the program loads");
    } else if (name == "main") {
      complain("defines main(); remove main(): the grader provides its own and calls your exercise function");
    } else if ((pretty.rfind("operator new", 0) == 0 || pretty.rfind("operator delete", 0) == 0) &&
               !placement_forms().count(name)) {
      complain("defines " + pretty + ", which would replace the allocator of the whole program, the grader's "
               "part included");
    } else if (name.rfind("_Z", 0) != 0) {
      // The compiler's own names hold a '.', which no C++ name can (an asm
      // label could, and asm is refused): DW.ref.__gxx_personality_v0, the
      // sanitizer's __odr_asan.NAME beside each global.
      if (name.find('.') != std::string::npos) continue;
      // clang's helper for an exception leaving a noexcept function: weak,
      // hidden, and a reserved name the file itself cannot spell.
      if (weak && name == "__clang_call_terminate") continue;
      // A variable at file scope (`double lr = 0.1;`, `torch::Tensor W;`)
      // has an unmangled name too. It is the student's own unless its name
      // is reserved or a library the program loads defines it as well (a
      // global named `log` or `environ` would stand in for the C library's):
      // the grader loads the same C, math and C++ libraries, so asking its
      // dynamic linker tells.
      if (std::string("BDRGSCV").find(type) != std::string::npos && name[0] != '_' &&
          dlsym(RTLD_DEFAULT, name.c_str()) == nullptr)
        continue;
      if (std::string("BDRGSCV").find(type) != std::string::npos) {
        complain("defines a global variable `" + name + "`, a name " +
                 (name[0] == '_' ? std::string("reserved for the compiler and its library")
                                 : "the C or C++ library also defines") +
                 "; rename it, or put it in a namespace of your own");
        continue;
      }
      complain("defines `" + name + "` with C linkage, which would replace the C library's or the grader's own; "
               "give it C++ linkage (drop extern \"C\", or put a global variable in a namespace) or a name of your "
               "own");
    } else if (!weak) {
      if (const std::string part = status == 0 ? reserved_part(pretty) : ""; !part.empty()) {
        complain("defines " + pretty + ", whose name `" + part + "` is reserved for the compiler and its library; "
                 "an exercise may define only its own functions and types");
        continue;
      }
      const std::string ns = outer_namespace(name);
      if (std::set<std::string>{"lab", "gradlab", "torch", "c10", "at", "std", "nlohmann"}.count(ns))
        complain("defines " + pretty + ", which belongs to the " + (ns == "std" ? "C++ library" : "engine or the grader") +
                 "; an exercise may define only its own functions and types");
    }
  }
  return out;
}

std::string check_sections(const std::string& readelf_sections, const std::string& shown) {
  // A section of that type under any name, or of that name under any type.
  if (readelf_sections.find("PREINIT_ARRAY") == std::string::npos &&
      readelf_sections.find(".preinit_array") == std::string::npos)
    return "";
  return shown + ": error: the compiled file has a .preinit_array section: code that would run before the "
                 "grader's own start-up. C++ never makes one; remove what puts a function there\n";
}

}  // namespace grader

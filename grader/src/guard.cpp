#include "guard.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
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
  static const std::map<std::string, std::string> w = {
      {"asm", assembly},          {"__asm", assembly},          {"__asm__", assembly},
      {"_Pragma", "pragmas change how the grader builds the program"},
      {"__attribute", attribute}, {"__attribute__", attribute}, {"__declspec", attribute},
      {"__has_include", probe},   {"__has_include_next", probe}};
  return w;
}

// Directives that may appear; #include is checked on its own.
const std::set<std::string>& allowed_directives() {
  static const std::set<std::string> d = {"include", "define", "undef", "if",    "ifdef",   "ifndef",
                                          "elif",    "else",   "endif", "error", "elifdef", "elifndef"};
  return d;
}

class Scanner {
 public:
  Scanner(const std::string& text, const std::string& shown) : shown_(shown) {
    // Translation phase 2 first: a backslash-newline joins lines, so
    // "as\<newline>m" is "asm". Each kept character remembers its place.
    int line = 1, col = 1;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\\' && (text.compare(i + 1, 1, "\n") == 0 || text.compare(i + 1, 2, "\r\n") == 0)) {
        i += text[i + 1] == '\r' ? 2 : 1;
        ++line, col = 1;
        continue;
      }
      s_ += text[i];
      where_.push_back({line, col});
      if (text[i] == '\n') ++line, col = 1;
      else ++col;
    }
  }

  std::string run() {
    bool line_start = true;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        line_start = true;
        ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
      } else if (skip_comment()) {
      } else if (line_start && (c == '#' || starts("%:"))) {
        line_start = false;
        directive();
      } else {
        line_start = false;
        token();
      }
    }
    return out_;
  }

 private:
  bool starts(const char* p) const { return s_.compare(i_, std::char_traits<char>::length(p), p) == 0; }

  // Skips a comment at the cursor, if there is one.
  bool skip_comment() {
    if (starts("//")) {
      while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      return true;
    }
    if (starts("/*")) {
      const size_t end = s_.find("*/", i_ + 2);
      i_ = end == std::string::npos ? s_.size() : end + 2;
      return true;
    }
    return false;
  }

  void error(size_t at, const std::string& what) {
    const auto [line, col] = at < where_.size() ? where_[at] : std::pair<int, int>{0, 0};
    out_ += shown_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: " + what + "\n";
  }

  std::string identifier() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' ||
                              static_cast<unsigned char>(s_[i_]) >= 0x80))
      ++i_;
    return s_.substr(start, i_ - start);
  }

  void skip_blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    if (!starts("//") && skip_comment()) skip_blanks();  // a /* */ between words; // ends the line
  }

  void directive() {
    const size_t at = i_;
    i_ += s_[i_] == '#' ? 1 : 2;
    skip_blanks();
    const std::string name = identifier();
    if (name.empty()) return;  // the null directive, or a stray '#' the compiler will judge
    if (name == "include") {
      skip_blanks();
      const size_t hat = i_;
      std::string header;
      if (i_ < s_.size() && (s_[i_] == '<' || s_[i_] == '"')) {
        const char close = s_[i_] == '<' ? '>' : '"';
        const size_t end = s_.find_first_of(std::string(1, close) + "\n", i_ + 1);
        if (end != std::string::npos && s_[end] == close) {
          header = s_.substr(i_ + 1, end - i_ - 1);
          if (close == '"' && header != "gradlab/lab.h") header = "\"" + header + "\"";  // only the exercise header
          i_ = end + 1;
        }
      }
      if (header.empty()) {
        error(hat, "#include must name a header directly, as in #include <vector> (a macro or a computed name is "
                   "not allowed)");
      } else if (!allowed_headers().count(header)) {
        error(hat, "#include " + (header[0] == '"' ? header : "<" + header + ">") +
                       " is not allowed: an exercise may include only <gradlab/lab.h> and the standard library's "
                       "headers (<vector>, <cmath>, <iostream>, ...)");
      }
    } else if (!allowed_directives().count(name)) {
      error(at, "#" + name + " is not allowed in an exercise (only #include, #define, #undef and #if/#ifdef/#else/"
                "#endif)");
    }
    // The rest of the directive's line: its tokens follow the usual rules,
    // and ## (which could paste a forbidden word together) is refused.
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (starts("##") || starts("%:%:")) {
        error(i_, "token pasting (##) is not allowed in an exercise");
        i_ += s_[i_] == '#' ? 2 : 4;
      } else if (skip_comment()) {
      } else if (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r') {
        ++i_;
      } else {
        token();
      }
    }
  }

  // A string or character literal from its opening quote; raw strings too.
  void quoted(bool raw) {
    const char q = s_[i_];
    if (raw) {
      const size_t open = s_.find('(', i_);
      if (open == std::string::npos) {
        i_ = s_.size();
        return;
      }
      const std::string close = ")" + s_.substr(i_ + 1, open - i_ - 1) + "\"";
      const size_t end = s_.find(close, open);
      i_ = end == std::string::npos ? s_.size() : end + close.size();
      return;
    }
    for (++i_; i_ < s_.size() && s_[i_] != q && s_[i_] != '\n'; ++i_)
      if (s_[i_] == '\\') ++i_;
    ++i_;
  }

  void token() {
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1])))) {
      // A pp-number: digits, letters, '.', digit separators (1'000) and e+ / p- exponents.
      for (++i_; i_ < s_.size(); ++i_) {
        const char d = s_[i_];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '.' || d == '_' || d == '\'') continue;
        if ((d == '+' || d == '-') && std::string("eEpP").find(s_[i_ - 1]) != std::string::npos) continue;
        break;
      }
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80) {
      const size_t at = i_;
      const std::string word = identifier();
      // An encoding prefix (u8, L, R, …) right before a quote is part of a literal.
      if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') &&
          std::set<std::string>{"u8", "u", "U", "L", "R", "u8R", "uR", "UR", "LR"}.count(word)) {
        quoted(word.back() == 'R' && s_[i_] == '"');
        return;
      }
      if (auto it = forbidden_words().find(word); it != forbidden_words().end())
        error(at, "`" + word + "` is not allowed in an exercise: " + it->second);
    } else if (c == '"' || c == '\'') {
      quoted(false);
    } else if (starts("[[")) {
      // [[gnu::constructor]], [[using gnu: section(".x")]]: vendor attributes.
      const size_t at = i_;
      i_ += 2;
      skip_blanks();
      const std::string first = identifier();
      skip_blanks();
      if (first == "using" || (!first.empty() && starts("::") && first != "std"))
        error(at, "the attribute [[" + first + (first == "using" ? " …" : "::…") +
                      "]] is not allowed in an exercise (standard attributes such as [[maybe_unused]] are)");
    } else {
      ++i_;
    }
  }

  std::string s_, shown_, out_;
  std::vector<std::pair<int, int>> where_;
  size_t i_ = 0;
};

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace

std::string check_source(const std::string& text, const std::string& shown) { return Scanner(text, shown).run(); }

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
    int status = 0;
    if (char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)) {
      if (status == 0) pretty = d;
      std::free(d);
    }
    const bool weak = type == 'W' || type == 'V' || type == 'w' || type == 'v' || type == 'u';
    auto complain = [&](const std::string& what) { out += shown + ": error: " + what + "\n"; };
    if (type == 'i') {
      complain("defines " + pretty + " as an indirect function (GNU ifunc), which runs while the program loads");
    } else if (weak) {
      continue;  // inline functions and template instantiations: the same code as everyone's
    } else if (name == "main") {
      complain("defines main(); remove main(): the grader provides its own and calls your exercise function");
    } else if (pretty.rfind("operator new", 0) == 0 || pretty.rfind("operator delete", 0) == 0) {
      complain("defines " + pretty + ", which would replace the allocator of the whole program, the grader's "
               "part included");
    } else if (name.rfind("_Z", 0) != 0) {
      complain("defines `" + name + "` with C linkage, which would replace the C library's or the grader's own; "
               "give it C++ linkage (drop extern \"C\") or a name of your own");
    } else {
      for (const char* ns : {"lab::", "gradlab::", "torch::", "c10::", "at::", "std::", "nlohmann::", "__gnu_cxx::"})
        if (pretty.rfind(ns, 0) == 0) {
          complain("defines " + pretty + ", which belongs to the " +
                   (std::string(ns) == "std::" || std::string(ns) == "__gnu_cxx::" ? "C++ library" : "engine or the grader") +
                   "; an exercise may define only its own functions and types");
          break;
        }
    }
  }
  return out;
}

}  // namespace grader

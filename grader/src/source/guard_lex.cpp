#include "source/guard_lex.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string_view>
#include <utility>

namespace grader {
namespace {

// Phase 1: the file's characters with every line end made '\n', each with
// its place in the file. A BOM is no character and takes no column (as GCC).
// Control characters other than a tab and a line end are refused wherever
// they stand: GCC and clang read them differently around a splice (clang
// takes "\\\n\r" for one line end where GCC sees two, and ends a splice at a
// NUL where GCC skips it), and no exercise needs one. A line ends in \n or
// \r\n; a lone \r is refused for the same reason.
struct Physical {
  std::string s;
  std::vector<std::pair<int, int>> at;
  std::vector<Lexed::Problem> problems;
};

std::string control_name(unsigned char c) {
  static const char hex[] = "0123456789ABCDEF";
  if (c == '\r') return "a carriage return (\\r) that does not end a line with \\n";
  if (c == 0) return "a NUL byte";
  return std::string("the control character 0x") + hex[c >> 4] + hex[c & 15];
}

Physical phase1(const std::string& text) {
  Physical p;
  size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  int line = 1, col = 1;
  for (; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool crlf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    if (((c < 0x20 && c != '\t' && c != '\n' && !crlf) || c == 0x7F) && p.problems.size() < 8)
      p.problems.push_back({line, col, control_name(c) + " is not allowed in an exercise: save the file as plain "
                                       "text with \\n or \\r\\n line ends"});
    const bool ends = text[i] == '\n' || text[i] == '\r';
    p.s += ends ? '\n' : text[i];
    p.at.push_back({line, col});
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;  // \r\n is one line end
    if (ends) ++line, col = 1;
    else ++col;
  }
  return p;
}

// The blanks GCC allows between a splice's backslash and its line end.
bool splice_blank(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\0'; }

// Phase 2: splices removed. logical[i] is physical[phys[i]].
struct Spliced {
  Physical p;
  std::string s;
  std::vector<size_t> phys;
};

Spliced phase2(Physical p) {
  Spliced r;
  for (size_t i = 0; i < p.s.size(); ++i) {
    if (p.s[i] == '\\') {
      size_t j = i + 1;
      while (j < p.s.size() && splice_blank(p.s[j])) ++j;
      if (j == p.s.size() || p.s[j] == '\n') {  // a backslash at the end of the file splices too
        i = j;
        continue;
      }
    }
    r.s += p.s[i];
    r.phys.push_back(i);
  }
  r.p = std::move(p);
  return r;
}

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool ident_char(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }
// What a raw string's delimiter may hold: C++'s basic characters but blanks,
// parentheses and backslash. Not $, @ or `, which are not basic characters:
// clang refuses them and ends the literal at the next quote, even lines later,
// where GCC reads on.
bool raw_delimiter_char(char c) {
  return c > 0x20 && c < 0x7F && c != '(' && c != ')' && c != '\\' && c != '"' && c != '$' && c != '@' && c != '`';
}
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

// C++'s punctuators, longest first (maximal munch), digraphs with what they stand for.
const std::vector<std::pair<const char*, const char*>>& punctuators() {
  static const std::vector<std::pair<const char*, const char*>> p = {
      {"%:%:", "##"}, {"...", "..."}, {"<=>", "<=>"}, {"->*", "->*"}, {"<<=", "<<="}, {">>=", ">>="},
      {"::", "::"},   {".*", ".*"},   {"->", "->"},   {"++", "++"},   {"--", "--"},   {"<<", "<<"},
      {">>", ">>"},   {"<=", "<="},   {">=", ">="},   {"==", "=="},   {"!=", "!="},   {"&&", "&&"},
      {"||", "||"},   {"+=", "+="},   {"-=", "-="},   {"*=", "*="},   {"/=", "/="},   {"%=", "%="},
      {"&=", "&="},   {"|=", "|="},   {"^=", "^="},   {"##", "##"},   {"<:", "["},    {":>", "]"},
      {"<%", "{"},    {"%>", "}"},    {"%:", "#"}};
  return p;
}

class Lexer {
 public:
  explicit Lexer(const std::string& text) : src_(phase2(phase1(text))), s_(src_.s) {
    out_.problems = src_.p.problems;
  }

  Lexed run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\n') {
        ++i_;
        first_ = after_newline_ = true;
        in_directive_ = false;
      } else if (splice_blank(c)) {
        ++i_;
      } else if (starts("/*")) {
        const size_t end = s_.find("*/", i_ + 2);
        const size_t stop = end == std::string::npos ? s_.size() : end + 2;
        if (std::find(s_.begin() + i_, s_.begin() + stop, '\n') != s_.begin() + stop) after_newline_ = true;
        i_ = stop;
      } else if (starts("//")) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        token();
      }
    }
    return std::move(out_);
  }

 private:
  bool starts(const char* p) const { return s_.compare(i_, std::strlen(p), p) == 0; }
  size_t line_end(size_t from) const { return std::min(s_.find('\n', from), s_.size()); }

  std::pair<int, int> where(size_t logical) const {
    if (s_.empty()) return {1, 1};
    return src_.p.at[src_.phys[std::min(logical, s_.size() - 1)]];
  }

  void problem(size_t at, const std::string& what) {
    const auto [line, col] = where(at);
    out_.problems.push_back({line, col, what});
  }

  void emit(Token::Kind kind, size_t start, std::string text) {
    const auto [line, col] = where(start);
    const bool opens = first_ && kind == Token::Punct && text == "#";
    if (opens) in_directive_ = true, directive_tokens_ = 0;
    out_.tokens.push_back({kind, std::move(text), line, col, first_, after_newline_, in_directive_});
    if (in_directive_) ++directive_tokens_;
    first_ = after_newline_ = false;
  }

  // #include, #include_next and #import read <...> and "..." as header names.
  bool header_expected() const {
    if (!in_directive_ || directive_tokens_ != 2) return false;
    const std::string& name = out_.tokens.back().text;
    return name == "include" || name == "include_next" || name == "import" || name == "embed";
  }

  void token() {
    const size_t start = i_;
    const char c = s_[i_];
    if (header_expected() && (c == '<' || c == '"')) {
      const size_t end = s_.find(c == '<' ? '>' : '"', i_ + 1);
      if (end < line_end(i_)) {
        i_ = end + 1;
        return emit(Token::Header, start, s_.substr(start, i_ - start));
      }
    }
    if (digit(c) || (c == '.' && i_ + 1 < s_.size() && digit(s_[i_ + 1]))) return number();
    if (ident_start(c)) return word();
    if (c == '"' || c == '\'') return quoted(start);
    for (const auto& [spelling, means] : punctuators()) {
      if (!starts(spelling)) continue;
      // C++11: "<::" not followed by ':' or '>' is '<' then "::" (std::vector<::T>).
      if (std::strcmp(spelling, "<:") == 0 && starts("<::") && !starts("<:::") && !starts("<::>")) break;
      i_ += std::strlen(spelling);
      return emit(Token::Punct, start, means);
    }
    ++i_;
    if (static_cast<unsigned char>(c) >= 0x80)  // the rest of a UTF-8 sequence
      while (i_ < s_.size() && (static_cast<unsigned char>(s_[i_]) & 0xC0) == 0x80) ++i_;
    emit(std::strchr("()[]{}<>;,.?:~!+-*/%^&|=#", c) ? Token::Punct : Token::Other, start,
         s_.substr(start, i_ - start));
  }

  // A pp-number ([lex.ppnumber]): a digit separator only before a digit,
  // letter or _ (else the quote opens a character literal, for GCC and clang
  // alike). Where the two compilers end a number in different places, the
  // number is refused: a $ in it (clang ends the number there, GCC does not)
  // and p+ or p- in one that is not hexadecimal (clang ends it before the
  // sign). A quote the guard took for the start of a literal could otherwise
  // hide the rest of the line from it.
  void number() {
    const size_t start = i_;
    bool dollar = false, sign_after_p = false;
    for (++i_; i_ < s_.size(); ++i_) {
      const char d = s_[i_], prev = s_[i_ - 1];
      const bool next_alnum = i_ + 1 < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_ + 1])) ||
                                                     s_[i_ + 1] == '_' || s_[i_ + 1] == '$');
      if (d == '\'') {
        // Two quotes in a row: GCC reads on through both (and complains),
        // clang ends the number before them.
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '\'')
          problem(start, "adjacent digit separators (`''`) after a number are read differently by GCC and clang");
        if (!next_alnum) break;
        continue;
      }
      if (ident_char(d) || (d == '.' && prev != '\'')) {
        dollar = dollar || d == '$';
        continue;
      }
      if ((d == '+' || d == '-') && std::strchr("eEpP", prev)) {
        sign_after_p = sign_after_p || prev == 'p' || prev == 'P';
        continue;
      }
      break;
    }
    const std::string text = s_.substr(start, i_ - start);
    const bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (dollar || (sign_after_p && !hex))
      problem(start, "the number `" + text + "` is written in a way GCC and clang read differently (" +
                         (dollar ? "a $ in a number" : "p+ or p- after a number that is not hexadecimal") +
                         "): write it plainly");
    emit(Token::Number, start, text);
  }

  void word() {
    const size_t start = i_;
    while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
    const std::string w = s_.substr(start, i_ - start);
    const char next = i_ < s_.size() ? s_[i_] : '\0';
    static const std::array<const char*, 4> prefixes = {"u8", "u", "U", "L"};
    static const std::array<const char*, 5> raw = {"R", "u8R", "uR", "UR", "LR"};
    if (next == '"' && std::find(raw.begin(), raw.end(), w) != raw.end()) return raw_string(start);
    if ((next == '"' || next == '\'') && std::find(prefixes.begin(), prefixes.end(), w) != prefixes.end())
      return quoted(start);
    emit(Token::Ident, start, w);
  }

  // "..." or '...' from the opening quote at i_ (a prefix may start at `start`).
  void quoted(size_t start) {
    const char q = s_[i_];
    size_t j = i_ + 1;
    // A backslash escapes the next character, never a line end: the literal
    // ends with its line for GCC and clang alike.
    for (; j < s_.size() && s_[j] != q && s_[j] != '\n'; ++j)
      if (s_[j] == '\\' && j + 1 < s_.size() && s_[j + 1] != '\n') ++j;
    if (j >= s_.size() || s_[j] != q) {  // unterminated: GCC makes the rest of the line one token
      // Refused: what follows on the line is read differently by the two
      // compilers and the guard (a splice left a backslash before the line end).
      problem(start, "a string or character literal that does not end on its line");
      i_ = line_end(i_);
      return emit(Token::Other, start, s_.substr(start, i_ - start));
    }
    i_ = j + 1;
    emit(Token::Literal, start, s_.substr(start, i_ - start));
    suffix();
  }

  // A user-defined literal's suffix ("abc"_x). GCC takes it into the literal
  // unless it names a macro, when it is a word of its own; as its own token
  // the rules check it either way. Touching another literal, it would be
  // read differently in the two cases ("x"R"(...)"): that is refused.
  void suffix() {
    if (i_ >= s_.size() || !ident_start(s_[i_])) return;
    const size_t start = i_;
    while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && s_[start] != '_')
      problem(start, "a literal directly followed by another literal's prefix (\"x\"R\"(...)\") is read two ways "
                     "by the compiler; put a space between them");
    emit(Token::Ident, start, s_.substr(start, i_ - start));
  }

  // R"delim(...)delim" from the quote at i_. The body is read in the file's
  // own characters: GCC reverts splices there.
  void raw_string(size_t start) {
    const std::string& p = src_.p.s;
    const size_t quote = src_.phys[i_];
    size_t open = quote + 1;
    while (open < p.size() && open - quote - 1 < 16 && p[open] != '(' && raw_delimiter_char(p[open])) ++open;
    if (open >= p.size() || p[open] != '(') {
      problem(start, "malformed raw string literal: its delimiter must be up to 16 plain characters, then '('");
      i_ = line_end(i_);
      return emit(Token::Other, start, s_.substr(start, i_ - start));
    }
    const std::string close = ")" + p.substr(quote + 1, open - quote - 1) + "\"";
    // In a directive GCC ends the raw string with the (spliced) line, an
    // error, and reads the lines after it as code; elsewhere it runs on.
    const size_t eol = line_end(i_), limit = in_directive_ && eol < s_.size() ? src_.phys[eol] : p.size();
    const size_t end = std::string_view(p).substr(0, limit).find(close, open + 1);
    if (end == std::string::npos && in_directive_ && limit < p.size()) {
      problem(start, "a raw string literal may not span lines in a directive (#define)");
      i_ = eol;
      return emit(Token::Other, start, s_.substr(start, i_ - start));
    }
    if (end == std::string::npos) {
      problem(start, "unterminated raw string literal");
      i_ = s_.size();
      return emit(Token::Other, start, s_.substr(start));
    }
    const size_t after = end + close.size();
    i_ = std::lower_bound(src_.phys.begin(), src_.phys.end(), after) - src_.phys.begin();
    emit(Token::Literal, start, p.substr(src_.phys[start], after - src_.phys[start]));
    suffix();
  }

  Spliced src_;
  const std::string& s_;
  size_t i_ = 0;
  Lexed out_;
  bool first_ = true, after_newline_ = true, in_directive_ = false;
  int directive_tokens_ = 0;
};

}  // namespace

Lexed lex(const std::string& text) { return Lexer(text).run(); }

}  // namespace grader

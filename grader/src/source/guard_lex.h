// The student's file cut into preprocessing tokens the way GCC cuts it
// (translation phases 1 to 3), so that the guard's rules see the words the
// compiler will see: a UTF-8 BOM is dropped; \n and \r\n end a line (a lone
// \r, a NUL and every other control character but a tab are refused: GCC and
// clang read them in different ways); a backslash, blanks and a line end splice two lines (GCC accepts the
// blanks with a warning), except inside a raw string, where GCC reverts the
// splice; comments are blanks, a // comment continued by a splice included;
// digraphs are read as the tokens they stand for. Trigraphs are not: the
// grader compiles with -std=c++20 (c++17 against LibTorch), where GCC ignores
// them (only -std=c++98/11/14 or -trigraphs turn them on).
#pragma once
#include <string>
#include <vector>

namespace grader {

struct Token {
  enum Kind { Ident, Number, Literal, Header, Punct, Other };
  Kind kind;
  std::string text;   // after splicing; a digraph as what it stands for ("%:" is "#")
  int line, col;      // where its first character is in the file, from 1; columns count bytes
  bool first;         // the first token of its line, as GCC reads lines (a directive may start here)
  bool after_newline; // a line end (a comment's included) comes between this token and the one before
  bool in_directive;  // part of a directive's line
};

struct Lexed {
  std::vector<Token> tokens;
  // What the lexer itself refuses: malformed raw strings, which GCC reads in
  // ways that depend on where they are, and literals it reads two ways.
  struct Problem {
    int line, col;
    std::string what;
  };
  std::vector<Problem> problems;
};

// Cuts `text` into tokens.
Lexed lex(const std::string& text);

}  // namespace grader

#include "source/python_habits.h"

#include <algorithm>
#include <set>
#include <utility>

#include "source/guard_lex.h"

namespace grader {
namespace {

// What a Python attribute is in LibTorch's C++: a method to call.
struct Attribute {
  const char* name;
  const char* read;    // reading it
  const char* assign;  // assigning to it ("" when Python cannot either)
};
constexpr Attribute kAttributes[] = {
    {"requires_grad", "requires_grad is a method in C++: x.requires_grad() reads it",
     "requires_grad is a method in C++: x.requires_grad_(true) turns it on (x.requires_grad() reads it)"},
    {"grad", "grad is a method in C++: x.grad() (an undefined tensor until a backward fills it)",
     "x.grad() is a method in C++: clear a gradient with x.grad().zero_(), or x.mutable_grad().reset()"},
    {"is_leaf", "is_leaf is a method in C++: x.is_leaf()", ""},
    {"grad_fn", "grad_fn is a method in C++: x.grad_fn(), and x.grad_fn()->name() for its name", ""},
    {"retains_grad", "retains_grad is a method in C++: x.retains_grad()", ""},
    {"shape", "C++ has no shape attribute: x.sizes() (and x.size(0) for one dimension)", ""},
    {"data", "data is a method in C++: x.data() (or x.detach(), which autograd tracks)", ""},
    {"_version", "the version counter is a method in C++: x._version()", ""},
};

// What a keyword argument is in LibTorch's C++.
struct Keyword {
  const char* name;
  const char* hint;
};
constexpr Keyword kKeywords[] = {
    {"requires_grad", "C++ has no keyword arguments: torch::tensor(-2.0, torch::requires_grad()), or "
                      "x.requires_grad_(true) on a tensor you have"},
    {"retain_graph", "C++ has no keyword arguments: f.backward({}, /*retain_graph=*/true)"},
    {"create_graph", "C++ has no keyword arguments: f.backward({}, /*retain_graph=*/{}, /*create_graph=*/true)"},
    {"dtype", "C++ has no keyword arguments: torch::tensor(1.0, torch::dtype(torch::kFloat64)), or x.to(torch::kFloat64)"},
    {"dim", "C++ has no keyword arguments: pass the dimension by position, x.sum(/*dim=*/0)"},
    {"keepdim", "C++ has no keyword arguments: x.sum(/*dim=*/0, /*keepdim=*/true)"},
    {"allow_unused", "C++ has no keyword arguments: torch::autograd::grad({y}, {x}, {}, {}, false, /*allow_unused=*/true)"},
};

constexpr const char* kPower = "C++ has no ** operator: x.pow(2) (or torch::pow(x, 2))";
constexpr const char* kTorchDot = "C++ reaches into a namespace with ::, not a dot: torch::tensor(...), torch::ones(...)";
constexpr const char* kBoolean = "C++ spells True and False in lower case: true, false";
constexpr const char* kNone =
    "C++ has no None: an empty tensor is torch::Tensor(), and x.grad().defined() tells whether a gradient is there";
constexpr const char* kPrint = "C++ has no print(): std::cout << x << std::endl;";

bool is(const Token& t, const char* text) { return t.text == text; }

// The types before `**` in a declaration (`float** p`): no power there.
bool type_word(const std::string& w) {
  static const std::set<std::string> types = {"int", "float", "double", "char", "auto", "void", "const", "long",
                                              "short", "unsigned", "bool", "signed"};
  return types.count(w) > 0;
}

// The hints for one line's tokens, [from, to) in the file's tokens.
void habits_on_line(const std::vector<Token>& tk, size_t from, size_t to, std::vector<std::string>& out) {
  auto say = [&](const std::string& h) {
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  };
  // Whether the innermost open bracket is a parenthesis: a call's arguments.
  std::vector<std::string> open;
  for (size_t i = from; i < to; ++i) {
    const Token& t = tk[i];
    const Token* next = i + 1 < tk.size() ? &tk[i + 1] : nullptr;
    const Token* prev = i > 0 ? &tk[i - 1] : nullptr;
    if (is(t, "(") || is(t, "[") || is(t, "{")) open.push_back(t.text);
    if ((is(t, ")") || is(t, "]") || is(t, "}")) && !open.empty()) open.pop_back();
    if (t.kind != Token::Ident && t.kind != Token::Punct) continue;
    if (t.kind == Token::Ident && (is(t, "True") || is(t, "False"))) say(kBoolean);
    if (t.kind == Token::Ident && is(t, "None")) say(kNone);
    if (t.kind == Token::Ident && is(t, "print") && next && is(*next, "(")) say(kPrint);
    if (t.kind == Token::Ident && is(t, "torch") && next && is(*next, ".")) say(kTorchDot);
    // x.grad, x.requires_grad = true: an attribute where C++ has a method.
    if ((is(t, ".") || is(t, "->")) && next && next->kind == Token::Ident) {
      const Token* after = i + 2 < tk.size() ? &tk[i + 2] : nullptr;
      if (!after || !is(*after, "("))
        for (const Attribute& a : kAttributes)
          if (next->text == a.name) say(after && is(*after, "=") && *a.assign ? a.assign : a.read);
    }
    // x**2: two stars side by side between operands.
    if (is(t, "*") && next && is(*next, "*") && next->line == t.line && next->col == t.col + 1 && prev &&
        (prev->kind == Token::Number || is(*prev, ")") || is(*prev, "]") ||
         (prev->kind == Token::Ident && !type_word(prev->text))))
      say(kPower);
    // f(requires_grad=true): a keyword argument.
    if (t.kind == Token::Ident && !open.empty() && open.back() == "(" && prev && (is(*prev, "(") || is(*prev, ",")) &&
        next && is(*next, "=")) {
      const Keyword* k = nullptr;
      for (const Keyword& kw : kKeywords) k = t.text == kw.name ? &kw : k;
      say(k ? k->hint : "C++ has no keyword arguments: pass " + t.text + " by position (a comment may name it: /*" +
                            t.text + "=*/value)");
    }
  }
}

}  // namespace

std::vector<HabitHint> python_habits(const std::string& source, const std::vector<int>& error_lines) {
  const std::vector<Token> tokens = lex(source).tokens;
  std::set<int> lines(error_lines.begin(), error_lines.end());
  std::vector<HabitHint> out;
  for (int line : lines) {
    size_t from = 0;
    while (from < tokens.size() && tokens[from].line < line) ++from;
    size_t to = from;
    while (to < tokens.size() && tokens[to].line == line) ++to;
    std::vector<std::string> hints;
    habits_on_line(tokens, from, to, hints);
    for (auto& h : hints) out.push_back({line, std::move(h)});
  }
  return out;
}

std::string with_cpp_spelling(const std::string& message) {
  static const std::pair<const char*, const char*> kSpellings[] = {
      {"retain_graph=True", "f.backward({}, /*retain_graph=*/true)"},
      {"create_graph=True", "f.backward({}, /*retain_graph=*/{}, /*create_graph=*/true)"},
      {"allow_unused=True", "torch::autograd::grad(outputs, inputs, {}, {}, false, /*allow_unused=*/true)"},
      {"set_detect_anomaly(True)", "torch::autograd::DetectAnomalyGuard guard;"},
      {"requires_grad=True", "x.requires_grad_(true)"},
      {"requires_grad=False", "x.requires_grad_(false)"},
      {"The .grad attribute", "x.grad()"},
  };
  std::string said;
  for (const auto& [python, cpp] : kSpellings)
    if (message.find(python) != std::string::npos && said.find(cpp) == std::string::npos)
      said += std::string(said.empty() ? "" : "; ") + cpp;
  if (said.empty() || message.find("[in C++: ") != std::string::npos) return message;
  return message + " [in C++: " + said + "]";
}

}  // namespace grader

#include "blanks.h"

#include <sstream>

namespace grader {
namespace {

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

std::vector<Blank> find_blanks(const std::string& source) {
  std::vector<Blank> out;
  std::istringstream in(source);
  bool inside = false;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string t = trimmed(line);
    if (t.rfind("//", 0) == 0 && t.find("START CODE HERE") != std::string::npos) {
      out.push_back({n, 0, {}, {}});
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (t.rfind("//", 0) == 0 && t.find("END CODE HERE") != std::string::npos) {
      out.back().end_line = n;
      inside = false;
      continue;
    }
    if (t.empty()) continue;
    if (t.rfind("//", 0) == 0) {
      out.back().prompts.push_back({n, trimmed(t.substr(2))});
      continue;
    }
    out.back().code.push_back(t);  // code (a block comment counts as code: it was written)
  }
  if (inside) out.back().code.push_back("");  // the END marker removed: the student edited it
  return out;
}

bool untouched(const std::vector<Blank>& blanks, const std::vector<Blank>& starter) {
  if (blanks.empty() || (!starter.empty() && starter.size() != blanks.size())) return false;
  for (size_t i = 0; i < blanks.size(); ++i)
    if (blanks[i].code != (starter.empty() ? std::vector<std::string>{} : starter[i].code)) return false;
  return true;
}

}  // namespace grader

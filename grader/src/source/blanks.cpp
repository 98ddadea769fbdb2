#include "source/blanks.h"

#include <algorithm>
#include <sstream>

#include "source/guard_lex.h"
#include "common/sha256.h"

namespace grader {
namespace {

using json = nlohmann::ordered_json;

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

bool marker(const std::string& t, const char* words) {
  return t.rfind("//", 0) == 0 && t.find(words) != std::string::npos;
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
    if (marker(t, "START CODE HERE")) {
      out.push_back({n, 0, "", {}});
      inside = true;
    } else if (inside && marker(t, "END CODE HERE")) {
      out.back().end_line = n;
      inside = false;
    } else if (inside && t.rfind("//", 0) == 0) {
      out.back().comments.push_back({n, trimmed(t.substr(2))});
    }
  }
  // The code is read the compiler's way: comments of either kind and the
  // layout are nothing, so a line commented out or re-indented is not code.
  for (const Token& tok : lex(source).tokens)
    for (Blank& b : out)
      if (tok.line > b.start_line && (b.end_line == 0 || tok.line < b.end_line)) {
        b.code += (b.code.empty() ? "" : " ") + tok.text;
        break;
      }
  return out;
}

json starter_record(const std::string& source) {
  json blanks = json::array();
  for (const Blank& b : find_blanks(source)) {
    json prompts = json::array();
    for (const auto& c : b.comments) prompts.push_back(c.second);
    blanks.push_back({{"code", b.code}, {"prompts", prompts}});
  }
  return {{"sha256", sha256_hex(source)}, {"blanks", blanks}};
}

std::optional<StarterBlanks> read_starter_record(const json& record) {
  if (!record.is_object() || !record.contains("blanks") || !record["blanks"].is_array()) return std::nullopt;
  StarterBlanks s;
  for (const json& b : record["blanks"]) {
    if (!b.is_object() || !b.contains("code") || !b["code"].is_string()) return std::nullopt;
    StarterBlanks::One one{b["code"].get<std::string>(), {}};
    for (const json& p : b.value("prompts", json::array()))
      if (p.is_string()) one.prompts.push_back(p.get<std::string>());
    s.blanks.push_back(std::move(one));
  }
  return s;
}

std::vector<bool> empty_blanks(const std::vector<Blank>& blanks, const StarterBlanks* starter) {
  const bool paired = starter && starter->blanks.size() == blanks.size();
  std::vector<bool> out;
  for (size_t i = 0; i < blanks.size(); ++i) {
    const Blank& b = blanks[i];
    // Without its END marker a blank runs to the end of the file: edited.
    out.push_back(b.end_line != 0 && (b.code.empty() || (paired && b.code == starter->blanks[i].code)));
  }
  return out;
}

bool untouched(const std::vector<Blank>& blanks, const StarterBlanks* starter) {
  if (blanks.empty() || (starter && starter->blanks.size() != blanks.size())) return false;
  const std::vector<bool> empty = empty_blanks(blanks, starter);
  return std::all_of(empty.begin(), empty.end(), [](bool e) { return e; });
}

std::vector<std::pair<int, std::string>> prompts(const Blank& blank, const StarterBlanks::One* starter) {
  if (!starter) return blank.comments;
  std::vector<std::pair<int, std::string>> out;
  for (const std::string& p : starter->prompts) {
    int line = blank.start_line + 1;  // where it was, when the student removed the comment
    for (const auto& [at, text] : blank.comments)
      if (text == p) {
        line = at;
        break;
      }
    out.push_back({line, p});
  }
  return out;
}

}  // namespace grader

#include "judge/variants.h"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <regex>
#include <sstream>

#include "common/sha256.h"

namespace grader {
namespace {

const char* const kMarker = "// gradlab variant ";

long product(const Rubric& r) {
  long p = 1;
  for (const auto& [_, values] : r.variants.given) {
    p *= static_cast<long>(values.size());
    if (p > (1L << 40)) return 1L << 40;  // more than any class needs
  }
  return p;
}

// A step through 1..n that visits each once, far from 1 so that neighbouring
// variants differ in more than their last number.
long stride(long n) {
  long s = std::max(1L, static_cast<long>(std::llround(double(n) * 0.618)));
  while (std::gcd(s, n) != 1) ++s;
  return s;
}

// The values a tensor's fact holds: its own, or its gradient's.
const json* fact_values(const json& facts, const std::string& what, const std::string& tensor) {
  if (!facts.is_object() || !facts.contains("tensors") || !facts["tensors"].contains(tensor)) return nullptr;
  const json& t = facts["tensors"][tensor];
  const json* holder = what == "grad" ? (t.contains("grad") && t["grad"].is_object() ? &t["grad"] : nullptr) : &t;
  if (!holder || !holder->contains("values") || !(*holder)["values"].is_array()) return nullptr;
  return &(*holder)["values"];
}

std::string values_text(const json& values) {
  if (values.size() == 1 && values[0].is_number()) return number_text(values[0].get<double>());
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + (values[i].is_number() ? number_text(values[i].get<double>()) : values[i].dump());
  return s + "]";
}

// A template as a pattern for the lines it describes, at any variant.
std::regex line_pattern(const std::string& tmpl) {
  static const std::regex ph(R"(\$\{[^}]*\})");
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  std::string out;
  size_t from = 0;
  for (std::sregex_iterator it(tmpl.begin(), tmpl.end(), ph), end; it != end; ++it) {
    out += std::regex_replace(tmpl.substr(from, it->position() - from), special, "\\$&");
    out += R"((?:-?[0-9][0-9.]*(?:e[-+]?[0-9]+)?|\[[^\]]*\]|-?nan|-?inf))";
    from = it->position() + it->length();
  }
  out += std::regex_replace(tmpl.substr(from), special, "\\$&");
  return std::regex(out);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

long variant_capacity(const Rubric& rubric) { return rubric.variants.empty() ? 0 : product(rubric) - 1; }

json given_at(const Rubric& rubric, int v) {
  json out = json::object();
  if (v < 0 || (v > 0 && v > variant_capacity(rubric)))
    throw VariantError(rubric.exercise + " has no variant " + std::to_string(v) + ": its numbers allow " +
                       std::to_string(variant_capacity(rubric)) + " besides the lesson's");
  const long n = variant_capacity(rubric);
  long index = v == 0 ? 0 : 1 + (static_cast<long>(v - 1) * stride(n)) % n;
  for (const auto& [name, values] : rubric.variants.given) {  // mixed radix, the first number fastest
    const long size = static_cast<long>(values.size());
    out[name] = values[static_cast<size_t>(index % size)];
    index /= size;
  }
  return out;
}

int variant_for(const std::string& who, int count) {
  if (count <= 0) return 0;
  const std::string h = sha256_hex("gradlab variant of " + who).substr(0, 15);
  return 1 + static_cast<int>(std::stoull(h, nullptr, 16) % static_cast<unsigned long long>(count));
}

std::string number_text(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::round(v) && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);  // never "-0"
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string given_text(const json& given) {
  std::string s;
  for (const auto& [name, v] : given.items()) s += (s.empty() ? "" : ", ") + name + " = " + number_text(v.get<double>());
  return s;
}

std::string fill(const std::string& text, const json& given, const json& facts) {
  static const std::regex ph(R"(\$\{([^}:]*)(?::([^}]*))?\})");
  std::string out;
  size_t from = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), ph), end; it != end; ++it) {
    out += text.substr(from, it->position() - from);
    from = it->position() + it->length();
    const std::string head = (*it)[1], tensor = (*it)[2];
    if (!(*it)[2].matched) {
      if (!given.contains(head)) throw VariantError("\"" + it->str() + "\": the variant gives no number \"" + head + "\"");
      out += number_text(given[head].get<double>());
      continue;
    }
    const json* values = fact_values(facts, head, tensor);
    if (!values || values->empty())
      throw VariantError("\"" + it->str() + "\": the reference's facts hold no " +
                         (head == "grad" ? "gradient of " : "values of ") + tensor);
    out += values_text(*values);
  }
  return out + text.substr(from);
}

Rubric filled(const Rubric& rubric, const json& given, const json& facts) {
  Rubric r = rubric;
  r.title = fill(r.title, given, facts);
  for (Check& c : r.checks) {
    c.name = fill(c.name, given, facts);
    c.hint = fill(c.hint, given, facts);
  }
  for (Diagnosis& d : r.diagnoses) d.hint = fill(d.hint, given, facts);
  return r;
}

std::string starter_at(const std::string& source, const Rubric& rubric, int v, const json& given, const json& facts) {
  std::vector<std::string> lines = split_lines(source);
  if (!lines.empty() && lines[0].rfind(kMarker, 0) == 0) lines.erase(lines.begin());
  for (const std::string& tmpl : rubric.variants.starter) {
    const std::regex pattern = line_pattern(tmpl);
    size_t found = 0;
    for (auto& line : lines)
      if (std::regex_match(line, pattern)) {
        line = fill(tmpl, given, facts);
        ++found;
      }
    if (found != 1)
      throw VariantError(rubric.path + ": variants.starter line \"" + tmpl + "\" matches " + std::to_string(found) +
                         " lines of the starter, not one");
  }
  std::string out;
  if (v > 0)
    out = kMarker + std::to_string(v) + ": the numbers in this file are yours, not the lesson's. Keep this line.\n";
  for (const auto& l : lines) out += l + "\n";
  return out;
}

int variant_in(const std::string& source) {
  if (source.rfind(kMarker, 0) != 0) return 0;
  const size_t at = std::char_traits<char>::length(kMarker);
  size_t end = at;
  while (end < source.size() && end < at + 6 && std::isdigit(static_cast<unsigned char>(source[end]))) ++end;
  return end == at ? 0 : std::stoi(source.substr(at, end - at));
}

}  // namespace grader

#include "reports/escape.h"

#include <cstdio>
#include <cstdlib>

namespace reports {

std::string valid_utf8(std::string_view s) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && len > 1) {
      // Reject overlong forms, surrogates and code points past U+10FFFF.
      uint32_t cp = c & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      i += 1;
    }
  }
  return out;
}

namespace {

// Decodes the UTF-8 sequence at s[i] (s is valid UTF-8); sets len.
uint32_t code_point(std::string_view s, size_t i, size_t& len) {
  const auto c = static_cast<unsigned char>(s[i]);
  len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
  uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

// What can move the cursor, recolour, rewrite or reorder what a reader sees:
// C0 controls and DEL, C1 controls (U+0080-U+009F, 8-bit CSI included), and
// the bidirectional overrides, embeddings, isolates and marks.
bool is_control(uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string visible(std::string_view s, bool multiline) {
  const std::string text = valid_utf8(s);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0, len = 1; i < text.size(); i += len) {
    const uint32_t cp = code_point(text, i, len);
    if (!is_control(cp) || (multiline && (cp == '\n' || cp == '\t'))) {
      out.append(text, i, len);
      continue;
    }
    char buf[16];
    if (cp == '\n') std::snprintf(buf, sizeof buf, "\\n");
    else if (cp == '\t') std::snprintf(buf, sizeof buf, "\\t");
    else if (cp == '\r') std::snprintf(buf, sizeof buf, "\\r");
    else if (cp <= 0xFF) std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
    else std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
    out += buf;
  }
  return out;
}

std::string xml_text(std::string_view s) {
  // After visible() no character XML 1.0 forbids is left (only tab and newline below U+0020).
  const std::string text = visible(s);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string json_text(const grader::json& j, int indent) {
  return j.dump(indent, ' ', false, grader::json::error_handler_t::replace);
}

std::string csv_field(std::string_view s) {
  // A spreadsheet skips leading blanks before it looks for a formula, and
  // reads a leading tab or CR as one (OWASP's list): judge the first
  // non-blank character of the raw text, before visible() rewrites blanks.
  const size_t first = s.find_first_not_of(" \t\r\n");
  const std::string_view trimmed = first == std::string_view::npos ? std::string_view() : s.substr(first);
  const size_t last = trimmed.find_last_not_of(" \t\r\n");
  const std::string_view core = last == std::string_view::npos ? trimmed : trimmed.substr(0, last + 1);
  // A plain number ("-1.5", not "-1+2") is a value, not a formula.
  bool number = !core.empty() && core.size() == s.size() && core.find_first_not_of("0123456789.-+eE") == std::string_view::npos;
  if (number) {
    const std::string n(core);
    char* end = nullptr;
    std::strtod(n.c_str(), &end);
    number = end == n.c_str() + n.size();
  }
  const bool formula = !trimmed.empty() && std::string_view("=+-@").find(trimmed[0]) != std::string_view::npos;
  const bool control_start = !s.empty() && (s[0] == '\t' || s[0] == '\r');
  std::string v = visible(s, false);
  if ((formula && !number) || control_start) v = "'" + v;
  const bool quote = v.find_first_of(",;\"\r\n") != std::string::npos || (!v.empty() && (v.front() == ' ' || v.back() == ' '));
  if (!quote) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string without_blanks(std::string_view line) {
  std::string out;
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r') out += c;
  return out;
}

std::string base64(const std::string& in) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    out += i + 1 < in.size() ? abc[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? abc[v & 63] : '=';
  }
  return out;
}

}  // namespace reports

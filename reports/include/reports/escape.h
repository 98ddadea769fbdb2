// Escaping, in one place, for every format the reports write. Everything in
// a report that came from a submission (its output, its error messages, the
// compiler's diagnostics about it) passes through here before it lands in a
// JSON, XML or HTML file.
#pragma once
#include <string>
#include <string_view>

#include "reports/result.h"

namespace reports {

// Valid UTF-8: each byte that does not start or continue a well-formed
// sequence becomes U+FFFD. Student output is arbitrary bytes.
std::string valid_utf8(std::string_view s);

// Text as it may reach a terminal or a report: valid UTF-8, and every
// character that could move the cursor, recolour or rewrite what is shown
// (C0 controls, DEL, C1 controls, bidi overrides and isolates) written out
// as an escape a reader can see: "\x1b", "\r", "\u202E". With `multiline`,
// newline and tab stay as they are (program output keeps its lines);
// without, they become "\n" and "\t" (a name, a CSV cell, one log line).
// The one function every writer and the console use for submitted text.
std::string visible(std::string_view s, bool multiline = true);

// Text for XML 1.0 and HTML, in element content or in a quoted attribute:
// visible(s), then & < > " ' escaped. No character XML 1.0 forbids is left,
// so a student's stray \0 or ANSI escape cannot make the file unreadable.
std::string xml_text(std::string_view s);

// One CSV field (RFC 4180), made visible on one line: quoted when it holds
// a comma, semicolon, quote or surrounding space, quotes doubled. Text that
// a spreadsheet would run as a formula (its first non-blank character is
// = + - @, or it starts with a tab or CR, and it is not a number) gets a
// leading apostrophe, so a student folder named " =cmd()" stays text.
std::string csv_field(std::string_view s);

// A JSON document as text: invalid UTF-8 in strings replaced instead of
// thrown on, `indent` spaces per level (-1: one line).
std::string json_text(const grader::json& j, int indent = 2);

// A line of code as the similarity check compares lines (grade batch
// --similarity removes the given ones, its side-by-side page marks the
// shared ones): blanks left out, so a reformatted line is the same line.
std::string without_blanks(std::string_view line);

// Bytes as base64 (RFC 4648, with padding): pictures inside pages and data: URIs.
std::string base64(const std::string& in);

}  // namespace reports

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

// Text for XML 1.0 and HTML, in element content or in a quoted attribute:
// & < > " ' escaped, invalid UTF-8 replaced, and the control characters XML
// forbids (all below U+0020 except tab, newline and carriage return) shown
// as U+FFFD, so a student's stray \0 cannot make the file unreadable.
std::string xml_text(std::string_view s);

// One CSV field (RFC 4180): quoted when it holds a comma, quote, newline or
// surrounding space, quotes doubled. Text that a spreadsheet would run as a
// formula (starting with = + - @ and not a number) gets a leading
// apostrophe, so a student folder named "=cmd()" stays text.
std::string csv_field(std::string_view s);

// A JSON document as text: invalid UTF-8 in strings replaced instead of
// thrown on, `indent` spaces per level (-1: one line).
std::string json_text(const grader::json& j, int indent = 2);

}  // namespace reports

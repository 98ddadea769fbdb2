#include "cohort/roster.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "common/files.h"

namespace grader {
namespace {

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// A name reduced to its letters and digits, lower case (ASCII; other bytes
// kept): "Doe, Jane" and Canvas's "doejane" meet.
std::string letters(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    if (std::isalnum(c) || c >= 0x80) out += static_cast<char>(std::tolower(c));
  return out;
}

// The spellings a roster name may take in an LMS's file names: as written,
// and with its last word first (Canvas's "lastfirst" of "Jane Doe").
std::vector<std::string> name_forms(const std::string& name) {
  std::vector<std::string> forms{letters(name)};
  const std::string t = trimmed(name);
  if (const size_t sp = t.find_last_of(' '); sp != std::string::npos && t.find(',') == std::string::npos)
    forms.push_back(letters(t.substr(sp + 1) + t.substr(0, sp)));
  if (const size_t comma = t.find(','); comma != std::string::npos)  // "Doe, Jane" -> "Jane Doe"
    forms.push_back(letters(t.substr(comma + 1) + t.substr(0, comma)));
  return forms;
}

bool same(const std::string& a, const std::string& b) { return !a.empty() && ascii_lower(trimmed(a)) == ascii_lower(trimmed(b)); }

}  // namespace

std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& what) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  size_t i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  int line = 1;
  bool any = false;  // the record has a field (even an empty one) or text
  auto end_record = [&] {
    row.push_back(field), field.clear();
    if (!(row.size() == 1 && row[0].empty())) rows.push_back(row);  // blank lines are no records
    row.clear(), any = false;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' && field.empty()) {
      const int started = line;
      for (++i;; ++i) {
        if (i >= text.size()) throw std::invalid_argument(what + ":" + std::to_string(started) + ": a quote is never closed");
        if (text[i] == '\n') ++line;
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"', ++i;
            continue;
          }
          ++i;
          break;
        }
        field += text[i];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n')
        throw std::invalid_argument(what + ":" + std::to_string(line) + ": text after a closing quote");
      any = true;
    } else if (c == ',') {
      row.push_back(field), field.clear(), ++i, any = true;
    } else if (c == '\r' || c == '\n') {
      i += c == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      ++line;
      end_record();
    } else {
      field += c, ++i, any = true;
    }
  }
  if (any || !field.empty()) end_record();
  return rows;
}

std::vector<reports::Identity> read_roster(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw std::invalid_argument("--roster: " + path + ": " + (errno && !S_ISDIR(st.st_mode) ? std::strerror(errno) : "not a regular file"));
  const auto text = read_file(path);
  if (!text) throw std::invalid_argument("--roster: cannot read " + path + ": " + std::strerror(errno));
  if (text->compare(0, 2, "\xFF\xFE") == 0 || text->compare(0, 2, "\xFE\xFF") == 0 || text->find('\0') != std::string::npos)
    throw std::invalid_argument("--roster: " + path + " is not UTF-8 text (UTF-16, as Excel's \"Unicode text\" saves?): "
                                "save it as \"CSV UTF-8\"");
  const auto rows = parse_csv(*text, path);
  if (rows.empty()) throw std::invalid_argument("--roster: " + path + " is empty; it needs a header line, such as id,name,login,email,section");
  // Header names, as each LMS spells its columns, to the field they fill.
  static const std::map<std::string, std::string> known{
      {"name", "name"},         {"full name", "name"},         {"student", "name"},
      {"student name", "name"}, {"first name", "first"},       {"last name", "last"},
      {"surname", "last"},      {"id", "id"},                  {"user id", "id"},
      {"sis user id", "sis"},   {"student id", "sis"},         {"student number", "sis"},
      {"sid", "sis"},           {"id number", "sis"},          {"sis_id", "sis"},          {"identifier", "sis"},
      {"login", "login"},       {"username", "login"},         {"sis login id", "login"},
      {"github_username", "login"}, {"github", "login"},       {"email", "email"},
      {"email address", "email"}, {"e-mail", "email"},         {"section", "section"},
      {"group", "section"}};
  std::map<std::string, size_t> col;
  for (size_t k = 0; k < rows[0].size(); ++k)
    if (auto it = known.find(ascii_lower(trimmed(rows[0][k]))); it != known.end() && !col.count(it->second))
      col[it->second] = k;
  if (!col.count("id") && !col.count("sis") && !col.count("login") && !col.count("email") && !col.count("name") &&
      !col.count("last"))
    throw std::invalid_argument(
        "--roster: " + path + ":1: no column names a student (its header is \"" + (rows[0].empty() ? "" : rows[0][0]) +
        (rows[0].size() > 1 ? ",…" : "") + "\"); give one of id, name, login, email, sis user id, as in " +
        "id,name,login,email,section" +
        (rows[0].size() == 1 && rows[0][0].find(';') != std::string::npos ? " (its columns are separated by ';': save it with ',')" : ""));
  std::vector<reports::Identity> out;
  for (size_t r = 1; r < rows.size(); ++r) {
    auto get = [&](const char* f) {
      auto it = col.find(f);
      return it == col.end() || it->second >= rows[r].size() ? std::string() : trimmed(rows[r][it->second]);
    };
    reports::Identity i;
    i.name = get("name");
    if (i.name.empty()) i.name = trimmed(get("first") + " " + get("last"));
    i.id = get("id"), i.sis_id = get("sis"), i.login = get("login"), i.email = get("email"), i.section = get("section");
    // GitHub Classroom's "identifier" is whatever the instructor listed, often an email.
    if (i.email.empty() && i.sis_id.find('@') != std::string::npos) std::swap(i.email, i.sis_id);
    // Moodle's grading worksheet: "Participant 123456", the number its download puts in each folder's name.
    static const std::regex participant(R"(Participant ([0-9]+))");
    if (std::smatch m; std::regex_match(i.sis_id, m, participant)) i.participant = m[1], i.sis_id.clear();
    // Canvas's export has a "Points Possible" row and its test student: no students.
    const std::string n = ascii_lower(i.name);
    if (n == "points possible" || n == "student, test" || n == "test student" ||
        (i.id + i.sis_id + i.login + i.email + i.name + i.participant).empty())
      continue;
    // The same row twice (section exports joined) is one student.
    if (std::any_of(out.begin(), out.end(), [&](const reports::Identity& o) {
          return o.name == i.name && o.id == i.id && o.sis_id == i.sis_id && o.login == i.login && o.email == i.email &&
                 o.participant == i.participant;
        }))
      continue;
    out.push_back(i);
  }
  return out;
}

std::optional<LmsColumn> lms_column(const std::string& path, const std::string& wanted) {
  const auto text = read_file(path);
  if (!text) return std::nullopt;
  const auto rows = parse_csv(*text, path);
  if (rows.empty()) return std::nullopt;
  static const std::regex canvas_name(R"(.+ \(\d+\))");
  std::vector<size_t> cols;
  for (size_t k = 0; k < rows[0].size(); ++k) {
    const std::string name = trimmed(rows[0][k]);
    if (wanted.empty() ? std::regex_match(name, canvas_name) : name == wanted) cols.push_back(k);
  }
  if (cols.size() != 1) return std::nullopt;
  LmsColumn c{trimmed(rows[0][cols[0]]), std::nullopt};
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].empty() || ascii_lower(trimmed(rows[r][0])) != "points possible" || cols[0] >= rows[r].size()) continue;
    const std::string v = trimmed(rows[r][cols[0]]);
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (!v.empty() && end && *end == '\0' && std::isfinite(d)) c.points_possible = d;
    break;
  }
  return c;
}

RosterMatch match_roster(const std::vector<reports::Identity>& roster, const reports::Identity& who,
                         const std::string& folder, const std::string& alias) {
  auto local = [](const std::string& email) { return email.substr(0, email.find('@')); };
  // Strongest first: what the LMS says of them, the folder's exact name, its
  // name in any case, then their name as the LMS spells it.
  const std::vector<std::function<bool(const reports::Identity&)>> tiers{
      [&](const reports::Identity& r) {
        return same(who.id, r.id) || same(who.sis_id, r.sis_id) || same(who.sis_id, r.id) || same(who.login, r.login) ||
               same(who.email, r.email) || same(who.participant, r.participant);
      },
      [&](const reports::Identity& r) {
        return !folder.empty() && (folder == r.login || folder == r.sis_id || folder == r.id || folder == r.email);
      },
      [&](const reports::Identity& r) {
        return same(r.login, folder) || same(r.sis_id, folder) || same(r.id, folder) || same(r.email, folder) ||
               (!r.email.empty() && same(local(r.email), folder));
      },
      [&](const reports::Identity& r) {
        const std::string mine = letters(alias.empty() ? folder : alias);
        const auto forms = name_forms(r.name);
        return !mine.empty() && std::find(forms.begin(), forms.end(), mine) != forms.end();
      }};
  RosterMatch m;
  for (size_t t = 0; t < tiers.size(); ++t) {
    std::vector<int> rows;
    for (size_t k = 0; k < roster.size(); ++k)
      if (tiers[t](roster[k])) rows.push_back(static_cast<int>(k));
    if (rows.empty()) continue;
    m.tier = static_cast<int>(t) + 1;
    if (rows.size() == 1) m.row = rows[0];
    else m.tied = rows;
    return m;
  }
  return m;
}

}  // namespace grader

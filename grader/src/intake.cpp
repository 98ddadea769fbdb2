#include "intake.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "files.h"
#include "layouts.h"
#include "roster.h"
#include "safe_dir.h"
#include "reports/escape.h"
#include "sha256.h"

namespace grader {
namespace {

constexpr size_t kMaxNameBytes = 80;
}  // namespace

std::string safe_name(std::string_view raw) {
  const std::string text = reports::valid_utf8(raw);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    const std::string ch = text.substr(i, len);
    i += len;
    if (out.size() + ch.size() > kMaxNameBytes) break;
    // visible() rewrites exactly the characters that can act on a reader.
    const bool bad = ch == "/" || ch == "\\" || ch == "\xEF\xBF\xBD" || reports::visible(ch, false) != ch;
    out += bad ? "_" : ch;
  }
  if (out.empty()) out = "_";
  if (std::string_view("-.=+@ ").find(out.front()) != std::string_view::npos) out.front() = '_';
  if (out.back() == ' ' || out.back() == '.') out.back() = '_';
  if (out != raw) out += "~" + sha256_hex(std::string(raw)).substr(0, 8);
  return out;
}

namespace {

// The name a roster row gives its student's folder and gradebook row.
std::string roster_key(const reports::Identity& r) {
  for (const std::string* f : {&r.login, &r.sis_id, &r.id, &r.email, &r.name})
    if (!f->empty()) return *f;
  return "_";
}

std::string joined(const std::vector<std::string>& folder, const std::string& name) {
  std::string s;
  for (const auto& f : folder) s += f + "/";
  return s + name;
}

// Fills what the roster lacks from what the LMS's download says.
reports::Identity merged(reports::Identity r, const reports::Identity& lms) {
  for (auto [mine, theirs] : {std::pair{&r.name, &lms.name}, {&r.id, &lms.id}, {&r.sis_id, &lms.sis_id},
                              {&r.login, &lms.login}, {&r.email, &lms.email}, {&r.participant, &lms.participant}})
    if (mine->empty()) *mine = *theirs;
  return r;
}

// The copy mark an LMS or a browser adds to a name's stem: "exercise3 (10)",
// Canvas's resubmission "exercise3-10". The stem without it, and its number
// (0: none, or too long to be one).
std::pair<std::string, long> without_copy_mark(const std::string& stem) {
  static const std::regex mark(R"((?: \(([0-9]+)\)|-([0-9]+))$)");
  std::smatch m;
  if (!std::regex_search(stem, m, mark)) return {stem, 0};
  const std::string digits = m[1].matched ? m[1].str() : m[2].str();
  return {stem.substr(0, static_cast<size_t>(m.position(0))), digits.size() <= 9 ? std::stol(digits) : 0};
}

// A file's copy number: "exercise3 (10).cpp" is 10, "exercise3.cpp" 0.
long copy_number(const std::string& name) {
  return without_copy_mark(name.substr(0, name.size() >= 4 ? name.size() - 4 : 0)).second;
}

// Whether `name` is to be graded for `exercise` rather than `held`. Where
// the LMS itself numbers a later upload of the same name (Moodle keeps
// "exercise3.cpp" and renames the fix "exercise3 (1).cpp"; Canvas's
// "-1"), the highest number is the latest. Elsewhere the canonical name
// comes first (a student who kept a browser's "(1)" copy beside it chose
// which to hand in), then the highest number; then the last by name.
bool later_copy(const std::string& name, const std::string& held, const std::string& exercise, bool lms_numbers) {
  const std::string canonical = exercise + ".cpp";
  if (!lms_numbers && held == canonical) return false;
  if (!lms_numbers && name == canonical) return true;
  const long a = copy_number(name), b = copy_number(held);
  return a != b ? a > b : name > held;
}

struct Student {
  std::string key;
  reports::Identity identity;
  const Submitter* from = nullptr;  // null: on the roster, nothing handed in
};

// Who is who. Each roster row goes to the submission that matches it best
// (match_roster's tiers; equals: the first), and is named by it. The rows
// nobody matched are students with nothing handed in. Last, the submissions
// on no row, named as their LMS names them: told apart from everyone above
// by the LMS's id, else by a hash of their entry, never by refusing one.
std::vector<Student> name_students(const LayoutPlan& plan, const IntakeOptions& o, std::vector<reports::IntakeNote>& notes) {
  const size_t n = plan.submitters.size();
  std::vector<int> row_of(n, -1);
  if (o.roster) {
    const auto& roster = *o.roster;
    std::vector<RosterMatch> m(n);
    std::map<int, size_t> best;  // row -> the submitter holding it
    for (size_t k = 0; k < n; ++k) {
      const Submitter& s = plan.submitters[k];
      m[k] = match_roster(roster, s.identity, s.folder, s.alias);
      if (m[k].row < 0) continue;
      auto [it, fresh] = best.emplace(m[k].row, k);
      if (!fresh && m[k].tier < m[it->second].tier) it->second = k;
    }
    for (const auto& [row, k] : best) row_of[k] = row;
    for (size_t k = 0; k < n; ++k) {
      const Submitter& s = plan.submitters[k];
      if (row_of[k] >= 0) continue;
      std::string why = "not on the roster";
      if (!m[k].tied.empty()) {
        why = "matches several students on the roster (";
        for (size_t i = 0; i < m[k].tied.size(); ++i)
          why += (i ? ", " : "") + roster_key(roster[size_t(m[k].tied[i])]);
        why += ")";
      } else if (m[k].row >= 0) {
        why = "would be " + roster_key(roster[size_t(m[k].row)]) + " on the roster, but " +
              plan.submitters[best[m[k].row]].folder + " matches them " +
              (m[k].tier == m[best[m[k].row]].tier ? "as well, and comes first" : "better");
      }
      notes.push_back({reports::visible(s.folder, false), why + ": graded as " + reports::visible(s.display, false) +
                                                              ", apart from the roster's students",
                       false});
    }
  }
  std::vector<Student> out;
  std::set<std::string> keys;
  auto take = [&](const std::vector<std::string>& candidates, Student st) {
    for (const auto& c : candidates)
      if (keys.insert(c).second) {
        st.key = c;
        out.push_back(std::move(st));
        return true;
      }
    return false;
  };
  for (size_t k = 0; k < n; ++k)
    if (row_of[k] >= 0) {
      const Submitter& s = plan.submitters[k];
      const auto& row = (*o.roster)[size_t(row_of[k])];
      take({safe_name(roster_key(row)), safe_name(roster_key(row) + "_" + s.tiebreak),
            safe_name(roster_key(row)) + "~" + sha256_hex(s.folder).substr(0, 8)},
           {"", merged(row, s.identity), &s});
    }
  if (o.roster)
    for (size_t r = 0; r < o.roster->size(); ++r)
      if (std::find(row_of.begin(), row_of.end(), static_cast<int>(r)) == row_of.end()) {
        const auto& row = (*o.roster)[r];
        take({safe_name(roster_key(row)), safe_name(roster_key(row)) + "~" + sha256_hex(std::to_string(r)).substr(0, 8)},
             {"", row, nullptr});
      }
  std::map<std::string, int> display_count;
  for (size_t k = 0; k < n; ++k) display_count[plan.submitters[k].display] += row_of[k] < 0;
  for (size_t k = 0; k < n; ++k) {
    if (row_of[k] >= 0) continue;
    const Submitter& s = plan.submitters[k];
    std::vector<std::string> names;
    if (display_count[s.display] == 1 || s.tiebreak.empty()) names.push_back(safe_name(s.display));
    if (!s.tiebreak.empty()) names.push_back(safe_name(s.display + "_" + s.tiebreak));
    names.push_back(safe_name(s.display) + "~" + sha256_hex(s.folder).substr(0, 8));
    if (!take(names, {"", s.identity, &s}))
      notes.push_back({reports::visible(s.folder, false), "not graded: no name for it is free", true});
  }
  return out;
}

}  // namespace

Intake take_submissions(const std::string& root, const std::vector<std::string>& exercises,
                        const std::function<bool(const std::string&)>& keep, const IntakeOptions& o) {
  Fd rootfd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootfd.fd < 0)
    throw std::invalid_argument("no such folder: " + root + " (it should hold one folder per student)");
  LayoutOptions lo;
  lo.root_name = std::filesystem::path(root).lexically_normal().filename().string();
  if (lo.root_name.empty()) lo.root_name = std::filesystem::path(root).lexically_normal().parent_path().filename().string();
  if (o.roster)
    for (const auto& r : *o.roster)
      if (!r.login.empty()) lo.logins.push_back(r.login);
  const LayoutPlan plan = plan_layout(rootfd.fd, o.layout, lo);
  Intake in;
  in.layout = layout_name(plan.layout);
  auto note = [&](const std::string& entry, const std::string& reason, bool refused) {
    in.notes.push_back({reports::visible(entry, false), reason, refused});
  };
  for (const auto& n : plan.notes) note(n.entry, n.reason, n.refused);
  const std::vector<Student> students = name_students(plan, o, in.notes);
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> inodes;   // hard links among the files taken
  std::map<std::string, nlink_t> links;
  std::map<std::string, std::string> owner;  // each entry in `inodes`: its student
  std::map<std::string, size_t> taken;       // each of this shard's entries in `inodes`: its file
  for (const Student& st : students) {
    const bool mine = keep(st.key);
    if (mine) {
      in.students.push_back(st.key);
      if (!st.identity.empty()) in.identities[st.key] = st.identity;
    }
    if (!st.from) continue;
    // Each exercise's file, named as the student or their LMS named it
    // (exercise_named); the canonical name wins, else the last by name (the
    // highest copy number). Every other entry is listed, never dropped.
    struct Candidate {
      int dirfd;
      std::string name, entry;
    };
    std::vector<std::unique_ptr<Fd>> open;
    std::map<std::string, Candidate> chosen;  // exercise -> its file
    std::vector<std::string> others;
    for (const Source& src : st.from->sources) {
      open.push_back(std::make_unique<Fd>(open_path(rootfd.fd, src.folder)));
      const int dirfd = open.back()->fd;
      if (dirfd < 0) {
        if (mine) note(joined(src.folder, ""), "cannot be opened as a folder (was it replaced by a link?)", true);
        continue;
      }
      std::vector<std::string> names = src.whole ? entries(dirfd) : src.names;
      for (const std::string& name : names) {
        const std::string entry = joined(src.folder, name);
        if (name[0] == '.') {  // .git and the like; one named like an exercise is said
          if (mine && !exercise_named(name.substr(1), exercises).empty())
            note(entry, "not graded: a hidden file (its name begins with '.'), named like an exercise", true);
          continue;
        }
        const std::string e = exercise_named(name, exercises);
        if (e.empty()) {
          // A clone holds the whole student release: only its exercise files are news.
          if (plan.layout != Layout::GithubClassroom) others.push_back(entry);
          continue;
        }
        if (!mine) {  // another shard's student: only their hard links are looked at
          struct stat ls {};
          if (fstatat(dirfd, name.c_str(), &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ls.st_mode) && ls.st_nlink > 1)
            inodes[{ls.st_dev, ls.st_ino}].push_back(entry), owner[entry] = st.key;
          continue;
        }
        auto it = chosen.find(e);
        if (it == chosen.end()) {
          chosen[e] = {dirfd, name, entry};
        } else if (later_copy(name, it->second.name, e,
                              plan.layout == Layout::Moodle || plan.layout == Layout::Canvas)) {
          others.push_back(it->second.entry);
          it->second = {dirfd, name, entry};
        } else {
          others.push_back(entry);
        }
      }
    }
    if (!mine) continue;
    for (const auto& entry : others) {
      const std::string e = exercise_named(entry.substr(entry.rfind('/') + 1), exercises);
      note(entry, e.empty() ? "not graded: no exercise of the course is named like it"
                            : "not graded: " + chosen[e].entry + " was taken for " + e,
           true);
    }
    for (const std::string& e : exercises) {
      auto it = chosen.find(e);
      if (it == chosen.end()) continue;  // not submitted
      const Candidate& c = it->second;
      Read r = read_regular(c.dirfd, c.name, kMaxSubmissionBytes);
      if (!r.refused.empty()) {
        note(c.entry, r.refused, true);
        continue;
      }
      IntakeFile f;
      f.student = st.key;
      f.exercise = e;
      f.shown = reports::visible(root + "/" + c.entry, false);
      f.size = std::max<uint64_t>(static_cast<uint64_t>(r.st.st_size), r.text.size());
      f.too_large = f.size > kMaxSubmissionBytes;
      f.late = marked_late(plan.layout, c.entry.substr(0, c.entry.find('/')));
      if (!f.too_large) f.text = std::move(r.text);
      if (r.st.st_nlink > 1) {
        inodes[{r.st.st_dev, r.st.st_ino}].push_back(c.entry);
        links[c.entry] = r.st.st_nlink, owner[c.entry] = st.key, taken[c.entry] = in.files.size();
      }
      in.files.push_back(std::move(f));
    }
  }
  for (const auto& [inode, names] : inodes)
    for (const auto& n : names) {
      if (!links.count(n)) continue;  // another shard's file: named, not noted
      std::string others;
      std::vector<std::string> classmates;
      for (const auto& m : names) {
        if (m == n) continue;
        others += (others.empty() ? "" : ", ") + reports::visible(m, false);
        if (owner[m] != owner[n]) classmates.push_back(reports::visible(m, false));
      }
      in.files[taken[n]].shared_with = classmates;
      note(n,
           "a hard link (" + std::to_string(links[n]) + " names share this file" +
               (others.empty() ? "" : ", " + others + " among them") + "): " +
               (classmates.empty() ? "graded, but check whose work it is"
                                   : "held, not graded: the same file is another student's; a person decides whose work it is"),
           false);
    }
  std::sort(in.students.begin(), in.students.end());
  std::sort(in.notes.begin(), in.notes.end(),
            [](const auto& a, const auto& b) { return std::tie(a.entry, a.reason) < std::tie(b.entry, b.reason); });
  return in;
}

std::string exercise_named(const std::string& file, const std::vector<std::string>& exercises) {
  std::string n;
  for (char c : file) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n.size() < 5 || n.compare(n.size() - 4, 4, ".cpp") != 0) return "";
  n.resize(n.size() - 4);
  const std::string bare = without_copy_mark(n).first;  // "exercise3 (1)" is exercise3
  for (const std::string& stem : {n, bare})
    for (const auto& e : exercises) {
      std::string want;
      for (char c : e) want += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (stem == want) return e;
      // A prefix the LMS added (Canvas: "lastfirst_12345_67890_exercise3"),
      // ending in a separator, so that exercise13 is never exercise3.
      if (stem.size() > want.size() && stem.compare(stem.size() - want.size(), want.size(), want) == 0 &&
          std::string("_- ").find(stem[stem.size() - want.size() - 1]) != std::string::npos)
        return e;
    }
  return "";
}

std::string private_copy(const std::string& dir, const IntakeFile& f, std::string& error) {
  // Named by content: identical files share one copy, and the compile cache
  // (keyed on the path too) still hits for them.
  const std::string folder = dir + "/" + sha256_hex(f.text).substr(0, 32);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    error = "cannot create " + folder + ": " + std::strerror(errno);
    return "";
  }
  const std::string path = folder + "/" + f.exercise + ".cpp";
  if (read_file(path) == f.text) return path;
  error = write_file_atomic(path, f.text);
  if (!error.empty()) return "";
  chmod(path.c_str(), 0600);
  return path;
}

std::string too_large_message(const IntakeFile& f) {
  return f.shown + ": error: the file is " + std::to_string(f.size) + " bytes; the grader reads files up to " +
         std::to_string(kMaxSubmissionBytes) + " bytes (1 MiB): an exercise is a few KiB, is this the right file?\n";
}

}  // namespace grader

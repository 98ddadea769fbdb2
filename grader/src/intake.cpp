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

struct Student {
  std::string key;
  reports::Identity identity;
  const Submitter* from = nullptr;  // null: on the roster, nothing handed in
};

// Who is who: each submitter named by their roster row when there is one,
// else by their LMS name (told apart by the LMS's id when two share one);
// then the roster's students who handed in nothing.
std::vector<Student> name_students(const LayoutPlan& plan, const IntakeOptions& o, std::vector<reports::IntakeNote>& notes) {
  std::vector<Student> out;
  std::vector<int> row_of(plan.submitters.size(), -1);
  std::map<int, std::string> row_taken;  // roster row -> the entry that took it
  std::map<std::string, int> display_count;
  for (size_t k = 0; k < plan.submitters.size(); ++k) {
    const Submitter& s = plan.submitters[k];
    if (o.roster) {
      bool ambiguous = false;
      const int r = match_roster(*o.roster, s.identity, s.folder, ambiguous);
      if (r >= 0 && row_taken.count(r)) {
        notes.push_back({reports::visible(s.folder, false), "not graded: it is " + roster_key((*o.roster)[size_t(r)]) +
                         " on the roster, whom " + reports::visible(row_taken[r], false) + " is too", true});
        row_of[k] = -2;
        continue;
      }
      if (r >= 0) {
        row_of[k] = r, row_taken[r] = s.folder;
        continue;
      }
      notes.push_back({reports::visible(s.folder, false),
                       std::string(ambiguous ? "matches several students on the roster" : "not on the roster") +
                           ": graded as " + reports::visible(s.display, false),
                       false});
    }
    ++display_count[s.display];
  }
  std::set<std::string> keys;
  auto add = [&](Student st, const std::string& entry) {
    if (!keys.insert(st.key).second) {
      notes.push_back({reports::visible(entry, false),
                       "its safe name \"" + st.key + "\" is the safe name of another " +
                           (plan.layout == Layout::Folders ? "folder" : "student") + " too",
                       true});
      return;
    }
    out.push_back(std::move(st));
  };
  for (size_t k = 0; k < plan.submitters.size(); ++k) {
    const Submitter& s = plan.submitters[k];
    if (row_of[k] == -2) continue;
    if (row_of[k] >= 0) {
      const auto& row = (*o.roster)[size_t(row_of[k])];
      add({safe_name(roster_key(row)), merged(row, s.identity), &s}, s.folder);
    } else {
      const bool twin = display_count[s.display] > 1 && !s.tiebreak.empty();
      add({safe_name(twin ? s.display + "_" + s.tiebreak : s.display), s.identity, &s}, s.folder);
    }
  }
  if (o.roster)
    for (size_t r = 0; r < o.roster->size(); ++r)
      if (!row_taken.count(static_cast<int>(r)))
        add({safe_name(roster_key((*o.roster)[r])), (*o.roster)[r], nullptr}, "roster: " + roster_key((*o.roster)[r]));
  return out;
}

}  // namespace

Intake take_submissions(const std::string& root, const std::vector<std::string>& exercises,
                        const std::function<bool(const std::string&)>& keep, const IntakeOptions& o) {
  Fd rootfd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootfd.fd < 0)
    throw std::invalid_argument("no such folder: " + root + " (it should hold one folder per student)");
  const LayoutPlan plan = plan_layout(rootfd.fd, o.layout);
  Intake in;
  in.layout = layout_name(plan.layout);
  auto note = [&](const std::string& entry, const std::string& reason, bool refused) {
    in.notes.push_back({reports::visible(entry, false), reason, refused});
  };
  for (const auto& n : plan.notes) note(n.entry, n.reason, n.refused);
  const std::vector<Student> students = name_students(plan, o, in.notes);
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> inodes;   // hard links among the files taken
  std::map<std::string, nlink_t> links;
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
        if (name[0] == '.') continue;
        const std::string entry = joined(src.folder, name);
        const std::string e = exercise_named(name, exercises);
        if (e.empty()) {
          others.push_back(entry);
          continue;
        }
        if (!mine) {  // another shard's student: only their hard links are looked at
          struct stat ls {};
          if (fstatat(dirfd, name.c_str(), &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ls.st_mode) && ls.st_nlink > 1)
            inodes[{ls.st_dev, ls.st_ino}].push_back(entry);
          continue;
        }
        auto it = chosen.find(e);
        if (it == chosen.end()) {
          chosen[e] = {dirfd, name, entry};
        } else if (it->second.name != e + ".cpp" && (name == e + ".cpp" || name > it->second.name)) {
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
      if (!f.too_large) f.text = std::move(r.text);
      if (r.st.st_nlink > 1) {
        inodes[{r.st.st_dev, r.st.st_ino}].push_back(c.entry);
        links[c.entry] = r.st.st_nlink;
      }
      in.files.push_back(std::move(f));
    }
  }
  for (const auto& [inode, names] : inodes)
    for (const auto& n : names) {
      if (!links.count(n)) continue;  // another shard's file: named, not noted
      std::string others;
      for (const auto& m : names)
        if (m != n) others += (others.empty() ? "" : ", ") + reports::visible(m, false);
      note(n,
           "a hard link (" + std::to_string(links[n]) + " names share this file" +
               (others.empty() ? "" : ", " + others + " among them") + "): graded, but check whose work it is",
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
  // Copies an LMS or a browser numbered: "exercise3 (1)", Canvas's
  // resubmission "exercise3-1".
  static const std::regex copy_mark(R"(( \([0-9]+\)|-[0-9]+)$)");
  const std::string bare = std::regex_replace(n, copy_mark, "");
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

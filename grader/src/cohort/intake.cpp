#include "cohort/intake.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "cohort/chooser.h"
#include "common/files.h"
#include "cohort/layouts.h"
#include "cohort/lookalikes.h"
#include "cohort/roster.h"
#include "common/safe_dir.h"
#include "reports/escape.h"
#include "common/sha256.h"

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

// Without a roster, names are all that tells students apart: those that read
// the same (lookalikes.h) are flagged, each beside the others, never merged.
void flag_lookalikes(const std::vector<Student>& students, const std::function<bool(const std::string&)>& keep,
                     std::vector<reports::IntakeNote>& notes) {
  std::vector<std::string> displays;
  std::map<std::string, std::vector<const Student*>> by_display;
  for (const Student& st : students) {
    if (!st.from) continue;
    auto& same = by_display[st.from->display];
    if (same.empty()) displays.push_back(st.from->display);
    same.push_back(&st);
  }
  for (const auto& group : lookalike_groups(displays))
    for (const auto& d : group) {
      std::string others;
      for (const auto& o : group)
        if (o != d) others += (others.empty() ? "" : ", ") + reports::visible(o, false);
      for (const Student* st : by_display[d])
        if (keep(st->key))
          notes.push_back({reports::visible(st->from->folder, false),
                           "reads the same as " + others +
                               " (the names differ only in letter case, invisible characters or look-alike letters): "
                               "possibly one person twice, or one posing as another; graded apart, a person decides",
                           false});
    }
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
  if (!o.roster) flag_lookalikes(students, keep, in.notes);
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
    // Every file named like an exercise, at any depth and inside archives;
    // one per exercise is taken (chooser.h), the others are listed with why.
    const auto& sources = st.from->sources;
    Gathered g;
    GatherOptions go;
    go.read = mine;
    go.note_others = plan.layout != Layout::GithubClassroom;  // a clone holds the whole student release
    go.lms = plan.layout == Layout::Moodle || plan.layout == Layout::Canvas;
    for (size_t i = 0; i < sources.size(); ++i) {
      std::set<std::vector<std::string>> skip;
      for (size_t j = 0; j < sources.size(); ++j)
        if (j != i && sources[j].whole) skip.insert(sources[j].folder);
      gather(rootfd.fd, sources[i].folder, sources[i].whole ? nullptr : &sources[i].names, static_cast<int>(i), exercises,
             skip, go, g);
    }
    if (!mine) {  // another shard's student: only their hard links are looked at
      for (const Found& f : g.found)
        if (f.st.st_nlink > 1) inodes[{f.st.st_dev, f.st.st_ino}].push_back(f.entry), owner[f.entry] = st.key;
      continue;
    }
    Chosen c = choose(std::move(g), exercises, plan.layout == Layout::Moodle || plan.layout == Layout::Canvas);
    for (const auto& n : c.notes) in.notes.push_back(n);
    for (const std::string& e : exercises) {
      auto it = c.files.find(e);
      if (it == c.files.end()) {
        if (auto bad = c.bad.find(e); bad != c.bad.end()) {  // the student's verdict, with why
          IntakeFile f;
          f.student = st.key, f.exercise = e;
          f.shown = reports::visible(root + "/" + bad->second.entry, false);
          f.bad_archive = bad->second.why;
          f.lms_entry = reports::visible(bad->second.entry.substr(0, bad->second.entry.find('/')), false);
          f.late = marked_late(plan.layout, f.lms_entry);
          in.files.push_back(std::move(f));
        }
        continue;  // not submitted
      }
      Found& found = it->second;
      IntakeFile f;
      f.student = st.key;
      f.exercise = e;
      f.shown = reports::visible(root + "/" + found.entry, false);
      f.size = found.size;
      f.too_large = found.too_large;
      f.lms_entry = reports::visible(found.entry.substr(0, found.entry.find('/')), false);
      f.submitted = !st.from->submitted_at.empty() ? st.from->submitted_at
                    : (plan.layout == Layout::Canvas || plan.layout == Layout::Moodle) && found.mtime > 0
                        ? utc_time(found.mtime)
                        : std::string();
      f.late = marked_late(plan.layout, f.lms_entry);
      f.text = std::move(found.text);
      f.archived = found.archived;
      if (!found.archived && found.st.st_nlink > 1) {
        inodes[{found.st.st_dev, found.st.st_ino}].push_back(found.entry);
        links[found.entry] = found.st.st_nlink, owner[found.entry] = st.key, taken[found.entry] = in.files.size();
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
  if (!f.bad_archive.empty())
    return f.shown + ": error: the archive was not opened: " + f.bad_archive +
           ". Hand in the exercise's .cpp file itself, or an ordinary zip of it.\n";
  return f.shown + ": error: the file is " + std::to_string(f.size) + " bytes; the grader reads files up to " +
         std::to_string(kMaxSubmissionBytes) + " bytes (1 MiB): an exercise is a few KiB, is this the right file?\n";
}

}  // namespace grader

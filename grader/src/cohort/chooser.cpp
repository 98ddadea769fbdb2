#include "cohort/chooser.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <deque>
#include <utility>
#include <cctype>
#include <regex>
#include <tuple>
#include <utility>

#include "cohort/archives.h"
#include "common/files.h"
#include "source/guard_lex.h"
#include "reports/escape.h"
#include "common/safe_dir.h"

namespace grader {
namespace {

constexpr int kMaxDepth = 8;           // folders below a submission's top that are searched
constexpr int kMaxVisits = 20000;      // entries looked at in one submission
constexpr int kMaxRead = 50;           // files named like exercises read in one submission
constexpr int kMaxPerFolder = 5000;    // entries looked at in one folder
constexpr size_t kMaxArchives = 10;    // archives opened in one submission
constexpr int kMaxNotes = 200;         // entries listed one by one for one submission
// Hidden folders of tools, not of the student's own files: passed over without a word.
const std::set<std::string> kToolFolders = {".git", ".github", ".vscode", ".idea", ".devcontainer", ".cache", ".clangd"};

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

// "Exercise 3", "exercise_3", "EXERCISE-3" all read "exercise3".
std::string squeezed(const std::string& s) {
  std::string out;
  for (char c : ascii_lower(s))
    if (c != ' ' && c != '_' && c != '-') out += c;
  return out;
}

bool conventional_folder(const std::string& folder, const std::string& exercise) {
  const std::string f = squeezed(folder);
  return f == "exercises" || f == "src" || f == squeezed(exercise);
}

// Rule 4's place: 0 the top, 1 a conventional folder, 2 elsewhere.
int place_of(const std::vector<std::string>& folders, const std::string& exercise) {
  return folders.empty() ? 0 : conventional_folder(folders.back(), exercise) ? 1 : 2;
}

// A definition of main() at the start of a declaration: `int main(`, `auto main(`.
bool defines_main(const std::string& text) {
  const std::vector<Token> t = lex(text).tokens;
  for (size_t i = 1; i + 1 < t.size(); ++i)
    if (t[i].kind == Token::Ident && t[i].text == "main" && !t[i].in_directive && t[i + 1].text == "(" &&
        (t[i - 1].text == "int" || t[i - 1].text == "auto" || t[i - 1].text == "void"))
      return true;
  return false;
}

// The name the student gave a file, without the LMS's prefix (Canvas's
// "lastfirst_12345_67890_", Moodle's "…_assignsubmission_file_"), its letter
// case, ".cpp" and any copy mark: "exercise3", "old-exercise3".
std::string given_stem(const std::string& name, bool lms) {
  static const std::regex canvas(R"(^.*?_[0-9]+_[0-9]+_(.+)$)"), moodle(R"(_assignsubmission_file_?(.+)$)");
  std::smatch m;
  std::string given = name;
  if (lms && (std::regex_search(name, m, moodle) || std::regex_match(name, m, canvas))) given = m[1];
  given = ascii_lower(given);
  if (given.size() >= 4 && given.compare(given.size() - 4, 4, ".cpp") == 0) given.resize(given.size() - 4);
  return without_copy_mark(given).first;
}

// A file named like an exercise, seen but not yet read: where it is.
struct Seen {
  Found f;
  std::vector<std::string> steps;  // its folder, from rootfd
  std::vector<std::string> folders;  // its folders from the submission's top
};

struct Walker {
  int rootfd;
  const std::vector<std::string>& exercises;
  const std::set<std::vector<std::string>>& skip;
  const GatherOptions& o;
  Gathered& out;
  int source;
  bool lms = false;
  int visits = 0, notes = 0, unlisted = 0;
  std::vector<Seen> files, archives;
  std::vector<std::string> top_folders;

  void note(const std::string& entry, const std::string& why, bool refused = true) {
    if (++notes > kMaxNotes) return void(++unlisted);
    std::string shown = reports::visible(entry, false);
    if (shown.size() > 300) shown = shown.substr(0, 300) + "…";
    out.notes.push_back({shown, reports::visible(why, false), refused});
  }

  // A file named like `exercise` and read, with its folders from the submission's top.
  void add(Found f, const std::vector<std::string>& folders) {
    f.source = source;
    f.depth = static_cast<int>(folders.size());
    f.place = place_of(folders, f.exercise);
    f.too_large = f.size > kMaxSubmissionBytes;
    if (f.too_large) f.text.clear();
    f.own_main = !f.text.empty() && defines_main(f.text);
    out.found.push_back(std::move(f));
  }

  // The order in which files are read (and archives opened) when there are
  // more than the budget: the likeliest first.
  static bool likelier(const Seen& a, const Seen& b, bool lms) {
    auto key = [&](const Seen& x) {
      const bool exact = given_stem(x.f.name, lms) == ascii_lower(x.f.exercise);
      return std::make_tuple(place_of(x.folders, x.f.exercise), x.folders.size(), !exact, x.f.entry);
    };
    return key(a) < key(b);
  }

  void open_archive(const Seen& a) {
    const ArchiveLimits limits;
    Fd dir = open_path(rootfd, a.steps);
    if (dir.fd < 0) return note(a.f.entry, "cannot be opened (was its folder replaced by a link?)");
    const Read r = read_regular(dir.fd, a.f.name, limits.archive_bytes);
    if (!r.refused.empty()) return note(a.f.entry, r.refused);
    const Unpacked u = unpack_fenced(
        r.text, [this](const std::string& base) { return !exercise_named(base, exercises).empty(); }, limits);
    if (!u.refused.empty()) {
      out.bad_archives.push_back({a.f.entry, u.refused, exercise_named(archive_stem(a.f.name) + ".cpp", exercises)});
      return note(a.f.entry, "not graded: an archive, " + u.refused);
    }
    for (const auto& s : u.skipped) note(a.f.entry + "/" + s.path, "not graded: in an archive, " + s.why);
    members(a, u);
  }

  // An archive's files named like exercises: the same rules as on disk
  // (hidden folders and gradlab-reports/ are not read), and of two members
  // with one path the later, as unpacking it would leave.
  void members(const Seen& a, const Unpacked& u) {
    // A folder zipped whole ("hw3/…" in hw3.zip) puts everything under one
    // top folder: its top is where the archive is.
    std::string top;
    bool one_top = !u.files.empty();
    for (const auto& m : u.files) {
      const size_t slash = m.path.find('/');
      const std::string first = slash == std::string::npos ? "" : m.path.substr(0, slash);
      if (first.empty() || (!top.empty() && first != top)) one_top = false;
      top = first;
    }
    std::map<std::string, size_t> last;  // path -> its last member
    for (size_t i = 0; i < u.files.size(); ++i) last[u.files[i].path] = i;
    size_t named = 0;
    bool reports_said = false;
    for (size_t i = 0; i < u.files.size(); ++i) {
      const ArchiveMember& m = u.files[i];
      const std::string base = m.path.substr(m.path.rfind('/') + 1), entry = a.f.entry + "/" + m.path;
      const std::string e = exercise_named(base, exercises);
      if (e.empty()) continue;
      ++named;
      const std::string rel = one_top ? m.path.substr(top.size() + 1) : m.path;
      std::vector<std::string> inner = a.folders;
      bool hidden = base[0] == '.', reports = false;
      for (size_t at = 0, end; (end = rel.find('/', at)) != std::string::npos; at = end + 1) {
        const std::string part = rel.substr(at, end - at);
        hidden |= part[0] == '.';
        reports |= part == "gradlab-reports";
        if (!archive_named(part)) inner.push_back(part);
      }
      if (reports) {
        if (!std::exchange(reports_said, true))
          note(entry, "not read: the grader's own reports are never taken from a submission", false);
        continue;
      }
      if (hidden) {
        note(entry, "not graded: in a hidden folder of the archive (its name begins with '.')");
        continue;
      }
      if (last[m.path] != i) {
        note(entry, "not graded: the archive holds a later file of the same name, which unpacking it leaves");
        continue;
      }
      if (m.unread) {
        note(entry, "not read: the archive holds more than 100 files named like exercises");
        continue;
      }
      Found f;
      f.exercise = e, f.entry = entry, f.name = base, f.archived = true;
      f.text = m.text, f.size = m.size, f.mtime = m.mtime;
      add(std::move(f), inner);
    }
    if (named == 0 && o.note_others)
      note(a.f.entry, "not graded: an archive with no file in it named like an exercise of the course (" +
                          std::to_string(u.files.size()) + " files)");
  }

  void read(const Seen& c) {
    Found f = c.f;
    Fd dir = open_path(rootfd, c.steps);
    if (dir.fd < 0) return note(f.entry, "cannot be opened (was its folder replaced by a link?)");
    Read r = read_regular(dir.fd, f.name, kMaxSubmissionBytes);
    if (!r.refused.empty()) return note(f.entry, r.refused);
    f.size = std::max<uint64_t>(static_cast<uint64_t>(r.st.st_size), r.text.size());
    f.text = std::move(r.text), f.st = r.st, f.mtime = static_cast<int64_t>(r.st.st_mtim.tv_sec);
    add(std::move(f), c.folders);
  }

  // One folder's entries: files and archives are seen, folders queued.
  void visit(int dirfd, const std::vector<std::string>& steps, const std::vector<std::string>& folders,
             const std::vector<std::string>* only, std::deque<std::pair<std::vector<std::string>, std::vector<std::string>>>& queue) {
    std::string prefix;
    for (const auto& p : steps) prefix += p + "/";
    int here = 0;
    for (const std::string& name : only ? *only : entries(dirfd)) {
      const std::string entry = prefix + name;
      if (++visits > kMaxVisits)
        return note(entry, "not searched: the submission holds more than " + std::to_string(kMaxVisits) + " entries");
      if (++here > kMaxPerFolder)
        return note(prefix, "not searched further: the folder holds more than " + std::to_string(kMaxPerFolder) + " entries");
      struct stat st {};
      if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::vector<std::string> deeper = steps;
      deeper.push_back(name);
      if (name[0] == '.') {  // .git and the like, not read; a file or folder of one's own is said
        if (S_ISDIR(st.st_mode) && !kToolFolders.count(name))
          note(entry, "not searched: a hidden folder (its name begins with '.')", false);
        else if (!S_ISDIR(st.st_mode) && !exercise_named(name.substr(1), exercises).empty())
          note(entry, "not graded: a hidden file (its name begins with '.'), named like an exercise");
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (name == "__MACOSX" || skip.count(deeper)) continue;
        if (name == "gradlab-reports") {
          note(entry, "not read: the grader's own reports are never taken from a submission", false);
          continue;
        }
        if (static_cast<int>(folders.size()) >= kMaxDepth) {
          note(entry, "not searched: more than " + std::to_string(kMaxDepth) + " folders below the submission's top");
          continue;
        }
        std::vector<std::string> inner = folders;
        inner.push_back(name);
        if (folders.empty()) top_folders.push_back(name);
        queue.emplace_back(deeper, inner);
        continue;
      }
      const std::string e = exercise_named(name, exercises);
      Seen seen{{}, steps, folders};
      seen.f.exercise = e, seen.f.entry = entry, seen.f.name = name;
      if (S_ISREG(st.st_mode) && archive_named(name)) {
        if (o.read) archives.push_back(std::move(seen));
      } else if (S_ISREG(st.st_mode) && !e.empty()) {
        seen.f.st = st;
        files.push_back(std::move(seen));
      } else if (S_ISREG(st.st_mode)) {
        if (folders.empty() && o.note_others) note(entry, "not graded: no exercise of the course is named like it");
      } else if (!e.empty() || (folders.empty() && o.note_others)) {
        note(entry, describe(dirfd, name, st.st_mode) + ": only regular files are graded");
      }
    }
  }

  // Breadth first, so that a crowded folder never hides the top's files;
  // then the likeliest files read and archives opened, within the budgets.
  void walk(int dirfd, const std::vector<std::string>& steps, const std::vector<std::string>* only) {
    std::deque<std::pair<std::vector<std::string>, std::vector<std::string>>> queue;
    visit(dirfd, steps, {}, only, queue);
    while (!queue.empty() && visits <= kMaxVisits) {
      auto [at, folders] = std::move(queue.front());
      queue.pop_front();
      Fd sub = open_path(rootfd, at);
      if (sub.fd >= 0) visit(sub.fd, at, folders, nullptr, queue);
    }
    if (!o.read) {  // names and stat() only
      for (Seen& f : files) out.found.push_back(std::move(f.f));
      return;
    }
    std::stable_sort(archives.begin(), archives.end(), [&](const Seen& a, const Seen& b) { return likelier(a, b, lms); });
    for (size_t i = 0; i < archives.size(); ++i)
      if (i < kMaxArchives) open_archive(archives[i]);
      else note(archives[i].f.entry, "not opened: the submission holds more than " + std::to_string(kMaxArchives) + " archives");
    std::stable_sort(files.begin(), files.end(), [&](const Seen& a, const Seen& b) { return likelier(a, b, lms); });
    int budget = kMaxRead - static_cast<int>(out.found.size());
    for (const Seen& f : files)
      if (budget-- > 0) read(f);
      else note(f.f.entry, "not read: the submission holds more than " + std::to_string(kMaxRead) + " files named like exercises");
    std::string prefix;
    for (const auto& p : steps) prefix += p + "/";
    if (o.note_others)
      for (const auto& t : top_folders) {
        const std::string at = prefix + t + "/";
        const bool any = std::any_of(out.found.begin(), out.found.end(), [&](const Found& f) { return f.entry.rfind(at, 0) == 0; }) ||
                         std::any_of(archives.begin(), archives.end(), [&](const Seen& a) { return a.f.entry.rfind(at, 0) == 0; });
        if (!any)
          note(prefix + t, exercise_named(t, exercises).empty()
                               ? "not graded: a folder with no file in it named like an exercise of the course"
                               : "a folder: only regular files are graded (and none in it is named like an exercise)");
      }
    if (unlisted) out.notes.push_back({prefix.empty() ? "…" : prefix + "…", "and " + std::to_string(unlisted) + " more entries not graded, not listed", true});
  }
};

// Why `a` was taken over `b` (both for one exercise), by the first rule
// that tells them apart; "" when `b` is to be taken.
std::string preferred(const Found& a, const Found& b, bool lms) {
  if (a.own_main != b.own_main)
    return a.own_main ? "" : "it defines its own main(), a program of its own rather than the exercise";
  if (a.source != b.source) return a.source < b.source ? "the layout puts the exercises there" : "";
  if (a.archived != b.archived) return !a.archived ? "it was handed in as a file, not inside an archive" : "";
  if (a.place != b.place)
    return a.place > b.place ? ""
           : a.place == 0    ? "it is at the submission's top"
                             : "it is in a folder where exercises go: exercises/, src/ or one named for the exercise";
  if (a.depth != b.depth) return a.depth < b.depth ? "it is nearer the submission's top" : "";
  const std::string sa = given_stem(a.name, lms), sb = given_stem(b.name, lms), want = ascii_lower(a.exercise);
  if (sa == sb) {  // one name, several copies
    const bool ca = copy_number(a.name) == 0 && !lms, cb = copy_number(b.name) == 0 && !lms;
    if (ca != cb) return ca ? "it is named exactly for the exercise" : "";
    const long na = copy_number(a.name), nb = copy_number(b.name);
    if (na != nb) return na > nb ? (lms ? "the LMS numbered it as the later upload" : "it has the higher copy number") : "";
  } else if ((sa == want) != (sb == want)) {
    return sa == want ? "it is named exactly for the exercise" : "";
  }
  if (a.entry != b.entry) return a.entry < b.entry ? "it comes first by path" : "";
  return "";
}

}  // namespace

std::string exercise_named(const std::string& file, const std::vector<std::string>& exercises) {
  std::string n = ascii_lower(file);
  if (n.size() < 5 || n.compare(n.size() - 4, 4, ".cpp") != 0) return "";
  n.resize(n.size() - 4);
  const std::string bare = without_copy_mark(n).first;  // "exercise3 (1)" is exercise3
  for (const std::string& stem : {n, bare})
    for (const auto& e : exercises) {
      const std::string want = ascii_lower(e);
      if (stem == want) return e;
      // A prefix the LMS added (Canvas: "lastfirst_12345_67890_exercise3"),
      // ending in a separator, so that exercise13 is never exercise3.
      if (stem.size() > want.size() && stem.compare(stem.size() - want.size(), want.size(), want) == 0 &&
          std::string("_- ").find(stem[stem.size() - want.size() - 1]) != std::string::npos)
        return e;
    }
  return "";
}

void gather(int rootfd, const std::vector<std::string>& folder, const std::vector<std::string>* names, int source,
            const std::vector<std::string>& exercises, const std::set<std::vector<std::string>>& skip,
            const GatherOptions& o, Gathered& out) {
  Fd dir = open_path(rootfd, folder);
  if (dir.fd < 0) {
    std::string shown;
    for (const auto& f : folder) shown += f + "/";
    out.notes.push_back({reports::visible(shown, false), "cannot be opened as a folder (was it replaced by a link?)", true});
    return;
  }
  Walker w{rootfd, exercises, skip, o, out, source, o.lms, 0, 0, 0, {}, {}, {}};
  w.walk(dir.fd, folder, names);
}

Chosen choose(Gathered g, const std::vector<std::string>& exercises, bool lms_numbers) {
  Chosen c;
  c.notes = std::move(g.notes);
  std::map<std::string, std::vector<Found>> by_exercise;
  for (auto& f : g.found) by_exercise[f.exercise].push_back(std::move(f));
  for (auto& [e, files] : by_exercise) {
    size_t best = 0;
    for (size_t i = 1; i < files.size(); ++i)
      if (!preferred(files[i], files[best], lms_numbers).empty()) best = i;
    for (size_t i = 0; i < files.size(); ++i) {
      if (i == best) continue;
      std::string why = preferred(files[best], files[i], lms_numbers);
      c.notes.push_back({reports::visible(files[i].entry, false),
                         "not graded: " + reports::visible(files[best].entry, false) + " was taken for " + e +
                             (why.empty() ? "" : " (" + why + ")"),
                         true});
    }
    c.files.emplace(e, std::move(files[best]));
  }
  // An archive that could not be opened stands for what it may have held.
  for (const BadArchive& b : g.bad_archives)
    for (const auto& e : exercises)
      if (!c.files.count(e) && !c.bad.count(e) && (b.exercise.empty() || b.exercise == e)) c.bad.emplace(e, b);
  return c;
}

}  // namespace grader

#include "chooser.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <tuple>
#include <utility>

#include "archives.h"
#include "files.h"
#include "guard_lex.h"
#include "reports/escape.h"
#include "safe_dir.h"

namespace grader {
namespace {

constexpr int kMaxDepth = 8;           // folders below a submission's top that are searched
constexpr int kMaxVisits = 20000;      // entries looked at in one submission
constexpr int kMaxRead = 50;           // files named like exercises read in one submission

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

// A definition of main() at the start of a declaration: `int main(`, `auto main(`.
bool defines_main(const std::string& text) {
  const std::vector<Token> t = lex(text).tokens;
  for (size_t i = 1; i + 1 < t.size(); ++i)
    if (t[i].kind == Token::Ident && t[i].text == "main" && !t[i].in_directive && t[i + 1].text == "(" &&
        (t[i - 1].text == "int" || t[i - 1].text == "auto" || t[i - 1].text == "void"))
      return true;
  return false;
}

struct Walker {
  int rootfd;
  const std::vector<std::string>& exercises;
  const std::set<std::vector<std::string>>& skip;
  const GatherOptions& o;
  Gathered& out;
  int source;
  int visits = 0, read = 0;
  bool stopped = false;

  void note(const std::string& entry, const std::string& why, bool refused = true) {
    out.notes.push_back({reports::visible(entry, false), why, refused});
  }

  // A file named like `exercise`, with its folders from the submission's top.
  void add(Found f, const std::vector<std::string>& folders) {
    f.source = source;
    f.depth = static_cast<int>(folders.size());
    f.place = folders.empty() ? 0 : conventional_folder(folders.back(), f.exercise) ? 1 : 2;
    f.too_large = f.size > kMaxSubmissionBytes;
    if (f.too_large) f.text.clear();
    f.own_main = !f.text.empty() && defines_main(f.text);
    out.found.push_back(std::move(f));
  }

  bool budget(const std::string& entry) {
    if (++read <= kMaxRead) return true;
    note(entry, "not read: the submission holds more than " + std::to_string(kMaxRead) + " files named like exercises");
    return false;
  }

  void archive(int dirfd, const std::string& name, const std::string& entry, const std::vector<std::string>& folders) {
    const ArchiveLimits limits;
    const Read r = read_regular(dirfd, name, limits.archive_bytes);
    if (!r.refused.empty()) return note(entry, r.refused);
    const Unpacked u = unpack_fenced(r.text, limits);
    if (!u.refused.empty()) {
      std::string stem = ascii_lower(name);
      for (const char* tail : {".gz", ".bz2", ".xz", ".tgz", ".tar", ".zip"})
        if (stem.size() > std::strlen(tail) && stem.compare(stem.size() - std::strlen(tail), std::string::npos, tail) == 0)
          stem.resize(stem.size() - std::strlen(tail));
      out.bad_archives.push_back({entry, u.refused, exercise_named(stem + ".cpp", exercises)});
      return note(entry, "not graded: an archive, " + u.refused);
    }
    for (const auto& s : u.skipped) note(entry + "/" + s.path, "not graded: in an archive, " + s.why);
    // A folder zipped whole ("hw3/…" in hw3.zip) puts everything under one
    // top folder: its top is the submission's top.
    std::string top;
    bool one_top = !u.files.empty();
    for (const auto& m : u.files) {
      const size_t slash = m.path.find('/');
      const std::string first = slash == std::string::npos ? "" : m.path.substr(0, slash);
      if (first.empty() || (!top.empty() && first != top)) one_top = false;
      top = first;
    }
    size_t named = 0;
    for (const auto& m : u.files) {
      const std::string base = m.path.substr(m.path.rfind('/') + 1);
      const std::string e = exercise_named(base, exercises);
      if (e.empty()) continue;
      ++named;
      if (!budget(entry + "/" + m.path)) continue;
      std::vector<std::string> inner = folders;
      const std::string rel = one_top ? m.path.substr(top.size() + 1) : m.path;
      for (size_t at = 0, end; (end = rel.find('/', at)) != std::string::npos; at = end + 1)
        if (!archive_named(rel.substr(at, end - at))) inner.push_back(rel.substr(at, end - at));
      Found f;
      f.exercise = e, f.entry = entry + "/" + m.path, f.name = base, f.archived = true;
      f.text = m.text, f.size = m.size;
      add(std::move(f), inner);
    }
    if (named == 0 && o.note_others)
      note(entry, "not graded: an archive with no file in it named like an exercise of the course (" +
                      std::to_string(u.files.size()) + " files)");
  }

  void file(int dirfd, const std::string& name, const std::string& entry, const std::vector<std::string>& folders) {
    const std::string e = exercise_named(name, exercises);
    if (e.empty()) {
      if (folders.empty() && o.note_others) note(entry, "not graded: no exercise of the course is named like it");
      return;
    }
    Found f;
    f.exercise = e, f.entry = entry, f.name = name;
    if (!o.read) {
      if (fstatat(dirfd, name.c_str(), &f.st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(f.st.st_mode))
        out.found.push_back(std::move(f));
      return;
    }
    if (!budget(entry)) return;
    Read r = read_regular(dirfd, name, kMaxSubmissionBytes);
    if (!r.refused.empty()) return note(entry, r.refused);
    f.size = std::max<uint64_t>(static_cast<uint64_t>(r.st.st_size), r.text.size());
    f.text = std::move(r.text), f.st = r.st;
    add(std::move(f), folders);
  }

  // `dirfd` is the folder at `steps` from rootfd, `folders` from the submission's top.
  void walk(int dirfd, const std::vector<std::string>& steps, const std::vector<std::string>& folders,
            const std::vector<std::string>* only) {
    const std::string prefix = steps.empty() ? "" : [&] {
      std::string s;
      for (const auto& p : steps) s += p + "/";
      return s;
    }();
    for (const std::string& name : only ? *only : entries(dirfd)) {
      if (stopped) return;
      const std::string entry = prefix + name;
      if (++visits > kMaxVisits) {
        stopped = true;
        return note(entry, "not searched: the submission holds more than " + std::to_string(kMaxVisits) + " entries");
      }
      if (name[0] == '.') {  // .git and the like; one named like an exercise is said
        if (!exercise_named(name.substr(1), exercises).empty())
          note(entry, "not graded: a hidden file (its name begins with '.'), named like an exercise");
        continue;
      }
      struct stat st {};
      if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      std::vector<std::string> deeper = steps;
      deeper.push_back(name);
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
        Fd sub = open_folder(dirfd, name);
        if (sub.fd < 0) continue;
        const size_t before = out.found.size();
        std::vector<std::string> inner = folders;
        inner.push_back(name);
        walk(sub.fd, deeper, inner, nullptr);
        if (folders.empty() && out.found.size() == before && o.note_others)
          note(entry, exercise_named(name, exercises).empty()
                          ? "not graded: a folder with no file in it named like an exercise of the course"
                          : "a folder: only regular files are graded (and none in it is named like an exercise)");
      } else if (S_ISREG(st.st_mode) && archive_named(name)) {
        if (o.read) archive(dirfd, name, entry, folders);
      } else if (S_ISREG(st.st_mode)) {
        file(dirfd, name, entry, folders);
      } else if (!exercise_named(name, exercises).empty() || (folders.empty() && o.note_others)) {
        note(entry, describe(dirfd, name, st.st_mode) + ": only regular files are graded");
      }
    }
  }
};

// Why `a` was taken over `b` (both for one exercise), by the first rule
// that tells them apart; "" when none does.
std::string preferred(const Found& a, const Found& b, bool lms_numbers) {
  if (a.own_main != b.own_main)
    return a.own_main ? "" : "it defines its own main(), a program of its own rather than the exercise";
  if (a.source != b.source) return a.source < b.source ? "the layout puts the exercises there" : "";
  if (a.place != b.place)
    return a.place > b.place ? ""
           : a.place == 0    ? "it is at the submission's top"
                             : "it is in a folder where exercises go: exercises/, src/ or one named for the exercise";
  if (a.depth != b.depth) return a.depth < b.depth ? "it is nearer the submission's top" : "";
  if (a.archived != b.archived) return !a.archived ? "it was handed in as a file, not inside an archive" : "";
  const std::string canonical = a.exercise + ".cpp";
  if (!lms_numbers && (a.name == canonical) != (b.name == canonical))
    return a.name == canonical ? "it is named exactly for the exercise" : "";
  const long ca = copy_number(a.name), cb = copy_number(b.name);
  if (ca != cb) return ca > cb ? (lms_numbers ? "the LMS numbered it as the later upload" : "it has the higher copy number") : "";
  if (a.entry != b.entry) return a.entry > b.entry ? "it comes last by name" : "";
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
  Walker w{rootfd, exercises, skip, o, out, source};
  w.walk(dir.fd, folder, {}, names);
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

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
#include <set>
#include <stdexcept>
#include <utility>

#include "files.h"
#include "reports/escape.h"
#include "sha256.h"

namespace grader {
namespace {

constexpr size_t kMaxNameBytes = 80;
constexpr size_t kMaxLinkShown = 200;

// A file descriptor closed on every path out.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "a file";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a named pipe (fifo)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

// "a symbolic link (to ../alice/exercise3.cpp)": the target is shown, never followed.
std::string describe(int dirfd, const std::string& name, mode_t m) {
  std::string what = kind_of(m);
  if (S_ISLNK(m)) {
    char buf[kMaxLinkShown + 1];
    const ssize_t n = readlinkat(dirfd, name.c_str(), buf, sizeof buf);
    if (n > 0) {
      std::string target(buf, static_cast<size_t>(n));
      if (target.size() > kMaxLinkShown) target = target.substr(0, kMaxLinkShown) + "…";
      what += " (to " + reports::visible(target, false) + ")";
    }
  }
  return what;
}

// Names in a folder, sorted, without "." and "..".
std::vector<std::string> entries(int dirfd) {
  std::vector<std::string> out;
  const int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return out;
  DIR* d = fdopendir(dup_fd);
  if (!d) {
    close(dup_fd);
    return out;
  }
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

struct Read {
  std::string text;
  struct stat st {};
  std::string refused;  // why it was not taken
};

// Opens `name` in `dirfd` as a regular file without following a link, and
// reads at most kMaxSubmissionBytes + 1 bytes of it.
Read read_regular(int dirfd, const std::string& name) {
  Read r;
  struct stat before {};
  if (fstatat(dirfd, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    r.refused = std::string("cannot be examined: ") + std::strerror(errno);
    return r;
  }
  // Classified before it is opened: opening a device or a fifo can block or act.
  if (!S_ISREG(before.st_mode)) {
    r.refused = describe(dirfd, name, before.st_mode) + ": only regular files are graded";
    return r;
  }
  Fd fd(openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.fd < 0 || fstat(fd.fd, &r.st) != 0) {
    r.refused = std::string("cannot be opened: ") + std::strerror(errno);
    return r;
  }
  if (!S_ISREG(r.st.st_mode) || r.st.st_dev != before.st_dev || r.st.st_ino != before.st_ino) {
    r.refused = "changed while it was being read: only regular files are graded";
    return r;
  }
  char buf[65536];
  while (r.text.size() <= kMaxSubmissionBytes) {
    const ssize_t n = read(fd.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.refused = std::string("cannot be read: ") + std::strerror(errno);
      return r;
    }
    if (n == 0) break;
    r.text.append(buf, static_cast<size_t>(n));
  }
  return r;
}

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

Intake take_submissions(const std::string& root, const std::vector<std::string>& exercises,
                        const std::function<bool(const std::string&)>& keep) {
  Fd rootfd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (rootfd.fd < 0)
    throw std::invalid_argument("no such folder: " + root + " (it should hold one folder per student)");
  Intake in;
  auto note = [&](const std::string& entry, const std::string& reason, bool refused) {
    in.notes.push_back({reports::visible(entry, false), reason, refused});
  };
  std::map<std::string, std::string> taken;                              // safe name -> folder
  std::map<std::pair<dev_t, ino_t>, std::vector<std::string>> inodes;   // hard links among the files taken
  std::map<std::string, nlink_t> links;
  for (const std::string& folder : entries(rootfd.fd)) {
    if (folder[0] == '.') continue;  // .git, .DS_Store: not students
    struct stat st {};
    if (fstatat(rootfd.fd, folder.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      note(folder, std::string("cannot be examined: ") + std::strerror(errno), true);
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      note(folder, describe(rootfd.fd, folder, st.st_mode) + ": a student is a folder (links are not followed)", true);
      continue;
    }
    const std::string student = safe_name(folder);
    if (!keep(student)) {
      // Another shard's student: only their hard links are looked at, so a
      // note here names a peer in any shard, as one unsharded run would.
      Fd other(openat(rootfd.fd, folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      struct stat ls {};
      if (other.fd >= 0)
        for (const std::string& name : entries(other.fd))
          if (!exercise_named(name, exercises).empty() && fstatat(other.fd, name.c_str(), &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
              S_ISREG(ls.st_mode) && ls.st_nlink > 1)
            inodes[{ls.st_dev, ls.st_ino}].push_back(folder + "/" + name);
      continue;
    }
    if (auto [it, fresh] = taken.emplace(student, folder); !fresh) {
      note(folder, "its safe name \"" + student + "\" is the safe name of another folder too", true);
      continue;
    }
    Fd sfd(openat(rootfd.fd, folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat again {};
    if (sfd.fd < 0 || fstat(sfd.fd, &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) {
      note(folder, "cannot be opened as a folder (was it replaced?)", true);
      continue;
    }
    in.students.push_back(student);
    // Each exercise's file, named as the student or their LMS named it
    // (exercise_named); the canonical name wins, else the last by name (the
    // highest copy number). Every other entry is listed, never dropped.
    std::map<std::string, std::string> chosen;  // exercise -> file name
    std::vector<std::string> others;
    for (const std::string& name : entries(sfd.fd)) {
      if (name[0] == '.') continue;
      const std::string e = exercise_named(name, exercises);
      if (e.empty()) {
        others.push_back(name);
        continue;
      }
      std::string& c = chosen[e];
      if (c.empty() || (c != e + ".cpp" && (name == e + ".cpp" || name > c))) {
        if (!c.empty()) others.push_back(c);
        c = name;
      } else {
        others.push_back(name);
      }
    }
    for (const auto& name : others) {
      const std::string e = exercise_named(name, exercises);
      note(folder + "/" + name,
           e.empty() ? "not graded: no exercise of the course is named like it"
                     : "not graded: " + folder + "/" + chosen[e] + " was taken for " + e,
           true);
    }
    for (const std::string& e : exercises) {
      if (!chosen.count(e)) continue;  // not submitted
      const std::string name = chosen[e];
      const std::string entry = folder + "/" + name;
      Read r = read_regular(sfd.fd, name);
      if (!r.refused.empty()) {
        note(entry, r.refused, true);
        continue;
      }
      IntakeFile f;
      f.student = student;
      f.exercise = e;
      f.shown = reports::visible((std::string(root) + "/" + entry), false);
      f.size = std::max<uint64_t>(static_cast<uint64_t>(r.st.st_size), r.text.size());
      f.too_large = f.size > kMaxSubmissionBytes;
      if (!f.too_large) f.text = std::move(r.text);
      if (r.st.st_nlink > 1) {
        inodes[{r.st.st_dev, r.st.st_ino}].push_back(entry);
        links[entry] = r.st.st_nlink;
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

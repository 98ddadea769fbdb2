#include "fence/staging.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

#include "common/sha256.h"
#include "fence/watch.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

// Every folder above `path` may be passed through by anyone, and none that
// others may write lacks the sticky bit (or they could swap our folder).
std::string ancestors_problem(const fs::path& path) {
  for (fs::path p = path.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st{};
    if (stat(p.c_str(), &st) != 0) return "cannot read " + p.string() + ": " + std::strerror(errno);
    if (!(st.st_mode & S_IXOTH))
      return p.string() + " (mode " + mode_text(st.st_mode) + ") is not searchable by other users";
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
      return p.string() + " (mode " + mode_text(st.st_mode) + ") is writable by anyone without the sticky bit";
    if (p == p.parent_path()) break;
  }
  return "";
}

const char* kFix = " (a root grader keeps what its sandboxed runs read there; set GRADLAB_STAGING to a folder of "
                   "root's whose whole path anyone may traverse, or remove this one and grade again)";

// One candidate: made when missing (nullopt when it cannot be made at all:
// a read-only /var/tmp), else used only when its owner and mode are right.
std::optional<std::string> candidate(const fs::path& root, std::string& error) {
  if (std::string why = ancestors_problem(root); !why.empty())
    return error = "the staging folder " + root.string() + " cannot be used: " + why + kFix, "";
  const bool made = mkdir(root.c_str(), 0711) == 0;
  const int made_errno = errno;
  if (made && chmod(root.c_str(), 0711) != 0)
    return error = "cannot set the mode of " + root.string() + ": " + std::strerror(errno), "";
  struct stat st{};
  if (lstat(root.c_str(), &st) != 0) {
    error = "cannot create the staging folder " + root.string() + ": " + std::strerror(made_errno);
    return std::nullopt;
  }
  if (!S_ISDIR(st.st_mode)) return error = root.string() + " is not a folder" + kFix, "";
  if (st.st_uid != geteuid())
    return error = root.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to the grader's" + kFix, "";
  if ((st.st_mode & 07777) != 0711)
    return error = root.string() + " has mode " + mode_text(st.st_mode) + ", not 0711" + kFix, "";
  if (access(root.c_str(), W_OK) != 0) {  // seen through a read-only mount (a container's, a test's fence)
    error = "the staging folder " + root.string() + " cannot be written: " + std::strerror(errno);
    return std::nullopt;
  }
  return root.string();
}

// $GRADLAB_STAGING when set; else /var/tmp/gradlab-UID, or /tmp/gradlab-UID
// where /var/tmp cannot hold it (read-only). A candidate that exists with
// the wrong owner or mode is refused, never passed over.
std::string validated_root(std::string& error) {
  const std::string uid = std::to_string(geteuid());
  std::vector<fs::path> roots = {"/var/tmp/gradlab-" + uid, "/tmp/gradlab-" + uid};
  if (const char* env = std::getenv("GRADLAB_STAGING"); env && *env) roots = {env};
  if (!roots[0].is_absolute()) return error = "GRADLAB_STAGING must be an absolute path, not " + roots[0].string(), "";
  for (const auto& root : roots)
    if (auto got = candidate(root, error)) {
      if (!got->empty()) error.clear();  // an earlier candidate's failure is no failure now
      return *got;
    }
  return "";
}

// What a copy is a copy of: the path, and its files' names, sizes and times.
std::string version_key(const fs::path& path) {
  std::string k = path.string() + "\n";
  std::error_code ec;
  auto add = [&](const fs::path& p, const std::string& rel) {
    struct stat st{};
    if (lstat(p.c_str(), &st) != 0) return;
    k += rel + ":" + std::to_string(st.st_mode) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
  };
  add(path, ".");
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> all;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) all.push_back(it->path());
    std::sort(all.begin(), all.end());
    for (const auto& p : all) add(p, fs::relative(p, path, ec).string());
  }
  return sha256_hex(k).substr(0, 24);
}

// Anyone may read the copy: folders 0755, files 0644 (0755 when executable).
bool open_up(const fs::path& p) {
  std::error_code ec;
  auto fix = [](const fs::path& q) {
    struct stat st{};
    if (lstat(q.c_str(), &st) != 0) return false;
    if (S_ISLNK(st.st_mode)) return true;
    const mode_t m = S_ISDIR(st.st_mode) || (st.st_mode & S_IXUSR) ? 0755 : 0644;
    return chmod(q.c_str(), m) == 0;
  };
  bool ok = fix(p);
  if (fs::is_directory(p, ec))
    for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) ok = fix(it->path()) && ok;
  return ok && !ec;
}

// The copy keeps its source's times: clang holds a precompiled header to
// the times of the headers it was built from.
bool same_times(const fs::path& src, const fs::path& copy) {
  std::error_code ec;
  auto one = [](const fs::path& from, const fs::path& to) {
    struct stat st{};
    if (lstat(from.c_str(), &st) != 0) return false;
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    return utimensat(AT_FDCWD, to.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0;
  };
  bool ok = true;
  if (fs::is_directory(copy, ec))
    for (fs::recursive_directory_iterator it(copy, ec), end; !ec && it != end; it.increment(ec))
      ok = one(src / fs::relative(it->path(), copy, ec), it->path()) && ok;
  return one(src, copy) && ok && !ec;  // the top last: writing inside changed its time
}

// Earlier copies of the same path, an hour old or more, go: each build of
// the course makes one.
void sweep_older_copies(const fs::path& copies, const std::string& keep, const std::string& source) {
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& e : fs::directory_iterator(copies, ec)) {
    const std::string name = e.path().filename().string();
    if (name == keep || name.rfind(".tmp-", 0) == 0) continue;
    std::ifstream in(e.path() / ".source");
    std::string of;
    std::getline(in, of);
    std::error_code ec2;
    if (of == source && fs::last_write_time(e.path(), ec2) < cutoff) remove_tree(e.path().string());
  }
}

}  // namespace

std::string staging_root(std::string& error) {
  static std::mutex m;
  static std::string memo, memo_error;
  std::lock_guard<std::mutex> lock(m);
  if (memo.empty() && memo_error.empty()) memo = validated_root(memo_error);
  error = memo_error;
  return memo;
}

namespace {

// What one grader process learnt of a path: asked before every compile,
// answered once (the course's build does not change under a running grader).
struct Memo {
  std::mutex m;
  std::map<std::string, bool> reachable;
  std::map<std::string, std::string> copies;
};
Memo& memo() {
  static Memo m;
  return m;
}

bool walk_reachable(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  if (ec || !ancestors_problem(p).empty()) return false;
  auto readable = [](const fs::path& q) {
    struct stat st{};
    if (stat(q.c_str(), &st) != 0) return false;
    return S_ISDIR(st.st_mode) ? (st.st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH) : (st.st_mode & S_IROTH) != 0;
  };
  if (!readable(p)) return false;
  if (fs::is_directory(p, ec))
    for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (!readable(it->path())) return false;
  return !ec;
}

std::string make_copy(const std::string& path, std::string& error) {
  const std::string root = staging_root(error);
  if (root.empty()) return "";
  const fs::path src = fs::absolute(path).lexically_normal();
  const fs::path copies = fs::path(root) / "copies";
  const std::string key = version_key(src);
  const fs::path dest = copies / key, inside = dest / src.filename();
  std::error_code ec;
  if (fs::exists(inside, ec)) return inside.string();
  mkdir(copies.c_str(), 0755);
  std::random_device rd;
  const fs::path tmp = copies / (".tmp-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  const bool copied = fs::create_directory(tmp, ec) && (fs::copy(src, tmp / src.filename(), fs::copy_options::recursive, ec), !ec) &&
                      (std::ofstream(tmp / ".source") << src.string() << "\n") && open_up(tmp) &&
                      same_times(src, tmp / src.filename());
  if (!copied) {
    error = "cannot copy " + src.string() + " into the staging folder " + copies.string() +
            (ec ? ": " + ec.message() : std::string());
    remove_tree(tmp.string());
    return "";
  }
  if (rename(tmp.c_str(), dest.c_str()) != 0) remove_tree(tmp.string());  // another grader made it first
  if (!fs::exists(inside, ec)) {
    error = "cannot put the copy of " + src.string() + " in place in " + copies.string();
    return "";
  }
  sweep_older_copies(copies, key, src.string());
  return inside.string();
}

}  // namespace

bool reachable_by_anyone(const std::string& path) {
  Memo& m = memo();
  {
    std::lock_guard<std::mutex> lock(m.m);
    if (auto it = m.reachable.find(path); it != m.reachable.end()) return it->second;
  }
  const bool ok = walk_reachable(path);
  std::lock_guard<std::mutex> lock(m.m);
  return m.reachable.emplace(path, ok).first->second;
}

std::string staged_copy(const std::string& path, std::string& error) {
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.m);  // one copy at a time: threads of a batch ask together
  if (auto it = m.copies.find(path); it != m.copies.end()) return it->second;
  std::string copy = make_copy(path, error);
  if (!copy.empty()) m.copies.emplace(path, copy);
  return copy;
}

}  // namespace grader

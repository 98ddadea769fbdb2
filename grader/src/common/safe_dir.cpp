#include "common/safe_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "reports/escape.h"

namespace grader {

constexpr size_t kMaxLinkShown = 200;


namespace {

std::string kind_of(mode_t m) {
  if (S_ISREG(m)) return "a file";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a named pipe (fifo)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "not a regular file";
}

}  // namespace

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


Read read_regular(int dirfd, const std::string& name, uint64_t limit) {
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
  while (r.text.size() <= limit) {
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

Fd open_folder(int dirfd, const std::string& name) {
  return Fd(openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

Fd open_path(int rootfd, const std::vector<std::string>& path) {
  Fd at(fcntl(rootfd, F_DUPFD_CLOEXEC, 0));
  for (const auto& step : path) {
    if (at.fd < 0) break;
    Fd next = open_folder(at.fd, step);
    std::swap(at.fd, next.fd);
  }
  return at;
}

}  // namespace grader

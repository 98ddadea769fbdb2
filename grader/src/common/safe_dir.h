// Reading a folder that students control without being led anywhere by it:
// every step is an openat() with O_NOFOLLOW from the folder above, only
// regular files are read, and never more than asked.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace grader {

// A file descriptor closed on every path out.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// "a symbolic link (to ../alice/exercise3.cpp)": the target is shown, never followed.
std::string describe(int dirfd, const std::string& name, mode_t m);

// Names in a folder, sorted, without "." and "..".
std::vector<std::string> entries(int dirfd);

struct Read {
  std::string text;
  struct stat st {};
  std::string refused;  // why it was not taken
};
// Opens `name` in `dirfd` as a regular file without following a link, and
// reads at most limit + 1 bytes of it (one more tells that it is larger).
Read read_regular(int dirfd, const std::string& name, uint64_t limit);

// `name` in `dirfd` as a folder, not through a link (fd -1 when it is not one).
Fd open_folder(int dirfd, const std::string& name);
// The folder at `path` (steps from `rootfd`), each step a folder, no link followed.
Fd open_path(int rootfd, const std::vector<std::string>& path);

}  // namespace grader

#include "common/files.h"
#include "fence/capped_tmpfs.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace grader {
namespace {

bool write_all(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

}  // namespace

CappedTmpfs capped_tmpfs(const std::vector<std::string>& dirs, long bytes, unsigned uid, unsigned gid) {
  CappedTmpfs c;
  c.dirs = dirs;
  c.options = "size=" + std::to_string(bytes) + ",nr_inodes=" + std::to_string(kTmpfsInodes) +
              ",mode=0700,uid=" + std::to_string(uid) + ",gid=" + std::to_string(gid);
  c.own_user_namespace = geteuid() != 0;
  if (c.own_user_namespace) {
    c.uid_map = std::to_string(geteuid()) + " " + std::to_string(geteuid()) + " 1";
    c.gid_map = std::to_string(getegid()) + " " + std::to_string(getegid()) + " 1";
  }
  return c;
}

bool mount_capped_tmpfs(const CappedTmpfs& c) {
  if (c.own_user_namespace) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    // setgroups must be denied before an unprivileged process may map a gid.
    if (!write_all("/proc/self/setgroups", "deny") || !write_all("/proc/self/uid_map", c.uid_map) ||
        !write_all("/proc/self/gid_map", c.gid_map))
      return false;
  } else if (unshare(CLONE_NEWNS) != 0) {
    return false;
  }
  // Nothing mounted here reaches the machine's mount table.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  for (const auto& d : c.dirs)
    if (mount("tmpfs", d.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, c.options.c_str()) != 0) return false;
  return true;
}

// A yes is kept for the grader's life; a no is asked again at the next run
// (a fork and a mount, a millisecond or two): one probe that failed on a busy
// machine must not leave every later run with unbounded inodes.
bool capped_tmpfs_available() {
  static std::atomic<bool> known_yes{false};
  if (known_yes.load(std::memory_order_relaxed)) return true;
  std::error_code ec;
  std::string dir = (std::filesystem::temp_directory_path(ec) / "gradlab-tmpfs-probe-XXXXXX").string();
  if (ec || !mkdtemp(dir.data())) return false;
  const CappedTmpfs c = capped_tmpfs({dir}, 1 << 20, geteuid(), getegid());
  const pid_t pid = fork_between_writes();
  if (pid == 0) _exit(mount_capped_tmpfs(c) ? 0 : 1);
  int status = 0;
  const bool yes = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  rmdir(dir.c_str());
  if (yes) known_yes.store(true, std::memory_order_relaxed);
  return yes;
}

}  // namespace grader

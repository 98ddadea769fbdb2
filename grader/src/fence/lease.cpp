#include "fence/lease.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "common/files.h"

namespace grader {
namespace {

// The uids a root grader hands out, one per concurrent run: inside Debian's
// range for dynamically allocated system users that no package creates.
constexpr uid_t kFirstUid = 61000;
constexpr int kUids = 1000;
constexpr const char* kLeaseDir = "/run/gradlab-uids";
constexpr const char* kLeaseDirFallback = "/tmp/.gradlab-uids";

bool owned_by_root_only(const char* dir) {
  struct stat st{};
  return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 && (st.st_mode & 022) == 0;
}

// The lock folder: made by root, writable by root alone, or refused (a folder
// another user made first could hand out a uid twice).
std::string lease_dir(std::string& error) {
  for (const char* d : {kLeaseDir, kLeaseDirFallback}) {
    mkdir(d, 0700);
    if (owned_by_root_only(d)) return d;
  }
  error = std::string("neither ") + kLeaseDir + " nor " + kLeaseDirFallback + " is a folder owned by root and writable by root alone";
  return "";
}

// Whether any process but `except` runs as `uid` (its /proc folder is the uid's).
bool uid_has_processes(uid_t uid, pid_t except = 0) {
  DIR* d = opendir("/proc");
  if (!d) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    struct stat st{};
    if (fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_uid == uid && atoi(e->d_name) != except) {
      found = true;
      break;
    }
  }
  closedir(d);
  return found;
}

// The holder, in the child of fork: no file of the grader's (a copy of
// another lease's lock would keep that lock held), the uid, the name, and
// death with the thread that leased it. Async-signal-safe.
[[noreturn]] void run_holder(uid_t uid, int ready, pid_t grader) {
  dup2(ready, 0);
  close_range(1, ~0U, 0);
  prctl(PR_SET_NAME, UidLease::kHolderName);
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // after the uid change, which clears it
  if (getppid() != grader) _exit(1);
  if (write(0, "x", 1) != 1) _exit(1);
  close(0);
  for (;;) pause();
}

}  // namespace

bool UidLease::hold(uid_t uid) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return false;
  const pid_t grader = getpid();
  const pid_t pid = fork_between_writes();
  if (pid == 0) run_holder(uid, ready[1], grader);
  close(ready[1]);
  // Its byte says it runs as the uid; the end of the pipe, that it holds no file at all.
  char c = 0;
  const bool started = pid > 0 && read(ready[0], &c, 1) == 1 && read(ready[0], &c, 1) == 0;
  close(ready[0]);
  // Any other process of the uid: another grader's holder (its lock is in
  // another folder), its run, or what a killed grader left; never ours to end.
  if (started && !uid_has_processes(uid, pid)) {
    holder_ = pid;
    return true;
  }
  if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
  return false;
}

// A run's processes can outlive what the grader waited for: in the
// namespaces, the grader waits for bubblewrap, and the kernel ends what was
// left in the run's pid namespace after it, freeing its memory (4 GiB held
// 0.4 s after the grade returned, a process alive 2 s after its lease). So a
// lease kills every process of its uid (kill(-1) as that uid reaches all of
// them, whatever their namespace, the holder too) and waits until none is
// left, up to 10 s, before it is given back.
void UidLease::end_processes() {
  if (!active()) return;
  for (int round = 0; round < 1000 && uid_has_processes(uid_); ++round) {
    const pid_t killer = fork_between_writes();
    if (killer == 0) {
      if (setresuid(uid_, uid_, uid_) == 0) kill(-1, SIGKILL);
      _exit(0);
    }
    if (killer > 0) waitpid(killer, nullptr, 0);
    if (holder_ > 0 && waitpid(holder_, nullptr, WNOHANG) == holder_) holder_ = 0;  // its zombie is the uid's too
    usleep(10000);
  }
  if (holder_ > 0) kill(holder_, SIGKILL), waitpid(holder_, nullptr, 0), holder_ = 0;
}

UidLease::UidLease() {
  if (geteuid() != 0) return;
  const std::string dir = lease_dir(error_);
  if (dir.empty()) return;
  for (int i = 0; i < kUids; ++i) {
    const uid_t uid = kFirstUid + static_cast<uid_t>(i);
    const std::string path = dir + "/" + std::to_string(uid);
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) continue;
    // The cheap test first: a uid a process runs as is not free, whatever the lock says.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && !uid_has_processes(uid) && hold(uid)) {
      lock_fd_ = fd;
      uid_ = uid;
      return;
    }
    close(fd);
  }
  error_ = "all " + std::to_string(kUids) + " sandbox uids are in use";
}

bool UidLease::is_leased(uid_t uid) { return uid >= kFirstUid && uid < kFirstUid + kUids; }

UidLease::~UidLease() {
  end_processes();
  if (lock_fd_ >= 0) close(lock_fd_);  // closing releases the lock
}

}  // namespace grader

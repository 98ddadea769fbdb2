#include "common/files.h"
#include "fence/fence.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "fence/seccomp.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

constexpr const char* kBwrap = "/usr/bin/bwrap";

// Landlock's rights, spelled out: Debian 12's kernel headers stop at ABI 2,
// the kernels graders run on go further, and every right a kernel knows must
// be named as handled or it stays allowed.
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr uint64_t kRefer = 1ULL << 13, kTruncate = 1ULL << 14, kIoctlDev = 1ULL << 15;
constexpr uint64_t kReadFile = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE;
constexpr uint64_t kReadDir = kReadFile | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kNetBindTcp = 1, kNetConnectTcp = 2;
constexpr uint64_t kScopeAbstractUnix = 1, kScopeSignal = 2;

struct RulesetAttr {  // the kernel's struct landlock_ruleset_attr as of ABI 6
  uint64_t fs = 0, net = 0, scoped = 0;
};

uint64_t handled_fs(int abi) {
  uint64_t r = kFsAbi1;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

bool add_rule(int ruleset, const char* path, uint64_t dir_rights, uint64_t file_rights) {
  const int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;  // a path this system lacks is no loss
  struct stat st{};
  landlock_path_beneath_attr rule{};
  rule.parent_fd = fd;
  rule.allowed_access = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) ? dir_rights : file_rights;
  const bool ok = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
  close(fd);
  return ok;
}

}  // namespace

std::vector<std::string> system_paths() {
  return {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc/ld.so.cache", "/etc/alternatives"};
}

namespace {

// Starts bubblewrap once as the runs will start it (as an unprivileged uid)
// and says whether it could make its namespaces.
bool probe_namespaces() {
  FenceView v;
  v.chdir = "/";
  std::vector<std::string> a = bwrap_arguments(v, -1, false);
  a.push_back("/bin/true");
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  UidLease lease;
  if (geteuid() == 0 && !lease.active()) return false;
  pid_t pid = fork_between_writes();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0), dup2(null, 1), dup2(null, 2);
    if (!become(lease)) _exit(126);
    execv(kBwrap, argv.data());
    _exit(127);
  }
  if (pid < 0) return false;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The probe's answer is kept for this boot (it costs a sandbox's start, a
// good part of a cached grade): in a file of the grader's user's, writable by
// it alone, keyed by the boot and by bubblewrap's own file, so installing or
// upgrading bubblewrap asks again.
std::string probe_memo_path() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  struct stat st{};
  if (id.empty() || stat(kBwrap, &st) != 0) return "";
  std::error_code ec;
  return (fs::temp_directory_path(ec) / ("gradlab-fence-" + std::to_string(geteuid()) + "-" + id + "-" +
                                         std::to_string(st.st_ino) + "-" + std::to_string(st.st_mtime)))
      .string();
}

int read_memo(const std::string& path) {
  struct stat st{};
  if (path.empty() || lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & 022) != 0)
    return -1;
  std::ifstream in(path);
  int v = -1;
  in >> v;
  return v == 0 || v == 1 ? v : -1;
}

void write_memo(const std::string& path, bool ok) {
  if (path.empty()) return;
  const std::string tmp = path + "." + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const char c = ok ? '1' : '0';
  const bool written = write(fd, &c, 1) == 1;
  close(fd);
  if (!written || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
}

}  // namespace

bool namespaces_usable() {
  static const bool ok = [] {
    if (access(kBwrap, X_OK) != 0) return false;
    const std::string memo = probe_memo_path();
    if (const int known = read_memo(memo); known >= 0) return known == 1;
    const bool usable = probe_namespaces();
    write_memo(memo, usable);
    return usable;
  }();
  return ok;
}

int landlock_abi() {
  static const int abi = [] {
    const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

std::vector<std::string> bwrap_arguments(const FenceView& view, int seccomp_fd, bool gpu) {
  // --as-pid-1: no bubblewrap process inside the sandbox (its monitor would
  // be a process outside the seccomp filter, in reach of /proc/1/mem).
  std::vector<std::string> a = {kBwrap, "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
                                "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
                                "--as-pid-1"};
  for (const std::string& d : system_paths()) {
    std::error_code ec;
    auto st = fs::symlink_status(d, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_symlink(st)) a.insert(a.end(), {"--symlink", fs::read_symlink(d, ec).string(), d});
    else a.insert(a.end(), {"--ro-bind", d, d});
  }
  // /dev holds only the harmless devices, and is read-only: bubblewrap makes
  // it a tmpfs of no fixed size that the work could otherwise fill.
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"});
  if (gpu) {
    // The CUDA driver's device files, and /sys read-only for its PCI topology.
    std::error_code ec;
    std::vector<std::string> devs;
    for (const auto& e : fs::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0) devs.push_back(e.path().string());
    std::sort(devs.begin(), devs.end());
    for (const auto& d : devs) a.insert(a.end(), {"--dev-bind", d, d});
    a.insert(a.end(), {"--ro-bind-try", "/sys", "/sys"});
  }
  for (const auto& [where, bytes] : view.tmpfs) a.insert(a.end(), {"--size", std::to_string(bytes), "--tmpfs", where});
  for (const auto& [host, inside] : view.writable_at) a.insert(a.end(), {"--bind", host, inside});
  for (const auto& p : view.read_only) a.insert(a.end(), {"--ro-bind", p, p});
  for (const auto& [host, inside] : view.read_only_at) a.insert(a.end(), {"--ro-bind", host, inside});
  if (!view.writable.empty()) a.insert(a.end(), {"--bind", view.writable, view.writable});
  a.insert(a.end(), {"--chdir", view.chdir.empty() ? "/" : view.chdir});
  if (seccomp_fd >= 0) a.insert(a.end(), {"--seccomp", std::to_string(seccomp_fd)});
  a.push_back("--");
  return a;
}

LandlockPlan landlock_plan(const FenceView& view, bool gpu, bool removals) {
  LandlockPlan p;
  p.removals = removals;
  p.read_only = system_paths();
  p.read_only.insert(p.read_only.end(), view.read_only.begin(), view.read_only.end());
  for (const auto& [host, inside] : view.read_only_at) p.read_only.push_back(host);
  // What glibc, libstdc++ and OpenBLAS read: the CPU's description, and the
  // process's own /proc entry (opened before the exec, which keeps the pid:
  // other processes' entries, the grader's among them, stay closed).
  for (const char* s : {"/dev/urandom", "/sys/devices/system/cpu", "/proc/cpuinfo", "/proc/self"}) p.read_only.push_back(s);
  if (gpu) p.read_only.push_back("/sys");
  p.writable = {"/dev/null"};
  if (!view.writable.empty()) p.writable.push_back(view.writable);
  if (gpu) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0) p.writable.push_back(e.path().string());
  }
  for (auto& s : p.read_only) p.read_only_c.push_back(s.c_str());
  for (auto& s : p.writable) p.writable_c.push_back(s.c_str());
  return p;
}

bool confine(const LandlockPlan& plan) {
  const int abi = landlock_abi();
  if (abi < 1) return false;
  RulesetAttr attr;
  attr.fs = handled_fs(abi);
  size_t size = sizeof(uint64_t);
  if (abi >= 4) attr.net = kNetBindTcp | kNetConnectTcp, size = 2 * sizeof(uint64_t);
  if (abi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal, size = 3 * sizeof(uint64_t);
  const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return false;
  bool ok = true;
  for (const char* p : plan.read_only_c) ok = ok && add_rule(ruleset, p, kReadDir, kReadFile);
  const uint64_t file_rights = attr.fs & (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                          LANDLOCK_ACCESS_FS_READ_FILE | kTruncate | kIoctlDev);
  const uint64_t removals = LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR;
  const uint64_t dir_rights = plan.removals ? attr.fs : attr.fs & ~removals;
  for (const char* p : plan.writable_c) ok = ok && add_rule(ruleset, p, dir_rights, file_rights);
  ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  close(ruleset);
  return ok;
}

bool become(const UidLease& lease) {
  if (!lease.active()) return true;
  const uid_t id = lease.uid();
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // while root may still do it
  // Changing every uid away from 0 clears the permitted and effective sets.
  return setgroups(0, nullptr) == 0 && setresgid(id, id, id) == 0 && setresuid(id, id, id) == 0 && drop_capabilities();
}

long tasks_of(uid_t uid) {
  long n = 0;
  DIR* d = opendir("/proc");
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const std::string dir = std::string("/proc/") + e->d_name;
    struct stat st{};
    if (stat(dir.c_str(), &st) != 0 || st.st_uid != uid) continue;
    std::ifstream status(dir + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Threads:", 0) == 0) n += std::atol(line.c_str() + 8);
  }
  closedir(d);
  return n;
}

}  // namespace grader

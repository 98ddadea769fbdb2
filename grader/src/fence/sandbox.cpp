#include "common/files.h"
#include "fence/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>

#include "fence/capped_tmpfs.h"
#include "config.h"
#include "fence/seccomp.h"
#include "fence/staging.h"
#include "fence/watch.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxChannel = 64u << 20;  // a result larger than this is not a result
constexpr int kSeccompFd = 4;              // where bubblewrap reads the filter (the channel is at 10 or above)
constexpr int kReportFd = 5;               // close-on-exec: the child's word when it could not fence itself in
constexpr long kTmpfsBytes = kWorkFolderBytes;  // the program's /tmp and working folder, each
constexpr const char* kProgramDir = "/opt/gradlab";
constexpr const char* kProgramInside = "/opt/gradlab/program";
constexpr const char* kStudentLibName = "libgradlab_student.so";
constexpr const char* kWorkPrefix = "gradlab-work-";
constexpr const char* kPrlimit = "/usr/bin/prlimit";  // util-linux, in every Debian

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> p;
  for (auto& s : v) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

void set_limit(int resource, rlim_t v) {
  struct rlimit rl{v, v};
  setrlimit(resource, &rl);
}

// A memfd holding `bytes`, rewound: how the filter reaches bubblewrap and the
// request the harness.
int memfd_with(const char* name, const void* bytes, size_t n) {
  const int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (write(fd, bytes, n) != static_cast<ssize_t>(n) || lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Everything the child needs between fork and exec, made before the fork:
// the child may only make async-signal-safe calls.
struct ChildPlan {
  std::vector<std::string> argv_s, env_s;
  std::vector<char*> argv, envp;
  std::string chdir;
  const UidLease* lease = nullptr;
  LandlockPlan landlock;
  CappedTmpfs tmpfs;     // mounted by the child when capped (namespaces, a program's run)
  bool capped = false;
  SeccompFilter filter;  // installed by the child itself in the fallback
  bool fallback = false, tool = false, gpu = false;
  int devnull = -1, out = -1, err = -1, channel = -1, channel_fd = -1, request = -1, seccomp = -1, report = -1;
  rlim_t cpu = 1, memory = 0, fsize = 0, nproc = 0;
};

// Puts the child's files where they go: 0-2, the request at 3, the filter
// for bubblewrap at 4, the failure report at 5, the channel at its number,
// and nothing else.
void arrange_fds(const ChildPlan& p) {
  // Out of the way of the numbers the dups below write to.
  const int request_high = p.request >= 0 ? fcntl(p.request, F_DUPFD, 64) : -1;
  const int seccomp_high = p.seccomp >= 0 ? fcntl(p.seccomp, F_DUPFD, 64) : -1;
  const int report_high = fcntl(p.report, F_DUPFD_CLOEXEC, 64);
  dup2(p.devnull, 0);
  dup2(p.out, 1);
  dup2(p.tool ? p.out : p.err, 2);
  if (p.channel >= 0) {
    // dup2 does nothing when the pipe already has that number (likely in
    // `grade batch`, whose threads keep dozens of fds open): then clear its
    // close-on-exec by hand.
    if (p.channel == p.channel_fd) fcntl(p.channel_fd, F_SETFD, 0);
    else dup2(p.channel, p.channel_fd);
  }
  for (int fd : {kRequestFd, kSeccompFd}) close(fd);
  if (request_high >= 0) dup2(request_high, kRequestFd);
  if (seccomp_high >= 0) dup2(seccomp_high, kSeccompFd);
  dup3(report_high, kReportFd, O_CLOEXEC);
  if (p.channel_fd > 0) {
    close_range(kReportFd + 1, static_cast<unsigned>(p.channel_fd) - 1, 0);
    close_range(static_cast<unsigned>(p.channel_fd) + 1, ~0U, 0);
  } else {
    close_range(kReportFd + 1, ~0U, 0);
  }
}

[[noreturn]] void fence_failed() {
  const char failed = 'F';
  (void)!write(kReportFd, &failed, 1);
  _exit(125);
}

[[noreturn]] void exec_child(const ChildPlan& p) {
  setsid();  // a session of its own: no controlling terminal, and a group the watchdog kills whole
  arrange_fds(p);
  if (chdir(p.chdir.c_str()) != 0) _exit(126);
  struct rlimit cpu_rl{p.cpu, p.cpu + 1};  // SIGXCPU at the soft limit, SIGKILL one second later
  setrlimit(RLIMIT_CPU, &cpu_rl);
  set_limit(p.gpu ? RLIMIT_DATA : RLIMIT_AS, p.memory);
  set_limit(RLIMIT_FSIZE, p.fsize);
  set_limit(RLIMIT_NOFILE, p.gpu || p.tool ? 256 : 64);  // the driver opens a device file per GPU, and more
  set_limit(RLIMIT_CORE, 0);
  // Queued signals, POSIX timers among them, count against the real uid's
  // budget: a run that shares its grader's uid drained it (96 364 timers,
  // resource red team 6), and the grader's own timers then failed.
  set_limit(RLIMIT_SIGPENDING, 256);
  set_limit(RLIMIT_NPROC, p.nproc);
  if (p.capped && !mount_capped_tmpfs(p.tmpfs)) fence_failed();
  if (!become(*p.lease)) fence_failed();
  if (p.fallback && (!drop_capabilities() || !confine(p.landlock) || !install_seccomp_filter(p.filter))) fence_failed();
  execve(p.argv[0], p.argv.data(), p.envp.data());
  const char msg[] = "gradlab: could not start the program\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(127);
}

// What the program sees: itself and the engine's library side by side (its
// rpath is $ORIGIN), at /opt/gradlab inside namespaces or in the stage
// folder in the fallback, and sized tmpfs folders for /tmp and its working
// folder: the child's own, capped in inodes too, over the stage's tmp and box
// folders where it can mount them (capped_tmpfs.h), else bubblewrap's. No
// path of the course's appears: /proc/self/maps and mountinfo show the stage's.
FenceView program_view(const std::string& stage, const std::string& workdir, bool fallback, bool capped) {
  FenceView v;
  if (fallback) {
    v.read_only.push_back(stage);
    v.writable = workdir;
    v.chdir = workdir;
  } else {
    v.read_only_at.push_back({stage + "/program", kProgramInside});
    v.read_only_at.push_back({stage + "/" + kStudentLibName, std::string(kProgramDir) + "/" + kStudentLibName});
    if (capped) v.writable_at = {{stage + "/tmp", "/tmp"}, {stage + "/box", "/box"}};
    else v.tmpfs = {{"/tmp", kTmpfsBytes}, {"/box", kTmpfsBytes}};
    v.chdir = "/box";
  }
  return v;
}

// Where work folders go: $TMPDIR, or for a root grader its staging folder,
// which its leased uids can reach whatever TMPDIR is (staging.h).
std::string work_parent(std::string& error) {
  if (geteuid() == 0) return staging_root(error);
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) error = "no folder for temporary files: " + ec.message();
  return ec ? "" : tmp.string();
}

// A copy of the engine's library in the work folders' parent, made once per build of it, for
// machines where the build and $TMPDIR are different file systems (a stage
// folder can only hard-link within one).
std::string shared_library_copy(std::string& error) {
  struct stat st{};
  if (stat(GRADLAB_STUDENT_LIB, &st) != 0) return GRADLAB_STUDENT_LIB;  // no engine library: nothing to stage
  std::error_code ec;
  const std::string parent = work_parent(error);
  if (parent.empty()) return "";
  const fs::path copy = fs::path(parent) / ("gradlab-lib-" + std::to_string(geteuid()) + "-" +
                                                       std::to_string(st.st_ino) + "-" + std::to_string(st.st_mtime) + ".so");
  struct stat cs{};
  if (lstat(copy.c_str(), &cs) == 0 && S_ISREG(cs.st_mode) && cs.st_uid == geteuid() && (cs.st_mode & 022) == 0 &&
      cs.st_size == st.st_size)
    return copy.string();
  const std::string tmp = copy.string() + "." + std::to_string(getpid());
  if (!fs::copy_file(GRADLAB_STUDENT_LIB, tmp, fs::copy_options::overwrite_existing, ec) || chmod(tmp.c_str(), 0555) != 0 ||
      rename(tmp.c_str(), copy.c_str()) != 0) {
    error = "cannot copy the engine's library to " + copy.string();
    fs::remove(tmp, ec);
    return "";
  }
  return copy.string();
}

// The stage: a folder the work may read but not change, holding a copy of
// the program and a hard link to the engine's library. A root grader's
// leased uid can reach it where it could not reach the compile cache.
std::string stage_program(const std::string& program, std::string& error) {
  const std::string stage = make_work_folder(error);
  if (stage.empty()) return "";
  std::error_code ec;
  const std::string lib = stage + "/" + kStudentLibName;
  std::unique_lock<std::shared_mutex> writing(executable_writes());
  bool ok = chmod(stage.c_str(), 0755) == 0 && fs::copy_file(program, stage + "/program", ec) &&
            chmod((stage + "/program").c_str(), 0555) == 0;
  if (ok && link(GRADLAB_STUDENT_LIB, lib.c_str()) != 0) {
    const std::string copy = shared_library_copy(error);
    ok = !copy.empty() && (link(copy.c_str(), lib.c_str()) == 0 || fs::copy_file(copy, lib, ec));
  }
  if (ok) return stage;
  if (error.empty()) error = "cannot stage the program for the sandbox: " + std::string(std::strerror(errno));
  fs::remove_all(stage, ec);
  return "";
}

std::string make_workdir(const UidLease& lease, std::string& error) {
  const std::string dir = make_work_folder(error);
  if (dir.empty() || !lease.active() || chown(dir.c_str(), lease.uid(), lease.uid()) == 0) return dir;
  error = std::string("cannot hand the working folder to the sandbox's uid: ") + std::strerror(errno);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return "";
}

// A process's start time (field 22 of /proc/PID/stat), which tells a live
// grader from a later process that reused its pid; "" when it is gone.
std::string start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t paren = stat.rfind(')');  // the command's name may hold spaces
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat.substr(paren + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i) {
  }
  return f;
}

// "gradlab-work-PID.START-": whose folder it is, so the next grader can tell
// a dead owner's leftovers from a live one's.
std::string owner_tag() {
  static const std::string tag = std::to_string(getpid()) + "." + start_time(getpid()) + "-";
  return tag;
}

bool owner_gone(const std::string& name) {
  const size_t dot = name.find('.', std::strlen(kWorkPrefix)), dash = name.find('-', dot == std::string::npos ? 0 : dot);
  if (dot == std::string::npos || dash == std::string::npos) return false;
  const std::string pid = name.substr(std::strlen(kWorkPrefix), dot - std::strlen(kWorkPrefix));
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) return false;
  return start_time(static_cast<pid_t>(std::stol(pid))) != name.substr(dot + 1, dash - dot - 1);
}

// The writable folder belongs to the run's uid while it runs (what an
// earlier step wrote in it included); symbolic links are not followed.
bool hand_over(const std::string& dir, const UidLease& lease) {
  if (!lease.active() || dir.empty()) return true;
  std::error_code ec;
  bool ok = lchown(dir.c_str(), lease.uid(), lease.uid()) == 0;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    ok = lchown(it->path().c_str(), lease.uid(), lease.uid()) == 0 && ok;
  return ok && !ec;
}

std::vector<std::string> environment(const SandboxSpec& spec, const std::string& home, bool tool) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + std::string(tool ? home : "/tmp")};
  const char* lang = std::getenv("LANG");
  env.push_back(std::string("LANG=") + (lang && *lang ? lang : "C.UTF-8"));
  if (!tool) {
    env.insert(env.end(), {"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"});
    if (spec.gpu) env.push_back("GRADLAB_CUDA_MEMORY_LIMIT_MB=" + std::to_string(spec.limits.memory_mb));
  }
  return env;
}

}  // namespace

const char* fence_name(Fence f) { return f == Fence::Namespaces ? "bubblewrap" : "fallback"; }

bool bubblewrap_usable() { return namespaces_usable(); }

FenceChoice choose_fence(bool prefer_namespaces) {
  FenceChoice c;
  if (prefer_namespaces && namespaces_usable()) {
    c.ok = true, c.fence = Fence::Namespaces;
    return c;
  }
  if (geteuid() == 0) {
    UidLease probe;
    if (!probe.active()) {
      c.why_not = "the grader runs as root and cannot take an unprivileged uid for the run (" + probe.error() + ")";
      return c;
    }
  }
  if (landlock_abi() < 1) {
    c.why_not = "bubblewrap cannot create namespaces here and the kernel has no Landlock, so nothing would keep the "
                "program away from the course's files. Install bubblewrap (apt-get install bubblewrap) and allow "
                "unprivileged user namespaces, or use a kernel with Landlock (Linux 5.13 or later, lsm=landlock)";
    return c;
  }
  c.ok = true, c.fence = Fence::Fallback;
  return c;
}

std::string make_work_folder(std::string& error) {
  const std::string parent = work_parent(error);
  if (parent.empty()) return "";
  std::string tmpl = (fs::path(parent) / (kWorkPrefix + owner_tag() + "XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) {
    error = std::string("cannot create a work folder: ") + std::strerror(errno);
    return "";
  }
  return tmpl;
}

void sweep_stale_work_folders() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::error_code ec;
    std::string error;
    const fs::path tmp = work_parent(error);
    if (tmp.empty()) return;
    const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (const auto& e : fs::directory_iterator(tmp, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code ec2;
      if (name.rfind(kWorkPrefix, 0) != 0 || e.is_symlink(ec2) || !e.is_directory(ec2)) continue;
      struct stat st{};
      if (lstat(e.path().c_str(), &st) != 0) continue;
      const bool ours = st.st_uid == geteuid() || (geteuid() == 0 && UidLease::is_leased(st.st_uid));
      if (!ours) continue;  // another user's grader's
      if (owner_gone(name) || fs::last_write_time(e.path(), ec2) < cutoff) remove_tree(e.path().string());
    }
  });
}

namespace {

// A file descriptor closed when it goes out of scope (in the grader: the
// child leaves by exec or _exit, so no destructor runs there).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) reset(), fd_ = other.release();
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  // Hands the descriptor to whoever closes it next (the watcher closes its streams).
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Both ends of a pipe, each closed with its Fd.
struct Pipe {
  Fd read, write;
  bool open() {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return false;
    read = Fd(p[0]), write = Fd(p[1]);
    return true;
  }
};

// Where the run happens: the fence, the uid, and for a program its stage (and
// in the fallback its working folder; in namespaces that is a tmpfs).
// Removes the folders it made when it ends.
struct Place {
  FenceChoice choice;
  UidLease lease;
  FenceView view;  // a tool's view, with what the leased uid cannot reach staged
  std::string stage, workdir;
  Place() = default;
  Place(const Place&) = delete;
  ~Place() {
    if (!stage.empty()) remove_tree(stage);
    if (!workdir.empty()) remove_tree(workdir);
  }
  bool fallback() const { return choice.fence == Fence::Fallback; }
};

// A root grader's leased uid must reach what a tool reads: a path it cannot
// (a course in /root) is copied into the staging folder and bound at its own
// path, so the compiler sees the paths it was built with. The fallback fence
// has no binds: there such a path is refused, with what to do.
std::string reach_view(FenceView& view, bool fallback) {
  std::vector<std::string> kept;
  for (const auto& p : view.read_only) {
    if (reachable_by_anyone(p)) {
      kept.push_back(p);
      continue;
    }
    if (fallback)  // grade refuses this up front for the course's own paths (main.cpp)
      return "the fallback fence runs the compiler as an unprivileged uid, which cannot reach " + p +
             " (a folder on its path is private to its owner)";
    std::string error;
    const std::string copy = staged_copy(p, error);
    if (copy.empty()) return error;
    view.read_only_at.push_back({copy, p});
  }
  view.read_only = kept;
  return "";
}

bool prepare_place(const SandboxSpec& spec, bool tool, Place& at, std::string& failure) {
  at.choice = choose_fence(spec.isolate);
  if (!at.choice.ok) return failure = "no sandbox can be built here: " + at.choice.why_not, false;
  if (geteuid() == 0 && !at.lease.active())
    return failure = "cannot run the work as an unprivileged uid: " + at.lease.error(), false;
  if (tool) {
    at.view = spec.view;
    if (at.lease.active() && !(failure = reach_view(at.view, at.fallback())).empty()) return false;
    if (!hand_over(spec.view.writable, at.lease))
      return failure = "cannot hand " + spec.view.writable + " to the sandbox's uid", false;
    return true;
  }
  if ((at.stage = stage_program(spec.program, failure)).empty()) return false;
  return !at.fallback() || !(at.workdir = make_workdir(at.lease, failure)).empty();
}

// What the child execs, with what environment, limits and confinement; the
// files it gets are set apart (open_files).
ChildPlan plan_child(const SandboxSpec& spec, bool tool, const Place& at) {
  const bool fallback = at.fallback();
  const Limits& L = spec.limits;
  ChildPlan p;
  p.tool = tool, p.fallback = fallback, p.gpu = spec.gpu, p.lease = &at.lease;
  if (!tool && !fallback && capped_tmpfs_available()) {
    std::error_code ec;
    const std::vector<std::string> dirs = {at.stage + "/tmp", at.stage + "/box"};
    p.capped = true;
    for (const auto& d : dirs) p.capped &= fs::create_directory(d, ec) || fs::is_directory(d, ec);
    const unsigned owner = at.lease.active() ? at.lease.uid() : geteuid();
    const unsigned group = at.lease.active() ? at.lease.uid() : getegid();
    if (p.capped) p.tmpfs = capped_tmpfs(dirs, kTmpfsBytes, owner, group);
  }
  const FenceView view = tool ? at.view : program_view(at.stage, at.workdir, fallback, p.capped);
  p.chdir = fallback ? (view.chdir.empty() ? "/" : view.chdir) : "/";
  std::random_device rd;
  p.channel_fd = tool ? -1 : spec.channel_fd > kSeccompFd ? spec.channel_fd : 10 + static_cast<int>(rd() % 40);
  if (fallback) p.argv_s = tool ? spec.tool : std::vector<std::string>{at.stage + "/program"};
  else {
    p.argv_s = bwrap_arguments(view, kSeccompFd, spec.gpu);
    // Inside its own user namespace the run's tasks are counted apart from
    // the grader's user's (the kernel counts per namespace and uid), so
    // prlimit, run inside, bounds this run alone even where every run shares
    // the grader's uid.
    if (access(kPrlimit, X_OK) == 0)
      p.argv_s.insert(p.argv_s.end(), {kPrlimit, "--nproc=" + std::to_string(L.processes), "--"});
    if (tool) p.argv_s.insert(p.argv_s.end(), spec.tool.begin(), spec.tool.end());
    else p.argv_s.push_back(kProgramInside);
  }
  p.env_s = environment(spec, tool ? view.chdir : fallback ? at.workdir : "/box", tool);
  p.argv = c_strings(p.argv_s);
  p.envp = c_strings(p.env_s);
  if (fallback) p.landlock = landlock_plan(view, spec.gpu, /*removals=*/tool);
  p.cpu = static_cast<rlim_t>(std::ceil(L.cpu_seconds));
  p.memory = static_cast<rlim_t>(L.memory_mb) << 20;
  p.fsize = static_cast<rlim_t>(spec.file_size_kb > 0 ? spec.file_size_kb : L.output_kb) << 10;
  // RLIMIT_NPROC counts every task of the uid. A leased uid has none but
  // this run's (bubblewrap adds two) and the lease's holder. The grader's own
  // uid has its user's other tasks, and its other runs: room for a few runs'
  // worth, which bounds the machine's load; inside namespaces prlimit bounds
  // each run.
  p.nproc = static_cast<rlim_t>(at.lease.active() ? L.processes + 3 : tasks_of(geteuid()) + 4 * L.processes + 2);
  return p;
}

// The files between the grader and the child: output, errors and the
// channel (pipes), /dev/null, the request and the filter (memfds), and the
// pipe on which the child says it could not fence itself in.
struct ChildFiles {
  Pipe out, err, channel, report;
  Fd devnull, request, seccomp;
};

bool open_files(const SandboxSpec& spec, bool tool, bool fallback, ChildPlan& p, ChildFiles& f) {
  if (!f.out.open() || !f.err.open() || (!tool && !f.channel.open()) || !f.report.open()) return false;
  f.devnull = Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  // The request's first line is the channel's number and the nonce; the rest, the grader's.
  const std::string request = std::to_string(p.channel_fd) + " " + spec.nonce + "\n" + spec.request;
  if (!tool) f.request = Fd(memfd_with("gradlab-request", request.data(), request.size()));
  if (!fallback) {  // in the fallback the child builds it: the filter names its pid
    SeccompPolicy policy;
    policy.allow_processes = tool;
    policy.gpu = spec.gpu;
    build_seccomp_filter(p.filter, policy);
    f.seccomp = Fd(memfd_with("gradlab-seccomp", p.filter.code, p.filter.length * sizeof(sock_filter)));
  }
  p.out = f.out.write.get(), p.err = f.err.write.get(), p.channel = f.channel.write.get();
  p.devnull = f.devnull.get(), p.request = f.request.get(), p.seccomp = f.seccomp.get(), p.report = f.report.write.get();
  return f.devnull.get() >= 0 && (tool || p.request >= 0) && (fallback || p.seccomp >= 0);
}

// What the run's end says: exit or signal, the fence's failure, its resources.
void describe_end(int status, bool fallback, bool unfenced, const struct rusage& ru,
                  std::chrono::steady_clock::time_point start, SandboxOutcome& o) {
  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  // bubblewrap reports its child's death by signal N as exit code 128 + N.
  if (!fallback && o.exit_code > 128 && o.exit_code < 128 + 65) {
    o.signal = o.exit_code - 128;
    o.exit_code = -1;
  }
  if (unfenced) o.failure = "the sandbox could not fence the work in (the uid change, Landlock or seccomp failed)";
  const double waited_for =
      double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  o.cpu_seconds = std::max(o.cpu_seconds, waited_for);  // the watch's reading, when the clock killed the tree
  o.peak_memory_kb = ru.ru_maxrss;
  o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

SandboxOutcome run_sandboxed(const SandboxSpec& spec) {
  SandboxOutcome o;
  const auto start = std::chrono::steady_clock::now();
  sweep_stale_work_folders();
  const bool tool = !spec.tool.empty();
  Place at;
  const bool prepared = prepare_place(spec, tool, at, o.failure);
  if (at.choice.ok) o.isolation = fence_name(at.choice.fence);
  if (!prepared) return o;
  const bool fallback = at.fallback();
  ChildPlan p = plan_child(spec, tool, at);
  ChildFiles files;
  if (!open_files(spec, tool, fallback, p, files)) {
    o.failure = std::string("cannot prepare the sandbox's files: ") + std::strerror(errno);
    return o;
  }

  pid_t pid = fork_between_writes();
  if (pid == 0) {
    if (fallback) build_seccomp_filter(p.filter, SeccompPolicy{tool, getpid(), spec.gpu});
    exec_child(p);
  }
  // The child's ends are the child's now.
  for (Fd* mine : {&files.out.write, &files.err.write, &files.channel.write, &files.report.write, &files.devnull,
                   &files.request, &files.seccomp})
    mine->reset();
  if (pid < 0) {
    o.failure = std::string("cannot fork: ") + std::strerror(errno);
    return o;
  }
  // Nothing to read once the exec succeeded (the pipe closed with it); a
  // byte when the child could not fence itself in.
  char word = 0;
  ssize_t got;
  while ((got = read(files.report.read.get(), &word, 1)) < 0 && errno == EINTR) {
  }
  files.report.read.reset();
  const bool unfenced = got == 1;
  setpgid(pid, pid);  // also from here, so the group exists before any kill

  const size_t cap = static_cast<size_t>(spec.limits.output_kb) << 10;
  // collect() reads the streams and closes them.
  Stream streams[3] = {{files.out.read.release(), &o.out, cap, &o.out_truncated},
                       {files.err.read.release(), &o.err, cap, &o.err_truncated},
                       {files.channel.read.release(), &o.channel, kMaxChannel, nullptr}};
  struct rusage ru{};
  const int status = collect(pid, streams, tool ? 2 : 3, spec.limits.wall_seconds, start, o, ru, at.workdir);
  describe_end(status, fallback, unfenced, ru, start, o);
  return o;
}

}  // namespace grader

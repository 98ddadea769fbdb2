#include "sandbox.h"

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
#include <filesystem>
#include <random>

#include "config.h"
#include "seccomp.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

constexpr const char* kBwrap = "/usr/bin/bwrap";
constexpr size_t kMaxChannel = 64u << 20;  // a snapshot larger than this is not a snapshot
constexpr int kSeccompFd = 3;  // where bubblewrap reads the filter (the channel is at 10 or above)

// The directories a dynamically linked program needs, bound read-only. On a
// merged-/usr system /lib and friends are symlinks into /usr.
void system_binds(std::vector<std::string>& a) {
  a.insert(a.end(), {"--ro-bind", "/usr", "/usr"});
  for (const char* d : {"/lib", "/lib64", "/lib32", "/bin", "/sbin"}) {
    std::error_code ec;
    auto st = fs::symlink_status(d, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_symlink(st)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(d, ec).string(), d});
    } else {
      a.insert(a.end(), {"--ro-bind", d, d});
    }
  }
  // The dynamic loader's cache and Debian's alternatives (libopenblas.so.0
  // is one) are all of /etc the program sees.
  a.insert(a.end(), {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/alternatives",
                     "/etc/alternatives"});
}

// What every bubblewrap call here shares: all namespaces, gone with its
// parent, the system read-only, a private /proc and /dev.
std::vector<std::string> bwrap_base() {
  std::vector<std::string> a = {kBwrap, "--unshare-all", "--die-with-parent"};
  system_binds(a);
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  return a;
}

// The GPU as the CUDA driver finds it: its device files (/dev/nvidia0,
// nvidiactl, nvidia-uvm, ...) and, read-only, /sys, where it reads the PCI
// topology. /proc/driver/nvidia comes with the sandbox's own /proc.
void gpu_binds(std::vector<std::string>& a) {
  std::error_code ec;
  std::vector<std::string> devs;
  for (const auto& e : fs::directory_iterator("/dev", ec))
    if (e.path().filename().string().rfind("nvidia", 0) == 0) devs.push_back(e.path().string());
  std::sort(devs.begin(), devs.end());
  for (const auto& d : devs) a.insert(a.end(), {"--dev-bind", d, d});
  a.insert(a.end(), {"--ro-bind-try", "/sys", "/sys"});
}

std::vector<std::string> bwrap_prefix(const std::string& workdir, const std::string& program, bool gpu) {
  std::vector<std::string> a = bwrap_base();
  if (gpu) gpu_binds(a);
  // The program, and the library it links (found by its rpath at the same path).
  // The seccomp filter (seccomp.h) waits on fd 3; bubblewrap applies it to
  // the program alone, after building the sandbox with the calls it forbids.
  a.insert(a.end(), {"--new-session", "--tmpfs", "/tmp", "--bind", workdir, "/box", "--ro-bind", program,
                     "/opt/gradlab/program", "--ro-bind-try", GRADLAB_STUDENT_LIB, GRADLAB_STUDENT_LIB, "--chdir", "/box",
                     "--seccomp", std::to_string(kSeccompFd), "--", "/opt/gradlab/program"});
  return a;
}

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

// One of the child's pipes and where its bytes go, up to `cap`.
struct Stream {
  int fd;
  std::string* buf;
  size_t cap;
  bool* truncated;
  bool open = true;
};

}  // namespace

bool bubblewrap_usable() {
  static const bool ok = [] {
    if (access(kBwrap, X_OK) != 0) return false;
    std::vector<std::string> a = bwrap_base();
    a.insert(a.end(), {"--", "/bin/true"});
    auto argv = c_strings(a);
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_RDWR);
      dup2(null, 1), dup2(null, 2);
      execv(kBwrap, argv.data());
      _exit(127);
    }
    if (pid < 0) return false;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return ok;
}

SandboxOutcome run_sandboxed(const SandboxSpec& spec) {
  SandboxOutcome o;
  const auto start = std::chrono::steady_clock::now();

  std::error_code ec;
  std::string tmpl = (fs::temp_directory_path(ec) / "gradlab-run-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    o.failure = std::string("cannot create a working directory: ") + std::strerror(errno);
    return o;
  }
  const std::string workdir = tmpl;

  // The channel's fd number in the child: not 3, and not written anywhere
  // the student's code is told about.
  std::random_device rd;
  const int channel_fd = spec.channel_fd > 2 ? spec.channel_fd : 10 + static_cast<int>(rd() % 40);

  const bool isolate = spec.isolate && bubblewrap_usable();
  o.isolation = isolate ? "bubblewrap" : "rlimits";
  std::vector<std::string> argv_s = isolate ? bwrap_prefix(workdir, spec.program, spec.gpu) : std::vector<std::string>{spec.program};
  argv_s.push_back(std::to_string(channel_fd));
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<std::string> env_s = {"PATH=/usr/bin:/bin", "HOME=" + std::string(isolate ? "/box" : workdir),
                                    "LANG=C.UTF-8", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"};
  if (spec.gpu) env_s.push_back("GRADLAB_CUDA_MEMORY_LIMIT_MB=" + std::to_string(spec.limits.memory_mb));
  auto argv = c_strings(argv_s);
  auto envp = c_strings(env_s);
  const std::string exe = argv_s[0];

  int out_p[2], err_p[2], chan_p[2];
  if (pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC) || pipe2(chan_p, O_CLOEXEC)) {
    o.failure = std::string("cannot create pipes: ") + std::strerror(errno);
    fs::remove_all(workdir, ec);
    return o;
  }
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Under bubblewrap the filter travels in a memfd; without it, the child
  // installs it itself (it needs its own pid).
  int filter_fd = -1;
  if (isolate) {
    SeccompFilter f;
    build_seccomp_filter(f, /*restrict_signals=*/false, 0);
    filter_fd = memfd_create("gradlab-seccomp", MFD_CLOEXEC);
    const ssize_t bytes = static_cast<ssize_t>(f.length * sizeof(sock_filter));
    if (filter_fd < 0 || write(filter_fd, f.code, static_cast<size_t>(bytes)) != bytes || lseek(filter_fd, 0, SEEK_SET) != 0) {
      o.failure = std::string("cannot prepare the seccomp filter: ") + std::strerror(errno);
      for (int fd : {out_p[0], out_p[1], err_p[0], err_p[1], chan_p[0], chan_p[1], devnull, filter_fd})
        if (fd >= 0) close(fd);
      fs::remove_all(workdir, ec);
      return o;
    }
  }
  const Limits& L = spec.limits;
  const rlim_t cpu = static_cast<rlim_t>(std::ceil(L.cpu_seconds));

  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    // Out of the way of the numbers the dups below write to.
    const int filter_high = filter_fd >= 0 ? fcntl(filter_fd, F_DUPFD, 64) : -1;
    dup2(devnull, 0);
    dup2(out_p[1], 1);
    dup2(err_p[1], 2);
    // dup2 clears close-on-exec on the copy, but does nothing at all when
    // the pipe already has that number (likely in `grade batch`, whose
    // threads keep dozens of fds open): then clear it by hand.
    if (chan_p[1] == channel_fd) fcntl(channel_fd, F_SETFD, 0);
    else dup2(chan_p[1], channel_fd);
    // Nothing else crosses exec: another thread's report half written, its
    // pipes, would otherwise be the student's to write to.
    if (filter_high >= 0) dup2(filter_high, kSeccompFd);
    close_range(filter_high >= 0 ? kSeccompFd + 1 : 3, static_cast<unsigned>(channel_fd) - 1, 0);
    close_range(static_cast<unsigned>(channel_fd) + 1, ~0U, 0);
    if (chdir(workdir.c_str()) != 0) _exit(126);
    struct rlimit cpu_rl{cpu, cpu + 1};  // SIGXCPU at the soft limit, SIGKILL one second later
    setrlimit(RLIMIT_CPU, &cpu_rl);
    set_limit(spec.gpu ? RLIMIT_DATA : RLIMIT_AS, static_cast<rlim_t>(L.memory_mb) << 20);
    set_limit(RLIMIT_FSIZE, static_cast<rlim_t>(L.output_kb) << 10);
    set_limit(RLIMIT_NOFILE, spec.gpu ? 256 : 64);  // the driver opens a device file per GPU, and more
    set_limit(RLIMIT_CORE, 0);
    if (!isolate) {
      set_limit(RLIMIT_NPROC, static_cast<rlim_t>(L.processes));
      SeccompFilter f;
      build_seccomp_filter(f, /*restrict_signals=*/true, getpid());
      if (!drop_capabilities() || !install_seccomp_filter(f)) _exit(125);
    }
    execve(exe.c_str(), argv.data(), envp.data());
    const char msg[] = "gradlab: could not start the program\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(out_p[1]);
  close(err_p[1]);
  close(chan_p[1]);
  if (devnull >= 0) close(devnull);
  if (filter_fd >= 0) close(filter_fd);
  if (pid < 0) {
    o.failure = std::string("cannot fork: ") + std::strerror(errno);
    close(out_p[0]), close(err_p[0]), close(chan_p[0]);
    fs::remove_all(workdir, ec);
    return o;
  }
  setpgid(pid, pid);  // also from here, so the group exists before any kill

  const size_t cap = static_cast<size_t>(L.output_kb) << 10;
  Stream streams[3] = {{out_p[0], &o.out, cap, &o.out_truncated},
                       {err_p[0], &o.err, cap, &o.err_truncated},
                       {chan_p[0], &o.channel, kMaxChannel, nullptr}};
  const auto deadline = start + std::chrono::duration<double>(L.wall_seconds);
  auto kill_group = [&] {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  };

  int status = 0;
  struct rusage ru{};
  bool reaped = false;
  char buf[65536];
  for (;;) {
    if (!reaped) {
      pid_t w = wait4(pid, &status, WNOHANG, &ru);
      if (w == pid) {
        reaped = true;
        // Whatever the program left running (a forked child holding the
        // pipes open) goes with it.
        kill(-pid, SIGKILL);
      }
    }
    pollfd pf[3];
    int n = 0;
    Stream* which[3];
    for (auto& s : streams)
      if (s.open) pf[n] = {s.fd, POLLIN, 0}, which[n++] = &s;
    if (n == 0 && reaped) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      o.timed_out = !reaped;
      kill_group();
      if (!reaped) {
        wait4(pid, &status, 0, &ru);
        reaped = true;
      }
      break;
    }
    const int wait_ms = reaped ? 50 : 10;
    if (n == 0) {
      usleep(1000);
      continue;
    }
    int r = poll(pf, static_cast<nfds_t>(n), wait_ms);
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = *which[i];
      ssize_t got = read(s.fd, buf, sizeof buf);
      if (got <= 0) {
        s.open = false;
        continue;
      }
      const size_t room = s.cap > s.buf->size() ? s.cap - s.buf->size() : 0;
      s.buf->append(buf, std::min(room, static_cast<size_t>(got)));
      if (static_cast<size_t>(got) > room) {
        if (s.truncated) *s.truncated = true;
        o.output_limit = true;
        kill_group();
      }
    }
  }
  for (auto& s : streams) close(s.fd);
  if (!reaped) wait4(pid, &status, 0, &ru);

  if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  // bubblewrap reports its child's death by signal N as exit code 128 + N.
  if (isolate && o.exit_code > 128 && o.exit_code < 128 + 65) {
    o.signal = o.exit_code - 128;
    o.exit_code = -1;
  }
  o.cpu_seconds = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  o.peak_memory_kb = ru.ru_maxrss;
  o.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::remove_all(workdir, ec);
  return o;
}

}  // namespace grader

// A program the fence tests run inside the sandbox: it tries what hostile
// code would try and prints one line per attempt, "NAME ok" or "NAME
// <errno name>", so the test can assert each layer from the outside.
//   fence_probe FILE_OUTSIDE DIR_OUTSIDE   (as a tool)
// Run as a program, it reads the same two from its request on fd 3 (after
// the channel's line), as the harness would.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void report(const char* what, bool ok) {
  std::printf("%s %s\n", what, ok ? "ok" : strerrorname_np(errno));
  std::fflush(stdout);
}

// How many threads it can hold at once (stops at 200).
int thread_count() {
  std::atomic<bool> release{false};
  std::vector<std::thread> held;
  try {
    while (held.size() < 200) held.emplace_back([&] {
        while (!release) usleep(1000);
      });
  } catch (const std::exception&) {
  }
  release = true;
  for (auto& t : held) t.join();
  return static_cast<int>(held.size());
}

// How many MiB it can write to /tmp (stops at 256).
long tmp_mib() {
  const int fd = open("/tmp/fill", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return -1;
  std::vector<char> mib(1 << 20, 'x');
  long n = 0;
  while (n < 256 && write(fd, mib.data(), mib.size()) == static_cast<ssize_t>(mib.size())) ++n;
  close(fd);
  unlink("/tmp/fill");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, dir;
  if (argc >= 3) {
    file = argv[1], dir = argv[2];
  } else {
    char buf[4096] = {};
    const ssize_t got = read(3, buf, sizeof buf - 1);
    if (got <= 0) return 64;
    char channel[16], f[2048], d[2048];
    if (std::sscanf(buf, "%15s %2047s %2047s", channel, f, d) != 3) return 64;
    file = f, dir = d;
  }
  signal(SIGXFSZ, SIG_IGN);  // a write past the file-size limit then fails with EFBIG instead
  report("read-outside", open(file.c_str(), O_RDONLY) >= 0);
  report("create-outside", open((dir + "/pwned").c_str(), O_WRONLY | O_CREAT, 0600) >= 0);
  report("mount", mount("none", "/usr", nullptr, MS_REMOUNT | MS_BIND, nullptr) == 0);
  report("unshare", unshare(CLONE_NEWUSER) == 0);
  report("socket", socket(AF_INET, SOCK_STREAM, 0) >= 0);
  report("ptrace", ptrace(PTRACE_ATTACH, getppid() > 0 ? getppid() : 1, nullptr, nullptr) == 0);
  struct rlimit small{1, 1};
  // In its own pid namespace it is pid 1 with no parent in sight: then any
  // other pid stands for the parent (the filter refuses before asking who).
  const pid_t other = getppid() > 0 ? getppid() : getpid() + 1;
  report("prlimit-parent", syscall(SYS_prlimit64, other, RLIMIT_NOFILE, nullptr, &small) == 0);
  report("prlimit-self", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &small) == 0);
  const long child = syscall(SYS_fork);
  if (child == 0) _exit(0);
  report("fork", child > 0);
  report("setown-parent", fcntl(1, F_SETOWN, other) == 0);
  report("personality", personality(ADDR_NO_RANDOMIZE) != -1 && personality(0xffffffff) == ADDR_NO_RANDOMIZE);
  report("create-in-dev", open("/dev/gradlab-probe", O_WRONLY | O_CREAT, 0600) >= 0);
  report("sysctl-write", open("/proc/sys/kernel/core_pattern", O_WRONLY) >= 0);
  std::printf("uid %d\nthreads %d\ntmp-mib %ld\n", static_cast<int>(getuid()), thread_count(), tmp_mib());
  return 0;
}

#include "compile/tools.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/files.h"
#include "fence/sandbox.h"

namespace grader {

ToolStop tool_stop(const SandboxOutcome& o, const ToolLimits& tl) {
  if (!o.timed_out && o.signal == 0 && !o.output_limit) return ToolStop::Finished;
  // A tool the CPU limit stopped has used (nearly) all of it; one that used
  // much less was stopped by something else than the file.
  const bool cpu_to_spare = o.cpu_seconds < 0.9 * tl.cpu_seconds;
  if (!o.output_limit && cpu_to_spare && (o.timed_out || o.signal == SIGKILL)) return ToolStop::Unsettled;
  return ToolStop::Limit;
}

ToolResult run_tool(std::vector<std::string> args, size_t cap) {
  ToolResult r;
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    r.output = std::string("cannot create a pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork_between_writes();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(p[1], 1);
    dup2(p[1], 2);
    close_range(3, ~0U, 0);  // no other thread's files or pipes for the compiler
    struct rlimit cpu{kCompileCpuSeconds, kCompileCpuSeconds + 1}, mem{kCompileMemory, kCompileMemory};
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_AS, &mem);
    execvp(argv[0], argv.data());
    const char msg[] = "gradlab: cannot run the compiler\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    r.output = std::string("cannot fork: ") + std::strerror(errno);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kCompileWallSeconds);
  char buf[8192];
  for (;;) {
    pollfd pf{p[0], POLLIN, 0};
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (ms <= 0) {
      kill(-pid, SIGKILL);
      r.killed = true;
      break;
    }
    int n = poll(&pf, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = read(p[0], buf, sizeof buf);
    if (got <= 0) break;
    if (r.output.size() < cap) r.output.append(buf, static_cast<size_t>(got));
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    r.killed = true;
    r.status = 128 + WTERMSIG(status);
  } else {
    r.status = WEXITSTATUS(status);
  }
  r.truncated = r.output.size() >= cap;
  if (r.truncated && cap == kMaxDiagnostics) r.output += "\n[… diagnostics truncated by gradlab …]\n";
  return r;
}

ToolResult run_fenced(const std::vector<std::string>& args, const std::string& work, const std::vector<std::string>& readable,
                      bool isolate, const ToolLimits& tl) {
  SandboxSpec spec;
  spec.tool = args;
  spec.view.read_only = readable;
  spec.view.writable = work;
  spec.view.chdir = work;
  spec.view.tmpfs = {{"/tmp", 512L << 20}};
  spec.limits.cpu_seconds = tl.cpu_seconds;
  spec.limits.wall_seconds = tl.wall_seconds;
  spec.limits.memory_mb = tl.memory_mb;
  spec.limits.output_kb = tl.output_kb;
  spec.limits.processes = 32;  // the driver, cc1plus, as, collect2, ld
  spec.file_size_kb = tl.file_size_kb;
  spec.isolate = isolate;
  SandboxOutcome o = run_sandboxed(spec);
  ToolResult r;
  r.output = std::move(o.out);
  r.truncated = o.out_truncated;
  if (!o.failure.empty()) {
    r.failure = o.failure;
    r.status = 1;
    return r;
  }
  r.stop = tool_stop(o, tl);
  r.killed = r.stop != ToolStop::Finished;
  r.status = o.signal ? 128 + o.signal : o.exit_code;
  if (o.output_limit && tl.output_kb == long(kMaxDiagnostics >> 10))
    r.output += "\n[… diagnostics truncated by gradlab: the compiler was stopped after " +
                std::to_string(kMaxDiagnostics >> 10) + " KiB of them …]\n";
  else if (r.killed)
    r.output += "\ngradlab: the compiler was stopped after " + std::to_string(int(tl.cpu_seconds)) +
                " s of CPU time, " + std::to_string(int(tl.wall_seconds)) + " s in all, " +
                std::to_string(kCompileMemory >> 30) + " GiB of memory or a 256 MiB file; simplify the code.\n";
  return r;
}

}  // namespace grader

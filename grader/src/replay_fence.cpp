#include "files.h"
#include "replay_fence.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <new>

namespace grader {
namespace {

constexpr int kOutOfMemory = 3, kFailed = 4;

bool write_all(int fd, const std::string& s) {
  for (size_t at = 0; at < s.size();) {
    const ssize_t n = write(fd, s.data() + at, s.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// In the child: the replay under its limits, its answer on `fd`. Never returns.
[[noreturn]] void replay_child(int fd, std::string_view tape, const json& claimed, const json& probes,
                               const std::string& key, const std::vector<Shadow>& shadows, bool own_functions,
                               bool curvature) {
  const rlimit as{static_cast<rlim_t>(kReplayMemoryBytes), static_cast<rlim_t>(kReplayMemoryBytes)};
  const rlimit cpu{static_cast<rlim_t>(kReplayCpuSeconds), static_cast<rlim_t>(kReplayCpuSeconds + 1)};
  setrlimit(RLIMIT_AS, &as);
  setrlimit(RLIMIT_CPU, &cpu);
  signal(SIGPIPE, SIG_DFL);
  try {
    const Verified v = verify(tape, claimed, probes, key, shadows, own_functions, curvature);
    const json out = {{"doc", v.doc}, {"computation", computation_of(v)}};
    _exit(write_all(fd, out.dump(-1, ' ', false, json::error_handler_t::replace)) ? 0 : kFailed);
  } catch (const std::bad_alloc&) {
    _exit(kOutOfMemory);
  } catch (...) {
    _exit(kFailed);
  }
}

FencedReplay failed(const json& claimed, const std::string& why) {
  return {claimed, {{"replayed", false}, {"mismatches", json::array()}, {"unverified", json::array()}, {"failure", why}}};
}

// What ended a child that gave no answer, as the checks will say it.
std::string child_failure(int status, bool late) {
  const std::string gib = std::to_string(kReplayMemoryBytes >> 30) + " GiB";
  if (late) return "replaying it took longer than " + std::to_string(kReplayWallSeconds) + " s";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU)
    return "replaying it took more than " + std::to_string(kReplayCpuSeconds) + " s of CPU time";
  if ((WIFEXITED(status) && WEXITSTATUS(status) == kOutOfMemory) || (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV))
    return "replaying it needed more than " + gib + " of memory (the program made far more than it ever held at once)";
  if (WIFSIGNALED(status)) return "the replay ended with signal " + std::to_string(WTERMSIG(status));
  return "the replay failed (exit code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
}

}  // namespace

json computation_of(const Verified& v) {
  json mismatches = json::array();
  for (const auto& m : v.mismatches)
    mismatches.push_back({{"what", m.what}, {"field", m.field}, {"claimed", m.claimed}, {"computed", m.computed}});
  json c = {{"replayed", v.replayed}, {"mismatches", mismatches}, {"unverified", v.unverified}};
  if (!v.failure.empty()) c["failure"] = v.failure;
  return c;
}

FencedReplay replay_fenced(std::string_view tape, const json& claimed, const json& probes, const std::string& key,
                           const std::vector<Shadow>& shadows, bool own_functions, bool curvature) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return failed(claimed, "the grader could not start the replay (pipe)");
  const pid_t pid = fork_between_writes();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return failed(claimed, "the grader could not start the replay (fork)");
  }
  if (pid == 0) {
    close(fds[0]);
    replay_child(fds[1], tape, claimed, probes, key, shadows, own_functions, curvature);
  }
  close(fds[1]);
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kReplayWallSeconds);
  bool late = false;
  for (char buf[65536];;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      late = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (late) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!late && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    json out = json::parse(text, nullptr, false);
    if (out.is_object() && out.contains("doc") && out.contains("computation"))
      return {std::move(out["doc"]), std::move(out["computation"])};
  }
  return failed(claimed, child_failure(status, late));
}

}  // namespace grader

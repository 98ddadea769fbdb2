#include "common/files.h"
#include "grade/replay_fence.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <new>

namespace grader {
namespace {

constexpr int kOutOfMemory = 3, kFailed = 4;

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
    const std::string text = out.dump(-1, ' ', false, json::error_handler_t::replace);
    _exit(write_all(fd, text.data(), text.size()) ? 0 : kFailed);
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
  const ChildAnswer a = fork_and_read(
      [&](int fd) { replay_child(fd, tape, claimed, probes, key, shadows, own_functions, curvature); }, kReplayWallSeconds,
      kReplayAnswerBytes);
  if (!a.failed.empty()) return failed(claimed, "the grader could not start the replay (" + a.failed + ")");
  if (a.too_long)
    return failed(claimed, "the replay's answer was larger than " + std::to_string(kReplayAnswerBytes >> 20) + " MiB");
  if (!a.late && WIFEXITED(a.status) && WEXITSTATUS(a.status) == 0) {
    json out = json::parse(a.text, nullptr, false);
    if (out.is_object() && out.contains("doc") && out.contains("computation"))
      return {std::move(out["doc"]), std::move(out["computation"])};
  }
  return failed(claimed, child_failure(a.status, a.late));
}

}  // namespace grader

// Watching a sandboxed child (sandbox.cpp starts it; this sees it through).
#pragma once
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <string>

#include "fence/outcome.h"

namespace grader {

// One of the child's pipes and where its bytes go, up to `cap`.
struct Stream {
  int fd;
  std::string* buf;
  size_t cap;
  bool* truncated;
  bool open = true;
};

// Whether a run at its wall-clock deadline gets more wall-clock time (up to
// three times the limit): it was computing (CPU time at least a tenth of the
// time so far) and other work kept it from the CPU (it waited to run, as the
// kernel's schedstat counts, at least a tenth of the time so far), and the
// rest of the machine was computing. A busy
// machine changes no verdict; on an idle one, a program that sleeps between
// bursts gets its limit and no more. `waited` < 0: the kernel does not say
// (no schedstat), and computing is enough, as before.
// `others`: the CPU seconds the rest of the machine computed meanwhile (not
// the run, not the grader), -1 when unknown; it must be at least a quarter of
// a CPU's worth, so that threads of the run's own, queueing behind each other
// on an otherwise idle machine, buy nothing (15 of them did: 15 s, not 5).
bool deserves_more_time(double elapsed, double cpu, double waited, double others);

// Reads the child's pipes until it is gone, or kills it at the deadline,
// past an output cap, or once `watched` (the fallback's working folder)
// holds too much. Returns its wait status.
int collect(pid_t pid, Stream* streams, size_t n_streams, double wall_seconds,
            std::chrono::steady_clock::time_point start, SandboxOutcome& o, rusage& ru, const std::string& watched = "");

// Removes a folder a run wrote in, folders it shut (mode 000) included.
void remove_tree(const std::string& path);

}  // namespace grader

// Runs a student's program in a child process: rlimits always (CPU time,
// address space, file size, processes, open files, no core), a wall-clock
// watchdog that kills the whole process group, capped stdout/stderr, a fresh
// working directory, and bubblewrap namespaces (user, pid, net, ipc, uts,
// read-only /usr) when bubblewrap is installed and usable. The program's
// result comes back on a pipe at an fd number it is not told about.
#pragma once
#include <string>
#include <vector>

#include "rubric.h"

namespace grader {

struct SandboxSpec {
  std::string program;  // absolute path
  std::vector<std::string> args;
  Limits limits;
  bool isolate = true;  // use bubblewrap when it works here
  int channel_fd = 0;   // the channel's fd number in the program; 0: a random one from 10 to 49
  // A run on the GPU (--device cuda): the NVIDIA device files are bound into
  // the sandbox, and the memory limit caps data (RLIMIT_DATA) and GPU memory
  // (the engine's allocator) instead of address space, because the CUDA
  // driver reserves tens of GiB of addresses it never touches.
  bool gpu = false;
};

struct SandboxOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false, output_limit = false;
  std::string out, err, channel;
  bool out_truncated = false, err_truncated = false;
  double wall_seconds = 0, cpu_seconds = 0;
  long peak_memory_kb = 0;
  std::string isolation;  // "bubblewrap" or "rlimits"
  std::string failure;    // set when the sandbox itself could not start the program
};

SandboxOutcome run_sandboxed(const SandboxSpec& spec);

// Whether bubblewrap can create its namespaces on this machine (checked once).
bool bubblewrap_usable();

}  // namespace grader

// How a fenced run ended, as the fence saw it (sandbox.cpp fills it in,
// watch.cpp while it watches), and the budget of the fallback's working
// folder that the watch holds it to.
#pragma once
#include <cstddef>
#include <string>

namespace grader {

// The fallback's working folder is a folder of the machine's disk, which no
// tmpfs bounds: the grader watches it instead, to the size of the tmpfs the
// namespaces give and a number of entries no exercise comes near.
inline constexpr long kWorkFolderBytes = 64L << 20;
inline constexpr size_t kWorkFolderEntries = 10000;

struct SandboxOutcome {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false, output_limit = false;
  bool disk_limit = false;  // the fallback's working folder outgrew its budget
  std::string out, err, channel;  // a tool's stderr is in `out`, in order
  bool out_truncated = false, err_truncated = false;
  double wall_seconds = 0, cpu_seconds = 0;
  long peak_memory_kb = 0;
  std::string isolation;  // fence_name() of the fence it ran in
  std::string failure;    // set when the sandbox itself could not start it
};

}  // namespace grader

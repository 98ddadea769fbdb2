// Runs untrusted work in a child process inside the fence (fence.h): the
// student's program, or a tool reading the student's file (the compiler, the
// linker, nm). Always: resource limits (CPU time, memory, file size, tasks,
// open files, no core), a wall-clock watchdog that kills the whole process
// group, capped output, stdin from /dev/null, the seccomp filter
// (seccomp.h), no capabilities, and a uid of the run's own when the grader is
// root. The fence is made of namespaces when bubblewrap can make them here,
// else of Landlock (the fallback); where neither can be built the run is
// refused (`failure`), never made unfenced.
//
// The program learns its request (the nonce, the channel's fd number, the
// probes) from fd 3, which the harness's library constructor reads and
// closes before any of the student's code runs; its result comes back on
// the channel, a pipe at a random fd number.
#pragma once
#include <string>
#include <vector>

#include "fence/fence.h"
#include "common/limits.h"
#include "fence/outcome.h"

namespace grader {

enum class Fence { Namespaces, Fallback };
const char* fence_name(Fence f);  // "bubblewrap" or "fallback", as reports name it

// Which fence this machine can build, or "" when it can build none (with why).
struct FenceChoice {
  bool ok = false;
  Fence fence = Fence::Fallback;
  std::string why_not;  // when !ok: what is missing, and what to do
};
FenceChoice choose_fence(bool prefer_namespaces);

struct SandboxSpec {
  // The student's program (absolute path), or, for a tool, its command line
  // (argv[0] absolute) with `view` saying what it may see.
  std::string program;
  std::vector<std::string> tool;
  FenceView view;
  Limits limits;
  long file_size_kb = 0;  // RLIMIT_FSIZE; 0: the output limit
  bool isolate = true;    // namespaces when they work here; false: the fallback fence
  std::string request;    // the program's request, read by the harness from fd 3
  std::string nonce;      // the run's secret, which its result must carry (no spaces or newlines)
  int channel_fd = 0;     // the channel's fd number in the program; 0: a random one from 10 to 49
  // A run on the GPU (--device cuda): the NVIDIA device files are reachable,
  // and the memory limit caps data (RLIMIT_DATA) and GPU memory (the
  // engine's allocator) instead of address space, because the CUDA driver
  // reserves tens of GiB of addresses it never touches.
  bool gpu = false;
};

SandboxOutcome run_sandboxed(const SandboxSpec& spec);

// Whether bubblewrap can create its namespaces on this machine (checked once).
bool bubblewrap_usable();

// A private folder in $TMPDIR for one piece of work, named after this grader
// (gradlab-work-PID.START-XXXXXX), or "" with `error` said.
std::string make_work_folder(std::string& error);

// Removes the work folders of graders that were killed before they could
// clean up (their process is gone), and any older than an hour. Called once
// per process.
void sweep_stale_work_folders();

// The fd the harness reads its request from.
inline constexpr int kRequestFd = 3;

}  // namespace grader

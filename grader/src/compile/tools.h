// The compiler, the assembler, nm and the linker, run for a build: the
// grader's own trusted compiles unfenced with limits (run_tool), anything
// that reads a student's file inside the fence (run_fenced), and how a run
// that was stopped is to be read (tool_stop).
#pragma once
#include <sys/resource.h>

#include <cstddef>
#include <string>
#include <vector>

#include "fence/outcome.h"

namespace grader {

// The compiler gets generous limits, but limits: a template bomb or an
// #include of /dev/zero must end as a compile error, not hang the grader.
// The grader's own trusted compiles (the entry point, the harness against
// LibTorch) get these; a student's file gets kStudent* against the engine
// (a few times the half second an exercise takes with the precompiled
// header) and these against LibTorch (its precompiled header still leaves
// some 6 s of CPU, and the link against LibTorch is slow).
inline constexpr int kCompileCpuSeconds = 60;
inline constexpr double kCompileWallSeconds = 90;
inline constexpr int kStudentCpuSeconds = 20;
inline constexpr double kStudentWallSeconds = 40;
inline constexpr rlim_t kCompileMemory = rlim_t(4) << 30;
inline constexpr size_t kMaxDiagnostics = 64 << 10;

// Why a tool's run ended. Limit and Unsettled are both verdicts on the file
// (it did not compile), but only Limit is one for good.
enum class ToolStop {
  Finished,  // it exited by itself, well or not
  Limit,     // a limit ran out (CPU time, memory, file size, output), or the tool crashed on the file
  // Stopped with CPU time to spare: the wall clock ran out on a busy machine
  // (a compile bomb there, but maybe a heavy honest file that a quieter
  // machine compiles in time), or a SIGKILL came from outside the grader
  // (the kernel's OOM killer, an administrator). Not cached.
  Unsettled,
};

struct ToolResult {
  int status = -1;
  std::string output;
  bool killed = false;     // stopped before it exited (stop != Finished, or the unfenced runner's clock)
  bool truncated = false;  // the output passed the cap and was cut
  std::string failure;     // the fence could not be built: this machine's problem, not the file's
  ToolStop stop = ToolStop::Finished;
};

struct ToolLimits {
  double cpu_seconds = kCompileCpuSeconds, wall_seconds = kCompileWallSeconds;
  long memory_mb = long(kCompileMemory >> 20), output_kb = long(kMaxDiagnostics >> 10);
  long file_size_kb = 256L << 10;  // an object or a program past 256 MiB is no exercise
};

// How a fenced tool's run ended, from what the fence saw.
ToolStop tool_stop(const SandboxOutcome& o, const ToolLimits& tl);

// Output past `cap` bytes is dropped: diagnostics are for reading; a tool
// whose output is data (nm) gets a cap it cannot reach in earnest.
ToolResult run_tool(std::vector<std::string> args, size_t cap = kMaxDiagnostics);

// The student's file is untrusted input to the compiler, the assembler, nm
// and the linker, so they run fenced like the program: as an unprivileged
// uid, seeing the system, the engine's headers and precompiled header, the
// student library and their private work folder, nothing else. An #include
// or .incbin of a course file then fails because the file is not there.
ToolResult run_fenced(const std::vector<std::string>& args, const std::string& work, const std::vector<std::string>& readable,
                      bool isolate, const ToolLimits& tl = {});

}  // namespace grader

// Compiles an exercise file into a program that runs the harness: the
// student's file, a two-line main for the exercise's function, the harness and
// the engine. Results are cached by content (the file's bytes, the function,
// the toolchain and the libraries), so grading an unchanged file again skips
// the compiler; compile errors are cached too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/result.h"

namespace grader {

struct BuildRequest {
  std::string source;        // path to compile, as the compiler should print it
  std::string function;      // the exercise function, e.g. exercise3
  std::string cache_dir;     // root of the compile cache
  // "gradlab", or "libtorch": the same file and harness built against
  // Debian's LibTorch instead (slow to compile; proves the expectations are PyTorch's).
  std::string engine = "gradlab";
  // A student's file: checked before and after compiling (guard.h). The
  // course's own reference solutions are trusted.
  bool guarded = true;
  // Namespaces when bubblewrap works here; false: the fallback fence.
  bool isolate = true;
};

struct BuildOutcome {
  bool ok = false;
  bool cached = false;
  std::string program;      // the executable, when ok
  std::string diagnostics;  // compiler and linker output, plus our hint for common link errors
  // Python habits on the lines the compiler refused (python_habits.h), for
  // a guarded file that did not compile.
  std::vector<CompileHint> hints;
  double seconds = 0;
  std::string failure;      // the grader could not even try (cache not writable, compiler missing)
  std::string source_sha256;  // of the file's text: what the program is, whatever built it
};

// The one call that turns a student's file into a runnable program: the
// cache, the guard, the fenced compile and link, the names restored in the
// diagnostics and the line table, behind it.
BuildOutcome build_program(const BuildRequest& req);

// The line of the student's file where the innermost of these frames (a
// stack trace's return addresses, as the harness reports them) lies, from
// the program's line table; 0 when none does.
int student_line(const BuildOutcome& built, const std::vector<uint64_t>& trace);

// The compile cache's location: $GRADLAB_CACHE, else $XDG_CACHE_HOME/gradlab,
// else ~/.cache/gradlab.
std::string default_cache_dir();

// What the fenced tools may read besides the system: the headers (and the
// precompiled header) the student's file includes, and the library it links.
std::vector<std::string> tool_paths(const std::string& engine);
// Where the HTML report's graph pictures are kept once drawn, in a cache.
inline std::string picture_cache(const std::string& cache_dir) {
  return cache_dir.empty() ? "" : cache_dir + "/pictures";
}

// Whether `--engine libtorch` can work here (libtorch-dev was found at configure time).
bool libtorch_available();

// What compiles a student's file for `engine` ("clang version 14.0.6",
// "GNU 12.2.0"), for reports.
std::string compiler_id(const std::string& engine);

}  // namespace grader

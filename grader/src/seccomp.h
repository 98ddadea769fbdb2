// A seccomp filter for student programs. Exercises need threads (OpenBLAS)
// but never a new process: fork, vfork and clone without CLONE_THREAD fail
// with EPERM, so a fork bomb or a daemon that outlives the run cannot start.
// Without bubblewrap's pid namespace the grader is in reach of kill(), so
// then signals to any process but the program itself fail too, as do
// ptrace and cross-process memory access. Other architectures' system calls
// (int 0x80, x32) fail.
#pragma once
#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>

namespace grader {

struct SeccompFilter {
  sock_filter code[48];
  unsigned short length = 0;
};

// Builds the filter without allocating: a child between fork and exec may
// call it. `restrict_signals`: the rlimits-only case, `self` its pid.
void build_seccomp_filter(SeccompFilter& f, bool restrict_signals, pid_t self);

// Installs it on the calling process (with no_new_privs). Async-signal-safe.
bool install_seccomp_filter(const SeccompFilter& f);

// Gives up every capability, for good (bounding set included), so that a
// grader run as root without bubblewrap does not lend root's powers (mount,
// chown, raw sockets, ...) to a student's program. Async-signal-safe.
bool drop_capabilities();

}  // namespace grader

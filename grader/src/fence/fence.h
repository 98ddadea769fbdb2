// The fence around untrusted work (the student's program, and the compiler
// and linker reading the student's file): who it runs as and what part of
// the file system it sees. Two ways to build the same fence:
//
// - namespaces (bubblewrap): a new user namespace mapped to nobody (65534)
//   with no capabilities and no further user namespaces, new pid, net, ipc
//   and uts namespaces, and a file system made of read-only binds of just
//   what the work needs, sized tmpfs folders and one writable folder;
// - the fallback, where namespaces cannot be made (Docker, Kubernetes and
//   Gradescope's containers forbid them): Landlock confines the process to
//   the same paths (read-only, or the one writable folder), and nothing else
//   of the file system can be opened.
//
// Either way, a grader run as root first drops to a uid of the run's own
// (UidLease), so RLIMIT_NPROC bounds that run's threads (the kernel does not
// apply it to root) and files owned by root stay root's; the seccomp filter
// (seccomp.h) and the resource limits apply to both.
#pragma once
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "fence/lease.h"

namespace grader {

struct FenceView {
  std::vector<std::string> read_only;                        // files or folders, seen at their own path
  std::vector<std::pair<std::string, std::string>> read_only_at;  // {host path, path inside}: namespaces only
  std::string writable;                                      // one folder, at its own path ("" for none)
  std::vector<std::pair<std::string, long>> tmpfs;           // {path inside, bytes}: namespaces only
  std::vector<std::pair<std::string, std::string>> writable_at;  // {host path, path inside}: namespaces only
  std::string chdir;                                         // the working folder inside
};

// Whether bubblewrap can create its namespaces here (checked once), and
// whether the kernel offers Landlock (its ABI version, 0 when it does not).
bool namespaces_usable();
int landlock_abi();

// bubblewrap's arguments for a view, up to and including "--": the command follows.
// `seccomp_fd`: where bubblewrap reads the filter.
std::vector<std::string> bwrap_arguments(const FenceView& view, int seccomp_fd, bool gpu);

// The Landlock rules for a view, prepared before fork; `confine` applies them
// in the child (async-signal-safe: open, the three landlock calls, close).
struct LandlockPlan {
  // Whether files and folders may be removed (or renamed) where it writes:
  // a tool's temporary files yes; a program's no, so that every byte it
  // writes in the fallback's work folder stays where the watch sees it (a
  // file mapped, closed and unlinked held disk no walk saw: 2 GiB against
  // 64 MiB).
  bool removals = true;
  std::vector<std::string> read_only, writable;
  std::vector<const char*> read_only_c, writable_c;
};
LandlockPlan landlock_plan(const FenceView& view, bool gpu, bool removals);
bool confine(const LandlockPlan& plan);

// In the child, before exec: become the leased uid (root only), all
// capabilities gone. Async-signal-safe.
bool become(const UidLease& lease);

// How many tasks (threads) a uid runs now: RLIMIT_NPROC counts all of them,
// so a grader that cannot change uid allows this many plus the run's own.
long tasks_of(uid_t uid);

// The system folders a dynamically linked program needs, for both fences.
std::vector<std::string> system_paths();

}  // namespace grader

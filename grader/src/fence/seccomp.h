// The seccomp filter every piece of untrusted work runs under: the student's
// program, and the compiler and linker reading the student's file.
//
// It is a deny list on top of the other layers (namespaces or Landlock, an
// unprivileged uid, no capabilities), aimed at what those layers cannot take
// away by themselves: calls that change the machine or reach other
// processes. Denied for everyone, with EPERM: mount and the new mount API,
// pivot_root, chroot, unshare, setns, a clone that asks for a namespace, the
// kernel keyring, bpf, perf_event_open, ptrace and cross-process memory or
// file access (process_vm_*, pidfd_getfd, kcmp), modules, kexec, io_uring
// (its requests bypass seccomp), userfaultfd, sockets, prlimit64 aimed at
// another process, making itself a file's owner (F_SETOWN and its ioctls
// send SIGIO to any process) and typing into a terminal (TIOCSTI). The program may not start processes either (threads
// yes: OpenBLAS): fork, vfork and a clone without CLONE_THREAD fail. Where no
// pid namespace stands between the program and the grader, signals may only
// go to the program itself. Other architectures' calls (x32) fail. clone3
// reports ENOSYS: its flags are in memory a filter cannot read, and glibc
// falls back to clone, whose flags it can.
#pragma once
#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>

namespace grader {

struct SeccompFilter {
  sock_filter code[255];  // a jump reaches at most 255 instructions ahead
  unsigned short length = 0;
};

struct SeccompPolicy {
  bool allow_processes = false;  // the compiler: its driver runs cc1plus, as and ld
  pid_t self = 0;                // nonzero: signals only to this pid (or its own group, 0)
  bool gpu = false;              // --device cuda: the driver maps shared anonymous memory
};

// Builds the filter without allocating: a child between fork and exec may
// call it.
void build_seccomp_filter(SeccompFilter& f, const SeccompPolicy& policy);

// An allow list for a parser of untrusted bytes (an archive a student
// handed in): read and write on the descriptors it holds, memory, exit.
// Everything else (open, socket, kill, exec) fails with EPERM, so a parser
// led astray by its input reaches nothing.
void build_parser_filter(SeccompFilter& f);

// Installs it on the calling process (with no_new_privs). Async-signal-safe.
bool install_seccomp_filter(const SeccompFilter& f);

// Gives up every capability, for good (bounding set included), so that a
// grader run as root does not lend root's powers (mount, chown, raw
// sockets, ...) to what it runs. Async-signal-safe.
bool drop_capabilities();

}  // namespace grader

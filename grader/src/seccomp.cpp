#include "seccomp.h"

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace grader {
namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#else
#error "gradlab's seccomp filter knows x86_64 and aarch64"
#endif

constexpr unsigned kNr = offsetof(seccomp_data, nr);
constexpr unsigned kArchOff = offsetof(seccomp_data, arch);
constexpr unsigned kArg0 = offsetof(seccomp_data, args[0]);  // its low 32 bits (little-endian)

// Jump targets, resolved once every block is laid out.
enum Label : unsigned char { kNone, kAllow, kDeny, kNoSys, kCloneCheck, kKillCheck, kTgkillCheck, kLabels };

struct Builder {
  SeccompFilter& f;
  unsigned char jt_label[48] = {}, jf_label[48] = {};
  unsigned short at[kLabels] = {};

  void stmt(unsigned short code, unsigned k) { f.code[f.length++] = {code, 0, 0, k}; }
  void jump(unsigned short code, unsigned k, Label jt, Label jf) {
    jt_label[f.length] = jt, jf_label[f.length] = jf;
    f.code[f.length++] = {code, 0, 0, k};
  }
  void here(Label l) { at[l] = f.length; }
  void resolve() {
    for (unsigned short i = 0; i < f.length; ++i) {
      if (jt_label[i]) f.code[i].jt = static_cast<unsigned char>(at[jt_label[i]] - i - 1);
      if (jf_label[i]) f.code[i].jf = static_cast<unsigned char>(at[jf_label[i]] - i - 1);
    }
  }
};

}  // namespace

void build_seccomp_filter(SeccompFilter& f, bool restrict_signals, pid_t self) {
  f.length = 0;
  Builder b{f};
  const auto eq = [&](unsigned nr, Label to) { b.jump(BPF_JMP | BPF_JEQ | BPF_K, nr, to, kNone); };
  b.stmt(BPF_LD | BPF_W | BPF_ABS, kArchOff);
  b.jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, kNone, kDeny);
  b.stmt(BPF_LD | BPF_W | BPF_ABS, kNr);
#if defined(__x86_64__)
  b.jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, kDeny, kNone);  // the x32 ABI
  eq(SYS_fork, kDeny);
  eq(SYS_vfork, kDeny);
#endif
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes
  // glibc fall back to clone, whose flags it can.
  eq(SYS_clone3, kNoSys);
  eq(SYS_clone, kCloneCheck);
  if (restrict_signals) {
    eq(SYS_kill, kKillCheck);
    eq(SYS_tgkill, kTgkillCheck);
    eq(SYS_tkill, kDeny);
    eq(SYS_pidfd_send_signal, kDeny);
    eq(SYS_ptrace, kDeny);
    eq(SYS_process_vm_readv, kDeny);
    eq(SYS_process_vm_writev, kDeny);
  }
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);  // every other call
  // The checks, then the verdicts: BPF jumps only forward.
  b.here(kCloneCheck);
  b.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
  b.jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, kAllow, kDeny);
  if (restrict_signals) {
    // kill(pid, sig): itself, or its own process group (0).
    b.here(kKillCheck);
    b.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    b.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(self), kAllow, kNone);
    b.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, kAllow, kDeny);
    // tgkill(tgid, tid, sig): a thread of its own (raise, abort, pthread_kill).
    b.here(kTgkillCheck);
    b.stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    b.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(self), kAllow, kDeny);
  }
  b.here(kNoSys);
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  b.here(kAllow);
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  b.here(kDeny);
  b.stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  b.resolve();
}

bool install_seccomp_filter(const SeccompFilter& f) {
  sock_fprog prog{f.length, const_cast<sock_filter*>(f.code)};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

bool drop_capabilities() {
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // EINVAL past the last one
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  return syscall(SYS_capset, &header, data) == 0;
}

}  // namespace grader

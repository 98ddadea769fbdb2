// A uid (and gid) for one run, unused by anyone else while it is held. A
// root grader runs each compile and program as one, so RLIMIT_NPROC bounds
// the run's tasks (the kernel does not apply it to root) and files owned by
// root stay root's.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace grader {

// A lock file per uid in a root-only folder keeps a batch's threads,
// parallel tests and shards on one host apart. Graders with lock folders of
// their own (a chroot's or a container's /run) in one pid namespace are kept
// apart by a holder: a process that runs as the uid while the lease lasts.
// A uid any other process runs as is not taken, so of two graders that lock
// it at once, the one that looks last sees the first one's holder and moves
// on (both may; neither keeps it wrongly). Only a root grader leases one; for
// anyone else `active()` is false and the work runs as the grader's own user.
class UidLease {
 public:
  UidLease();  // takes a free uid when the grader is root
  ~UidLease();
  UidLease(const UidLease&) = delete;
  UidLease& operator=(const UidLease&) = delete;
  bool active() const { return uid_ != 0; }
  static bool is_leased(uid_t uid);  // one of the uids leases hand out
  uid_t uid() const { return uid_; }
  const std::string& error() const { return error_; }  // why a root grader got no uid
  // Kills every process of the uid, its holder among them, and waits until
  // none is left (up to 10 s): done when the lease is given back.
  void end_processes();
  static constexpr const char* kHolderName = "gradlab-lease";  // the holder's name in ps

 private:
  bool hold(uid_t uid);  // starts the holder; false when another process runs as the uid
  uid_t uid_ = 0;
  int lock_fd_ = -1;
  pid_t holder_ = 0;
  std::string error_;
};

}  // namespace grader

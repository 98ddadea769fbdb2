// The program's /tmp and working folder inside the namespaces fence, as
// tmpfs mounts whose bytes and inodes are both capped. bubblewrap's own
// tmpfs (--size) caps only the bytes: empty files cost none, and a run made
// 300 000 of them inside its CPU limit (hostile res-many-inodes). The run's
// child mounts these itself, in a mount namespace of its own (and, for a
// grader that is not root, a user namespace of its own that maps its uid),
// over empty folders of the run's stage; bubblewrap binds them in. They go
// when the run's last process does.
#pragma once
#include <string>
#include <vector>

namespace grader {

constexpr long kTmpfsInodes = 4096;  // files and folders in each; an exercise writes a handful

struct CappedTmpfs {
  std::vector<std::string> dirs;  // the host folders mounted over
  std::string options;            // size=…,nr_inodes=…,mode=0700,uid=…,gid=…
  bool own_user_namespace = false;
  std::string uid_map, gid_map;   // "UID UID 1" when own_user_namespace
};

// The plan for a run whose files belong to `uid`:`gid`, over `dirs`.
CappedTmpfs capped_tmpfs(const std::vector<std::string>& dirs, long bytes, unsigned uid, unsigned gid);

// Whether this machine lets the grader mount them (root, or unprivileged
// user namespaces): tried once, in a child, and remembered.
bool capped_tmpfs_available();

// In the run's child, between fork and exec: async-signal-safe calls only.
bool mount_capped_tmpfs(const CappedTmpfs& c);

}  // namespace grader

// Archives students hand in (exercise3.zip made on macOS, a tarball of a
// folder), opened the way a careful TA would, and no further.
//
// The bytes are parsed by libarchive in a child process that can do nothing
// but read what it was handed and write its answer to a pipe: every
// descriptor but the pipe is closed, a seccomp allow list refuses open,
// socket, kill and exec, and rlimits bound its memory and CPU time. Nothing
// is ever written to disk, so an entry named "../../.bashrc" or "/etc/x"
// reaches nothing; it is still refused and said, as are links, devices and
// fifos. macOS's companions (__MACOSX/, "._name", .DS_Store) are passed over
// without a word.
//
// Limits, each a verdict on the archive with its numbers, never a grader
// that hangs or fills memory: its size, the entry count, the sum of its
// entries' sizes and their ratio to the archive's size (a bomb), the depth
// of its paths, and archives inside archives (one level is opened).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

struct ArchiveLimits {
  uint64_t archive_bytes = uint64_t(32) << 20;    // the archive file itself
  uint64_t unpacked_bytes = uint64_t(256) << 20;  // all its entries together, as they unpack
  uint64_t ratio = 200;                           // unpacked / packed, past the first MiB
  uint64_t entries = 5000;
  int path_depth = 16;        // folders in an entry's path
  int nesting = 1;            // archives opened inside an archive
  uint64_t file_bytes = 1 << 20;  // the most of one source file kept (one byte more says it is larger)
  // CPU time bounds the work; the wall clock only a child that stopped
  // answering, and is generous so that a busy machine changes no verdict.
  int cpu_seconds = 10, wall_seconds = 120;
};

struct ArchiveMember {
  std::string path;  // inside the archive, '/'-separated; a nested archive's members as "inner.zip/…"
  uint64_t size = 0;  // as it unpacked
  std::string text;   // its bytes, for a wanted file (at most file_bytes + 1)
  bool unread = false;  // wanted, but past the first 100 wanted files: its bytes did not come back
  int64_t mtime = 0;    // its time in the archive (seconds since the epoch), 0 when it has none
};

struct ArchiveSkip {
  std::string path;
  std::string why;
};

struct Unpacked {
  std::string refused;  // non-empty: the archive as a whole was not opened, and why
  std::vector<ArchiveMember> files;  // regular files, in the archive's order
  std::vector<ArchiveSkip> skipped;  // entries refused (links, devices, paths out, nested too deep)
};

// "exercise3.zip", "lab.tar.gz", "lab.tgz", "lab.tar" (any letter case).
bool archive_named(std::string_view name);
// Its name without the archive's ending ("exercise3" of "Exercise3.tar.gz"); "" when it names no archive.
std::string archive_stem(std::string_view name);

// Opens the archive `bytes` under the limits, in a fenced child. The bytes
// of the files whose own name `wanted` accepts (the first 100) come back;
// of the others, their names and sizes.
Unpacked unpack_fenced(std::string_view bytes, const std::function<bool(const std::string&)>& wanted,
                       const ArchiveLimits& limits = {});

}  // namespace grader

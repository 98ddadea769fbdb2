// Small file helpers the grader shares: whole-file reads, and writes that
// land atomically (a temporary beside the target, then a rename), so that a
// reader never sees half a cache entry or half a report.
#pragma once
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <shared_mutex>
#include <string>

namespace grader {

// The file's bytes, or nullopt when it cannot be read.
// Executables the grader writes (a program staged for a run, one copied into
// the compile cache) against the processes it forks. A child forked while
// another thread writes an executable inherits the write descriptor (the
// replay's child keeps it for its whole run), and an exec of that file then
// fails with ETXTBSY: a student's program "ended before the grader could
// read its results" in grade check and batches, now and then. Writers hold
// the lock alone; forks share it, so none happens in the middle of a write.
std::shared_mutex& executable_writes();
// fork(), never while an executable is being written.
pid_t fork_between_writes();

// Every byte of `n` at `p` to `fd`, through short writes and EINTR.
bool write_all(int fd, const void* p, size_t n);

// What a child forked to do untrusted or unbounded work (the replay, the
// unpacker) wrote on its pipe: read until it ends, past `wall_seconds` or
// past `max_bytes` (then it is killed), and how it ended. `child` runs in
// the child with the pipe's write end and must _exit() itself.
struct ChildAnswer {
  std::string text;
  int status = 0;        // waitpid's
  bool late = false;     // killed at the wall clock
  bool too_long = false;  // killed past max_bytes
  std::string failed;    // "pipe" or "fork": no child ran
};
ChildAnswer fork_and_read(const std::function<void(int fd)>& child, int wall_seconds, size_t max_bytes);

std::optional<std::string> read_file(const std::string& path);

// ".tmp<pid>.<n>": a name for a temporary that no other grader process, and
// no other thread of this one, uses at the same time.
std::string unique_temp_suffix();

// ASCII letters in lower case, every other byte as it is (file names, e-mails, logins).
std::string ascii_lower(std::string s);

// A JSON file the course itself holds (a rubric, an .expect.json, a
// report): throws std::runtime_error when it cannot be read, and the
// parser's error when it is not JSON.
nlohmann::ordered_json read_json_file(const std::string& path);

// Writes `content` to `path` atomically; returns "" or what went wrong.
std::string write_file_atomic(const std::string& path, const std::string& content);
// The same into a file whose folders are made first; throws what went wrong
// (a release's files, which cannot be written in part).
void write_text(const std::string& path, const std::string& content);

}  // namespace grader

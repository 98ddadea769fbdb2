// The sandbox's plumbing when the grader has many files open, as `grade
// batch` does with its threads: the channel must reach the program whatever
// fd number its pipe got, and no other open file may reach it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "sandbox.h"

namespace {

// A program that writes "ok" on the channel (whose number is the first line
// of its request, on fd 3) and lists the numbers of its open fds on stderr,
// with builtins only (the sandbox lets a program start threads, not
// processes).
std::string script() {
  const auto path = std::filesystem::temp_directory_path() / ("gradlab-sandbox-test-" + std::to_string(getpid()));
  std::ofstream(path) << "#!/bin/bash\nIFS= read -r ch <&3\nprintf ok >&\"$ch\"\nfor f in /proc/$$/fd/*; do echo \"${f##*/}\"; done >&2\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

std::set<int> fds(const std::string& listing) {
  std::set<int> s;
  size_t at = 0;
  while (at < listing.size()) {
    const size_t end = std::min(listing.find('\n', at), listing.size());
    if (end > at) s.insert(std::stoi(listing.substr(at, end - at)));
    at = end + 1;
  }
  return s;
}

}  // namespace

TEST_CASE("the channel reaches the program even when its pipe already has the channel's number", "[sandbox]") {
  const std::string program = script();
  // Fill every fd below 30, then free 24 to 29: the sandbox's three pipes
  // (stdout, stderr, the channel) take them, the channel's write end one of
  // the last. Whichever it is, one of the runs below asks for that number.
  std::vector<int> held;
  for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) {
    if (fd >= 30) {
      close(fd);
      break;
    }
    held.push_back(fd);
  }
  for (int fd = 24; fd < 30; ++fd)
    if (std::find(held.begin(), held.end(), fd) != held.end()) close(fd);
  for (int channel = 24; channel <= 31; ++channel) {
    grader::SandboxSpec spec;
    spec.program = program;
    spec.isolate = false;
    spec.channel_fd = channel;
    const auto o = grader::run_sandboxed(spec);
    INFO("channel fd " << channel);
    CHECK(o.failure.empty());
    CHECK(o.channel == "ok");
  }
  for (int fd : held)
    if (fd < 24) close(fd);
  std::filesystem::remove(program);
}

TEST_CASE("no file the grader has open reaches the program", "[sandbox]") {
  const std::string program = script();
  // A file another thread might be writing, opened without O_CLOEXEC, at a
  // number no shell uses for itself.
  const auto leak_path = std::filesystem::temp_directory_path() / ("gradlab-leak-" + std::to_string(getpid()));
  const int opened = open(leak_path.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(opened >= 0);
  const int leak = dup2(opened, 77);
  close(opened);
  grader::SandboxSpec spec;
  spec.program = program;
  spec.isolate = false;
  spec.channel_fd = 40;
  const auto o = grader::run_sandboxed(spec);
  CHECK(o.channel == "ok");
  INFO(o.err);
  const auto open_in_child = fds(o.err);
  CHECK(open_in_child.count(0) == 1);
  CHECK(open_in_child.count(40) == 1);
  CHECK(open_in_child.count(77) == 0);
  close(leak);
  std::filesystem::remove(leak_path);
  std::filesystem::remove(program);
}

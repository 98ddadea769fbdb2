// The sandbox's plumbing when the grader has many files open, as `grade
// batch` does with its threads: the channel must reach the program whatever
// fd number its pipe got, and no other open file may reach it.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "sandbox.h"

namespace {

// A program that writes "ok" on the channel (its first argument) and lists
// its open fds on stderr, as `ls -l /proc/PID/fd` shows them ("N -> target").
std::string script() {
  const auto path = std::filesystem::temp_directory_path() / ("gradlab-sandbox-test-" + std::to_string(getpid()));
  std::ofstream(path) << "#!/bin/bash\nprintf ok >&\"$1\"\nls -l /proc/$$/fd >&2\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

// fd number -> what it is open on.
std::map<int, std::string> fds(const std::string& listing) {
  std::map<int, std::string> m;
  size_t at = 0;
  while (at < listing.size()) {
    const size_t end = std::min(listing.find('\n', at), listing.size());
    const std::string line = listing.substr(at, end - at);
    const size_t arrow = line.find(" -> ");
    if (arrow != std::string::npos) {
      const size_t space = line.rfind(' ', arrow - 1);
      m[std::stoi(line.substr(space + 1, arrow - space - 1))] = line.substr(arrow + 4);
    }
    at = end + 1;
  }
  return m;
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
  // A file another thread might be writing, opened without O_CLOEXEC.
  const auto leak_path = std::filesystem::temp_directory_path() / ("gradlab-leak-" + std::to_string(getpid()));
  const int leak = open(leak_path.c_str(), O_WRONLY | O_CREAT, 0600);
  REQUIRE(leak >= 0);
  grader::SandboxSpec spec;
  spec.program = program;
  spec.isolate = false;
  spec.channel_fd = 40;
  const auto o = grader::run_sandboxed(spec);
  CHECK(o.channel == "ok");
  INFO(o.err);
  const auto open_in_child = fds(o.err);
  CHECK(open_in_child.size() >= 4);
  for (const auto& [fd, target] : open_in_child) {
    CHECK(target != leak_path.string());
    // stdin, stdout, stderr, the channel, and bash's own script
    CHECK((fd <= 2 || fd == 40 || target == program));
  }
  close(leak);
  std::filesystem::remove(leak_path);
  std::filesystem::remove(program);
}

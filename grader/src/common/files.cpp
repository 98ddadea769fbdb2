#include "common/files.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace grader {

std::shared_mutex& executable_writes() {
  static std::shared_mutex m;
  return m;
}

pid_t fork_between_writes() {
  std::shared_lock<std::shared_mutex> no_write(executable_writes());
  return fork();
}

bool write_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    const ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w, n -= static_cast<size_t>(w);
  }
  return true;
}

ChildAnswer fork_and_read(const std::function<void(int fd)>& child, int wall_seconds, size_t max_bytes) {
  ChildAnswer a;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return a.failed = "pipe", a;
  const pid_t pid = fork_between_writes();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return a.failed = "fork", a;
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(127);  // (a child returns only by mistake)
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wall_seconds);
  for (std::unique_ptr<char[]> buf(new char[1 << 16]);;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      a.late = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;  // EINTR, or the deadline (checked above)
    const ssize_t n = read(fds[0], buf.get(), 1 << 16);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    a.text.append(buf.get(), static_cast<size_t>(n));
    if (a.text.size() > max_bytes) {
      a.too_long = true;
      break;
    }
  }
  close(fds[0]);
  if (a.late || a.too_long) kill(pid, SIGKILL);
  while (waitpid(pid, &a.status, 0) < 0 && errno == EINTR) {
  }
  return a;
}


std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::ordered_json read_json_file(const std::string& path) {
  const auto text = read_file(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  return nlohmann::ordered_json::parse(*text);
}

std::string unique_temp_suffix() {
  static std::atomic<unsigned> serial{0};
  return ".tmp" + std::to_string(getpid()) + "." + std::to_string(serial++);
}

std::string write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + unique_temp_suffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << content;
    if (!out) return "cannot write " + tmp;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return "cannot write " + path;
  }
  return "";
}

void write_text(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const std::string err = write_file_atomic(path, content);
  if (!err.empty()) throw std::runtime_error(err);
}

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace grader

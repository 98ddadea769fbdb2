#include "files.h"

#include <unistd.h>

#include <atomic>
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

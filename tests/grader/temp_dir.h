// A scratch folder for a test case, removed with everything in it at the
// end, and a one-line writer of files in it (folders made as needed).
#pragma once
#include "catch_compat.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gradlab_test {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "gradlab-test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    REQUIRE(mkdtemp(t.data()));
    path = t;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace gradlab_test

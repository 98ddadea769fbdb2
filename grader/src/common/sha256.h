// SHA-256 (FIPS 180-4), for content hashes: the compile cache's keys and the
// submission hash in a report.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace grader {

class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view data);
  std::string hex();  // finishes; the object is spent afterwards

 private:
  void block(const unsigned char* p);
  uint32_t h_[8];
  unsigned char buf_[64];
  size_t used_ = 0;
  uint64_t bits_ = 0;
};

inline std::string sha256_hex(std::string_view data) { return Sha256().update(data).hex(); }

}  // namespace grader

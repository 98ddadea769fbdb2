// Catch2 as the tests use it, from either generation Debian ships: 2.13
// (Debian 12) is one header; 3 (Debian 13, Ubuntu 24.04) is split into
// several, its main comes from Catch2::Catch2WithMain, and its string
// matchers and Approx moved into namespaces. The tests are written against
// 2.13's names; under 3 these give them the same meaning.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#include <string>

namespace Catch {
inline auto Contains(const std::string& s, CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(s, cs);
}
using Matchers::EndsWith;
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif

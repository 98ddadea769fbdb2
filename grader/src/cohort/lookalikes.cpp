#include "cohort/lookalikes.h"

#include <unicode/unorm2.h>
#include <unicode/uspoof.h>
#include <unicode/ustring.h>

#include <map>
#include <memory>

namespace grader {
namespace {

// ICU's UTF-16 for a UTF-8 string; invalid bytes become U+FFFD.
std::u16string utf16(std::string_view s) {
  std::u16string out(s.size() + 1, u'\0');
  int32_t n = 0;
  UErrorCode e = U_ZERO_ERROR;
  u_strFromUTF8WithSub(reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &n, s.data(),
                       static_cast<int32_t>(s.size()), 0xFFFD, nullptr, &e);
  out.resize(U_SUCCESS(e) ? static_cast<size_t>(n) : 0);
  return out;
}

std::u16string folded(const std::u16string& s) {
  UErrorCode e = U_ZERO_ERROR;
  const UNormalizer2* nfkc_cf = unorm2_getNFKCCasefoldInstance(&e);
  if (U_FAILURE(e)) return s;
  std::u16string out(s.size() * 4 + 16, u'\0');  // NFKC can grow a string; retried below when not enough
  for (int tries = 0; tries < 2; ++tries) {
    e = U_ZERO_ERROR;
    const int32_t n = unorm2_normalize(nfkc_cf, reinterpret_cast<const UChar*>(s.data()), static_cast<int32_t>(s.size()),
                                       reinterpret_cast<UChar*>(out.data()), static_cast<int32_t>(out.size()), &e);
    if (e == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<size_t>(n) + 1, u'\0');
      continue;
    }
    if (U_FAILURE(e)) return s;
    out.resize(static_cast<size_t>(n));
    return out;
  }
  return s;
}

}  // namespace

std::string name_skeleton(std::string_view utf8) {
  const std::u16string name = folded(utf16(utf8));
  UErrorCode e = U_ZERO_ERROR;
  std::unique_ptr<USpoofChecker, void (*)(USpoofChecker*)> sc(uspoof_open(&e), uspoof_close);
  if (U_FAILURE(e)) return std::string(utf8);
  std::string out(name.size() * 12 + 16, '\0');
  for (int tries = 0; tries < 2; ++tries) {
    e = U_ZERO_ERROR;
    std::string in8(name.size() * 3 + 1, '\0');
    int32_t n8 = 0;
    u_strToUTF8(in8.data(), static_cast<int32_t>(in8.size()), &n8, reinterpret_cast<const UChar*>(name.data()),
                static_cast<int32_t>(name.size()), &e);
    if (U_FAILURE(e)) return std::string(utf8);
    e = U_ZERO_ERROR;
    const int32_t n = uspoof_getSkeletonUTF8(sc.get(), 0, in8.data(), n8, out.data(), static_cast<int32_t>(out.size()), &e);
    if (e == U_BUFFER_OVERFLOW_ERROR) {
      out.assign(static_cast<size_t>(n) + 1, '\0');
      continue;
    }
    if (U_FAILURE(e)) return std::string(utf8);
    out.resize(static_cast<size_t>(n));
    return out;
  }
  return std::string(utf8);
}

std::vector<std::vector<std::string>> lookalike_groups(const std::vector<std::string>& names) {
  std::map<std::string, size_t> group_of;  // skeleton -> index in `groups`
  std::vector<std::vector<std::string>> groups;
  for (const auto& n : names) {
    auto [it, fresh] = group_of.emplace(name_skeleton(n), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(n);
  }
  std::vector<std::vector<std::string>> out;
  for (auto& g : groups)
    if (g.size() > 1) out.push_back(std::move(g));
  return out;
}

}  // namespace grader

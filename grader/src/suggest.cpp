#include "suggest.h"

#include <algorithm>

namespace grader {

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: Levenshtein plus the transposition typists make.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest(const std::string& word, const std::vector<std::string>& known) {
  if (word.size() > 64) return "";  // not a typo of anything here
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;  // further than this is a guess
  for (const auto& k : known) {
    const size_t d = edit_distance(word, k);
    if (d < best_d) best = k, best_d = d;
  }
  return best;
}

}  // namespace grader

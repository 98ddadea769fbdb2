#include "cli/suggest.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

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

namespace {

// "ex3" as ("ex", 3): the letters before a number at the end, lower case,
// and the number (-1 when there is none).
std::pair<std::string, long> letters_and_number(const std::string& w) {
  size_t i = w.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(w[i - 1]))) --i;
  std::string letters;
  for (size_t k = 0; k < i; ++k) letters += static_cast<char>(std::tolower(static_cast<unsigned char>(w[k])));
  if (i == w.size() || w.size() - i > 9) return {letters, -1};
  return {letters, std::stol(w.substr(i))};
}

}  // namespace

std::string closest(const std::string& word, const std::vector<std::string>& known) {
  if (word.size() > 64) return "";  // not a typo of anything here
  // A number, or a name cut short before it: 3, ex3, Exercise03 -> exercise3.
  const auto [letters, number] = letters_and_number(word);
  if (number >= 0)
    for (const auto& k : known) {
      const auto [kl, kn] = letters_and_number(k);
      if (kn == number && kl.compare(0, letters.size(), letters) == 0) return k;
    }
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;  // further than this is a guess
  for (const auto& k : known) {
    const size_t d = edit_distance(word, k);
    if (d < best_d) best = k, best_d = d;
  }
  return best;
}

}  // namespace grader

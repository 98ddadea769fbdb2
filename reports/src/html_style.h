// report.html's look: the colours as named pairs of text on background (so a
// test can hold every pair to WCAG's 4.5:1), and the stylesheet built from
// them, inlined into each page.
#pragma once
#include <string>
#include <vector>

namespace reports {

struct Swatch {
  const char* name;        // the CSS custom properties --NAME-fg and --NAME-bg
  const char* foreground;  // "#rrggbb"
  const char* background;
};
const std::vector<Swatch>& palette();

// WCAG 2's contrast ratio of two "#rrggbb" colours (1 to 21).
double contrast_ratio(const std::string& a, const std::string& b);

std::string stylesheet();

}  // namespace reports

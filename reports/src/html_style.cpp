#include "html_style.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace reports {

const std::vector<Swatch>& palette() {
  // Primer-like colours; every foreground is read on its own background.
  static const std::vector<Swatch> p = {
      {"page", "#1f2328", "#f6f8fa"},        // body text on the page
      {"card", "#1f2328", "#ffffff"},        // text in a card
      {"muted", "#59636e", "#ffffff"},       // secondary text in a card
      {"muted-page", "#59636e", "#f6f8fa"},  // secondary text on the page
      {"code", "#1f2328", "#f6f8fa"},        // expected / found values
      {"console", "#e6edf3", "#161b22"},     // compiler and program output
      {"link", "#0969da", "#ffffff"},
      {"passed", "#116329", "#dafbe1"},
      {"failed", "#a40e26", "#ffebe9"},
      {"not-run", "#7a4d00", "#fff8c5"},
      {"hint", "#0a3069", "#ddf4ff"},
      {"verdict-passed", "#ffffff", "#1a7f37"},
      {"verdict-failed", "#ffffff", "#cf222e"},
      {"verdict-error", "#ffffff", "#9a6700"},
      {"tag", "#1f2328", "#eaeef2"},
  };
  return p;
}

double contrast_ratio(const std::string& a, const std::string& b) {
  auto luminance = [](const std::string& hex) {
    const long v = std::strtol(hex.c_str() + (hex[0] == '#'), nullptr, 16);
    double l = 0;
    const double weight[3] = {0.2126, 0.7152, 0.0722};
    for (int i = 0; i < 3; ++i) {
      const double c = static_cast<double>((v >> (16 - 8 * i)) & 0xff) / 255.0;
      l += weight[i] * (c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4));
    }
    return l;
  };
  const double x = luminance(a), y = luminance(b);
  return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

std::string stylesheet() {
  std::string css = ":root{";
  for (const auto& s : palette())
    css += std::string("--") + s.name + "-fg:" + s.foreground + ";--" + s.name + "-bg:" + s.background + ";";
  css += "}\n";
  css += R"CSS(*{box-sizing:border-box}
body{margin:0;background:var(--page-bg);color:var(--page-fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:70rem;margin:0 auto;padding:1.5rem 1rem 3rem}
a{color:var(--link-fg)}
h1,h2,h3{line-height:1.25;margin:0 0 .5rem}
h1{font-size:1.75rem}
h2{font-size:1.25rem;display:flex;gap:.75rem;align-items:baseline;flex-wrap:wrap}
h3{font-size:1.05rem}
.card h3{margin-top:1.25rem}
.sub{font-weight:400;font-size:.95rem;color:var(--muted-fg)}
.card{background:var(--card-bg);color:var(--card-fg);border:1px solid #d1d9e0;border-radius:12px;padding:1.25rem 1.5rem;margin:0 0 1.25rem;box-shadow:0 1px 2px rgba(31,35,40,.06)}
.eyebrow{margin:0 0 .25rem;font-size:.8rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted-fg)}
.summary{display:flex;flex-wrap:wrap;align-items:center;gap:1rem 1.5rem;margin:1rem 0}
.verdict{margin:0;padding:.35rem .9rem;border-radius:999px;font-weight:700;font-size:1.05rem}
.verdict-passed{color:var(--verdict-passed-fg);background:var(--verdict-passed-bg)}
.verdict-failed{color:var(--verdict-failed-fg);background:var(--verdict-failed-bg)}
.verdict-error{color:var(--verdict-error-fg);background:var(--verdict-error-bg)}
.score{margin:0;font-size:1.1rem}
.score strong{font-size:2rem}
.meter{flex:1 1 12rem;height:.6rem;border-radius:999px;background:var(--tag-bg);overflow:hidden;min-width:8rem}
.meter span{display:block;height:100%;background:var(--verdict-passed-bg)}
.lede{margin:.25rem 0 1rem}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0;font-size:.9rem}
.facts dt{color:var(--muted-fg)}
.facts dd{margin:0;overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.875rem}
.checks{list-style:none;margin:0;padding:0}
.check{border:1px solid #d1d9e0;border-radius:10px;margin:.6rem 0;overflow:hidden}
.check-head{display:flex;align-items:center;gap:.75rem;padding:.55rem .9rem;flex-wrap:wrap}
.check-name{flex:1 1 16rem;font-weight:600}
.points{font-variant-numeric:tabular-nums;color:var(--muted-fg)}
.status{display:inline-block;min-width:6.5rem;padding:.1rem .6rem;border-radius:999px;font-size:.85rem;font-weight:700;text-align:center}
.status-passed{color:var(--passed-fg);background:var(--passed-bg)}
.status-failed{color:var(--failed-fg);background:var(--failed-bg)}
.status-not_run{color:var(--not-run-fg);background:var(--not-run-bg)}
.check-failed{border-left:6px solid var(--verdict-failed-bg)}
.check-not_run{border-left:6px solid var(--verdict-error-bg)}
.check-passed{border-left:6px solid var(--verdict-passed-bg)}
.detail{padding:0 .9rem .8rem 1rem}
.detail dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0 0 .6rem}
.detail dt{font-weight:600;color:var(--muted-fg);padding-top:.3rem}
.detail dd{margin:0;min-width:0}
.value{margin:0;padding:.35rem .6rem;background:var(--code-bg);color:var(--code-fg);border-radius:6px;white-space:pre-wrap;overflow-wrap:anywhere}
.why{margin:.3rem 0 0}
.hint{margin:.4rem 0 0;padding:.6rem .8rem;border-radius:8px;background:var(--hint-bg);color:var(--hint-fg)}
.console{margin:.5rem 0 1rem;padding:.8rem 1rem;border-radius:8px;background:var(--console-bg);color:var(--console-fg);white-space:pre-wrap;overflow-wrap:anywhere;max-height:32rem;overflow:auto}
.cut{font-style:italic}
.tag{display:inline-block;padding:0 .5rem;border-radius:6px;background:var(--tag-bg);color:var(--tag-fg);font-size:.85rem}
figure{margin:1rem 0 1.75rem}
figure img{display:block;max-width:100%;height:auto;background:#ffffff;border:1px solid #d1d9e0;border-radius:8px;padding:.5rem}
figcaption{margin:.5rem 0;color:var(--muted-fg);font-size:.9rem}
.differences{margin:.4rem 0;padding-left:1.25rem}
details{margin:.4rem 0}
summary{cursor:pointer;color:var(--link-fg)}
.legend{font-size:.9rem;color:var(--muted-fg)}
.swatch{display:inline-block;width:.9rem;height:.9rem;border:1px solid #59636e;vertical-align:-.1rem;margin:0 .25rem 0 .75rem}
footer{margin-top:1.5rem;font-size:.85rem;color:var(--muted-page-fg);text-align:center}
@media print{.card{box-shadow:none;break-inside:avoid}.console{max-height:none}}
)CSS";
  return css;
}

}  // namespace reports

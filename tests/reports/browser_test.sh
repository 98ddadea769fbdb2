#!/usr/bin/env bash
# report.html in a real browser: the real CLI grades a failing submission (a
# graph check fails, so there is a side-by-side picture), then headless
# Chromium opens the page inside a checking page and reports what it
# rendered: the score, every check's name and status as text, every picture
# decoded, the alt texts, no script in the report, and the contrast of every
# piece of text against the background it is drawn on (WCAG's 4.5:1).
#   browser_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# Exits 77 (skipped) when Chromium is not installed; CI installs it.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "skipped: Chromium is not installed (apt-get install chromium)"
  exit 77
fi
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
cd "$src" || exit 1
out=$scratch/report
"$grade" exercise3 tests/fixtures/exercise3/one-expression.cpp --out "$out" >/dev/null
if [ ! -f "$out/report.html" ] || [ ! -f "$out/report.json" ]; then
  echo "FAIL: the grader wrote no report.html/report.json"; exit 1
fi
pictures=$(ls "$out" | grep -c '^graph-.*\.png$')

{
  echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>check</title></head><body><pre id="result">pending</pre>'
  echo '<iframe id="page" src="report.html" style="width:1200px;height:900px"></iframe><script>'
  printf 'const report = %s;\nconst pictures = %s;\n' "$(cat "$out/report.json")" "$pictures"
  cat "$src/tests/reports/browser_check.js"
  echo '</script></body></html>'
} >"$out/check.html"

profile=$scratch/profile
dom=$("$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
      --disable-component-update --disable-sync --allow-file-access-from-files --user-data-dir="$profile" \
      --window-size=1200,900 --virtual-time-budget=15000 --dump-dom "file://$out/check.html" 2>"$scratch/chromium.log")
result=$(printf '%s' "$dom" | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p' | head -1)
if [ -z "$result" ]; then
  echo "FAIL: Chromium returned no result; its log:"; tail -20 "$scratch/chromium.log"; exit 1
fi
printf '%s\n' "$result" | sed 's/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g; s/ | /\n/g'
case "$result" in ok*) exit 0 ;; *) exit 1 ;; esac

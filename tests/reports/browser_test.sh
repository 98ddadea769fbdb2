#!/usr/bin/env bash
# report.html and summary.html in a real browser. The real CLI grades a
# failing submission (a graph check fails, so there is a side-by-side
# picture), then headless Chromium opens the page inside a checking page and
# reports what it rendered: the score, every check's name and status as text,
# every picture decoded, the alt texts, no script in the report, and the
# contrast of every piece of text against the background it is drawn on
# (WCAG's 4.5:1). Then `grade batch` grades a class of three and the same is
# done for summary.html: its title, charts with text alternatives, the
# most-failed checks with their students, a row per student, contrast, and
# every link leading to a report that exists.
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

# check_page DIR PAGE DATA_JS CHECK_JS [WIDTH]: opens DIR/PAGE in Chromium
# inside a checking page (in a frame WIDTH pixels wide, 1200 by default),
# prints what the check found; fails unless it says ok.
check_page() {
  local dir=$1 page=$2 data=$3 check=$4 width=${5:-1200} dom result
  {
    echo '<!DOCTYPE html><html><head><meta charset="utf-8"><title>check</title></head><body><pre id="result">pending</pre>'
    echo "<iframe id=\"page\" src=\"$page\" style=\"width:${width}px;height:900px;border:0\"></iframe><script>"
    printf '%s\n' "$data"
    cat "$src/tests/reports/contrast.js" "$src/tests/reports/$check"
    echo '</script></body></html>'
  } >"$dir/check-$width-$page"
  dom=$("$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --allow-file-access-from-files --user-data-dir="$scratch/profile" \
        --window-size=1200,900 --virtual-time-budget=15000 --dump-dom "file://$dir/check-$width-$page" 2>"$scratch/chromium.log")
  result=$(printf '%s' "$dom" | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p' | head -1)
  if [ -z "$result" ]; then
    echo "FAIL $page: Chromium returned no result; its log:"; tail -20 "$scratch/chromium.log"; return 1
  fi
  printf '%s: %s\n' "$page" "$result" | sed 's/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g; s/ | /\n/g'
  case "$result" in ok*) return 0 ;; *) return 1 ;; esac
}

failures=0
check_page "$out" report.html "const report = $(cat "$out/report.json");
const pictures = $pictures;" browser_check.js || failures=$((failures + 1))

# summary.html of a small class: a correct, a wrong and a not-compiling file.
class=$scratch/class
for s in "ann solutions/exercise3.cpp" "bo tests/fixtures/exercise3/forgot-retain-grad.cpp" \
         "cy tests/fixtures/exercise3/compile-error.cpp"; do
  set -- $s
  mkdir -p "$class/$1" && cp "$2" "$class/$1/exercise3.cpp"
done
iso=()
/usr/bin/bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc \
  --dev /dev /usr/bin/true 2>/dev/null || iso=(--no-isolation)
"$grade" batch "$class" --exercises exercise3 --out "$scratch/class-out" "${iso[@]}" >"$scratch/batch.log" 2>&1 ||
  { echo "FAIL the batch failed"; cat "$scratch/batch.log"; exit 1; }
check_page "$scratch/class-out" summary.html "const summary = $(cat "$scratch/class-out/summary.json");" \
  summary_check.js || failures=$((failures + 1))
# At a phone's width (390 px) the summary does not scroll sideways; then
# screenshots at 390 and 1280 px, each checked for its width and for holding
# a page (not a blank or an error screen: many colours, most of them light).
check_page "$scratch/class-out" summary.html "const width = 390;" narrow_check.js 390 || failures=$((failures + 1))
for w in 390 1280; do
  shot=$scratch/summary-$w.png
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking --hide-scrollbars \
    --user-data-dir="$scratch/profile" --window-size=$w,1400 --screenshot="$shot" "file://$scratch/class-out/summary.html" \
    >>"$scratch/chromium.log" 2>&1
  python3 "$src/tests/reports/png_check.py" "$shot" "$w" || failures=$((failures + 1))
done
# Every link of the summary leads to a report that is there.
for link in $(grep -o 'href="[^"#]*"' "$scratch/class-out/summary.html" | sed 's/^href="//; s/"$//' | sort -u); do
  [ -f "$scratch/class-out/$link" ] || { echo "FAIL summary.html links to $link, which is not there"; failures=$((failures + 1)); }
done
[ "$failures" = 0 ]

#!/usr/bin/env bash
# Approval tests for the report writers: the real CLI grades a passing, a
# failing (its graph differs, so it gets a side-by-side picture) and a
# not-compiling submission with every report format; the volatile fields
# (times, the cache flag, peak memory, the creation time, the isolation and
# compiler, which depend on the machine; in report.html the data-volatile
# spans, the embedded pictures' bytes and sizes, and the stylesheet, which
# the browser test and the palette test judge) are normalised, and each
# file must equal its approved copy in tests/golden/reports/. The list of
# graph pictures written (pictures.txt) is approved too; each must be a PNG;
# so are the workflow commands and the job summary of `grade --github`.
#   approval_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# GRADLAB_APPROVE=1 writes the new output as the approved copy instead
# (review the diff before committing it).
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
golden=$src/tests/golden/reports
rm -rf "$scratch/out" && mkdir -p "$scratch/out"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
cd "$src" || exit 1
normalise() {
  sed -E -e 's/("(seconds|wall_seconds|cpu_seconds|peak_memory_kb|execution_time)": )[0-9.e+-]+/\10/' \
         -e 's/("cached": )(true|false)/\1false/' \
         -e 's/("(created|isolation|compiler)": )"[^"]*"/\1""/' \
         -e 's/ time="[0-9.]+"/ time="0"/g' \
         -e 's/ (timestamp|hostname)="[^"]*"/ \1=""/g' \
         -e 's/<span data-volatile>[^<]*<\/span>/<span data-volatile><\/span>/g' \
         -e 's/(data:image\/png;base64,)[A-Za-z0-9+\/=]+" width="[0-9]+" height="[0-9]+"/\1" width="" height=""/g' \
         -e '/^<style>$/,/^<\/style>$/{/^<\/?style>$/!d}' "$1"
}
failures=0
for case in "passing solutions/exercise3.cpp" "failing tests/fixtures/exercise3/one-expression.cpp" \
            "compile-error tests/fixtures/exercise3/compile-error.cpp"; do
  set -- $case
  out=$scratch/out/$1
  "$grade" exercise3 "$2" --junit --gradescope --out "$out" >/dev/null
  # What a GitHub Actions job shows: the workflow commands and the job summary.
  GITHUB_STEP_SUMMARY="$out/github-summary.md" "$grade" exercise3 "$2" --github --out "$out/github" |
    grep '^::' >"$out/github-annotations.txt"
  (cd "$out" && ls graph-*.png 2>/dev/null) >"$out/pictures.txt"
  for png in "$out"/graph-*.png; do
    [ -e "$png" ] || continue
    if [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
      echo "FAIL $1: $(basename "$png") is not a PNG"; failures=$((failures + 1))
    fi
  done
  for f in report.json report.html junit.xml results.json pictures.txt github-summary.md github-annotations.txt; do
    if [ ! -f "$out/$f" ]; then
      echo "FAIL $1: $f was not written"; failures=$((failures + 1)); continue
    fi
    normalise "$out/$f" >"$out/$f.normalised"
    if [ "${GRADLAB_APPROVE:-}" = 1 ]; then
      mkdir -p "$golden/$1" && cp "$out/$f.normalised" "$golden/$1/$f"
      echo "approved $1/$f"
    elif diff -u "$golden/$1/$f" "$out/$f.normalised"; then
      echo "ok   $1/$f"
    else
      echo "FAIL $1/$f differs from tests/golden/reports/$1/$f (GRADLAB_APPROVE=1 approves the new output)"
      failures=$((failures + 1))
    fi
  done
done
# Same input, same bytes: a second run of the failing case gives the same normalised files.
"$grade" exercise3 tests/fixtures/exercise3/one-expression.cpp --junit --gradescope --out "$scratch/out/again" >/dev/null
for f in report.json report.html junit.xml results.json; do
  if ! cmp -s <(normalise "$scratch/out/again/$f") "$scratch/out/failing/$f.normalised"; then
    echo "FAIL $f: a second run of the same file gave other bytes"; failures=$((failures + 1))
  fi
done
# The pictures are drawn the same way each time, byte for byte.
if ! cmp -s "$scratch/out/again/graph-f-vs-reference.png" "$scratch/out/failing/graph-f-vs-reference.png"; then
  echo "FAIL graph-f-vs-reference.png: a second run drew other bytes"; failures=$((failures + 1))
fi
[ "$failures" = 0 ]

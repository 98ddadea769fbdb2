#!/usr/bin/env bash
# Approval tests for the report writers: the real CLI grades a passing, a
# failing and a not-compiling submission with every report format; the
# volatile fields (times, the cache flag, peak memory, the creation time, the
# isolation and compiler, which depend on the machine) are normalised, and
# each file must equal its approved copy in tests/golden/reports/.
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
         -e 's/ time="[0-9.]+"/ time="0"/g' "$1"
}
failures=0
for case in "passing solutions/exercise3.cpp" "failing tests/fixtures/exercise3/forgot-retain-grad.cpp" \
            "compile-error tests/fixtures/exercise3/compile-error.cpp"; do
  set -- $case
  out=$scratch/out/$1
  "$grade" exercise3 "$2" --junit --gradescope --out "$out" >/dev/null
  for f in report.json junit.xml results.json; do
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
"$grade" exercise3 tests/fixtures/exercise3/forgot-retain-grad.cpp --junit --gradescope --out "$scratch/out/again" >/dev/null
for f in report.json junit.xml results.json; do
  if ! cmp -s <(normalise "$scratch/out/again/$f") "$scratch/out/failing/$f.normalised"; then
    echo "FAIL $f: a second run of the same file gave other bytes"; failures=$((failures + 1))
  fi
done
[ "$failures" = 0 ]

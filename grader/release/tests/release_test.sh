#!/usr/bin/env bash
# A student release works on its own: every exercise in rubrics/ is listed,
# its starter is graded (a verdict, never an internal error, and never full
# marks: the blanks are empty) with the public rubric's points, hidden checks
# are announced, and --solution is refused (there are none here).
# These tests check the release, not the student's answers: an exercise file
# the student has changed (it no longer matches the starter recorded in
# rubrics/NAME.facts.json) is skipped, and said to be.
#   release_test.sh GRADE ROOT WORK
set -uo pipefail
grade=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export GRADLAB_CACHE="$work/cache" GRADLAB_COURSE="$root" NO_COLOR=1
fail=0 skipped=0
no() { echo "FAIL: $*"; fail=1; }
# The last lines a run printed, indented: the reason a failure names.
said() { tail -n "${2:-8}" "$1" | sed 's/^/    /'; }

"$grade" list >"$work/list.txt" 2>&1 || no "grade list exited $?"
for rubric in "$root"/rubrics/*.rubric.json; do
  e=$(basename "$rubric" .rubric.json)
  grep -q "^$e " "$work/list.txt" || no "grade list does not show $e"
  [ -f "$root/rubrics/$e.facts.json" ] || { no "$e has no recorded facts"; continue; }
  starter=$(grep -m1 -o '"sha256": "[0-9a-f]*"' "$root/rubrics/$e.facts.json" | cut -d'"' -f4)
  mine=$(sha256sum "$root/exercises/$e.cpp" 2>/dev/null | cut -d' ' -f1)
  if [ -n "$starter" ] && [ "$mine" != "$starter" ]; then
    echo "skipped $e: exercises/$e.cpp holds your changes (./grade $e grades them); these tests check the starter as handed out"
    skipped=$((skipped + 1))
    continue
  fi
  "$grade" "$e" "$root/exercises/$e.cpp" --out "$work/$e" >"$work/$e.out" 2>"$work/$e.err"
  code=$?
  [ "$code" = 1 ] || no "$e: the starter exited $code, expected 1 (a verdict short of full marks). It printed:
$(said "$work/$e.out")
$(said "$work/$e.err")"
  grep -q "internal error" "$work/$e.err" && no "$e: internal error: $(cat "$work/$e.err")"
  [ -f "$work/$e/report.json" ] || no "$e: no report.json"
  # Every check the report scores is one of the public rubric's.
  for id in $(grep -o '"id": "[^"]*"' "$work/$e/report.json" | cut -d'"' -f4 | sort -u); do
    grep -q "\"id\": \"$id\"" "$rubric" || no "$e: the report scores check $id, which the public rubric does not hold"
  done
  if grep -q '"hidden_checks"' "$rubric"; then
    grep -q "hidden check" "$work/$e.out" || no "$e: the hidden checks are not announced"
  fi
  grep -q '"visibility": "hidden"' "$rubric" && no "$e: the public rubric holds a hidden check"
done
"$grade" exercise3 --solution >"$work/sol.out" 2>&1
code=$?
[ "$code" = 64 ] && grep -q "no solutions" "$work/sol.out" || no "--solution exited $code: $(cat "$work/sol.out")"
[ ! -e "$root/solutions" ] || no "the release holds solutions/"
[ "$fail" = 0 ] && echo "release: every exercise graded against its recorded facts ($skipped skipped: changed by you)"
exit $fail

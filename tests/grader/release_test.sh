#!/usr/bin/env bash
# `grade release`: the student tree holds no line of any solution (checked
# here on its own, line by line, apart from the grader's own check), has no
# path back to the course, and graded there every solution gets full visible
# marks and every fixture the full grader's verdict on each visible check.
# With --build, the copy is also built and tested from its own run-tests, as
# on a student's machine.
#   release_test.sh GRADE ROOT WORK [--build]
set -uo pipefail
grade=$1 root=$2 work=$3 build=${4:-}
rm -rf "$work" && mkdir -p "$work"
export GRADLAB_CACHE="$work/../release-test-cache" NO_COLOR=1
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$grade" release --out "$work/out" >"$work/release.log" 2>&1 || { cat "$work/release.log"; exit 1; }
# The student copy lives where nothing leads back to the course.
cp -a "$work/out/student" "$work/copy"
copy="$work/copy"
[ -z "$(find "$copy" -type l)" ] || no "links in the release: $(find "$copy" -type l | head -3)"
grep -rlF "$root" "$copy" >/dev/null && no "the release names the course's folder: $(grep -rlF "$root" "$copy" | head -3)"
for d in solutions tests/fixtures bench .ci; do [ ! -e "$copy/$d" ] || no "the release holds $d"; done
# The students' exercises/README.md speaks of what they have, not of the
# instructors' tools.
for w in "solutions/" "tests/fixtures" "grade check" "grade record"; do
  ! grep -qF -- "$w" "$copy/exercises/README.md" || no "the release's exercises/README.md names $w, which students do not have"
done
grep -q "Reading a result" "$copy/exercises/README.md" || no "the release's exercises/README.md is not the students' own"

# Lines of the solutions that carry an answer: with a letter or digit, not a
# comment or an include, and not in any starter. None may be in the copy.
norm='{ gsub(/[ \t\r]+/, " "); sub(/^ /, ""); sub(/ $/, ""); }'
awk "$norm"'{ print }' "$root"/exercises/*.cpp | sort -u >"$work/starter.txt"
awk "$norm"'/[A-Za-z0-9]/ && !/^\/\// && !/^#include/ { print }' "$root"/solutions/*.cpp | sort -u |
  comm -23 - "$work/starter.txt" >"$work/answers.txt"
[ -s "$work/answers.txt" ] || no "found no answer lines in the solutions (the check would check nothing)"
find "$copy" -type f -print0 | sort -z | xargs -0 awk "$norm"'FNR == 1 { f = FILENAME } { print f "\t" FNR "\t" $0 }' |
  awk -F'\t' 'NR == FNR { a[$0] = 1; next } ($3 in a) { print $1 ":" $2 ": " $3 }' "$work/answers.txt" - >"$work/leaks.txt"
[ -s "$work/leaks.txt" ] && no "solution lines in the release:$(head -5 "$work/leaks.txt" | sed 's/^/\n  /')"

# The grader that grades in the release: with --build, the copy's own
# ./grade, built by its own ./run-tests as on a student's machine; without,
# this build's grader pointed at the copy.
rel_grade=("$grade" --course "$copy")
if [ "$build" = --build ]; then
  (cd "$copy" && ./run-tests) >"$work/build.log" 2>&1 || no "the release's ./run-tests failed:$(tail -30 "$work/build.log" | sed 's/^/\n  /')"
  rel_grade=("$copy/grade")
fi

# "id status" for each check of a report.
statuses() { awk -F'"' '/^      "id": / { id = $4 } /^      "status": / { print id, $4 }' "$1"; }
checked=0
for rubric in "$root"/solutions/*.rubric.json; do
  e=$(basename "$rubric" .rubric.json)
  pub="$copy/rubrics/$e.rubric.json"
  for f in "$root/solutions/$e.cpp" "$root"/tests/fixtures/"$e"/*.cpp; do
    [ -f "$f" ] || continue
    "$grade" "$e" "$f" --out "$work/full" >/dev/null 2>"$work/err"; a=$?
    "${rel_grade[@]}" "$e" "$f" --out "$work/rel" >/dev/null 2>>"$work/err"; b=$?
    if [ "$a" -ge 64 ] || [ "$b" -ge 64 ]; then no "$e $(basename "$f"): exit codes $a and $b: $(cat "$work/err")"; continue; fi
    # The visible checks, and those the grader adds of its own (the failed
    # "exception" check of a run an exception ended), which no rubric hides.
    statuses "$work/full/report.json" | while read -r id st; do
      { grep -q "\"id\": \"$id\"" "$pub" || ! grep -q "\"id\": \"$id\"" "$rubric"; } && echo "$id $st"
    done >"$work/want"
    statuses "$work/rel/report.json" >"$work/got"
    cmp -s "$work/want" "$work/got" || no "$e $(basename "$f"): visible checks differ:$(diff "$work/want" "$work/got" | sed 's/^/\n  /')"
    if [ "$f" = "$root/solutions/$e.cpp" ]; then
      grep -q '"verdict": "passed"' "$work/rel/report.json" || no "$e: the solution does not pass in the release"
    fi
    checked=$((checked + 1))
  done
done
echo "graded $checked files in the course and in its release"
[ "$checked" -gt 100 ] || no "only $checked files graded"

if [ "$build" = --build ]; then
  (cd "$copy" && ./grade exercise3 --json >"$work/ex3.json" 2>"$work/ex3.err"); c=$?
  [ "$c" = 1 ] && grep -q '"verdict"' "$work/ex3.json" || no "the built release's ./grade exercise3 exited $c: $(cat "$work/ex3.err")"
fi
[ "$fail" = 0 ] && echo "release: ok"
exit $fail

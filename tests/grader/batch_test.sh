#!/usr/bin/env bash
# `grade batch` and `grade merge` end to end, on a generated class: correct,
# wrong, not compiling, crashing, identical and missing submissions, and a
# student whose name needs CSV quoting.
#   batch_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# Checks: each gradebook cell equals what `grade` gives that file alone; the
# class files are the same bytes with --jobs 1 and 2; a run killed with -9
# mid-way resumes to the same files, grading only what was missing; N shards
# merged equal one unsharded run; a changed file is regraded on its own, and
# --regrade names the score that changed.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1 CI=1
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# grade batch refuses to run a class's files without bubblewrap unless told
# to; where bubblewrap cannot start, this test tells it to.
iso=()
/usr/bin/bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc \
  --dev /dev /usr/bin/true 2>/dev/null || iso=(--no-isolation)
grade_batch() { "$grade" batch "$@" "${iso[@]}"; }

class=$scratch/class
fx=$src/tests/fixtures
add() { mkdir -p "$class/$1" && cp "$3" "$class/$1/$2.cpp"; }
add alice exercise3 "$src/solutions/exercise3.cpp"
add alice exercise5 "$src/solutions/exercise5.cpp"
add bob exercise3 "$fx/exercise3/forgot-retain-grad.cpp"
add bob exercise5 "$fx/exercise5/one-expression.cpp"
add carol exercise3 "$fx/exercise3/compile-error.cpp"
add dave exercise3 "$fx/exercise3/segfault.cpp"
add dave exercise5 "$fx/exercise5/multiply-in-place.cpp"
add frank exercise3 "$src/solutions/exercise3.cpp"   # the same file as alice's: graded once
add "o'brien, jr" exercise3 "$fx/exercise3/wrong-sign.cpp"
mkdir -p "$class/erin"                               # submitted nothing
class_files="gradebook.csv checks.csv summary.json summary.html batch.json"
same_class_files() {  # DIR_A DIR_B WHAT
  local f bad=0
  for f in $class_files; do
    if ! cmp -s "$1/$f" "$2/$f"; then
      fail "$3: $f differs"; diff "$1/$f" "$2/$f" | head -10; bad=1
    fi
  done
  [ "$bad" = 0 ] && ok "$3"
}

cd "$scratch" || exit 1
grade_batch "$class" --exercises exercise3,exercise5 --jobs 2 --out "$scratch/j2" >"$scratch/j2.log" 2>&1
code=$?
[ "$code" = 0 ] && ok "batch exits 0" || { fail "batch exited $code"; cat "$scratch/j2.log"; }
grep -q "7 students, 9 submissions; 0 already graded, 9 to grade" "$scratch/j2.log" &&
  ok "batch counts 7 students and 9 submissions" || { fail "batch's count"; head -3 "$scratch/j2.log"; }

# Each cell is what grading the file alone gives; a missing file is an empty cell.
expected="student,exercise3,exercise5,total"
for s in alice bob carol dave erin frank "o'brien, jr"; do
  row="" total=0
  for e in exercise3 exercise5; do
    if [ -f "$class/$s/$e.cpp" ]; then
      score=$("$grade" "$e" "$class/$s/$e.cpp" --json --out "$scratch/alone" 2>/dev/null |
              sed -n 's/^  "score": \([0-9.]*\),$/\1/p')
      score=$(awk "BEGIN{print $score + 0}")  # 18.0 in JSON, 18 in the CSV
      row="$row,$score" total=$(awk "BEGIN{print $total + $score}")
    else
      row="$row,"
    fi
  done
  name=$s
  case "$s" in *,*) name="\"$s\"" ;; esac
  expected="$expected"$'\n'"$name$row,$total"
done
if diff <(printf '%s\n' "$expected") <(tr -d '\r' <"$scratch/j2/gradebook.csv"); then
  ok "gradebook.csv holds each file's own score"
else
  fail "gradebook.csv differs from grading each file alone"
fi
grep -q '^carol,exercise3,compile_error,' "$scratch/j2/checks.csv" && grep -q '^dave,exercise3,runtime_error,' "$scratch/j2/checks.csv" &&
  ok "checks.csv has the not-compiling and the crashing rows" || fail "checks.csv lacks carol's or dave's verdict"
for f in students/alice/exercise3/report.html students/alice/exercise3/report.json students/carol/exercise3/report.html; do
  [ -s "$scratch/j2/$f" ] || fail "no $f"
done
grep -q '"file": ".*/frank/exercise3.cpp"' "$scratch/j2/students/frank/exercise3/report.json" &&
  ok "frank's report names frank's file although it was graded with alice's" || fail "frank's report names another file"
grep -q 'href="students/o%27brien%2C%20jr/exercise3/report.html"' "$scratch/j2/summary.html" &&
  ok "summary.html links each student's report" || fail "summary.html has no link to o'brien's report"

# The same class with one job: the same bytes.
grade_batch "$class" --exercises exercise3,exercise5 --jobs 1 --out "$scratch/j1" >"$scratch/j1.log" 2>&1
same_class_files "$scratch/j1" "$scratch/j2" "--jobs 1 and --jobs 2 give the same class files"

# Killed mid-way (kill -9), then run again: the same files, only the rest graded.
# A cache of its own, so that each file takes a compile (about a second):
# the kill lands between results, not after the last.
GRADLAB_CACHE="$scratch/cache-k" "$grade" batch "${iso[@]}" "$class" --exercises exercise3,exercise5 --jobs 1 \
  --out "$scratch/k" >"$scratch/k1.log" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  [ "$(find "$scratch/k/students" -name .key 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
done_before=$(find "$scratch/k/students" -name .key | wc -l)
grade_batch "$class" --exercises exercise3,exercise5 --jobs 2 --out "$scratch/k" >"$scratch/k2.log" 2>&1
if [ "$done_before" -ge 1 ] && [ "$done_before" -lt 9 ] &&
   grep -q "; $done_before already graded, $((9 - done_before)) to grade" "$scratch/k2.log"; then
  ok "after kill -9 with $done_before of 9 graded, the rerun graded the other $((9 - done_before))"
else
  fail "resume: $done_before graded before the kill; the rerun said: $(head -1 "$scratch/k2.log")"
fi
same_class_files "$scratch/k" "$scratch/j2" "an interrupted and resumed run gives the same class files"

# Shards merged = one run.
grade_batch "$class" --exercises exercise3,exercise5 --shard 1/2 --out "$scratch/s1" >/dev/null 2>&1
grade_batch "$class" --exercises exercise3,exercise5 --shard 2/2 --out "$scratch/s2" >/dev/null 2>&1
n1=$(grep -c . <(tr -d '\r' <"$scratch/s1/gradebook.csv")) n2=$(grep -c . <(tr -d '\r' <"$scratch/s2/gradebook.csv"))
[ $((n1 + n2)) = 9 ] && [ "$n1" -gt 1 ] && [ "$n2" -gt 1 ] && ok "2 shards split 7 students ($((n1 - 1)) + $((n2 - 1)))" ||
  fail "the shards hold $((n1 - 1)) and $((n2 - 1)) students"
"$grade" merge "$scratch/s1" "$scratch/s2" --out "$scratch/m" >/dev/null 2>&1 || fail "merge failed"
same_class_files "$scratch/m" "$scratch/j2" "2 shards merged equal one unsharded run"
"$grade" merge "$scratch/s1" "$scratch/s1" --out "$scratch/m2" >/dev/null 2>&1
[ $? = 64 ] && ok "merging one shard twice is refused" || fail "merging one shard twice was not refused"

# A changed file: only it is graded again; --regrade says whose score changed.
cp "$src/solutions/exercise3.cpp" "$class/bob/exercise3.cpp"
grade_batch "$class" --exercises exercise3,exercise5 --out "$scratch/j2" >"$scratch/c.log" 2>&1
grep -q "; 8 already graded, 1 to grade" "$scratch/c.log" && ok "a changed file is the only one graded again" ||
  fail "after one change: $(head -1 "$scratch/c.log")"
cp "$fx/exercise3/forgot-retain-grad.cpp" "$class/bob/exercise3.cpp"
grade_batch "$class" --exercises exercise3,exercise5 --regrade --out "$scratch/j2" >"$scratch/r.log" 2>&1
grep -q "0 already graded, 9 to grade" "$scratch/r.log" && grep -q "  bob exercise3: 18 → " "$scratch/r.log" &&
  ok "--regrade grades everything and names the score that changed" || { fail "--regrade"; cat "$scratch/r.log"; }

# Bad input: a usage error, not a crash.
grade_batch "$scratch/nowhere" --out "$scratch/x" >/dev/null 2>&1
[ $? = 64 ] && ok "a missing folder is a usage error" || fail "a missing folder is not a usage error"
grade_batch "$class" --shard 3/2 --out "$scratch/x" >/dev/null 2>&1
[ $? = 64 ] && ok "--shard 3/2 is a usage error" || fail "--shard 3/2 is not a usage error"
[ "$failures" = 0 ]

#!/usr/bin/env bash
# `grade batch` and `grade merge` end to end, on a generated class: correct,
# wrong, not compiling, crashing, identical and missing submissions, and a
# student whose name needs CSV quoting; and a hostile class (links, a fifo,
# a 2 MiB file, odd names, a fake score painted in escapes: issue 19).
#   batch_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
# Checks: each gradebook cell equals what `grade` gives that file alone; the
# class files are the same bytes with --jobs 1 and 2; a run killed with -9
# mid-way resumes to the same files, grading only what was missing; N shards
# merged equal one unsharded run; a changed file is regraded on its own, and
# every rerun (--regrade or not) lists each score it changed, with why: the
# student's file, the rubric, a file gone.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1 CI=1
. "$(dirname "$0")/common.sh"
grade_batch() { "$grade" batch "$@" "${iso[@]}"; }

class=$scratch/class
fx=$src/tests/fixtures
sample_class "$class" "$src"
class_files="gradebook.csv canvas.csv moodle.csv checks.csv summary.json summary.html batch.json"
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

# Each cell is what grading the file alone gives, with its verdict beside it;
# a missing file is an empty cell and "missing", and nothing at all no total.
verdict_of() {  # the gradebook's verdict, from report.json: score,verdict
  python3 -c 'import json,sys
r = json.load(sys.stdin); run = r["run"]["status"]
v = r["verdict"] if r["verdict"] in ("compile_error", "internal_error") else \
    "timeout" if run in ("timeout", "cpu_limit") else "exception" if run == "exception" else \
    r["verdict"] if run in ("", "ok") else "crashed"
print("%g,%s" % (r["score"], v))'
}
expected="student,exercise3,exercise3 verdict,exercise5,exercise5 verdict,total"
for s in alice bob carol dave erin frank "o'brien, jr"; do
  row="" total=0 any=""
  for e in exercise3 exercise5; do
    if [ -f "$class/$s/$e.cpp" ]; then
      cell=$("$grade" "$e" "$class/$s/$e.cpp" --json --out "$scratch/alone" 2>/dev/null | verdict_of)
      row="$row,$cell" total=$(awk "BEGIN{print $total + ${cell%%,*}}") any=1
    else
      row="$row,,missing"
    fi
  done
  name=$s
  case "$s" in *,*) name="\"$s\"" ;; esac
  expected="$expected"$'\n'"$name$row,${any:+$total}"
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
# A partial set of shards: refused, naming the missing one, unless --allow-partial; then the summary says so.
"$grade" merge "$scratch/s1" --out "$scratch/m3" >"$scratch/m3.log" 2>&1
[ $? = 64 ] && grep -q "shard 2 of 2 missing" "$scratch/m3.log" && ok "a merge of 1 of 2 shards is refused, naming shard 2" ||
  fail "a partial merge: $(cat "$scratch/m3.log")"
"$grade" merge "$scratch/s1" --allow-partial --out "$scratch/m4" >"$scratch/m4.log" 2>&1 &&
  grep -q '"missing": \[' "$scratch/m4/summary.json" && grep -q 'id="missing-shards"' "$scratch/m4/summary.html" &&
  grep -q "1 of 2 shards missing" "$scratch/m4.log" &&
  ok "--allow-partial merges, and the summary and the log say a shard is missing" ||
  fail "--allow-partial: $(cat "$scratch/m4.log"); $(grep -A3 missing "$scratch/m4/summary.json")"

# A changed file: only it is graded again; --regrade says whose score changed.
cp "$src/solutions/exercise3.cpp" "$class/bob/exercise3.cpp"
grade_batch "$class" --exercises exercise3,exercise5 --out "$scratch/j2" >"$scratch/c.log" 2>&1
grep -q "; 8 already graded, 1 to grade" "$scratch/c.log" && ok "a changed file is the only one graded again" ||
  fail "after one change: $(head -1 "$scratch/c.log")"
cp "$fx/exercise3/forgot-retain-grad.cpp" "$class/bob/exercise3.cpp"
grade_batch "$class" --exercises exercise3,exercise5 --regrade --out "$scratch/j2" >"$scratch/r.log" 2>&1
grep -q "0 already graded, 9 to grade" "$scratch/r.log" && grep -q "  bob exercise3: 18 → .* (the student's file changed)" "$scratch/r.log" &&
  ok "--regrade grades everything and names the score that changed, and why" || { fail "--regrade"; cat "$scratch/r.log"; }
grep -q "  bob exercise3: .* → 18 (the student's file changed)" "$scratch/c.log" &&
  ok "a plain rerun lists the score its changed file moved" || fail "the plain rerun's changes: $(cat "$scratch/c.log")"
/usr/bin/python3 - "$scratch/j2/summary.json" "$scratch/j2/summary.html" <<'PY' && ok "summary.json and summary.html list the change" || fail "the summaries' changes"
import json, sys
c = json.load(open(sys.argv[1]))["changes"]
assert [(x["student"], x["exercise"], x["before"], x["why"]) for x in c] == [("bob", "exercise3", 18, ["file"])], c
assert c[0]["after"] < 18 and c[0]["after_verdict"] == "failed", c
assert 'id="changes"' in open(sys.argv[2]).read()
PY

# Grades nobody changes silently (issue 44): after a rubric edit, a plain
# rerun lists every score it moved, old and new, naming the rubric; a file
# handed in no more is listed as gone. A course of its own, edited.
rc=$scratch/rubric-course rclass=$scratch/rubric-class
mkdir -p "$rc" "$rclass"/{ann,bo}
cp -r "$src/exercises" "$src/solutions" "$rc/"
cp "$src/solutions/exercise3.cpp" "$rclass/ann/" && cp "$src/solutions/exercise3.cpp" "$src/solutions/exercise5.cpp" "$rclass/bo/"
"$grade" --course "$rc" batch "$rclass" "${iso[@]}" --out "$scratch/rubric" >"$scratch/rubric1.log" 2>&1
grep -q "changed since" "$scratch/rubric1.log" && fail "a first run lists changes: $(cat "$scratch/rubric1.log")"
/usr/bin/python3 - "$rc/solutions/exercise3.rubric.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["checks"][0]["points"] += 1
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
rm "$rclass/bo/exercise5.cpp"
"$grade" --course "$rc" batch "$rclass" "${iso[@]}" --out "$scratch/rubric" >"$scratch/rubric2.log" 2>&1
grep -q "  ann exercise3: 18 → 19 (the rubric changed)" "$scratch/rubric2.log" &&
  grep -q "  bo exercise3: 18 → 19 (the rubric changed)" "$scratch/rubric2.log" &&
  grep -q "  bo exercise5: .* → none (no file this time)" "$scratch/rubric2.log" &&
  ok "after a rubric edit, a plain rerun lists every score it changed and why" ||
  fail "after a rubric edit: $(cat "$scratch/rubric2.log")"
"$grade" --course "$rc" batch "$rclass" "${iso[@]}" --out "$scratch/rubric" >"$scratch/rubric3.log" 2>&1
grep -q "changed since" "$scratch/rubric3.log" && fail "a rerun with nothing changed lists changes: $(cat "$scratch/rubric3.log")"
/usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["changes"] == []' "$scratch/rubric/summary.json" &&
  ok "a rerun with nothing changed lists no change" || fail "the third run's summary.json lists changes"

# Issue 19: a hostile class. Nothing in SUBMISSIONS is followed: links to a
# peer's file, to the solutions, to a file outside (whose text must reach no
# report), a student folder that links to a peer's, a fifo (must not hang), a
# 2 MiB file (the student's verdict), a hard link (both students held), names
# with a newline, escapes and a formula, and a program painting a fake score.
hc=$scratch/hostile-class outside=$scratch/outside
mkdir -p "$outside" "$hc"
{ cat "$src/solutions/exercise3.cpp"; echo "// OUTSIDE-SECRET-7f3a"; } >"$outside/copy.cpp"
printf '#error OUTSIDE-SECRET-7f3a\n' >"$outside/leak.cpp"
mkdir -p "$hc/honest" "$hc/mallory" "$hc/trent" "$hc/oscar" "$hc/hardy"
cp "$src/solutions/exercise3.cpp" "$hc/honest/exercise3.cpp"
ln -s ../honest/exercise3.cpp "$hc/mallory/exercise3.cpp"
ln -s "$src/solutions/exercise5.cpp" "$hc/mallory/exercise5.cpp"
ln -s "$outside/leak.cpp" "$hc/trent/exercise3.cpp"
ln -s "$outside/copy.cpp" "$hc/trent/exercise5.cpp"
ln -s honest "$hc/sybil"
ln -s "$outside" "$hc/peggy"
mkfifo "$hc/oscar/exercise3.cpp"
ln "$hc/honest/exercise3.cpp" "$hc/hardy/exercise3.cpp"
mkdir -p "$hc/bigfoot" && { cat "$src/solutions/exercise3.cpp"; head -c $((2 << 20)) /dev/zero | tr '\0' '/'; echo; } >"$hc/bigfoot/exercise3.cpp"
nl_name=$'eve\nhonest,18,18,36' esc_name=$'\e[2J =cmd()'
mkdir -p "$hc/$nl_name" "$hc/$esc_name" "$hc/painter"
cp "$src/solutions/exercise3.cpp" "$hc/$nl_name/exercise3.cpp"
cp "$src/solutions/exercise3.cpp" "$hc/$esc_name/exercise3.cpp"
cp "$fx/hostile/term-ansi-fake-score.cpp" "$hc/painter/exercise3.cpp"
timeout 600 "$grade" batch "$hc" "${iso[@]}" --exercises exercise3,exercise5 --jobs 2 --out "$scratch/h" >"$scratch/h.log" 2>&1
code=$?
[ "$code" = 0 ] && ok "a hostile class is graded (exit 0, the fifo did not hang it)" || { fail "hostile batch exited $code"; cat "$scratch/h.log"; }
hb=$(tr -d '\r' <"$scratch/h/gradebook.csv")
for s in mallory trent oscar; do
  grep -qx "$s,,missing,,missing," <<<"$hb" && ok "$s's links and fifo get no marks" || fail "$s: $(grep "^$s," <<<"$hb")"
done
grep -q '^sybil\|^peggy' <<<"$hb" && fail "a student folder that is a link was graded" || ok "student folders that are links are not students"
grep -qx "honest,,shared_file,,missing," <<<"$hb" && grep -qx "hardy,,shared_file,,missing," <<<"$hb" &&
  ok "a file two students share (a hard link) is held for both: no score, no total" ||
  fail "honest/hardy rows: $(grep '^h' <<<"$hb")"
grep -q "one file under two students' names" "$scratch/h/summary.html" &&
  grep -q 'is the same file as hardy/exercise3.cpp' "$scratch/h/students/honest/exercise3/report.html" &&
  ok "summary.html and the students' reports say why they are held" || fail "no word of the held files in summary.html or the report"
grep -qx "bigfoot,0,compile_error,,missing,0" <<<"$hb" && grep -q '^bigfoot,exercise3,compile_error,' "$scratch/h/checks.csv" &&
  grep -q '[0-9]\{7\} bytes; the grader reads files up to 1048576 bytes (1 MiB)' "$scratch/h/students/bigfoot/exercise3/report.html" &&
  ok "a 2 MiB file is the student's compile_error, with its size" || fail "bigfoot: $(grep '^bigfoot' <<<"$hb")"
[ "$(grep -c . <<<"$hb")" = 10 ] && ok "one gradebook row per student folder (a newline in a name makes no row)" ||
  { fail "gradebook rows"; cat -A "$scratch/h/gradebook.csv"; }
grep -q "^\"eve_honest,18,18,36~[0-9a-f]*\",18,passed,,missing,18$" <<<"$hb" && ok "the name with a newline has a safe, quoted cell" ||
  fail "no safe cell for the name with a newline"
grep -q "^_\[2J =cmd()~[0-9a-f]*,18,passed,,missing,18$" <<<"$hb" && ok "the name with an escape and a formula is safe" ||
  fail "no safe cell for the name with an escape: $(grep 'cmd' <<<"$hb")"
leaks=$(grep -rl "OUTSIDE-SECRET" "$scratch/h" "$scratch/h.log")
[ -z "$leaks" ] && ok "no text from outside SUBMISSIONS is in any report" || fail "outside text in: $leaks"
escapes=$(grep -rlP --include='*.csv' --include='*.html' --include='*.json' --include='*.xml' --include='*.txt' '\x1b' \
  "$scratch/h" "$scratch/h.log")
[ -z "$escapes" ] && ok "no ESC byte in any report, CSV or the log" || fail "raw escapes in: $escapes"
grep -q '\\x1b\[32m\\x1b\[1mscore 18/18' "$scratch/h/students/painter/exercise3/report.html" &&
  ok "the fake score is shown as text in the painter's report" || fail "the painter's output is not in its report, made visible"
python3 - "$scratch/h/summary.json" <<'PY' && ok "summary.json lists every refused entry with its reason" || fail "summary.json's intake list"
import json, sys
notes = {n["entry"]: n for n in json.load(open(sys.argv[1]))["intake"]}
want = {"mallory/exercise3.cpp": "symbolic link (to ../honest/exercise3.cpp)", "mallory/exercise5.cpp": "symbolic link",
        "trent/exercise3.cpp": "symbolic link", "trent/exercise5.cpp": "symbolic link", "sybil": "symbolic link",
        "peggy": "symbolic link", "oscar/exercise3.cpp": "fifo", "hardy/exercise3.cpp": "hard link"}
bad = [e for e, why in want.items() if e not in notes or why not in notes[e]["reason"]]
bad += [e for e in want if e in notes and notes[e]["refused"] != (e != "hardy/exercise3.cpp")]
held = sorted((h["student"], h["exercise"]) for h in json.load(open(sys.argv[1]))["held"])
bad += [] if held == [("hardy", "exercise3"), ("honest", "exercise3")] else ["held: %s" % held]
print("missing or wrong:", bad, "have:", sorted(notes)) if bad else None
sys.exit(1 if bad else 0)
PY
grep -q 'refused mallory/exercise3.cpp: a symbolic link' "$scratch/h.log" && ok "the log names what was refused" ||
  fail "the log does not name the refused entries"
# Sharded and merged: the same refusals and flags as one run (hard links name a peer in another shard).
grade_batch "$hc" --exercises exercise3,exercise5 --shard 1/2 --out "$scratch/hs1" >/dev/null 2>&1
grade_batch "$hc" --exercises exercise3,exercise5 --shard 2/2 --out "$scratch/hs2" >/dev/null 2>&1
"$grade" merge "$scratch/hs1" "$scratch/hs2" --out "$scratch/hm" >/dev/null 2>&1 || fail "merging the hostile shards failed"
same_class_files "$scratch/hm" "$scratch/h" "a hostile class in 2 shards merged equals one run, refusals included"

# Bad input: a usage error, not a crash.
grade_batch "$scratch/nowhere" --out "$scratch/x" >/dev/null 2>&1
[ $? = 64 ] && ok "a missing folder is a usage error" || fail "a missing folder is not a usage error"
grade_batch "$class" --shard 3/2 --out "$scratch/x" >/dev/null 2>&1
[ $? = 64 ] && ok "--shard 3/2 is a usage error" || fail "--shard 3/2 is not a usage error"
[ "$failures" = 0 ]

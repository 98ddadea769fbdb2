#!/usr/bin/env bash
# The autograders `grade release` writes, run as the platforms run them (with
# this build's grader standing in for the one their images build): Gradescope's
# run_autograder from the unpacked autograder.zip in a temporary
# $AUTOGRADER_ROOT, and PrairieLearn's pl-grade in a temporary /grade. The
# submission holds a solution in a subfolder under another letter case, a
# fixture, a file that does not compile, and no file for an exercise the
# assignment asks for. results.json must validate against its schema (a real
# validator), and its scores must be `grade`'s own.
# Gradescope's setup.sh (the image's build from the zip) runs in the distro
# test, on a fresh Debian 13 (tests/distro/).
#   autograder_test.sh GRADE ROOT WORK
set -uo pipefail
grade=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
export GRADLAB_CACHE="$work/cache" NO_COLOR=1 GRADLAB_GRADE="$grade"
fail=0
no() { echo "FAIL: $*"; fail=1; }
py=/usr/bin/python3
"$py" -c 'import jsonschema' 2>/dev/null || { echo "python3-jsonschema is not installed: skipped"; exit 77; }
validate() { "$py" "$root/tests/reports/validate_json.py" "$@"; }

"$grade" release --out "$work/out" --assignment exercise3,exercise4,exercise5,exercise6 >"$work/release.log" 2>&1 ||
  { cat "$work/release.log"; exit 1; }
zip="$work/out/autograder/gradescope/autograder.zip"
[ -f "$zip" ] || { echo "FAIL: no autograder.zip"; exit 1; }

# The submission, as a student might upload it.
sub="$work/submission"
mkdir -p "$sub/old"
"$py" - "$root/solutions/exercise3.cpp" "$sub/my work.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("my work/Exercise3.cpp", open(sys.argv[1], "rb").read())
    z.writestr("__MACOSX/my work/._Exercise3.cpp", b"\0\5\26\7")
PY
# A fixture that fails some checks and passes others: partial credit to compare.
failing=$(grep -l '"verdict": "failed"' "$root"/tests/fixtures/exercise4/*.expect.json | head -1)
cp "${failing%.expect.json}.cpp" "$sub/exercise4.cpp"
printf 'int broken\n' >"$sub/old/exercise4.cpp"  # an older copy further down
printf '#include <gradlab/lab.h>\nvoid exercise5(lab::Lab& lab) { torch::Tensor x = ; }\n' >"$sub/exercise5.cpp"
# exercise6 is not submitted: it scores 0 with a note.

# What `grade` says of each file on its own, with the course's full rubrics.
expect=0
for e in exercise3 exercise4 exercise5; do
  f=$(find "$sub" -maxdepth 1 -iname "$e.cpp")
  [ "$e" = exercise3 ] && f=$root/solutions/exercise3.cpp
  "$grade" "$e" "$f" --out "$work/direct/$e" >/dev/null 2>&1
  s=$(grep -o '"score": [0-9.]*' "$work/direct/$e/report.json" | head -1 | awk '{print $2}')
  expect=$(awk -v a="$expect" -v b="$s" 'BEGIN {print a + b}')
done

# Gradescope: the zip unpacked into /autograder/source, run_autograder beside it.
ag="$work/autograder"
mkdir -p "$ag/source" "$ag/results"
(cd "$ag/source" && cmake -E tar xf "$zip") || no "cannot unpack autograder.zip"
for f in setup.sh run_autograder ASSIGNMENT rubrics/exercise3.facts.json; do
  [ -f "$ag/source/$f" ] || no "autograder.zip has no $f at its root"
done
[ ! -e "$ag/source/solutions" ] || no "autograder.zip holds solutions/"
cp "$ag/source/run_autograder" "$ag/run_autograder"
cp -r "$sub" "$ag/submission"
AUTOGRADER_ROOT="$ag" bash "$ag/run_autograder" >"$work/gradescope.log" 2>&1 || no "run_autograder exited $?: $(cat "$work/gradescope.log")"
gs="$ag/results/results.json"
validate "$root/reports/gradescope.schema.json" "$gs" || no "results.json does not validate"
got=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$gs")
awk -v a="$got" -v b="$expect" 'BEGIN {exit !(a == b)}' || no "Gradescope score $got, grade's own $expect"
"$py" - "$gs" <<'PY' || no "Gradescope results.json content"
import json, sys
d = json.load(open(sys.argv[1]))
names = [t["name"] for t in d["tests"]]
assert any(n.startswith("exercise6: ") for n in names), "the missing exercise's checks are not listed"
assert all(t["score"] == 0 for t in d["tests"] if t["name"].startswith(("exercise5: ", "exercise6: ")))
assert "does not compile" in d["output"] and "exercise6.cpp was submitted" in d["output"], d["output"][:500]
assert "old/exercise4.cpp: not graded: exercise4.cpp was taken for exercise4" in d["output"], d["output"][:800]
hidden = [t for t in d["tests"] if t["visibility"] == "after_published"]
assert hidden and all("hidden check" not in t["name"] for t in hidden), "hidden checks should keep their own names"
assert d["execution_time"] >= 1
PY

# A forged document must fail the validator: it checks something.
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["max_score"]=1; json.dump(d, open(sys.argv[2],"w"))' "$gs" "$work/forged.json"
validate "$root/reports/gradescope.schema.json" "$work/forged.json" >/dev/null && no "the schema accepts a top-level max_score"

# PrairieLearn: /grade/student holds the files, results go to /grade/results.
pl="$work/grade"
mkdir -p "$pl"
cp -r "$sub" "$pl/student"
PL_GRADE_ROOT="$pl" GRADLAB_SOURCE="$work/out/autograder/prairielearn/source" \
  bash "$work/out/autograder/prairielearn/pl-grade" >"$work/pl.log" 2>&1 || no "pl-grade exited $?: $(cat "$work/pl.log")"
plr="$pl/results/results.json"
validate "$root/reports/prairielearn.schema.json" "$plr" || no "PrairieLearn results.json does not validate"
"$py" - "$plr" "$expect" <<'PY' || no "PrairieLearn results.json content"
import json, sys
d = json.load(open(sys.argv[1]))
pts = sum(t["points"] for t in d["tests"]); mx = sum(t["max_points"] for t in d["tests"])
assert abs(pts - float(sys.argv[2])) < 1e-9, (pts, sys.argv[2])
assert abs(d["score"] - pts / mx) < 1e-9 and d["gradable"] is True
assert d["images"] and all(i["url"].startswith("data:image/png;base64,") for i in d["images"])
PY
[ -f "$work/out/autograder/github-classroom/.github/workflows/gradlab.yml" ] || no "no GitHub Classroom workflow"
[ "$fail" = 0 ] && echo "autograders: ok (score $expect)"
exit $fail

#!/bin/bash
# The steps distro_test.sh runs inside the fresh Debian root, from the clone in
# /root/src/gradlab, as root. Each step prints STEP, then PASS or FAIL with
# the figures; the first failure ends the run with its exit code.
set -uo pipefail
cd /root/src/gradlab
jobs=$(nproc 2>/dev/null || echo 2)
step() { echo "STEP $1"; t0=$(date +%s); }
pass() { echo "PASS $* ($(( $(date +%s) - t0 )) s)"; }
fail() { echo "FAIL $*"; exit 1; }
echo "in $(. /etc/os-release; echo "$PRETTY_NAME"), $(uname -m), $jobs cores"

step "1: ./grade exercise3 --solution (installs, builds, grades)"
./grade exercise3 --solution --out /tmp/grade-ex3 >/tmp/step1.log 2>&1
rc=$?
grep -E "^ *(exercise3|score|[0-9]+/[0-9]+)" /tmp/step1.log | tail -3
[ "$rc" = 0 ] || { tail -30 /tmp/step1.log; fail "./grade exercise3 --solution exited $rc (0 is every check passed)"; }
g++ --version | head -1; clang --version | head -1
pass "the reference solution passes every check"

# The slow families are the host's: they run the same scripts, and here they
# would only test the host again (or need what a minimal root lacks: a browser
# the tests open, a Slurm cluster, LibTorch, another nested root).
slow='e2e|slow|release|security|cluster|libtorch|browser|cuda|distro|container'
step "2: ./run-tests -LE '$slow'"
./run-tests -LE "$slow" >/tmp/step2.log 2>&1
rc=$?
grep -E "tests passed|tests failed|Catch2" /tmp/step2.log | tail -3
[ "$rc" = 0 ] || { grep -E "\*\*\*|Failed|error:" /tmp/step2.log | head -30; tail -30 /tmp/step2.log; fail "./run-tests exited $rc"; }
pass "the unit tests of the engine, the grader and the reports"

step "3: grade check (every solution and fixture, clang $(clang -dumpversion))"
build/grader/grade check --jobs "$jobs" >/tmp/step3.log 2>&1
rc=$?
tail -2 /tmp/step3.log
[ "$rc" = 0 ] || { grep -iE "problem|expected" /tmp/step3.log | head -20; fail "grade check exited $rc"; }
pass "grade check"

step "4: Gradescope: setup.sh builds the autograder from its zip, run_autograder grades"
build/grader/grade release --out /tmp/release --assignment exercise3 >/tmp/step4-release.log 2>&1 ||
  { cat /tmp/step4-release.log; fail "grade release"; }
rm -rf /autograder && mkdir -p /autograder/source /autograder/submission
(cd /autograder/source && cmake -E tar xf /tmp/release/autograder/gradescope/autograder.zip) || fail "cannot unpack the zip"
cp /autograder/source/run_autograder /autograder/run_autograder
bash /autograder/source/setup.sh >/tmp/step4-setup.log 2>&1 || { tail -30 /tmp/step4-setup.log; fail "setup.sh"; }
cp solutions/exercise3.cpp /autograder/submission/exercise3.cpp
bash /autograder/run_autograder >/tmp/step4-run.log 2>&1 || { cat /tmp/step4-run.log; fail "run_autograder"; }
python3 - /autograder/results/results.json <<'PY' || fail "results.json"
import json, sys
d = json.load(open(sys.argv[1]))
earned = sum(t["score"] for t in d["tests"]); possible = sum(t["max_score"] for t in d["tests"])
print(f"results.json: score {d['score']}, {len(d['tests'])} tests, {earned}/{possible}")
assert possible > 0 and d["score"] == earned == possible, "the reference solution must get full marks"
PY
pass "Gradescope's autograder"

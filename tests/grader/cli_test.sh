#!/usr/bin/env bash
# End-to-end: runs the real `grade` on real files and checks each verdict,
# exit code and the key lines of its output.
#   cli_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
fixtures="$src/tests/fixtures/exercise3"
failures=0

# run NAME EXPECTED_EXIT ARGS...: runs grade, keeps its output in $out.
run() {
  local name=$1 want=$2
  shift 2
  out=$("$grade" "$@" 2>&1)
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"
    printf '%s\n' "$out" | head -40 | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok   $name (exit $got)"
  fi
}
# has NAME TEXT: the last run's output contains TEXT.
has() {
  if ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: output lacks: $2"
    printf '%s\n' "$out" | head -40 | sed 's/^/    /'
    failures=$((failures + 1))
  fi
}
lacks() {
  if grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: output should not contain: $2"
    failures=$((failures + 1))
  fi
}

cd "$scratch"
run "solution passes" 0 exercise3 --solution --out "$scratch/r-sol"
has "solution passes" "score 18/18 — every check passed"
test -s "$scratch/r-sol/report.json" || { echo "FAIL no report.json"; failures=$((failures + 1)); }

run "correct alternative spelling" 0 exercise3 "$fixtures/x-times-x.cpp" --out "$scratch/r1"

run "forgot retain_grad" 1 exercise3 "$fixtures/forgot-retain-grad.cpp" --out "$scratch/r2"
has "forgot retain_grad" "✗ p keeps its gradient"
has "forgot retain_grad" "hint      p is not a leaf: call p.retain_grad()"
has "forgot retain_grad" "✓ df/dx = -12"
has "forgot retain_grad" "score 14/18 — 4 of 17 checks failed"

run "requires_grad missing" 1 exercise3 "$fixtures/y-without-requires-grad.cpp" --out "$scratch/r3"
has "requires_grad missing" "found     f=MulBackward0(q=AddBackward0(p=PowBackward0(x), None), z)"

run "wrong value" 1 exercise3 "$fixtures/wrong-sign.cpp" --out "$scratch/r4"
has "wrong value" "expected  -12"
has "wrong value" "found     12"

run "backward twice (zero_ / retain_graph misuse)" 1 exercise3 "$fixtures/backward-twice.cpp" --out "$scratch/r5"
has "backward twice" "found     -24"

# A hidden check says only that it failed: not what was expected, no hint.
# (A started file: an untouched starter gets the short message instead.)
mkdir -p "$scratch/started"
sed 's#// END CODE HERE#(void)lab;\n  // END CODE HERE#' "$src/exercises/exercise3.cpp" >"$scratch/started/exercise3.cpp"
run "hidden check" 1 exercise3 "$scratch/started/exercise3.cpp" --out "$scratch/r6"
has "hidden check" "✗ hidden check leaves"
lacks "hidden check" "x is still a leaf"

run "compile error" 2 exercise3 "$fixtures/compile-error.cpp" --out "$scratch/r7"
has "compile error" "✗ does not compile"
has "compile error" "compile-error.cpp:9:15: error: expected"
has "compile error" "score 0/18 — does not compile"

run "main defined" 2 exercise3 "$fixtures/defines-main.cpp" --out "$scratch/r8"
has "main defined" "remove main()"
run "wrong function name" 2 exercise3 "$fixtures/wrong-function-name.cpp" --out "$scratch/r9"
has "wrong function name" "must define the exercise function \`void exercise3(lab::Lab& lab)\`"

run "segfault" 3 exercise3 "$fixtures/segfault.cpp" --out "$scratch/r10"
has "segfault" "crashed with SIGSEGV"
run "infinite loop" 3 exercise3 "$fixtures/infinite-loop.cpp" --out "$scratch/r11"
has "infinite loop" "s of CPU time (the limit)"
run "sleeps forever" 3 exercise3 "$fixtures/sleeps-forever.cpp" --out "$scratch/r12"
has "sleeps forever" "of wall-clock time (the limit)"
run "memory hog" 3 exercise3 "$fixtures/memory-hog.cpp" --out "$scratch/r13"
has "memory hog" "ran out of memory"
run "gigabyte of output" 3 exercise3 "$fixtures/gigabyte-output.cpp" --out "$scratch/r14"
has "gigabyte of output" "stopped after printing more than 256 KiB"
run "uncaught exception" 3 exercise3 "$fixtures/uncaught-exception.cpp" --out "$scratch/r15"
has "uncaught exception" "Trying to backward through the graph a second time"
run "exits early" 3 exercise3 "$fixtures/exits-early.cpp" --out "$scratch/r16"
has "exits early" "before the grader could read its results"

# Usage errors.
run "unknown exercise" 64 exercise99
has "unknown exercise" "no exercise \"exercise99\": did you mean exercise9? (known: exercise1 exercise2 exercise3 exercise4 exercise5 exercise6 exercise7 exercise8 exercise9 exercise10 exercise11 exercise12 exercise13)"
run "missing file" 64 exercise3 "$scratch/nothere.cpp"
has "missing file" "no such file"
run "bad flag" 64 exercise3 --frobnicate
run "no exercise" 64
run "help" 0 --help
has "help" "70  internal error"
# Each class command's help gives its own exit codes and the options of
# grade it takes, as the README writes them (issue 44).
run "batch help" 0 batch --help
has "batch help" "1   canvas.csv was not written"
has "batch help" "Also takes: --out DIR"
has "batch help" "70  some submission could not be graded"
run "merge help" 0 merge --help
has "merge help" "64  usage error (a shard missing without --allow-partial"
run "release help" 0 release --help
has "release help" "1   refused: some facts are stale"

# --device cuda: without a GPU (no NVIDIA driver here), its own exit code and
# a clear message before anything is built; with one, a real run that
# records the device and the GPU's name (tests/grader/cuda_test.sh does more).
if [ ! -e /dev/nvidiactl ]; then
  run "no GPU" 69 exercise3 --device cuda --out "$scratch/no-gpu"
  has "no GPU" "--device cuda, but"
  has "no GPU" "Grade on the CPU: leave out --device."
  [ ! -e "$scratch/no-gpu" ] || { echo "FAIL no GPU: a report folder was written"; failures=$((failures + 1)); }
else
  out=$("$grade" exercise3 --solution --device cuda --json --out "$scratch/gpu" 2>&1)
  got=$?
  if [ "$got" = 69 ]; then
    has "no GPU (driver present, no CUDA backend or GPU)" "Grade on the CPU: leave out --device."
  elif [ "$got" = 0 ]; then
    has "GPU run" '"device": "cuda"'
    lacks "GPU run" '"gpu": null'
  else
    echo "FAIL GPU run: exit $got"; failures=$((failures + 1))
  fi
fi
run "GPU with LibTorch" 64 exercise3 --device cuda --engine libtorch
has "GPU with LibTorch" "--device cuda grades with gradlab's engine"

# --json prints the result model; the report's bytes do not depend on the run
# apart from the documented volatile fields (timings, peak memory, the cache flag, the creation time).
run "json" 1 exercise3 "$fixtures/forgot-retain-grad.cpp" --json --out "$scratch/r17"
has "json" "\"verdict\": \"failed\""
has "json" "\"cached\": true"
strip() { grep -vE '"(seconds|wall_seconds|cpu_seconds|peak_memory_kb|cached|created)"' "$1"; }
"$grade" exercise3 "$fixtures/forgot-retain-grad.cpp" --out "$scratch/r18" >/dev/null 2>&1
if ! diff <(strip "$scratch/r17/report.json") <(strip "$scratch/r18/report.json") >/dev/null; then
  echo "FAIL report.json differs between two runs of the same file"
  failures=$((failures + 1))
fi

# A malformed rubric: exit 70, naming the file and the field.
mkdir -p "$scratch/course/solutions"
cp "$src/solutions/exercise3.cpp" "$scratch/course/solutions/"
sed 's/"kind": "grad_fn"/"kind": "gradfn"/' "$src/solutions/exercise3.rubric.json" >"$scratch/course/solutions/exercise3.rubric.json"
run "malformed rubric" 70 exercise3 --course "$scratch/course" --solution
has "malformed rubric" "exercise3.rubric.json: checks[4] (\"p-grad-fn\").kind: unknown check kind \"gradfn\""
echo '{ "rubric": 1, ' >"$scratch/course/solutions/exercise3.rubric.json"
run "rubric not JSON" 70 exercise3 --course "$scratch/course" --solution
has "rubric not JSON" "not valid JSON"

# Probes: a gradcheck of a registered custom Function, and backward after an
# in-place change to a saved tensor, in a small course of its own.
mkdir -p "$scratch/course3/solutions" "$scratch/course3/tests/fixtures/probe9"
cube() {  # cube FACTOR: a custom Function whose backward uses FACTOR (3 is right)
  cat <<CPP
#include <gradlab/lab.h>
struct Cube : torch::autograd::Function<Cube> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list g) {
    auto x = ctx->get_saved_variables()[0];
    return {g[0] * $1 * x * x};
  }
};
void probe9(lab::Lab& lab) {
  auto w = torch::tensor({1.0, 2.0}, torch::requires_grad());
  auto y = Cube::apply(w).sum();
  lab.name("w", w);
  lab.name("y", y);
  lab.function("cube", [](const torch::Tensor& x) { return Cube::apply(x); });
}
CPP
}
cube 3 >"$scratch/course3/solutions/probe9.cpp"
cube 2 >"$scratch/course3/wrong-backward.cpp"
cat >"$scratch/course3/solutions/probe9.rubric.json" <<'JSON'
{"rubric": 1, "exercise": "probe9", "title": "probes", "function": "probe9",
 "probes": [{"id": "cube", "kind": "gradcheck", "function": "cube", "shape": [4], "seed": 1},
            {"id": "bump", "kind": "inplace", "tensor": "w", "value": 1.0},
            {"id": "again", "kind": "backward", "tensor": "y"}],
 "checks": [{"id": "gradcheck", "kind": "gradcheck", "probe": "cube", "name": "Cube's backward is its derivative"},
            {"id": "stale", "kind": "probe", "probe": "again", "expect": "error",
             "contains": "modified by an inplace operation", "name": "backward after an in-place change fails"},
            {"id": "version", "kind": "version", "tensor": "w", "name": "w's version counter is the reference's (LibTorch: numel after torch::tensor({...}))"}]}
JSON
run "probes: solution" 0 probe9 --course "$scratch/course3" --solution --out "$scratch/r19"
run "probes: wrong backward" 1 probe9 "$scratch/course3/wrong-backward.cpp" --course "$scratch/course3" --out "$scratch/r20"
has "probes: wrong backward" "✗ Cube's backward is its derivative"
has "probes: wrong backward" "✓ backward after an in-place change fails"

# grade list shows the exercise and the last result.
mkdir -p "$scratch/course2/exercises" && cp "$fixtures/wrong-sign.cpp" "$scratch/course2/exercises/exercise3.cpp"
(cd "$scratch/course2" && "$grade" exercise3 >/dev/null 2>&1)
out=$(cd "$scratch/course2" && "$grade" list 2>&1)
has "list" "exercise3   The lab's exercise"
has "list" "exercise2   The backward pass"
has "list" "last: 17/18, 1 of 17 checks failed"

# A grader killed mid-run leaves its work folder behind; the next grader
# removes it (its owner is gone), and leaves a live grader's alone. Both in
# a private folder, so other graders on the machine do not interfere: the
# work folders' parent, $TMPDIR, or a root grader's staging folder.
export TMPDIR="$scratch/tmp" && mkdir -p "$TMPDIR"
work=$TMPDIR
if [ "$(id -u)" = 0 ]; then
  GRADLAB_STAGING=$(mktemp -d /var/tmp/gradlab-test-XXXXXX) && chmod 0711 "$GRADLAB_STAGING" && export GRADLAB_STAGING
  work=$GRADLAB_STAGING
fi
"$grade" exercise3 "$src/tests/fixtures/hostile/infinite-loop.cpp" --out "$scratch/r-killed" >/dev/null 2>&1 &
killed=$!
for _ in $(seq 100); do [ -n "$(ls "$work" | grep '^gradlab-work-')" ] && break; sleep 0.1; done
kill -9 "$killed" && wait "$killed" 2>/dev/null
left=$(ls "$work" | grep -c '^gradlab-work-')
mkdir "$work/gradlab-work-$$.$(awk '{print $22}' /proc/$$/stat)-alive"  # this shell's: alive
run "sweep: a killed grader's folders" 0 exercise3 --solution --out "$scratch/r-sweep"
if [ "$left" -lt 1 ]; then echo "FAIL sweep: the killed grader left no work folder to sweep"; failures=$((failures + 1))
elif ls "$work" | grep '^gradlab-work-' | grep -qv -- '-alive$'; then echo "FAIL sweep: $(ls "$work") left"; failures=$((failures + 1))
elif [ ! -d "$work/gradlab-work-$$.$(awk '{print $22}' /proc/$$/stat)-alive" ]; then echo "FAIL sweep: a live owner's folder was removed"; failures=$((failures + 1))
else echo "ok   sweep: $left folder(s) of a killed grader removed, a live one's kept"; fi
unset TMPDIR
if [ -n "${GRADLAB_STAGING:-}" ]; then rm -rf "$GRADLAB_STAGING"; unset GRADLAB_STAGING; fi

# Where namespaces cannot be made the grader says, once, that the fallback
# fence holds the work (not only in the report), unless it was asked for.
# The probe's answer, kept per boot in $TMPDIR, is set to "cannot" here.
export TMPDIR="$scratch/tmp-nons" && mkdir -p "$TMPDIR"
run "fallback: the probe's answer kept" 0 exercise3 --solution --out "$scratch/r-probe"
memo=$(ls "$TMPDIR"/gradlab-fence-* 2>/dev/null | head -1)
# A checkout the fallback's unprivileged compiler cannot reach (under /root):
# the grader says so (exit 69), and there is no fallback here to test.
no_fallback=$("$grade" exercise3 --solution --no-isolation --out "$scratch/r-nofb" 2>&1 | grep -m1 'no sandbox can be built here')
if [ -n "$no_fallback" ]; then
  echo "skip fallback: this checkout cannot host the fallback fence: $no_fallback"
elif [ -z "$memo" ]; then echo "FAIL fallback: no probe answer kept in \$TMPDIR"; failures=$((failures + 1))
else
  printf 0 >"$memo"
  run "fallback: chosen where namespaces cannot be made" 0 exercise3 --solution --out "$scratch/r-nons"
  has "fallback: said" "student code runs in the fallback fence"
  grep -q '"isolation": "fallback"' "$scratch/r-nons/report.json" || { echo "FAIL fallback: the report names another fence"; failures=$((failures + 1)); }
  run "fallback: asked for" 0 exercise3 --solution --no-isolation --out "$scratch/r-nons"
  lacks "fallback: not said when asked for" "student code runs in the fallback fence"
fi
unset TMPDIR

# Feedback a student can act on. first_screen NAME TEXT: TEXT is within the
# first 24 lines of the last run's output.
first_screen() {
  if ! head -24 <<<"$out" | grep -qF -- "$2"; then
    echo "FAIL $1: the first screen lacks: $2"
    printf '%s\n' "$out" | head -30 | sed 's/^/    /'
    failures=$((failures + 1))
  fi
}
mkdir -p "$scratch/mine"
sed 's/p.retain_grad();/p.retian_grad();/' "$src/solutions/exercise3.cpp" >"$scratch/mine/typo.cpp"
run "typo" 2 exercise3 "$scratch/mine/typo.cpp" --out "$scratch/r-typo"
typo_line=$(grep -n 'retian_grad' "$scratch/mine/typo.cpp" | cut -d: -f1)
# The grader compiles with clang where it is installed, else with GCC
# (grader/CMakeLists.txt); each says the same mistakes in its own words.
if grep -q '"compiler": "clang' "$scratch/r-typo/report.json"; then
  first_screen "typo: at the student's line" "mine/typo.cpp:$typo_line:5: error: no member named 'retian_grad' in 'torch::Tensor'"
else
  first_screen "typo: at the student's line" "mine/typo.cpp:$typo_line:5: error: ‘class torch::Tensor’ has no member named ‘retian_grad’; did you mean ‘retain_grad’?"
fi
first_screen "typo: the line" "$typo_line |   p.retian_grad();"
sed 's/p = x.pow(2);/p = torch::pow(x, "2");/' "$src/solutions/exercise3.cpp" >"$scratch/mine/overload.cpp"
run "overload" 2 exercise3 "$scratch/mine/overload.cpp" --out "$scratch/r-overload"
pow_line=$(grep -n 'torch::pow(x, "2")' "$scratch/mine/overload.cpp" | cut -d: -f1)
if grep -q '"compiler": "clang' "$scratch/r-typo/report.json"; then
  first_screen "overload: the error first" "mine/overload.cpp:$pow_line:7: error: no matching function for call to 'pow'"
  first_screen "overload: the versions" "Tensor pow(const Tensor& a, Scalar e) — no known conversion from 'const char[2]' to 'torch::Scalar' for 2nd argument"
else
  first_screen "overload: the error first" "mine/overload.cpp:$pow_line:17: error: no matching function for call to ‘pow(torch::Tensor&, const char [2])’"
  first_screen "overload: the versions" "torch::Tensor torch::pow(const Tensor&, Scalar) — no known conversion for argument 2"
fi
lacks "overload: no header paths" "engine/include"
printf '%s\n' '#include <gradlab/lab.h>' '#include <map>' 'void exercise3(lab::Lab& lab) {' '  torch::Tensor x;' \
  '  std::map<torch::Tensor, int> m;' '  m[x] = 1;' '  lab.name("x", x);' '}' >"$scratch/mine/template.cpp"
run "error inside a template" 2 exercise3 "$scratch/mine/template.cpp" --out "$scratch/r-template"
if grep -q '"compiler": "clang' "$scratch/r-typo/report.json"; then
  first_screen "error inside a template: at the student's line" "mine/template.cpp:6:4: error: no viable conversion"
else
  first_screen "error inside a template: at the student's line" "mine/template.cpp:6:6: error: cannot convert"
fi
first_screen "error inside a template: the line" "6 |   m[x] = 1;"
sed 's#  f.backward({}, /\*retain_graph=\*/true);#  f.backward();#' "$fixtures/backward-twice.cpp" >"$scratch/mine/twice.cpp"
run "second backward" 3 exercise3 "$scratch/mine/twice.cpp" --out "$scratch/r-twice"
first_screen "second backward: where" "mine/twice.cpp:15"
first_screen "second backward: the line" "15 |   f.backward();"
grep -q '"line": 15' "$scratch/r-twice/report.json" || { echo "FAIL second backward: report.json lacks the line"; failures=$((failures + 1)); }
printf '%s\n' '#include <gradlab/lab.h>' 'static void check(bool ok) {' '  if (!ok) throw std::runtime_error("not ok");' '}' \
  'void exercise3(lab::Lab& lab) {' '  torch::Tensor x = torch::tensor(1.0);' '  std::cout << x << std::endl;' '  check(false);' \
  '  lab.name("x", x);' '}' >"$scratch/mine/throws.cpp"
run "the student's own throw, std::cout without <iostream>" 3 exercise3 "$scratch/mine/throws.cpp" --out "$scratch/r-throws"
first_screen "the student's own throw: where" "mine/throws.cpp:3"
for n in $(seq 1 13); do
  cp "$src/exercises/exercise$n.cpp" "$scratch/mine/exercise$n.cpp"
  out=$("$grade" "exercise$n" "$scratch/mine/exercise$n.cpp" --out "$scratch/r-starter" 2>&1)
  has "untouched starter $n" "Nothing to grade yet"
  has "untouched starter $n" "— the blanks are empty"
  lines=$(wc -l <<<"$out")
  [ "$lines" -le 25 ] || { echo "FAIL untouched starter $n: $lines lines (at most 25)"; failures=$((failures + 1)); }
done
# One blank filled is work in progress: every check is listed.
awk '{print} /START CODE HERE/ && !done {print "  x = torch::tensor(-2.0, torch::requires_grad());"; done=1}' \
  "$src/exercises/exercise3.cpp" >"$scratch/mine/partly.cpp"
run "a started file" 1 exercise3 "$scratch/mine/partly.cpp" --out "$scratch/r-partly"
lacks "a started file" "Nothing to grade yet"
has "a started file" "✓ x requires grad"
# --watch grades again when the file is saved, and only then.
cp "$src/solutions/exercise3.cpp" "$scratch/mine/watched.cpp"
"$grade" exercise3 "$scratch/mine/watched.cpp" --watch --out "$scratch/r-watch" >"$scratch/watch.out" 2>&1 &
watcher=$!
for _ in $(seq 1 100); do grep -q "watching" "$scratch/watch.out" && break; sleep 0.2; done
touch "$scratch/mine/watched.cpp"  # saved unchanged: no new grade
sleep 1
sed -i 's/  p.retain_grad();//' "$scratch/mine/watched.cpp"
for _ in $(seq 1 100); do [ "$(grep -c "watching" "$scratch/watch.out")" -ge 2 ] && break; sleep 0.2; done
kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
out=$(cat "$scratch/watch.out")
has "watch: first grade" "score 18/18 — every check passed"
has "watch: the grade after the save" "score 16/18 — 2 of 17 checks failed"
[ "$(grep -c "^score" <<<"$out")" = 2 ] || { echo "FAIL watch: expected exactly two grades"; failures=$((failures + 1)); }

# The habits a PyTorch user brings: each fixture's first screen (what a
# terminal shows before scrolling) holds the hint its .expect.json names,
# above the compiler's text.
for f in "$fixtures"/python-*.cpp; do
  hint=$(sed -n 's/.*"compile_hint": "\([^"]*\)".*/\1/p' "${f%.cpp}.expect.json")
  name="python habit $(basename "$f" .cpp)"
  run "$name" 2 exercise3 "$f" --out "$scratch/r-python"
  first=$(head -12 <<<"$out")
  grep -qF -- "$hint" <<<"$first" || { echo "FAIL $name: the first screen lacks \"$hint\""; failures=$((failures + 1)); }
  hint_at=$(grep -n "  hint (line" <<<"$first" | head -1 | cut -d: -f1)
  error_at=$(grep -n ": error: " <<<"$first" | head -1 | cut -d: -f1)
  [ -n "$hint_at" ] && [ -n "$error_at" ] && [ "$hint_at" -lt "$error_at" ] ||
    { echo "FAIL $name: the hint is not above the compiler's text"; failures=$((failures + 1)); }
done
[ "$(ls "$fixtures"/python-*.cpp | wc -l)" -ge 9 ] || { echo "FAIL: the Python-habit fixtures are missing"; failures=$((failures + 1)); }

run "did you mean an exercise" 64 exercse3
has "did you mean an exercise" "did you mean exercise3?"
run "did you mean a flag" 64 exercise3 --jnuit
has "did you mean a flag" "did you mean --junit (not --jnuit)?"

# grade check on a small course of its own: one fixture declares the wrong
# verdict, so check must say so, exit 1, and put the problem in its JUnit file.
course="$scratch/course"
mkdir -p "$course/solutions" "$course/exercises" "$course/tests/fixtures/exercise3"
cp "$src"/solutions/exercise3.* "$course/solutions/"
cp "$src/exercises/exercise3.cpp" "$course/exercises/"
cp "$fixtures/one-expression.cpp" "$fixtures/one-expression.expect.json" "$course/tests/fixtures/exercise3/"
cp "$fixtures/segfault.cpp" "$course/tests/fixtures/exercise3/"
echo '{"verdict": "passed"}' >"$course/tests/fixtures/exercise3/segfault.expect.json"
run "check: a fixture declared wrongly" 1 --course "$course" check --jobs 2 --junit --out "$scratch/check-junit"
has "check: a fixture declared wrongly" "exercise3: segfault.cpp → runtime_error (crashed)"
# Facts, solution, starter and two fixtures; exercise3 has variants, so also
# the solution at 20 of them and the fixture declared passing at another's.
has "check: a fixture declared wrongly" "26 checked: 25 as declared, 1 problem"
xml="$scratch/check-junit/check-exercise3.xml"
if [ -f "$xml" ] && grep -q 'tests="26" failures="1"' "$xml" && grep -q '<testcase classname="exercise3" name="segfault.cpp">' "$xml" &&
   grep -q 'verdict runtime_error, expected passed' "$xml"; then
  echo "ok   check: JUnit per exercise, the problem in its testcase"
else
  echo "FAIL check: JUnit: $(cat "$xml" 2>/dev/null | head -20)"; failures=$((failures + 1))
fi
# A stale facts file is a problem check names, with the command that fixes it.
sed -i 's/"solution_sha256": "[0-9a-f]*"/"solution_sha256": "0000"/' "$course/solutions/exercise3.facts.json"
run "check: stale facts" 1 --course "$course" check --jobs 2
has "check: stale facts" "recorded from another version of the solution (run \`grade record exercise3\`"

echo "$failures failure(s)"
[ "$failures" = 0 ]

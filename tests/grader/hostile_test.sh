#!/usr/bin/env bash
# The hostile catalog (tests/fixtures/hostile/): each file is graded as
# exercise3 and must get the verdict its .expect.json names, with the grader
# carrying on (an exit code 1-3, a report written) and, when the run was
# isolated by bubblewrap, nothing outside the sandbox changed: the course's
# solutions, a canary folder, $HOME, the report folder (only the grader's
# own files), no process left behind, no solution text in the output.
# Then the same cases without namespaces (--no-isolation): each still ends in
# its verdict. Last, a batch that mixes them with honest students grades the
# honest ones exactly as alone. Prints the table: case, verdict, contained.
#   hostile_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
#
# These files are meant to do damage, and without namespaces (the second
# pass) nothing but the seccomp filter and rlimits stands in their way: a
# run as root that deletes "../.." deletes the machine. So the whole test runs
# inside an outer bubblewrap fence of its own: the file system read-only but
# for the scratch folder, a private /tmp. Where bubblewrap cannot start, the
# test is skipped (exit 77), never run unfenced.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
if [ -z "${GRADLAB_HOSTILE_FENCED:-}" ]; then
  rm -rf "$scratch" && mkdir -p "$scratch"
  # /proc as it is, and the capabilities kept, so that the grader's own
  # bubblewrap can still start inside (the grader drops them for programs it
  # runs without namespaces).
  fence=(/usr/bin/bwrap --ro-bind / / --dev /dev --dev-bind /proc /proc --tmpfs /tmp --cap-add ALL)
  if ! "${fence[@]}" /usr/bin/bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
       --proc /proc --dev /dev /usr/bin/true 2>/dev/null; then
    echo "skipped: bubblewrap cannot start here, and these files are not run without a fence"
    exit 77
  fi
  # A private /tmp hides whatever was there, the course and the grader too
  # when they live under /tmp (a CI checkout): bring those back read-only.
  exec "${fence[@]}" --ro-bind "$src" "$src" --ro-bind "$(dirname "$(dirname "$grade")")" "$(dirname "$(dirname "$grade")")" \
    --bind "$scratch" "$scratch" --die-with-parent --setenv GRADLAB_HOSTILE_FENCED 1 -- bash "$(readlink -f "$0")" "$grade" "$src" "$scratch"
fi
mkdir -p "$scratch/home" "$scratch/canary" "$scratch/run"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1 CI=1 HOME="$scratch/home"
echo "do not touch" >"$scratch/canary/file" && echo "dotfile" >"$scratch/home/.profile"
fixtures=$src/tests/fixtures/hostile
failures=0
tree_hash() { (cd "$1" && find . -printf '%p %s %m\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
solutions_before=$(tree_hash "$src/solutions") canary_before=$(tree_hash "$scratch/canary") home_before=$(tree_hash "$scratch/home")
json_field() { sed -n "s/^  *\"$2\": \"\\([^\"]*\\)\".*/\\1/p" "$1" | head -1; }
expected_ok() {  # VALUE SPEC(json: string or list)
  case "$2" in
    \[*) printf '%s' "$2" | grep -q "\"$1\"" ;;
    *) [ "\"$1\"" = "$2" ] ;;
  esac
}
check_case() {  # NAME MODE(isolated|rlimits)
  local name=$1 mode=$2 out=$scratch/reports-$2/gradlab-reports/$1 flags=()
  [ "$mode" = rlimits ] && flags=(--no-isolation)
  (cd "$scratch/run" && timeout 120 "$grade" exercise3 "$fixtures/$name.cpp" --out "$out" "${flags[@]}" >"$scratch/$name.$mode.log" 2>&1)
  local code=$? verdict="" status="" contained="-" why=""
  local expect_v expect_s
  expect_v=$(sed -n 's/.*"verdict": \(\[[^]]*\]\|"[^"]*"\).*/\1/p' "$fixtures/$name.expect.json")
  expect_s=$(sed -n 's/.*"run_status": \(\[[^]]*\]\).*/\1/p' "$fixtures/$name.expect.json")
  if [ "$code" -lt 1 ] || [ "$code" -gt 3 ]; then
    why="the grader exited $code"
  elif [ ! -f "$out/report.json" ]; then
    why="no report.json"
  else
    verdict=$(json_field "$out/report.json" verdict)
    status=$(sed -n '/"run": {/,/}/s/^    "status": "\([^"]*\)".*/\1/p' "$out/report.json" | head -1)
    expected_ok "$verdict" "$expect_v" || why="verdict $verdict, expected $expect_v"
    [ -n "$expect_s" ] && ! expected_ok "$status" "$expect_s" && why="$why run status $status, expected $expect_s"
  fi
  if [ "$mode" = isolated ] && [ -z "$why" ]; then
    local isolation
    isolation=$(json_field "$out/report.json" isolation)
    contained=yes
    [ "$isolation" != bubblewrap ] && [ "$verdict" != compile_error ] && contained="n/a ($isolation)"
    [ "$(tree_hash "$src/solutions")" != "$solutions_before" ] && contained=no why="solutions/ changed"
    [ "$(tree_hash "$scratch/canary")" != "$canary_before" ] && contained=no why="the canary folder changed"
    [ "$(tree_hash "$scratch/home")" != "$home_before" ] && contained=no why="\$HOME changed"
    local extra
    extra=$(ls -A "$out" | grep -Ev '^(report\.json|report\.html|graph-.*\.png)$')
    [ -n "$extra" ] && contained=no why="the report folder holds $extra"
    [ -n "$(find "$scratch" -name pwned 2>/dev/null)" ] && contained=no why="a forged file was written"
    grep -q "SOLUTION FOUND" "$out/report.json" && contained=no why="the solution's text reached the output"
    grep -q '"connected' "$out/report.json" && contained=no why="a network connection succeeded"
    sleep 0.2
    # The fixtures that try to leave processes behind name them gradlab-hostile.
    if pgrep -x gradlab-hostile >/dev/null; then contained=no why="a process outlived the run"; fi
  fi
  printf '%-22s %-9s %-15s %-14s %s\n' "$name" "$mode" "$verdict" "${status:--}" "$contained"
  if [ -n "$why" ]; then
    echo "FAIL $name ($mode): $why"; tail -5 "$scratch/$name.$mode.log"; failures=$((failures + 1))
  fi
}

printf '%-22s %-9s %-15s %-14s %s\n' case mode verdict run contained
for f in "$fixtures"/*.cpp; do check_case "$(basename "$f" .cpp)" isolated; done
for f in "$fixtures"/*.cpp; do check_case "$(basename "$f" .cpp)" rlimits; done
pkill -x gradlab-hostile 2>/dev/null  # (rlimits mode promises less; never leave anything behind)

# A class with honest students and hostile ones: the honest scores are
# those they get alone.
class=$scratch/class
for f in "$fixtures"/*.cpp; do mkdir -p "$class/h-$(basename "$f" .cpp)" && cp "$f" "$class/h-$(basename "$f" .cpp)/exercise3.cpp"; done
mkdir -p "$class/honest-a" "$class/honest-b"
cp "$src/solutions/exercise3.cpp" "$class/honest-a/exercise3.cpp"
cp "$src/tests/fixtures/exercise3/forgot-retain-grad.cpp" "$class/honest-b/exercise3.cpp"
(cd "$scratch/run" && timeout 600 "$grade" batch "$class" --exercises exercise3 --jobs 2 --out "$scratch/batch" >"$scratch/batch.log" 2>&1)
code=$?
[ "$code" = 0 ] || { echo "FAIL the batch exited $code"; tail -5 "$scratch/batch.log"; failures=$((failures + 1)); }
for s in honest-a honest-b; do
  alone=$("$grade" exercise3 "$class/$s/exercise3.cpp" --json --out "$scratch/alone-$s" 2>/dev/null | sed -n 's/^  "score": \([0-9.]*\),$/\1/p')
  alone=$(awk "BEGIN{print $alone + 0}")
  in_batch=$(tr -d '\r' <"$scratch/batch/gradebook.csv" | grep "^$s," | cut -d, -f2)
  if [ "$alone" = "$in_batch" ]; then echo "ok   $s scores $alone in a batch with $(ls "$fixtures"/*.cpp | wc -l) hostile files, as alone"
  else echo "FAIL $s: $in_batch in the batch, $alone alone"; failures=$((failures + 1)); fi
done
[ "$failures" = 0 ]

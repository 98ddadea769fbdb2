#!/usr/bin/env bash
# The hostile catalog (tests/fixtures/hostile/), in all four ways a grader
# runs: as root or as an ordinary user, each with bubblewrap's namespaces and
# with the fallback fence (--no-isolation: Landlock, no namespaces). Each file
# is graded as exercise3 and must get the verdict its .expect.json names,
# with the grader carrying on (an exit code 1-3, a report written) and
# nothing outside the fence changed or read: the course's solutions, a
# canary folder, $HOME, the grader's binaries, the kernel's core_pattern,
# the host's /usr; no file named `pwned` anywhere; no secret (from the
# grader's environment, its stdin or a file outside) in any report; no
# process or work folder left behind; each case under 120 s. Then, in each
# mode, a batch that mixes the catalog with honest students grades the honest
# ones exactly as alone. Prints the table: case, mode, verdict, run status.
#   hostile_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR [MODE...]
# GRADLAB_HOSTILE_ONLY=REGEX runs only the cases it matches, and no batch.
# MODE is root-namespaces, root-fallback, user-namespaces or user-fallback;
# without one, every mode this user can run. CTest runs one mode a test, so
# two modes can run side by side: as root, each in a process namespace of
# its own with its own /proc, where the check for processes left behind
# sees only its own grader's. (Made by unshare, not bubblewrap: bubblewrap
# covers parts of a /proc it mounts, and a kernel lets a grader inside mount
# a /proc for its sandbox only where a whole one is visible.)
#
# These files are meant to do damage. The whole test runs inside an outer
# bubblewrap fence of its own: the file system read-only but for the scratch
# folder and a private /tmp. It grants nothing: run as root, the grader inside
# is root as it would be on a course server, so an escape through the
# grader's fence is an escape that the checks above see. Where bubblewrap
# cannot start, the test is skipped (exit 77), never run unfenced.
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$(readlink -f "$3")
shift 3
asked=("$@")
bindir=$(dirname "$(dirname "$grade")")
# The ordinary user of the user modes (no account needed): one uid a mode,
# since RLIMIT_NPROC counts a uid's processes across the machine and the two
# user modes may run at once.
test_uid=60999
if [ -z "${GRADLAB_HOSTILE_FENCED:-}" ]; then
  rm -rf "$scratch" && mkdir -p "$scratch"
  fence=(/usr/bin/bwrap --ro-bind / / --dev /dev --dev-bind /proc /proc --perms 1777 --tmpfs /tmp)
  if [ "$(id -u)" = 0 ]; then fence=(unshare --pid --fork --mount-proc --kill-child -- "${fence[@]}"); fi
  if ! "${fence[@]}" /usr/bin/true 2>/dev/null; then
    echo "skipped: bubblewrap cannot start here, and these files are not run without a fence"
    exit 77
  fi
  # A root grader leases uids through lock files in /run/gradlab-uids: the
  # same folder as graders outside, so no two ever share a uid.
  if [ "$(id -u)" = 0 ] && mkdir -p -m 700 /run/gradlab-uids 2>/dev/null; then fence+=(--bind /run/gradlab-uids /run/gradlab-uids); fi
  # A private /tmp hides whatever was there, the course and the grader too
  # when they live under /tmp (a CI checkout): bring those back read-only.
  exec "${fence[@]}" --ro-bind "$src" "$src" --ro-bind "$bindir" "$bindir" --bind "$scratch" "$scratch" \
    --die-with-parent --setenv GRADLAB_HOSTILE_FENCED 1 -- bash "$(readlink -f "$0")" "$grade" "$src" "$scratch" "${asked[@]}"
fi

fixtures=$src/tests/fixtures/hostile
failures=0
nonce=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
export GRADLAB_HOSTILE_SECRET="env-secret-$nonce" NO_COLOR=1 CI=1
mkdir -p "$scratch/outside" && echo "file-secret-$nonce" >"$scratch/outside/secret.txt"
chmod 600 "$scratch/outside/secret.txt"
tree_hash() { (cd "$1" && find . -printf '%p %s %m\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
solutions_before=$(tree_hash "$src/solutions")
binaries_before=$(sha256sum "$grade" "$bindir"/grader/libgradlab_student.so | sha256sum)
core_before=$(cat /proc/sys/kernel/core_pattern)
touch "$scratch/usr-stamp"
json_field() { sed -n "s/^  *\"$2\": \"\\([^\"]*\\)\".*/\\1/p" "$1" | head -1; }
expected_ok() {  # VALUE SPEC(json: string or list)
  case "$2" in
    \[*) printf '%s' "$2" | grep -q "\"$1\"" ;;
    *) [ "\"$1\"" = "$2" ] ;;
  esac
}

modes=()
[ "$(id -u)" = 0 ] && modes+=(root-namespaces root-fallback)
modes+=(user-namespaces user-fallback)
if [ ${#asked[@]} -gt 0 ]; then
  for m in "${asked[@]}"; do
    case " ${modes[*]} " in
      *" $m "*) ;;
      *) case "$m" in root-namespaces|root-fallback)
           echo "skipped: $m needs root"; exit 77 ;;
         user-namespaces|user-fallback) ;;
         *) echo "unknown mode $m (root-namespaces, root-fallback, user-namespaces, user-fallback)"; exit 2 ;;
         esac ;;
    esac
  done
  modes=("${asked[@]}")
fi
# The user modes: as root, an unprivileged uid of the test's own; otherwise
# the tester's own uid.
as_mode() {  # MODE COMMAND...
  local mode=$1; shift
  if [ "${mode%%-*}" = user ] && [ "$(id -u)" = 0 ]; then
    setpriv --reuid="$test_uid" --regid="$test_uid" --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
  else
    "$@"
  fi
}
leftovers() {  # processes of a sandbox uid, or of the test's user, still alive (zombies waiting for init are gone already)
  ps -eo uid=,pid=,stat=,comm= | awk -v u="$test_uid" '(($1 >= 61000 && $1 < 62000) || $1 == u) && $3 !~ /^Z/'
}

sysv_objects() { cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem 2>/dev/null | wc -l; }

check_case() {  # NAME MODE
  local name=$1 mode=$2 dir=$scratch/$2
  local out=$dir/reports/$name flags=() sysv_before
  sysv_before=$(sysv_objects)
  [ "${mode#*-}" = fallback ] && flags=(--no-isolation)
  local t0=$SECONDS
  (cd "$dir/run" && echo "stdin-secret-$nonce" | as_mode "$mode" env HOME="$dir/home" GRADLAB_CACHE="$dir/cache" \
     timeout 120 "$grade" exercise3 "$fixtures/$name.cpp" --out "$out" "${flags[@]}" >"$dir/$name.log" 2>&1)
  local code=$? verdict="" status="" why=""
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
    local fence
    fence=$(json_field "$out/report.json" isolation)
    local want=bubblewrap
    [ "${mode#*-}" = fallback ] && want=fallback
    [ -n "$fence" ] && [ "$fence" != "$want" ] && why="$why ran in the $fence fence, expected $want"
  fi
  [ $((SECONDS - t0)) -ge 120 ] && why="$why took $((SECONDS - t0)) s"
  [ "$(tree_hash "$src/solutions")" != "$solutions_before" ] && why="$why solutions/ changed"
  [ "$(tree_hash "$dir/canary")" != "$canary_before" ] && why="$why the canary folder changed"
  [ "$(tree_hash "$dir/home")" != "$home_before" ] && why="$why \$HOME changed"
  [ "$(sha256sum "$grade" "$bindir"/grader/libgradlab_student.so | sha256sum)" != "$binaries_before" ] && why="$why the grader's binaries changed"
  [ "$(cat /proc/sys/kernel/core_pattern)" != "$core_before" ] && why="$why kernel.core_pattern changed"
  [ "$(sysv_objects)" != "$sysv_before" ] && why="$why SysV IPC objects outlived the run"
  # The console shows a run's output bounded and with its control bytes made visible.
  [ "$(stat -c %s "$dir/$name.log")" -gt 131072 ] && why="$why the console printed $(stat -c %s "$dir/$name.log") bytes"
  LC_ALL=C grep -qaP '[\x00\x08\x1b\r]' "$dir/$name.log" && why="$why the console passed on a control byte"
  if [ -d "$out" ]; then
    local extra
    extra=$(ls -A "$out" | grep -Ev '^(report\.json|report\.html|graph-.*\.png)$')
    [ -n "$extra" ] && why="$why the report folder holds $extra"
    grep -rqa -e "secret-$nonce" "$out" && why="$why a secret reached the report"
    grep -qa "SOLUTION FOUND" "$out/report.json" && why="$why the solution's text reached the output"
    grep -qa '"connected' "$out/report.json" && why="$why a network connection succeeded"
  fi
  [ -n "$(find "$scratch" /tmp -name pwned 2>/dev/null | head -1)" ] && why="$why a file named pwned was written"
  [ -n "$(find /tmp -maxdepth 1 -name 'gradlab-work-*' 2>/dev/null | head -1)" ] && why="$why a work folder was left behind"
  sleep 0.1
  local left
  left=$(leftovers)
  [ -n "$left" ] && why="$why processes outlived the run: $(echo "$left" | head -3 | tr '\n' ' ')"
  printf '%-28s %-16s %-15s %s\n' "$name" "$mode" "$verdict" "${status:--}"
  if [ -n "$why" ]; then
    echo "FAIL $name ($mode):$why"; tail -c 600 "$dir/$name.log"; echo; failures=$((failures + 1))
    leftovers | awk '{print $2}' | xargs -r kill -9 2>/dev/null
    find "$scratch" /tmp -name pwned -delete 2>/dev/null
  fi
}

# A class with honest students and the hostile ones: the honest scores are
# those they get alone.
check_batch() {  # MODE
  local mode=$1 dir=$scratch/$1 flags=()
  [ "${mode#*-}" = fallback ] && flags=(--no-isolation)
  local class=$dir/class
  for f in "$fixtures"/*.cpp; do mkdir -p "$class/h-$(basename "$f" .cpp)" && cp "$f" "$class/h-$(basename "$f" .cpp)/exercise3.cpp"; done
  mkdir -p "$class/honest-a" "$class/honest-b"
  cp "$src/solutions/exercise3.cpp" "$class/honest-a/exercise3.cpp"
  cp "$src/tests/fixtures/exercise3/forgot-retain-grad.cpp" "$class/honest-b/exercise3.cpp"
  python3 "$src/tests/grader/hostile_archives.py" "$class" "$src/solutions/exercise3.cpp" "$scratch/outside/secret.txt" \
    >"$dir/archives.tsv" || { echo "FAIL the hostile archives could not be made"; failures=$((failures + 1)); }
  [ "${mode%%-*}" = user ] && [ "$(id -u)" = 0 ] && chown -R "$test_uid:$test_uid" "$class"
  (cd "$dir/run" && as_mode "$mode" env HOME="$dir/home" GRADLAB_CACHE="$dir/cache" timeout 900 "$grade" batch "$class" \
     --exercises exercise3 --jobs 2 --out "$dir/batch" "${flags[@]}" </dev/null >"$dir/batch.log" 2>&1)
  local code=$?
  [ "$code" = 0 ] || { echo "FAIL the batch ($mode) exited $code"; tail -c 600 "$dir/batch.log"; echo; failures=$((failures + 1)); }
  for s in honest-a honest-b; do
    local alone in_batch
    alone=$(cd "$dir/run" && as_mode "$mode" env HOME="$dir/home" GRADLAB_CACHE="$dir/cache" "$grade" exercise3 "$class/$s/exercise3.cpp" \
              --json --out "$dir/alone-$s" "${flags[@]}" 2>/dev/null </dev/null | sed -n 's/^  "score": \([0-9.]*\),$/\1/p')
    alone=$(awk "BEGIN{print ${alone:-0} + 0}")
    in_batch=$(tr -d '\r' <"$dir/batch/gradebook.csv" 2>/dev/null | grep "^$s," | cut -d, -f2)
    if [ "$alone" = "$in_batch" ]; then echo "ok   $s scores $alone in a batch with $(ls "$fixtures"/*.cpp | wc -l) hostile files, as alone ($mode)"
    else echo "FAIL $s ($mode): $in_batch in the batch, $alone alone"; failures=$((failures + 1)); fi
  done
  grep -rqa -e "secret-$nonce" "$dir/batch" && { echo "FAIL a secret reached the batch's files ($mode)"; failures=$((failures + 1)); }
  # The hostile archives: each student's verdict, and the batch says why.
  local s want phrase got
  while IFS=$'\t' read -r s want phrase; do
    got=$(python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8-sig")):
    if r["student"] == sys.argv[2]: print(r["exercise3 verdict"])' "$dir/batch/gradebook.csv" "$s" 2>/dev/null)
    if [ "$want" = graded ]; then case "$got" in ""|missing|compile_error) want="a verdict of a graded file" ;; *) want=$got ;; esac; fi
    if [ "$got" = "$want" ] && grep -F "$s" "$dir/batch.log" | grep -qF "$phrase"; then
      echo "ok   archive $s: $got, and the batch says \"$phrase\" ($mode)"
    else
      echo "FAIL archive $s ($mode): verdict '$got', expected $want; the log says: $(grep -F "$s" "$dir/batch.log" | head -3)"
      failures=$((failures + 1))
    fi
  done <"$dir/archives.tsv"
  [ -n "$(find "$scratch" /tmp -name pwned 2>/dev/null | head -1)" ] && { echo "FAIL the batch wrote a file named pwned ($mode)"; failures=$((failures + 1)); }
}

# Where a mode cannot run at all, it is skipped with the reason, not failed:
# the test's user cannot reach a grader under a private folder (a checkout
# in /root), or the grader says no fence can be built there (it exits 69
# with the reason: the fallback fence's unprivileged compiler cannot reach a
# private checkout). A mode skipped is not a mode that held.
unavailable() {  # MODE: the reason it cannot run here, or nothing
  local mode=$1 dir=$scratch/probe-$1 flags=() out code
  [ "${mode#*-}" = fallback ] && flags=(--no-isolation)
  if [ "${mode%%-*}" = user ] && [ "$(id -u)" = 0 ] && ! as_mode "$mode" test -x "$grade"; then
    echo "the test's unprivileged user cannot reach $grade (a folder on its path is private)"; return
  fi
  mkdir -p "$dir" && [ "${mode%%-*}" = user ] && [ "$(id -u)" = 0 ] && chown "$test_uid:$test_uid" "$dir"
  out=$(cd "$dir" && as_mode "$mode" env HOME="$dir" GRADLAB_CACHE="$dir/cache" timeout 120 "$grade" exercise3 \
          "$fixtures/exit-early.cpp" --out "$dir/r" "${flags[@]}" 2>&1 </dev/null)
  code=$?
  [ "$code" = 69 ] && echo "$out" | grep -m1 'no sandbox can be built here'
}

printf '%-28s %-16s %-15s %s\n' case mode verdict run
ran=0
for mode in "${modes[@]}"; do
  dir=$scratch/$mode
  [ "$mode" = user-fallback ] && test_uid=60998
  why_not=$(unavailable "$mode")
  if [ -n "$why_not" ]; then
    echo "skipped: mode $mode cannot run here: $why_not"
    continue
  fi
  ran=$((ran + 1))
  mkdir -p "$dir/home" "$dir/canary" "$dir/run" "$dir/reports"
  echo "do not touch" >"$dir/canary/file" && echo "dotfile" >"$dir/home/.profile"
  [ "${mode%%-*}" = user ] && [ "$(id -u)" = 0 ] && chown -R "$test_uid:$test_uid" "$dir"
  canary_before=$(tree_hash "$dir/canary") home_before=$(tree_hash "$dir/home")
  for f in "$fixtures"/*.cpp; do
    [[ "$(basename "$f" .cpp)" =~ ${GRADLAB_HOSTILE_ONLY:-.} ]] && check_case "$(basename "$f" .cpp)" "$mode"
  done
  [ -z "${GRADLAB_HOSTILE_ONLY:-}" ] && check_batch "$mode"
done
if [ -n "$(find /usr -newer "$scratch/usr-stamp" -print -quit 2>/dev/null)" ]; then
  echo "FAIL the host's /usr changed: $(find /usr -newer "$scratch/usr-stamp" -print -quit)"; failures=$((failures + 1))
fi
[ "$(id -u)" = 0 ] || echo "note: not root here, so the two root modes did not run"
echo "$failures failure(s) in $ran of ${#modes[@]} modes"
[ "$failures" = 0 ] || exit 1
[ "$ran" -gt 0 ] || exit 77  # every mode asked for was skipped

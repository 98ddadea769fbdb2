#!/usr/bin/env bash
# A root grader wherever root keeps things. Its runs are a leased uid's,
# which cannot pass a private folder; each case below made every compile
# fail before the staging folder (grader/src/fence/staging.h):
#   - the checkout behind a 0700 folder (as a clone in /root is): made here
#     by a private mount namespace whose tmpfs over the checkout's parent
#     has mode 0700, with the checkout bound back at its own path;
#   - TMPDIR a 0700 folder (mktemp -d, libpam-tmpdir's /tmp/user/0);
#   - HOME a 0700 folder, with the default cache in it.
# In each, `grade exercise3 --solution` scores 18/18, a fixture gets its
# verdict, `grade check` passes a small course, `grade batch` grades a small
# class and `grade release` writes a release, in both fences; except that
# the fallback fence, which binds nothing, refuses a private checkout up
# front with what to do (exit 69). A staging
# folder of the wrong owner or mode is refused with a message. Skipped (77)
# unless root, or where the private mount cannot be made.
#   root_paths_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
[ "$(id -u)" = 0 ] || { echo "skipped: not root (a root grader's leased uids are what this tests)"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch"
scratch=$(readlink -f "$scratch")
export NO_COLOR=1 CI=1
. "$(dirname "$0")/common.sh"

# A small course and class, outside the checkout.
course="$scratch/course"
mkdir -p "$course/solutions" "$course/exercises" "$course/tests/fixtures/exercise3"
cp "$src"/solutions/exercise3.* "$course/solutions/"
cp "$src/exercises/exercise3.cpp" "$course/exercises/"
for f in forgot-retain-grad segfault; do
  cp "$src/tests/fixtures/exercise3/$f".* "$course/tests/fixtures/exercise3/"
done
class="$scratch/class"
mkdir -p "$class/alice" "$class/bob"
cp "$src/solutions/exercise3.cpp" "$class/alice/exercise3.cpp"
cp "$src/tests/fixtures/exercise3/forgot-retain-grad.cpp" "$class/bob/exercise3.cpp"

# every_command WHAT [FENCE_FLAG]: the commands a root user types, each with
# a cache of its own (so that every compile happens), in the case's setting.
every_command() {
  local what=$1 flag=${2:-} n=0
  local out="$scratch/out/$what${flag:+ $flag}"
  mkdir -p "$out"
  cache() { n=$((n + 1)); [ -n "${KEEP_CACHE:-}" ] || export GRADLAB_CACHE="$scratch/cache/$what${flag}$n"; }
  cache; "$grade" exercise3 --solution --out "$out/sol" $flag >"$out/sol.log" 2>&1
  grep -q "score 18/18" "$out/sol.log" && ok "$what$flag: --solution scores 18/18" ||
    fail "$what$flag: --solution: $(grep -E 'score|error|bwrap' "$out/sol.log" | head -3)"
  cache; "$grade" --course "$course" exercise3 "$src/tests/fixtures/exercise3/forgot-retain-grad.cpp" \
    --out "$out/fx" $flag >"$out/fx.log" 2>&1
  grep -q "score 14/18" "$out/fx.log" && ok "$what$flag: a fixture gets its verdict" ||
    fail "$what$flag: fixture: $(grep -E 'score|error|bwrap' "$out/fx.log" | head -3)"
  cache; "$grade" --course "$course" check --jobs 2 $flag >"$out/check.log" 2>&1
  grep -qE "([0-9]+) checked: \1 as declared, 0 problems" "$out/check.log" && ok "$what$flag: grade check" ||
    fail "$what$flag: grade check: $(tail -3 "$out/check.log")"
  cache; "$grade" --course "$course" batch "$class" --out "$out/batch" $flag >"$out/batch.log" 2>&1
  grep -q "^alice,18," "$out/batch/gradebook.csv" 2>/dev/null && grep -q "^bob,14," "$out/batch/gradebook.csv" &&
    ok "$what$flag: grade batch" || fail "$what$flag: grade batch: $(tail -3 "$out/batch.log")"
  "$grade" --course "$course" release --out "$out/release" >"$out/release.log" 2>&1 &&
    [ -f "$out/release/student/rubrics/exercise3.rubric.json" ] && ok "$what$flag: grade release" ||
    fail "$what$flag: grade release: $(tail -3 "$out/release.log")"
}

# The fallback fence binds nothing: where this checkout itself lies behind a
# private folder (a clone in /root), it refuses up front (section 3 checks
# that), so cases 1 and 2 run in it only where the checkout is reachable.
fallback=--no-isolation
for d in "$src" $(p=$src; while [ "$p" != / ]; do p=$(dirname "$p"); echo "$p"; done); do
  [ $(( $(stat -c %a "$d" | sed 's/^.*\(.\)$/\1/') & 1 )) = 1 ] || fallback=""
done
[ -n "$fallback" ] || echo "note: this checkout lies behind a private folder: the fallback fence is checked by its refusal only"

# 1. TMPDIR private to root.
tmp=$(mktemp -d "$scratch/tmpdir.XXXXXX") && chmod 0700 "$tmp"
TMPDIR=$tmp every_command "private TMPDIR"
[ -z "$fallback" ] || TMPDIR=$tmp every_command "private TMPDIR" --no-isolation

# 2. HOME private to root, the cache in it by default.
home="$scratch/home" && mkdir -m 0700 "$home"
(unset GRADLAB_CACHE XDG_CACHE_HOME; HOME=$home KEEP_CACHE=1 every_command "private HOME")
[ -d "$home/.cache/gradlab" ] && ok "the default cache is in the private HOME" || fail "no cache in $home/.cache/gradlab"

# 3. The checkout behind a 0700 folder, in a private mount namespace: a
# tmpfs of mode 0700 over the checkout's parent, the checkout bound back at
# its own path (held meanwhile outside that parent).
parent=$(dirname "$src")
hold=$(mktemp -d /dev/shm/gradlab-hold.XXXXXX 2>/dev/null || mktemp -d /run/gradlab-hold.XXXXXX)
export -f every_command ok fail
export grade src scratch course class
unshare --mount --propagation private bash -c '
  [ "$3" != / ] && mount --bind "$1" "$2" && mount -t tmpfs -o mode=0700 gradlab-private "$3" &&
    mkdir -p "$1" && mount --bind "$2" "$1" && [ "$(stat -c %a "$3")" = 700 ] || exit 99
  failures=0
  every_command "private checkout"
  # The fallback fence binds nothing, so it cannot hand over the course'"'"'s
  # headers: it says so before any student code is compiled, exit 69.
  GRADLAB_CACHE="$scratch/cache/fallback-private" "$grade" exercise3 --solution --no-isolation >"$scratch/fb.log" 2>&1
  code=$?
  [ "$code" = 69 ] && grep -q "cannot reach .*Move the course under a folder anyone may traverse" "$scratch/fb.log" &&
    ok "private checkout--no-isolation: refused before grading, with what to do" ||
    fail "private checkout--no-isolation: exit $code: $(cat "$scratch/fb.log")"
  exit $failures' _ "$src" "$hold" "$parent" >"$scratch/private.log" 2>&1
code=$?
rmdir "$hold" 2>/dev/null
if [ "$code" = 99 ]; then
  echo "skipped: no private mount namespace can be made here, so the checkout behind a 0700 folder is not tested"
else
  cat "$scratch/private.log"
  failures=$((failures + $(grep -c '^FAIL' "$scratch/private.log")))
  grep -q "^ok   private checkout: --solution" "$scratch/private.log" || fail "the private checkout was not graded"
fi

# 4. A staging folder anyone else could have made or changed is refused.
# (Made in /var/tmp: its whole path must be passable, as a staging folder's is.)
bad=$(mktemp -d /var/tmp/gradlab-bad-staging.XXXXXX) && chmod 0777 "$bad"
GRADLAB_STAGING=$bad GRADLAB_CACHE="$scratch/cache/bad" "$grade" exercise3 --solution --out "$scratch/out/bad" \
  >"$scratch/bad.log" 2>&1
grep -q "has mode 0777, not 0711" "$scratch/bad.log" && ok "a staging folder of mode 0777 is refused" ||
  fail "a 0777 staging folder: $(tail -3 "$scratch/bad.log")"
chmod 0711 "$bad" && chown 65534 "$bad"
GRADLAB_STAGING=$bad GRADLAB_CACHE="$scratch/cache/bad2" "$grade" exercise3 --solution --out "$scratch/out/bad2" \
  >"$scratch/bad2.log" 2>&1
grep -q "belongs to uid 65534" "$scratch/bad2.log" && ok "a staging folder of another uid is refused" ||
  fail "another uid's staging folder: $(tail -3 "$scratch/bad2.log")"

rm -rf "$bad"
echo "$failures failure(s)"
[ "$failures" = 0 ]

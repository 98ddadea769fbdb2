# Sourced by the grader's shell tests: the ok/FAIL lines and their count,
# whether bubblewrap can start here, and the sample class several tests grade.
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# grade batch refuses to run a class's files without bubblewrap unless told
# to; where bubblewrap cannot start (a container without user namespaces),
# the tests tell it to with "${iso[@]}".
bubblewrap_works() {
  /usr/bin/bwrap --unshare-all --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc \
    --dev /dev /usr/bin/true 2>/dev/null
}
iso=()
bubblewrap_works || iso=(--no-isolation)

# sample_class DIR SOURCE_DIR: 7 students and 9 files, correct, wrong, not
# compiling, crashing and identical ones, a name that needs CSV quoting
# ("o'brien, jr") and a student with nothing (erin).
sample_class() {
  local class=$1 src=$2 fx=$2/tests/fixtures
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
}

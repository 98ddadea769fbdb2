#!/usr/bin/env bash
# The ./grade launcher as a student meets it before and during the first
# build: --help, --version and `list` answer at once from an unbuilt tree
# (and say what the built grader says); the first build shows its stage and
# percentage, from CMake's own progress lines (recorded from a real build,
# replayed by a stand-in cmake so that no six-minute build runs here); a
# build that fails shows its error and exits 70.
#   launcher_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
scratch=$(readlink -f "$scratch")
export NO_COLOR=1 GRADLAB_CACHE="$scratch/cache"
fail=0
no() { echo "FAIL: $*"; fail=1; }

# An unbuilt tree: the launcher and what it reads, no build/.
tree="$scratch/tree"
mkdir -p "$tree/grader" "$tree/solutions" "$tree/scripts" "$tree/exercises"
cp "$src/grade" "$src/CMakeLists.txt" "$tree/"
cp "$src/grader/usage.txt" "$tree/grader/"
cp "$src/scripts/deps.sh" "$tree/scripts/"
cp "$src"/solutions/*.rubric.json "$tree/solutions/"
cp "$src"/exercises/*.cpp "$tree/exercises/"  # the student's files: their reports would be beside them
for args in "--help" "--version" "list" "--no-color list"; do
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  (cd "$tree" && ./grade $args) >"$scratch/out" 2>&1
  code=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$code" = 0 ] || no "unbuilt ./grade $args exited $code: $(head -5 "$scratch/out")"
  [ "$ms" -lt 1000 ] || no "unbuilt ./grade $args took $ms ms (it must not wait for a build)"
  [ ! -e "$tree/build" ] || no "unbuilt ./grade $args started a build"
done
(cd "$tree" && ./grade --version) | grep -qx "$("$grade" --version)" || no "unbuilt --version differs from the grader's"
# `list` says what the built grader says of a course nobody graded yet.
(cd "$tree" && ./grade list) >"$scratch/list.unbuilt"
(cd "$tree" && GRADLAB_COURSE="$tree" "$grade" list) >"$scratch/list.built"
cmp -s "$scratch/list.unbuilt" "$scratch/list.built" ||
  no "unbuilt list differs from the grader's:$(diff "$scratch/list.unbuilt" "$scratch/list.built" | sed 's/^/\n  /')"
# The committed usage names every option and subcommand the grader has
# (regenerate it with: build/grader/grade --help >> grader/usage.txt after its first line).
"$grade" --help >"$scratch/help"
for word in $(grep -oE -- '--[a-z][a-z-]+' "$scratch/help" | sort -u) \
            $(sed -n '/^Subcommands:/,$p' "$scratch/help" | awk '/^  [a-z]/ { print $1 }'); do
  grep -qF -- "$word" "$src/grader/usage.txt" || no "grader/usage.txt does not name $word, which grade --help does"
done

# The first build, replayed: a stand-in cmake prints a real build's lines.
stub="$scratch/stub"
mkdir -p "$stub"
cat >"$stub/cmake" <<EOF
#!/usr/bin/env bash
# Configure: make a cache. --build: replay the recorded lines, then leave a
# grader that says it ran (or fail, when GRADLAB_STUB_FAIL is set).
case "\$1" in
  -S) mkdir -p "$tree/build" && touch "$tree/build/CMakeCache.txt" ;;
  --build)
    cat "$src/tests/grader/build-lines.txt"
    if [ -n "\${GRADLAB_STUB_FAIL:-}" ]; then
      echo "$tree/engine/src/tensor.cpp:12:3: error: stand-in failure"; exit 2
    fi
    mkdir -p "$tree/build/grader"
    printf '#!/bin/sh\necho "the grader ran: \$*"\n' >"$tree/build/grader/grade"
    chmod +x "$tree/build/grader/grade" ;;
esac
EOF
chmod +x "$stub/cmake"
(cd "$tree" && PATH="$stub:$PATH" ./grade exercise3) >"$scratch/build.out" 2>"$scratch/build.err"
code=$?
[ "$code" = 0 ] || no "the replayed first build exited $code: $(cat "$scratch/build.err")"
grep -q "the grader ran: exercise3" "$scratch/build.out" || no "the grader did not run after the build"
grep -qE "first run: building the engine and the grader, about [0-9]+ min on [0-9]+ cores" "$scratch/build.err" ||
  no "no estimate from the cores: $(head -3 "$scratch/build.err")"
grep -q "configuring (cmake)" "$scratch/build.err" || no "the configure step is not shown"
for stage in "the engine" "the grader" "the precompiled header"; do
  grep -q "building: [0-9]*% ($stage" "$scratch/build.err" || no "the progress never names $stage"
done
pcts=$(grep -oE "building: [0-9]+%" "$scratch/build.err" | grep -oE "[0-9]+")
[ "$(wc -l <<<"$pcts")" -ge 5 ] || no "fewer than 5 progress lines: $(cat "$scratch/build.err")"
[ "$pcts" = "$(sort -n <<<"$pcts")" ] || no "the percentages go backwards: $(echo $pcts)"
grep -qE "(min|a minute) left" "$scratch/build.err" || no "no time left is estimated"
[ -s "$tree/build/build.log" ] && grep -q "Building CXX object" "$tree/build/build.log" || no "build/build.log lacks the build's lines"
# The second run builds nothing and says nothing but the grade.
(cd "$tree" && PATH="$stub:$PATH" ./grade exercise3) >"$scratch/again.out" 2>"$scratch/again.err"
[ ! -s "$scratch/again.err" ] || no "a run after the build printed: $(cat "$scratch/again.err")"
# A build that fails: its error, where the log is, exit 70.
rm -rf "$tree/build"
(cd "$tree" && GRADLAB_STUB_FAIL=1 PATH="$stub:$PATH" ./grade exercise3) >"$scratch/fail.out" 2>"$scratch/fail.err"
code=$?
[ "$code" = 70 ] || no "a failed build exited $code, expected 70"
grep -q "error: stand-in failure" "$scratch/fail.err" || no "a failed build does not show its error: $(tail -5 "$scratch/fail.err")"
grep -q "the build failed" "$scratch/fail.err" || no "a failed build does not say so"

[ "$fail" = 0 ] && echo "the launcher: ok"
exit $fail

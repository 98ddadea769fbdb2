#!/usr/bin/env bash
# The student's own loop, as a student runs it: exercises/exerciseN.cpp
# edited in place and graded by `grade exerciseN` with no path, from the
# course's folder, in the course's own tree and in a student release. What
# the grader prints must be what a copy of the same file elsewhere gets
# (checks, hints, the exception's line), for every exercise; an untouched
# starter, a partly right file, one that throws and one that passes each get
# their own screen; and the release's own tests pass once every exercise is
# solved in place.
#   student_loop_test.sh GRADE SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch/elsewhere"
scratch=$(readlink -f "$scratch")
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
fail=0 compared=0
no() { echo "FAIL: $*"; fail=1; }

# What a run printed, less what depends on where the file is: its path (as
# given, or as the grader shows it), the report folder's line and the time.
normal() {
  sed -e "s#$2#FILE#g" -e 's/ · [0-9.]* s$//' -e '/^report: /d' "$1"
}

# in_place TREE EXERCISE: grades TREE/exercises/EXERCISE.cpp as a student
# does, from TREE, into $out_a; the same text as a copy elsewhere into $out_b.
in_place() {
  local tree=$1 e=$2
  out_a="$scratch/a.out" out_b="$scratch/b.out"
  (cd "$tree" && GRADLAB_COURSE="$tree" "$grade" "$e") >"$out_a" 2>&1
  code_a=$?
  cp "$tree/exercises/$e.cpp" "$scratch/elsewhere/$e.cpp"
  (cd "$scratch" && GRADLAB_COURSE="$tree" "$grade" "$e" "$scratch/elsewhere/$e.cpp" --out "$scratch/r-elsewhere") \
    >"$out_b" 2>&1
  code_b=$?
}

# same TREE EXERCISE WHAT: the two runs printed the same, bar the paths.
same() {
  compared=$((compared + 1))
  [ "$code_a" = "$code_b" ] || no "$3: exit $code_a in place, $code_b elsewhere"
  if ! diff <(normal "$out_a" "exercises/$2.cpp") <(normal "$out_b" "$scratch/elsewhere/$2.cpp") >"$scratch/diff"; then
    no "$3: in place and elsewhere differ:
$(head -20 "$scratch/diff" | sed 's/^/    /')"
  fi
}

has() { grep -qF -- "$2" "$out_a" || no "$1: the output lacks \"$2\":
$(head -30 "$out_a" | sed 's/^/    /')"; }
lacks() { ! grep -qF -- "$2" "$out_a" || no "$1: the output should not hold \"$2\""; }

# The trees: the course's own (exercises/ and solutions/ as an instructor
# has them) and the student release written from it.
course="$scratch/course"
mkdir -p "$course" && cp -r "$src/exercises" "$src/solutions" "$course/"
"$grade" --course "$src" release --out "$scratch/rel" >"$scratch/release.log" 2>&1 ||
  { echo "FAIL: grade release: $(cat "$scratch/release.log")"; exit 1; }
release="$scratch/rel/student"

for tree in "$course" "$release"; do
  where=$([ "$tree" = "$course" ] && echo "course" || echo "release")
  ex3="$tree/exercises/exercise3.cpp"
  pristine="$scratch/exercise3.$where.cpp"
  cp "$ex3" "$pristine"

  # Untouched: the short message, naming what goes where.
  in_place "$tree" exercise3
  same "$tree" exercise3 "$where: untouched exercise3"
  has "$where: untouched" "Nothing to grade yet"
  has "$where: untouched" "Create x, y and z as scalar tensors"
  # Only comments and layout added, a line of code commented out, a block
  # comment: still empty, and a comment of the student's is no prompt.
  sed 's#^  // Compute p, q and f (3 lines).#&\n  // p = x.pow(2);\n  /* q = p + y; */\n\n#' "$pristine" >"$ex3"
  in_place "$tree" exercise3
  has "$where: comments only" "Nothing to grade yet"
  lacks "$where: comments only" "p = x.pow(2)"

  # Partly right (everything but retain_grad): every failed check, with its hint.
  sed -e 's#^  // Create x, y and z.*#&\n  x = torch::tensor(-2.0, torch::requires_grad());\n  y = torch::tensor(2.0, torch::requires_grad());\n  z = torch::tensor(3.0, torch::requires_grad());#' \
      -e 's#^  // Compute p, q and f.*#&\n  p = x.pow(2);\n  q = p + y;\n  f = q * z;#' \
      -e 's#^  // Run backpropagation from f.*#&\n  f.backward();#' "$pristine" >"$ex3"
  in_place "$tree" exercise3
  same "$tree" exercise3 "$where: partly right"
  lacks "$where: partly right" "Nothing to grade yet"
  lacks "$where: partly right" "the blanks are empty"
  has "$where: partly right" "✗ p keeps its gradient"
  has "$where: partly right" "hint      p is not a leaf: call p.retain_grad()"
  has "$where: partly right" "✓ df/dx = -12"
  has "$where: partly right" " — 4 of "

  # Throws: a second backward without retain_graph, at the student's line.
  cp "$ex3" "$scratch/partly.cpp"
  sed 's#^  f.backward();#  f.backward();\n  f.backward();#' "$scratch/partly.cpp" >"$ex3"
  line=$(grep -n '^  f.backward();' "$ex3" | tail -1 | cut -d: -f1)
  in_place "$tree" exercise3
  same "$tree" exercise3 "$where: throws"
  has "$where: throws" "✗ the program did not finish"
  has "$where: throws" "at exercises/exercise3.cpp:$line"
  lacks "$where: throws" "Nothing to grade yet"

  # Passes: the blank filled as the lesson asks.
  sed 's#^  f.backward();#  p.retain_grad();\n  q.retain_grad();\n&#' "$scratch/partly.cpp" >"$ex3"
  in_place "$tree" exercise3
  same "$tree" exercise3 "$where: passes"
  has "$where: passes" "— every check passed"

  # Every exercise: each fixture that keeps the starter's markers (as a
  # student's file does), one of each verdict, written over the exercise's
  # own file, prints what it prints elsewhere, and is never "empty".
  for dir in "$src"/tests/fixtures/exercise*; do
    e=$(basename "$dir")
    seen=""
    for f in $(grep -l "START CODE HERE" "$dir"/*.cpp | sort); do
      verdict=$(grep -o '"verdict": "[a-z_]*"' "${f%.cpp}.expect.json" | cut -d'"' -f4)
      case " $seen " in *" $verdict "*) continue ;; esac
      seen="$seen $verdict"
      cp "$f" "$tree/exercises/$e.cpp"
      in_place "$tree" "$e"
      same "$tree" "$e" "$where: $e $(basename "$f") ($verdict)"
      lacks "$where: $e $(basename "$f")" "Nothing to grade yet"
    done
    cp "$src/exercises/$e.cpp" "$tree/exercises/$e.cpp"
  done
done

# Exercise 13's starter holds placeholders (`return {};`): they count as
# empty, and one blank written while the other still holds its placeholder
# is work in progress, graded, with the empty blank named.
cp "$src/exercises/exercise13.cpp" "$course/exercises/exercise13.cpp"
in_place "$course" exercise13
has "exercise13 untouched" "Nothing to grade yet"
awk '/return \{\};/ && !done { print "    auto out = torch::sigmoid(x);"; print "    ctx->save_for_backward({out});"; print "    return out;"; done = 1; next } { print }' \
  "$src/exercises/exercise13.cpp" >"$course/exercises/exercise13.cpp"
in_place "$course" exercise13
lacks "exercise13 half written" "Nothing to grade yet"
has "exercise13 half written" "still empty: the blank at line"

# The release's own tests check the release, not the student's answers:
# with every exercise solved in place, they pass and say what they skipped.
for dir in "$src"/tests/fixtures/exercise*; do
  e=$(basename "$dir")
  for f in $(grep -l "START CODE HERE" "$dir"/*.cpp | sort); do
    grep -q '"verdict": "passed"' "${f%.cpp}.expect.json" && { cp "$f" "$release/exercises/$e.cpp"; break; }
  done
done
if bash "$release/tests/release_test.sh" "$grade" "$release" "$scratch/release-tests" >"$scratch/rt.out" 2>&1; then
  grep -q "13 skipped" "$scratch/rt.out" || no "the release's tests did not say they skipped the solved exercises: $(tail -3 "$scratch/rt.out")"
else
  no "the release's tests fail once every exercise is solved in place:
$(tail -20 "$scratch/rt.out" | sed 's/^/    /')"
fi

echo "$compared in-place runs compared with a copy elsewhere"
[ "$compared" -ge 60 ] || no "only $compared runs compared"
[ "$fail" = 0 ] && echo "the student's loop: ok"
exit $fail

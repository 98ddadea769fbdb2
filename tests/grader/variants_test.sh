#!/usr/bin/env bash
# Variants, as a class meets them: `grade release --variants 3`, students
# personalise their release with their e-mail, answer at their own numbers
# and pass; the same file handed in by a classmate fails at the classmate's
# numbers, in Gradescope's autograder (who submitted read from its metadata),
# in PrairieLearn's (the variant its question chose, from the job's params)
# and in a batch with a roster. Real CLI, real files, real fence.
#   variants_test.sh GRADE WORK
set -uo pipefail
grade=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
export GRADLAB_CACHE="$work/cache" NO_COLOR=1
fail=0
no() { echo "FAIL: $*"; fail=1; }

"$grade" release --out "$work/out" --variants 3 >"$work/release.log" 2>&1 || { cat "$work/release.log"; exit 1; }
rel="$work/out/student"
[ "$(cat "$rel/rubrics/variants.json")" = '{"count":3}' ] || no "variants.json: $(cat "$rel/rubrics/variants.json")"
[ -f "$rel/rubrics/variants/exercise3.v3.facts.json" ] || no "no recorded facts for exercise3's variant 3"

# Two students, each a copy of the release, personalised. Find two whose
# variants differ (3 variants: the first few addresses are enough).
declare -A var
for who in ada bob cyd dee eve fay; do
  cp -a "$rel" "$work/$who"
  (cd "$work/$who" && "$grade" --course "$work/$who" personalise "$who@example.edu" >"$work/$who.log" 2>&1) ||
    no "personalise $who: $(cat "$work/$who.log")"
  var[$who]=$(sed -n '1s|^// gradlab variant \([0-9]*\):.*|\1|p' "$work/$who/exercises/exercise3.cpp")
done
a=ada b=""
for who in bob cyd dee eve fay; do [ "${var[$who]}" != "${var[$a]}" ] && b=$who && break; done
[ -n "$b" ] || { no "six students, one variant"; exit 1; }
grep -q "(variant ${var[$a]})" "$work/$a.log" || no "personalise does not say the variant: $(cat "$work/$a.log")"

# The statement now shows the student's numbers: answer with them.
answer() {  # answer FILE: fills exercise3's blanks with the numbers its statement gives
  local f=$1 xyz
  xyz=$(sed -n 's|^// at x = \(-\{0,1\}[0-9]*\), y = \(-\{0,1\}[0-9]*\), z = \(-\{0,1\}[0-9]*\), in two.*|\1 \2 \3|p' "$f")
  read -r x y z <<<"$xyz"
  [ -n "$z" ] || { no "no numbers in $f's statement"; return; }
  sed -i "s|^  // Run backpropagation from f (1 line).|&\n  x = torch::tensor($x.0, torch::requires_grad());\n  y = torch::tensor($y.0, torch::requires_grad());\n  z = torch::tensor($z.0, torch::requires_grad());\n  p = x.pow(2);\n  q = p + y;\n  f = q * z;\n  p.retain_grad();\n  q.retain_grad();\n  f.backward();|" "$f"
}
for who in "$a" "$b"; do
  answer "$work/$who/exercises/exercise3.cpp"
  (cd "$work/$who" && "$grade" --course "$work/$who" exercise3 >"$work/$who.grade" 2>&1)
  grep -q "^score 17/17" "$work/$who.grade" || no "$who's own answer at their numbers: $(tail -3 "$work/$who.grade")"
  grep -q "graded at your numbers (variant ${var[$who]})" "$work/$who.grade" || no "$who's grade does not say the variant"
done

# b copies a's file: graded locally at b's numbers (--variant), it fails and says why.
cp "$work/$a/exercises/exercise3.cpp" "$work/copied.cpp"
"$grade" --course "$work/$b" exercise3 "$work/copied.cpp" --variant "${var[$b]}" >"$work/copied.grade" 2>&1
grep -q "^score 17/17" "$work/copied.grade" && no "a copy of $a's file passes at $b's numbers"
grep -q "where the statement gives" "$work/copied.grade" || no "the copy's feedback does not name the numbers: $(cat "$work/copied.grade")"

# Gradescope: the zip's autograder grades at the submitter's numbers.
gs="$work/gs"
mkdir -p "$gs/source" "$gs/submission"
(cd "$gs/source" && /usr/bin/python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('.')" \
  "$work/out/autograder/gradescope/autograder.zip")
cp "$work/$a/exercises/exercise3.cpp" "$gs/submission/"
score() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['score'])" "$1"; }
for who in "$a" "$b"; do
  echo "{\"users\": [{\"email\": \"${who^}@Example.edu\", \"name\": \"$who\"}]}" >"$gs/submission_metadata.json"
  rm -rf "$gs/results"
  AUTOGRADER_ROOT="$gs" GRADLAB_GRADE="$grade" bash "$gs/source/run_autograder" >"$work/gs-$who.log" 2>&1 ||
    no "run_autograder for $who: $(tail -3 "$work/gs-$who.log")"
  s=$(score "$gs/results/results.json")
  if [ "$who" = "$a" ]; then [ "$s" = "18.0" ] || no "Gradescope: $a's own file scores $s, not 18"
  else [ "$s" != "18.0" ] || no "Gradescope: $a's file handed in by $b scores full marks"; fi
done

# PrairieLearn: each exercise's question shows the starter at the variant its
# server.py picks from PrairieLearn's own seed, and pl-grade grades at the
# variant the job's data.json params say (PrairieLearn gives no identity).
plq="$work/out/autograder/prairielearn/questions/exercise3"
for f in info.json question.html server.py starters/exercise3.v0.cpp "starters/exercise3.v${var[$a]}.cpp"; do
  [ -f "$plq/$f" ] || no "PrairieLearn question: no $f"
done
cmp -s "$plq/starters/exercise3.v${var[$a]}.cpp" "$rel/exercises/exercise3.cpp" && no "the question's starter is the lesson's"
# The question's starter at a variant is what `grade personalise` writes for it.
cp -a "$rel" "$work/plcheck"
(cd "$work/plcheck" && "$grade" --course "$work/plcheck" personalise --variant "${var[$a]}" >/dev/null 2>&1) ||
  no "personalise --variant ${var[$a]} failed"
cmp -s "$plq/starters/exercise3.v${var[$a]}.cpp" "$work/plcheck/exercises/exercise3.cpp" ||
  no "the question's starter at variant ${var[$a]} is not what personalise writes: $(diff "$plq/starters/exercise3.v${var[$a]}.cpp" "$work/plcheck/exercises/exercise3.cpp" | head -5)"
grep -q 'source-file-name="starters/exercise3.v{{params.gradlab_variant}}.cpp"' "$plq/question.html" ||
  no "question.html does not load the variant's starter"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['gradingMethod']=='External' and d['externalGradingOptions']['entrypoint']=='/gradlab/pl-grade'"   "$plq/info.json" || no "info.json: $(cat "$plq/info.json")"
# server.py's choice is a variant the release has, the same for the same seed.
pick=$(cd "$plq" && /usr/bin/python3 -c "import server; d={'params': {}, 'variant_seed': 'abc'}; server.generate(d); print(d['params']['gradlab_variant'])")
[ -n "$pick" ] && [ "$pick" -ge 1 ] && [ "$pick" -le 3 ] || no "server.py picked variant '$pick'"
pl="$work/pl"
mkdir -p "$pl/student" "$pl/data"
cp "$work/$a/exercises/exercise3.cpp" "$pl/student/"
plscore() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['score'])" "$1"; }
for who in "$a" "$b"; do
  echo "{\"params\": {\"gradlab_variant\": ${var[$who]}}, \"variant_seed\": \"x\"}" >"$pl/data/data.json"
  rm -rf "$pl/results"
  PL_GRADE_ROOT="$pl" GRADLAB_SOURCE="$work/out/autograder/prairielearn/source" GRADLAB_GRADE="$grade" \
    bash "$work/out/autograder/prairielearn/pl-grade" >"$work/pl-$who.log" 2>&1 || no "pl-grade for $who: $(tail -3 "$work/pl-$who.log")"
  s=$(plscore "$pl/results/results.json")
  if [ "$who" = "$a" ]; then [ "$s" = "1.0" ] || no "PrairieLearn: $a's own file scores $s, not 1"
  else [ "$s" != "1.0" ] || no "PrairieLearn: $a's file in $b's copy of the question scores full marks"; fi
done

# A batch with a roster: the same file, two students, two grades.
mkdir -p "$work/class/$a" "$work/class/$b"
cp "$work/$a/exercises/exercise3.cpp" "$work/class/$a/"
cp "$work/$a/exercises/exercise3.cpp" "$work/class/$b/"
printf 'login,email\n%s,%s@example.edu\n%s,%s@example.edu\n' "$a" "$a" "$b" "$b" >"$work/roster.csv"
(cd "$work" && "$grade" --course "$gs/source" batch "$work/class" --roster "$work/roster.csv" --exercises exercise3 \
   --out "$work/batch" >"$work/batch.log" 2>&1) || true
tr -d '\r' <"$work/batch/gradebook.csv" >"$work/gradebook.txt"  # CSV rows end in CRLF
grep -q "^$a,.*,18,passed,18$" "$work/gradebook.txt" || no "batch: $a's row: $(cat "$work/gradebook.txt")"
grep -q "^$b,.*,18,passed,18$" "$work/gradebook.txt" && no "batch: $b, handing in $a's file, scores full marks"

[ $fail = 0 ] && echo "variants: personalised, graded at each student's numbers; copies fail in all four places"
exit $fail

#!/usr/bin/env bash
# `grade batch --similarity` on a class of independently written
# submissions to exercise 2 (the indep-* fixtures) with two planted copies of
# one of them: one with a variable renamed and its comment changed, one with
# two lines swapped. Exactly the pairs among the copy and its source are
# flagged, each with a side-by-side page; no honest pair is; scores are the
# same as without --similarity. Skipped (77) without Debian's similarity-tester.
#   similarity_test.sh GRADE SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
[ -x /usr/bin/sim_c++ ] || { echo "sim_c++ is not installed (apt-get install similarity-tester): skipped"; exit 77; }
rm -rf "$scratch" && mkdir -p "$scratch/class"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
fail=0
no() { echo "FAIL: $*"; fail=1; }

i=0
for f in "$src"/tests/fixtures/exercise2/indep-*.cpp; do
  i=$((i + 1))
  mkdir "$scratch/class/honest$i" && cp "$f" "$scratch/class/honest$i/exercise2.cpp"
done
[ "$i" -ge 4 ] || no "only $i independent submissions to compare"
source_file=$(grep -l "ones_like" "$src"/tests/fixtures/exercise2/indep-*.cpp | head -1)
[ -n "$source_file" ] || { echo "FAIL: no source for the copies"; exit 1; }
original=$(cd "$scratch/class" && grep -lF "$(head -1 "$source_file")" */exercise2.cpp | head -1 | cut -d/ -f1)
mkdir "$scratch/class/renamer" "$scratch/class/reorderer"
sed 's/\bout2\b/second_out/g; 1s/.*/\/\/ all my own work/' "$source_file" >"$scratch/class/renamer/exercise2.cpp"
# Two of the student's own lines, swapped.
awk '/out2 = /{held=$0; next} held && /out2.backward/ {print; print held; held=""; next} {print}' "$source_file" |
  sed '1s/.*/\/\/ written alone/' >"$scratch/class/reorderer/exercise2.cpp"
cmp -s "$source_file" "$scratch/class/reorderer/exercise2.cpp" && no "the reordered copy is not reordered"

"$grade" batch "$scratch/class" --similarity 60 --out "$scratch/with" >"$scratch/with.log" 2>&1 || no "grade batch --similarity exited $?: $(tail -5 "$scratch/with.log")"
"$grade" batch "$scratch/class" --out "$scratch/without" >/dev/null 2>&1
cmp -s "$scratch/with/gradebook.csv" "$scratch/without/gradebook.csv" || no "--similarity changed the gradebook"
pairs=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(p["a"] + "+" + p["b"] for p in d["similarity"]["pairs"])))' "$scratch/with/summary.json")
want=$(printf '%s\n' "renamer+reorderer" "$original+renamer" "$original+reorderer" | sed -E 's/^([^+]*)\+([^+]*)$/\1 \2/' |
  while read -r a b; do [ "$a" \< "$b" ] && echo "$a+$b" || echo "$b+$a"; done | sort | tr '\n' ' ' | sed 's/ $//')
[ "$pairs" = "$want" ] || no "flagged pairs: '$pairs', expected '$want'"
for p in $(/usr/bin/python3 -c '
import json, sys
print(" ".join(p["page"] for p in json.load(open(sys.argv[1]))["similarity"]["pairs"]))' "$scratch/with/summary.json"); do
  [ -f "$scratch/with/$p" ] && grep -q "<mark>" "$scratch/with/$p" || no "no side-by-side page with marked lines at $p"
done
grep -q 'id="similarity"' "$scratch/with/summary.html" || no "summary.html has no similarity section"
grep -q 'not a verdict' "$scratch/with/summary.html" || no "summary.html does not say it is not a verdict"
[ "$fail" = 0 ] && echo "similarity: flagged $pairs"
exit $fail

#!/usr/bin/env bash
# The course on the GPU: every exercise's reference solution graded with
# --device cuda (the student's run on the GPU, judged against the reference
# run on the CPU) must score full marks, the report must name the device
# and the GPU, and wrong submissions must get the verdicts and scores they
# get on the CPU. Exit 77 (skipped) where `grade --device cuda` finds no GPU.
#   cuda_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1

probe=$("$grade" exercise3 --solution --device cuda --out "$scratch/probe" 2>&1)
if [ $? = 69 ]; then
  echo "skipped: $probe"
  exit 77
fi

failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

for rubric in "$src"/solutions/exercise*.rubric.json; do
  ex=$(basename "$rubric" .rubric.json)
  "$grade" "$ex" --solution --device cuda --out "$scratch/$ex" >"$scratch/$ex.log" 2>&1
  rc=$?
  r="$scratch/$ex/report.json"
  if [ $rc != 0 ] || [ ! -f "$r" ]; then
    fail "$ex: exit $rc"; sed 's/^/    /' "$scratch/$ex.log" | head -30; continue
  fi
  [ "$(field "$r" device)" = cuda ] || fail "$ex: report.json device is not cuda"
  gpu=$(field "$r" gpu)
  [ -n "$gpu" ] && [ "$gpu" != None ] || fail "$ex: report.json names no GPU"
  [ "$(field "$r" score)" = "$(field "$r" max_score)" ] || fail "$ex: $(field "$r" score) of $(field "$r" max_score)"
  echo "ok   $ex on $gpu: $(field "$r" score)/$(field "$r" max_score)"
done

# Wrong and broken submissions: the same verdict and score as on the CPU.
for f in "$src"/tests/fixtures/exercise3/*.cpp; do
  name=$(basename "$f" .cpp)
  "$grade" exercise3 "$f" --out "$scratch/cpu-$name" >/dev/null 2>&1
  "$grade" exercise3 "$f" --device cuda --out "$scratch/gpu-$name" >/dev/null 2>&1
  for k in verdict score; do
    a=$(field "$scratch/cpu-$name/report.json" $k) b=$(field "$scratch/gpu-$name/report.json" $k)
    [ "$a" = "$b" ] || fail "exercise3/$name: $k $b on the GPU, $a on the CPU"
  done
done
echo "$failures failure(s)"
[ $failures = 0 ]

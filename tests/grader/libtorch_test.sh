#!/usr/bin/env bash
# `grade --engine libtorch`: the same files built against Debian's LibTorch
# get the same verdicts and the same failed checks as against gradlab's
# engine; this is what shows the course's expectations are PyTorch's.
#   libtorch_test.sh GRADE_BINARY SOURCE_DIR SCRATCH_DIR
set -uo pipefail
grade=$(readlink -f "$1") src=$(readlink -f "$2") scratch=$3
mkdir -p "$scratch"
export GRADLAB_CACHE="$scratch/cache" NO_COLOR=1
failures=0
# The verdict and each check's status, from --json, leaving out the checks
# that read the op tape (LibTorch writes none, so its grade leaves them out).
summary() {
  grep -E '^  "verdict"|^      "(id|kind|status)"' | tr -d ' \n' |
    sed -E 's/"id":"[^"]*","kind":"(derives_from|updated_from_grad|made_under_no_grad|reuses_graph)","status":"[a-z_]*",//g;
            s/"kind":"[a-z_]*",//g'
}
for case in "exercise3 $src/solutions/exercise3.cpp" "exercise2 $src/solutions/exercise2.cpp" \
            "exercise3 $src/tests/fixtures/exercise3/forgot-retain-grad.cpp" \
            "exercise2 $src/tests/fixtures/exercise2/retain-graph-on-out.cpp" \
            "exercise13 $src/solutions/exercise13.cpp" \
            "exercise6 $src/tests/fixtures/exercise6/step-without-no-grad.cpp" \
            "exercise6 $src/solutions/exercise6.cpp" "exercise10 $src/solutions/exercise10.cpp"; do
  set -- $case
  a=$("$grade" "$1" "$2" --json --out "$scratch/gradlab" | summary)
  b=$("$grade" "$1" "$2" --json --out "$scratch/libtorch" --engine libtorch | summary)
  if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "FAIL $2: gradlab and LibTorch disagree"
    echo "  gradlab:  $a"
    echo "  libtorch: $b"
    failures=$((failures + 1))
  else
    echo "ok   $2: $(grep -o '"verdict":"[a-z_]*"' <<<"$a")"
  fi
done
[ "$failures" = 0 ]

#!/usr/bin/env bash
# The CI examples in grader/ci/ stay true: each runs exactly `./grade check
# --no-color`, and this test runs that command, through the launcher, from
# the repository root as the CI job would.
#   ci_examples_test.sh SOURCE_DIR SCRATCH_DIR
set -uo pipefail
src=$(readlink -f "$1") scratch=$2
cmd="./grade check --no-color"
for f in "$src/grader/ci/github-actions.yml" "$src/grader/ci/gitlab-ci.yml"; do
  if ! grep -qE -- "^ *- (run: )?${cmd}\$" "$f"; then
    echo "FAIL $f does not run: $cmd"
    exit 1
  fi
done
cd "$src" && GRADLAB_CACHE="$scratch/cache" $cmd

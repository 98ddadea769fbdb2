#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image
# (choose the Ubuntu 24.04 base image: gradlab needs CMake 3.25 or newer).
# It installs the packages gradlab needs and builds the grader; nothing is
# downloaded when a submission is graded.
set -euo pipefail
cd "${AUTOGRADER_ROOT:-/autograder}/source"  # $AUTOGRADER_ROOT: tests stand it in for /autograder
. scripts/deps.sh
gradlab_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRADLAB_TESTS=OFF -DGRADLAB_BENCH=OFF -DGRADLAB_CUDA=OFF
cmake --build build -j "$(nproc)" --target gradlab_grade

#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image
# (choose the Ubuntu 24.04 base image: gradlab needs CMake 3.25 or newer).
# It installs the packages gradlab needs and builds the grader; nothing is
# downloaded when a submission is graded.
# What the autograder needs (Gradescope's autograder settings):
# - time to build the image: this script took 414 s of building on 2 cores
#   in a fresh Debian 13 (the project's distro test), plus the packages;
# - 2 CPUs and 2 GB of memory: a cold grade of one exercise peaked at about
#   120 MB here (its compile included); a student's program may use up to
#   its rubric's limit (1 GiB unless the rubric says otherwise);
# - a timeout of 10 minutes is ample: a submission grades in seconds (about a
#   second per exercise file, compiled cold);
# - Gradescope runs it in Docker, where user namespaces are forbidden: the
#   grader uses its fallback fence (a leased uid, Landlock, seccomp and
#   limits; grader/SECURITY.md) and each report names it.
# One release per Gradescope assignment (`grade release --assignment
# exercise3,exercise4`): its ASSIGNMENT file lists what this assignment asks
# for, so a missing or misnamed file still gets every check, scored 0.
set -euo pipefail
cd "${AUTOGRADER_ROOT:-/autograder}/source"  # $AUTOGRADER_ROOT: tests stand it in for /autograder
. scripts/deps.sh
gradlab_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGRADLAB_TESTS=OFF -DGRADLAB_BENCH=OFF -DGRADLAB_CUDA=OFF
cmake --build build -j "$(nproc)" --target gradlab_grade

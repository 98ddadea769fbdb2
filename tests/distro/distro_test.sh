#!/usr/bin/env bash
# gradlab on the next generation of Debian: a minimal Debian 13 (trixie: GCC
# 14, clang 19, Catch2 3, nlohmann-json 3.11.3, CLI11 2.4) made by debootstrap,
# the checkout copied in as a clone in /root (a 0700 folder), and there, as a
# new user would run them:
#   1. the README's grade command, `./grade exercise3 --solution` (it installs
#      the packages, builds the grader, and must score full marks);
#   2. the README's test command, `./run-tests`, with the slow end-to-end
#      families left to the host's run (they are the same scripts; what differs
#      here is the compilers and libraries, which the unit tests and step 3
#      exercise);
#   3. `grade check`: every solution at full marks and every fixture's verdict,
#      compiled by clang 19 against the engine built by GCC 14;
#   4. Gradescope's autograder as Gradescope builds it: `grade release`'s zip
#      unpacked into /autograder/source, its setup.sh, then run_autograder on a
#      submission, whose results.json must give full marks.
# The root is a bubblewrap container (its own ipc and uts namespaces, the
# host's network for apt): pivot_root, not chroot, so that the grader's own
# fence nests as it does on a real machine.
# The debootstrapped base is cached as a tarball and the downloaded .debs are
# kept, in $GRADLAB_DISTRO_CACHE (default /var/tmp/gradlab-distro); each run
# starts from a fresh copy of the base. Skipped (77), never passed, where it
# cannot run: not root, no debootstrap or bubblewrap, Debian's mirror out of
# reach.
#   distro_test.sh ROOT WORK
set -uo pipefail
src=$1 work=$2
suite=${GRADLAB_DISTRO_SUITE:-trixie}
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "debootstrap and the container need root"
for tool in debootstrap bwrap git tar; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (Debian package ${tool/bwrap/bubblewrap})"
done
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || skip "$src is not a git checkout: no way to tell its files from its builds"

. "$src/tests/distro/debian_base.sh"
base=$(debian_base "$suite") || exit $?

rm -rf "$work" && mkdir -p "$work"
root="$work/root"
mkdir "$root" && tar -C "$root" -xf "$base" || fail "cannot unpack $base"
# As in Debian's container images: packages installed here start no daemons.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 0755 "$root/usr/sbin/policy-rc.d"
# The checkout as a clone in /root: its tracked files and the untracked ones git
# does not ignore (so an uncommitted change is tested too), no build folders.
copy_checkout "$src" "$root/root/src/gradlab" && chmod 0700 "$root/root" || fail "cannot copy the checkout"
cp "$src/tests/distro/in-root.sh" "$root/in-root.sh" 2>/dev/null || fail "no in-root.sh beside this script"

echo "running the steps in a $suite root: $root (logs in $work)"
# The host's /proc, not a new one: bubblewrap lays read-only mounts over parts
# of a /proc it makes, and the kernel lets a user namespace mount a new /proc
# only where one is wholly visible, so the grader's own fence could not nest.
# (That is also why Docker's containers, which mask parts of /proc, get the
# fallback fence.) Hence no pid namespace either: the host's /proc must tell
# the grader the truth about its processes.
env -i TERM=dumb bwrap --bind "$root" / --dev /dev --bind /proc /proc --ro-bind /sys /sys \
  --bind "$distro_cache/archives" /var/cache/apt/archives --ro-bind /etc/resolv.conf /etc/resolv.conf \
  --unshare-ipc --unshare-uts --hostname "gradlab-$suite" --cap-add ALL --die-with-parent \
  --setenv HOME /root --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --setenv LANG C.UTF-8 --chdir /root/src/gradlab \
  /bin/bash /in-root.sh >"$work/steps.log" 2>&1
rc=$?
grep -E '^(STEP|PASS|FAIL)' "$work/steps.log" || true
if [ "$rc" != 0 ]; then
  echo "--- the last lines the steps printed ($work/steps.log):"
  tail -40 "$work/steps.log"
  fail "a step failed in the $suite root (exit $rc)"
fi
echo "all steps passed in $suite"

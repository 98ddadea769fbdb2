#!/usr/bin/env bash
# The project's two container images, built for real with podman on a Debian
# 12 base that debootstrap makes from Debian's mirror (no registry is asked
# for an image), then run:
#   1. grader/batch/Dockerfile, the instructors' batch image. A small class is
#      graded inside it with `grade batch` (a container forbids the grader's
#      namespaces, so it uses its fallback fence by itself), and the class
#      files must equal, byte for byte, the same class graded on the host in
#      the same fence.
#   2. .devcontainer/, the students' dev container, as it ships in a student
#      release. Its postCreateCommand runs as an editor runs it, as the image's
#      user and without a network; then `./grade exercise3` on the solved file
#      must give full marks and name the fallback fence. (The release's own
#      ./run-tests is the release test's, on the host.)
# Where podman cannot start a container (some virtual machines refuse its
# runtime's setrlimit calls, or run hybrid cgroups crun rejects), the images
# are built with `--isolation chroot` and run as a container would run them:
# the image's file tree, unpacked, under bubblewrap with its own pid, ipc,
# uts and network namespaces and a /proc of its own, which is what keeps the
# grader's fence from nesting in Docker too. The output says which was used.
# Skipped (77), never passed, where it cannot run: not root, no podman,
# bubblewrap or debootstrap, no route to Debian's mirror.
# GRADLAB_CONTAINER_ONLY=batch or =dev runs one of the two.
#   container_test.sh GRADE ROOT WORK
set -uo pipefail
grade=$1 src=$2 work=$3
skip() { echo "skipped: $*"; exit 77; }
fail=0
no() { echo "FAIL: $*"; fail=1; }
ok() { echo "ok: $*"; }

[ "$(id -u)" = 0 ] || skip "podman's images and debootstrap need root here"
for tool in podman debootstrap bwrap git; do
  command -v "$tool" >/dev/null || skip "$tool is not installed"
done
podman info >/dev/null 2>&1 || skip "podman cannot run here: $(podman info 2>&1 | tail -1)"
. "$src/tests/distro/debian_base.sh"
base=$(debian_base bookworm) || exit $?

# The images' file trees and the student release are run as the image's
# user, an unprivileged uid: where WORK sits behind a private folder (a
# checkout in /root), they go in a folder of root's that every uid can pass.
traversable() {  # every folder from / down to $1 can be passed by any uid
  local d m; d=$(readlink -f "$1")
  while :; do
    m=$(stat -c %a "$d") || return 1
    (( 8#$m & 1 )) || return 1
    [ "$d" = / ] && return 0
    d=$(dirname "$d")
  done
}
parent=$(dirname "$work") && mkdir -p "$parent" && parent=$(readlink -f "$parent")
if ! traversable "$parent"; then
  shared=/var/tmp/gradlab-container/$(echo "$parent/$(basename "$work")" | sha256sum | cut -c1-12)
  echo "$work is behind a private folder: the container trees go in $shared (linked from there)"
  rm -rf "$work" && mkdir -p /var/tmp/gradlab-container && chmod 0755 /var/tmp/gradlab-container
  ln -sfn "$shared" "$work"
  work=$shared
fi
rm -rf "$work" && mkdir -p "$work" && chmod 0755 "$work"
export GRADLAB_CACHE="$work/cache" NO_COLOR=1
# The base image, named for its tarball's digest: imported once per tarball.
tag="localhost/gradlab-base:bookworm-$(sha256sum "$base" | cut -c1-12)"
podman image exists "$tag" || podman import "$base" "$tag" >/dev/null 2>&1 || { echo "FAIL: podman import"; exit 1; }
isolation=()
if podman run --rm --network none "$tag" /bin/true >"$work/probe.log" 2>&1; then
  echo "podman runs containers here: the images run with podman run"
  runner=podman
else
  echo "podman cannot start a container here ($(tail -1 "$work/probe.log")):"
  echo "the images are built with --isolation chroot and run unpacked under bubblewrap"
  runner=bwrap isolation=(--isolation chroot)
fi
build_image() {  # NAME DOCKERFILE CONTEXT
  local t0=$SECONDS
  if podman build --pull=never --format docker "${isolation[@]}" --from "$tag" --network host -f "$2" \
      -t "localhost/gradlab-$1:test" "$3" >"$work/build-$1.log" 2>&1; then
    ok "the $1 image builds from $(basename "$2") ($(( SECONDS - t0 )) s)"
  else
    no "building the $1 image: $(tail -15 "$work/build-$1.log")"; return 1
  fi
}

# run_image NAME USER WORKDIR "HOST:GUEST[:ro]"... -- COMMAND...: as `podman
# run --rm --network none`, or as its stand-in (above). The stand-in unpacks
# the image once per test (a container's root is writable, an image's is not).
run_image() {
  local name=$1 user=$2 wd=$3 vols=() v; shift 3
  while [ "$1" != -- ]; do vols+=("$1"); shift; done; shift
  if [ "$runner" = podman ]; then
    local pv=()
    for v in "${vols[@]}"; do pv+=(-v "$v"); done
    podman run --rm --network none --user "$user" -w "$wd" "${pv[@]}" "localhost/gradlab-$name:test" "$@"
    return
  fi
  local rootfs="$work/rootfs-$name"
  if [ ! -d "$rootfs" ]; then
    local mnt; mnt=$(podman image mount "localhost/gradlab-$name:test") || return 125
    cp -a "$mnt/." "$rootfs/" 2>/dev/null || { mkdir -p "$rootfs" && cp -a "$mnt/." "$rootfs/"; }
    podman image unmount "localhost/gradlab-$name:test" >/dev/null
  fi
  local bv=() uid
  for v in "${vols[@]}"; do
    IFS=: read -r h g ro <<<"$v"
    mkdir -p "$rootfs$g"  # the mount point, made as root (the image's user could not)
    bv+=("$([ "$ro" = ro ] && echo --ro-bind || echo --bind)" "$h" "$g")
  done
  uid=$(awk -F: -v u="$user" '$1 == u || $3 == u {print $3; exit}' "$rootfs/etc/passwd")
  local home; home=$(awk -F: -v u="$uid" '$3 == u {print $6; exit}' "$rootfs/etc/passwd")
  # root keeps its capabilities (a container's root has them); any other user
  # is that uid, outside as inside, so the files it owns are its own in there,
  # and may make no user namespace (Docker's and podman's seccomp profiles
  # refuse them too: the grader must find its fallback fence by itself).
  local as=(--cap-add ALL) who=()
  [ "$uid" != 0 ] && as=(--unshare-user --uid "$uid" --gid "$uid" --disable-userns) \
    who=(setpriv --reuid "$uid" --regid "$uid" --clear-groups)
  env -i TERM=dumb PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" LANG=C.UTF-8 \
    "${who[@]}" bwrap --bind "$rootfs" / --dev /dev --proc /proc --unshare-pid --unshare-ipc --unshare-uts --unshare-net \
    --hostname gradlab-container --die-with-parent "${as[@]}" "${bv[@]}" --chdir "$wd" "$@"
}

only=${GRADLAB_CONTAINER_ONLY:-}

# 1. The batch image: a class graded inside it and on the host.
copy_checkout "$src" "$work/context" || { echo "FAIL: cannot copy the checkout"; exit 1; }
if [ "$only" != dev ] && build_image batch "$work/context/grader/batch/Dockerfile" "$work/context"; then
  class="$work/class" fx="$src/tests/fixtures"
  mkdir -p "$class"/{ada,bo,cy,dee}
  cp "$src/solutions/exercise3.cpp" "$src/solutions/exercise5.cpp" "$class/ada/"
  cp "$(grep -l '"verdict": "failed"' "$fx"/exercise3/*.expect.json | head -1 | sed 's/\.expect\.json$/.cpp/')" "$class/bo/exercise3.cpp"
  cp "$fx/exercise3/compile-error.cpp" "$class/cy/exercise3.cpp"
  cp "$src/solutions/exercise5.cpp" "$class/dee/exercise5.cpp"
  "$grade" batch "$class" --exercises exercise3,exercise5 --jobs 2 --no-isolation --out "$work/host" \
    >"$work/host.log" 2>&1
  code=$?
  host_refused=0
  if [ "$code" = 69 ] && grep -q "cannot reach" "$work/host.log"; then
    # The fallback fence binds nothing, so it refuses a course behind a
    # private folder up front (grader/SECURITY.md); the image's run is
    # checked on its own.
    host_refused=1
    echo "skipped (not passed): the host's run in the fallback fence, to compare with: the grader refuses this checkout there: $(grep -m1 "cannot reach" "$work/host.log" | cut -c1-200)"
  elif [ "$code" != 0 ]; then
    no "the host's batch exited $code: $(tail -5 "$work/host.log")"
  fi
  mkdir -p "$work/inside" && chmod 0777 "$work/inside"
  run_image batch root /gradlab "$class:/class:ro" "$work/inside:/out" -- \
    /gradlab/build/grader/grade batch /class --exercises exercise3,exercise5 --jobs 2 --out /out \
    >"$work/inside.log" 2>&1 || no "the batch inside the image exited $?: $(tail -5 "$work/inside.log")"
  grep -q "fallback" "$work/inside.log" && ok "inside the image the grader chose the fallback fence and said so" ||
    no "the batch inside the image did not name its fence: $(head -3 "$work/inside.log")"
  same=0
  [ "$host_refused" = 1 ] && same=5
  for f in gradebook.csv checks.csv summary.json summary.html batch.json; do
    [ "$host_refused" = 1 ] && break
    if cmp -s "$work/host/$f" "$work/inside/$f"; then same=$((same + 1)); else
      no "$f differs between the host and the image"; diff "$work/host/$f" "$work/inside/$f" | head -8
    fi
  done
  [ "$same" = 5 ] && [ "$host_refused" = 0 ] && ok "gradebook.csv, checks.csv, summary.json, summary.html and batch.json are the host's, byte for byte"
  grep -q '^ada,' "$work/inside/gradebook.csv" 2>/dev/null || no "the image's gradebook has no row for ada"
fi

# 2. The students' dev container, from a student release.
[ "$only" = batch ] && exit $fail
"$grade" release --out "$work/release" >"$work/release.log" 2>&1 || no "grade release: $(tail -5 "$work/release.log")"
student="$work/release/student"
if [ -f "$student/.devcontainer/devcontainer.json" ] &&
    build_image dev "$student/.devcontainer/Dockerfile" "$student"; then
  cp "$src/solutions/exercise3.cpp" "$student/exercises/exercise3.cpp"
  user=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["remoteUser"])' "$student/.devcontainer/devcontainer.json")
  create=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["postCreateCommand"])' "$student/.devcontainer/devcontainer.json")
  uid=$(run_image dev "$user" / -- id -u)
  chown -R "$uid:$uid" "$student"  # as the editor does: the workspace is the container user's
  ws=/workspaces/gradlab
  run_image dev "$user" "$ws" "$student:$ws" -- bash -c "$create" >"$work/dev-create.log" 2>&1 ||
    no "the dev container's postCreateCommand exited $?: $(tail -10 "$work/dev-create.log")"
  run_image dev "$user" "$ws" "$student:$ws" -- ./grade exercise3 >"$work/dev-grade.log" 2>&1
  code=$?
  [ "$code" = 0 ] && ok "in the dev container, ./grade exercise3 gives the solved file full marks" ||
    no "in the dev container ./grade exercise3 exited $code: $(tail -15 "$work/dev-grade.log")"
  grep -q "fallback" "$work/dev-grade.log" "$work/dev-create.log" && ok "the dev container's grader named its fence" ||
    no "the dev container's grader did not name its fence"
elif [ ! -f "$student/.devcontainer/devcontainer.json" ]; then
  no "the student release carries no .devcontainer/devcontainer.json"
fi
exit $fail

#!/usr/bin/env bash
# Installs the Debian packages gradlab needs (when root), or prints the one
# line to run. Sourced by ./grade and ./run-tests.
GRADLAB_PACKAGES="cmake g++ clang make pkg-config catch2 nlohmann-json3-dev libcli11-dev libgraphviz-dev graphviz libopenblas-dev bubblewrap libyaml-cpp-dev libarchive-dev libicu-dev"
gradlab_missing() {
  local missing=""
  for p in $GRADLAB_PACKAGES "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  echo "$missing"
}
gradlab_update_lists() {
  [ -n "${gradlab_lists_fresh:-}" ] && return 0
  apt-get update -qq >&2 && gradlab_lists_fresh=1
}
# Of the packages named, those installed or in this system's archive; the
# others are named once on stderr. For what only some tests need: a package
# Debian dropped (similarity-tester is not in Debian 13) makes its tests
# report skipped instead of stopping the install of everything else.
gradlab_available() {
  local p have="" none=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || none="$none $p"; done
  if [ -n "$none" ] && [ "$(id -u)" = 0 ]; then gradlab_update_lists || true; fi
  none=""
  for p in "$@"; do
    if dpkg -s "$p" >/dev/null 2>&1 || apt-cache show "$p" >/dev/null 2>&1; then have="$have $p"; else none="$none $p"; fi
  done
  [ -z "$none" ] || echo "gradlab: not in this system's package archive:$none (the tests that need it report skipped)" >&2
  echo "$have"
}
gradlab_install_deps() {
  local missing
  missing=$(gradlab_missing "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "gradlab: installing$missing" >&2
    (gradlab_update_lists && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >&2 || {
      echo "gradlab: apt-get failed; run it by hand: apt-get install -y$missing" >&2
      return 1
    }
  else
    echo "gradlab: missing Debian packages. Run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    return 1
  fi
}

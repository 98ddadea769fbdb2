#!/usr/bin/env bash
# Installs the Debian packages gradlab needs (when root), or prints the one
# line to run. Sourced by ./grade and ./run-tests.
GRADLAB_PACKAGES="cmake g++ clang make pkg-config catch2 nlohmann-json3-dev libcli11-dev libgraphviz-dev graphviz libopenblas-dev bubblewrap libyaml-cpp-dev"
gradlab_missing() {
  local missing=""
  for p in $GRADLAB_PACKAGES "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  echo "$missing"
}
gradlab_install_deps() {
  local missing
  missing=$(gradlab_missing "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ]; then
    echo "gradlab: installing$missing" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing) >&2 || {
      echo "gradlab: apt-get failed; run it by hand: apt-get install -y$missing" >&2
      return 1
    }
  else
    echo "gradlab: missing Debian packages. Run:" >&2
    echo "  sudo apt-get install -y$missing" >&2
    return 1
  fi
}

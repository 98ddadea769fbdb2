# Sourced by the distro and container tests: a minimal Debian root made by
# debootstrap from Debian's mirror, kept as a tarball in $GRADLAB_DISTRO_CACHE
# (default /var/tmp/gradlab-distro, root's, 0700) with the .debs it fetched,
# so that the next run unpacks it instead of fetching it again. A half-made
# root (debootstrap cut short) is never kept. Delete the tarball to refresh it.
distro_cache=${GRADLAB_DISTRO_CACHE:-/var/tmp/gradlab-distro}
debian_mirror=${GRADLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
ubuntu_mirror=${GRADLAB_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}

# Where a suite comes from: Ubuntu's (Gradescope's and GitHub's images are
# Ubuntu 22.04 and 24.04) from Ubuntu's archive, with universe, where
# catch2, CLI11 and nlohmann-json live, and with debootstrap's script for
# every Ubuntu release since 7.10 (an older debootstrap has no "noble");
# anything else from Debian's mirror.
suite_source() {
  case $1 in
    jammy | noble | oracular | plucky) echo "$ubuntu_mirror --components=main,universe gutsy" ;;
    *) echo "$debian_mirror" ;;
  esac
}

# debian_base SUITE: prints the tarball's path; exits 77 (skipped) when
# debootstrap cannot make the root, which mostly means no route to the mirror.
debian_base() {
  local suite=$1 base="$distro_cache/$1-minbase.tar" tmp="$distro_cache/$1-making" mirror components="" script=""
  read -r mirror components script <<<"$(suite_source "$suite")"
  mkdir -p "$distro_cache/archives/partial" && chmod 0700 "$distro_cache"
  if [ ! -f "$base" ]; then
    rm -rf "$tmp"
    echo "debootstrap $suite from $mirror (then cached as $base)" >&2
    # shellcheck disable=SC2086 # the components option and the script are one word each, or none
    if ! debootstrap --variant=minbase $components --cache-dir="$distro_cache/archives" "$suite" "$tmp" "$mirror" $script \
        >"$distro_cache/debootstrap-$suite.log" 2>&1; then
      tail -5 "$distro_cache/debootstrap-$suite.log" >&2
      rm -rf "$tmp"
      echo "skipped: debootstrap $suite from $mirror failed (no route to the mirror?)" >&2
      exit 77
    fi
    tar -C "$tmp" -cf "$base.part" . && mv "$base.part" "$base" && rm -rf "$tmp"
  fi
  echo "$base"
}

# copy_checkout SRC DEST: the checkout's tracked files and the untracked ones
# git does not ignore (an uncommitted change is tested too), no build folders.
copy_checkout() {
  mkdir -p "$2" && (cd "$1" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$2" -xf -
}

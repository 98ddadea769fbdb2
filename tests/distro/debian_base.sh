# Sourced by the distro and container tests: a minimal Debian root made by
# debootstrap from Debian's mirror, kept as a tarball in $GRADLAB_DISTRO_CACHE
# (default /var/tmp/gradlab-distro, root's, 0700) with the .debs it fetched,
# so that the next run unpacks it instead of fetching it again. A half-made
# root (debootstrap cut short) is never kept. Delete the tarball to refresh it.
distro_cache=${GRADLAB_DISTRO_CACHE:-/var/tmp/gradlab-distro}
debian_mirror=${GRADLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}

# debian_base SUITE: prints the tarball's path; exits 77 (skipped) when
# debootstrap cannot make the root, which mostly means no route to the mirror.
debian_base() {
  local suite=$1 base="$distro_cache/$1-minbase.tar" tmp="$distro_cache/$1-making"
  mkdir -p "$distro_cache/archives/partial" && chmod 0700 "$distro_cache"
  if [ ! -f "$base" ]; then
    rm -rf "$tmp"
    echo "debootstrap $suite from $debian_mirror (then cached as $base)" >&2
    if ! debootstrap --variant=minbase --cache-dir="$distro_cache/archives" "$suite" "$tmp" "$debian_mirror" \
        >"$distro_cache/debootstrap-$suite.log" 2>&1; then
      tail -5 "$distro_cache/debootstrap-$suite.log" >&2
      rm -rf "$tmp"
      echo "skipped: debootstrap $suite from $debian_mirror failed (no route to Debian's mirror?)" >&2
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

#!/usr/bin/env bash
# Installs the editor versions people run beside Debian 12's Neovim 0.7.2 and
# Emacs 28.2: Neovim 0.10 (Debian 13 "trixie"), Neovim 0.12 (Debian "sid")
# and Emacs 30 (bookworm-backports), without touching the system's packages.
# Each is unpacked from Debian's own .debs into the cache folder
#
#   ${CTXLS_EDITORS:-$HOME/.cache/ctxls/editors}/<name>-<version>/bin/<name>
#
# where a wrapper script runs it with its own C library and runtime files.
# The editor suites (editors/nvim, editors/emacs) run each test in every
# editor found there as well as the one on PATH (editors/internal/versions).
# A version already there is kept: run it again to fill what is missing.
# See shared/LIBRARIES.md for why each piece is needed.
set -euo pipefail

cache=${CTXLS_EDITORS:-$HOME/.cache/ctxls/editors}
mkdir -p "$cache"
work=$cache/.apt
mkdir -p "$work"

# apt_get SUITE LISTNAME ARGS...: apt-get with a private sources list.
apt_get() {
  local suite=$1 name=$2
  shift 2
  mkdir -p "$work/$name/lists/partial" "$work/$name/cache/archives/partial"
  echo "deb http://deb.debian.org/debian $suite main" >"$work/$name/sources.list"
  apt-get -qq -o Dir::Etc::SourceList="$work/$name/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$work/$name/lists" -o Dir::Cache="$work/$name/cache" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# unpack SUITE NAME PACKAGE... : downloads the packages from SUITE and
# unpacks them all into $work/NAME/root; prints the root.
unpack() {
  local suite=$1 name=$2
  shift 2
  apt_get "$suite" "$name" update >&2
  rm -rf "$work/$name/debs" "$work/$name/root"
  mkdir -p "$work/$name/debs" "$work/$name/root"
  local pkgs=()
  for p in "$@"; do pkgs+=("$p/$suite"); done
  (cd "$work/$name/debs" && apt_get "$suite" "$name" download "${pkgs[@]}" >&2)
  for f in "$work/$name/debs"/*.deb; do dpkg -x "$f" "$work/$name/root"; done
  echo "$work/$name/root"
}

# run_patchelf ARGS...: Debian's patchelf, unpacked from this system's own
# suite when it is not installed.
run_patchelf() {
  if command -v patchelf >/dev/null; then
    patchelf "$@"
    return
  fi
  if [ ! -x "$work/patchelf/root/usr/bin/patchelf" ]; then
    (. /etc/os-release && unpack "$VERSION_CODENAME" patchelf patchelf >/dev/null)
  fi
  "$work/patchelf/root/usr/bin/patchelf" "$@"
}

# nvim SUITE PACKAGES...: a Neovim from SUITE with its own C library: the
# program's loader and library path are set to its folder's (patchelf), so
# that it runs as itself. (Run through its loader instead, the terminal UI
# cannot start: 0.10 and later run the editor in a child of the program,
# /proc/self/exe with --embed, and that was the loader, which refuses the
# option.) An install made the old way is made again.
nvim() {
  local suite=$1
  shift
  local have
  for have in "$cache"/nvim-*/.suite-"$suite"; do
    if [ -e "$have" ] && ! grep -q ld-linux "$(dirname "$have")/bin/nvim"; then
      echo "ctxls editors: Neovim from $suite already in $cache"
      return
    fi
  done
  local root version dest
  root=$(unpack "$suite" "nvim-$suite" neovim neovim-runtime "$@")
  version=$(dpkg-deb -f "$work/nvim-$suite"/debs/neovim_*.deb Version | sed 's/-.*//')
  dest=$cache/nvim-$version
  local R=$dest
  run_patchelf --set-interpreter "$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \
    --force-rpath --set-rpath "$R/usr/lib/x86_64-linux-gnu" "$root/usr/bin/nvim"
  rm -rf "$dest"
  mv "$root" "$dest.tmp"
  mkdir -p "$dest.tmp/bin"
  # Debian keeps the tree-sitter parsers in usr/lib/nvim: without them a
  # markdown buffer fails in the runtime's own ftplugin.
  cat >"$dest.tmp/bin/nvim" <<EOF
#!/bin/sh
export VIMRUNTIME=$R/usr/share/nvim/runtime
exec $R/usr/bin/nvim --cmd "set rtp+=$R/usr/lib/nvim" "\$@"
EOF
  chmod +x "$dest.tmp/bin/nvim"
  touch "$dest.tmp/.suite-$suite"
  mv "$dest.tmp" "$dest"
  "$dest/bin/nvim" --version | head -1
}

# emacs30: Emacs 30 from bookworm-backports (built for Debian 12: the
# system's C library, plus two libraries from Debian 12 itself).
emacs30() {
  if ls "$cache"/emacs-*/.suite-bookworm-backports >/dev/null 2>&1; then
    echo "ctxls editors: Emacs from bookworm-backports already in $cache"
    return
  fi
  if ! ldconfig -p | grep -q libgccjit.so.0 || ! ldconfig -p | grep -q libtree-sitter.so.0; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgccjit0 libtree-sitter0 >/dev/null
  fi
  local root version dest
  root=$(unpack bookworm-backports emacs emacs-nox emacs-bin-common emacs-common)
  version=$(dpkg-deb -f "$work"/emacs/debs/emacs-nox_*.deb Version | sed 's/^[0-9]*://; s/[-+].*//')
  dest=$cache/emacs-$version
  rm -rf "$dest"
  mv "$root" "$dest.tmp"
  mkdir -p "$dest.tmp/bin"
  local R=$dest
  local lib=$R/usr/lib/x86_64-linux-gnu
  local share=$R/usr/share/emacs/$version
  local exec=$R/usr/libexec/emacs/$version/x86_64-linux-gnu
  cat >"$dest.tmp/bin/emacs" <<EOF
#!/bin/sh
export LD_LIBRARY_PATH=$lib EMACSLOADPATH=$share/lisp EMACSDATA=$share/etc EMACSPATH=$exec
exec $R/usr/bin/emacs-nox --dump-file=\$(ls $exec/*.pdmp | head -1) "\$@"
EOF
  chmod +x "$dest.tmp/bin/emacs"
  touch "$dest.tmp/.suite-bookworm-backports"
  mv "$dest.tmp" "$dest"
  "$dest/bin/emacs" --version | head -1
}

nvim trixie libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common libtree-sitter0.22 libunibilium4 \
  libuv1t64 lua-lpeg lua-luv libmsgpack-c2 libvterm0
nvim sid libc6 libgcc-s1 libluajit-5.1-2 libluajit-5.1-common libtree-sitter0.26 libunibilium4 \
  libutf8proc3 libuv1t64 lua-lpeg lua-luv
emacs30

#!/usr/bin/env bash
# Installs what the Emacs and Vim client tests need (editors/emacs/emacs_test.go):
# Debian's Emacs 28 without X, use-package (the documented variant), eglot 1.9
# and lsp-mode 8 (ctxls runs beside the language server; lsp-mode's add-on
# recipe; lsp-mode brings markdown-mode), and Vim 9 (vim.basic has +job
# +channel) with ALE (the documented Vim recipe).
#
# The tests run in every Emacs editors/install-newer.sh unpacks into its
# cache as well (Emacs 30; this script runs it first, as .ci/run calls this
# one before it). Each gets a link to its dump file that the Emacs processes
# it starts itself can find (see below). Debian compiled its elpa packages
# for its own Emacs, and Emacs 30 cannot run all that Emacs 28 compiled
# (lsp-mode holds closures of dash's that 28's byte compiler wrote as
# lists), so each newer Emacs gets the same packages, those it does not
# build in itself (eglot, use-package, project, xref, seq and bind-key
# are), byte-compiled by it into <its cache folder>/elpa, where the tests
# activate them.
#
# Idempotent: a second run installs and compiles nothing. Run as root (CI is
# root).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

pkgs=(emacs-nox elpa-eglot elpa-lsp-mode elpa-use-package vim vim-ale)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "editors/emacs: ${pkgs[*]} already installed"
else
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
	emacs --version | head -1
fi

bash "$here/../install-newer.sh"

# The elpa packages' sources (dh-elpa keeps them apart from what it compiled).
src=/usr/share/emacs/site-lisp/elpa-src
# Byte-compiles (in the Emacs running it) each package folder of SRC that
# this Emacs does not build in (the same version or newer) into DEST.
compile='(progn
(require (quote package))
(let* ((src (pop command-line-args-left))
       (dest (pop command-line-args-left))
       (byte-compile-warnings nil)
       dirs failed)
  (dolist (dir (directory-files src t "\\`[^.]"))
    (let ((name (file-name-nondirectory dir)))
      (unless (string-match "\\`\\(.+\\)-\\([0-9.]+\\)\\'\''" name)
        (error "Not a package folder: %s" dir))
      (if (package-built-in-p (intern (match-string 1 name)) (version-to-list (match-string 2 name)))
          (message "%s: built in" name)
        (copy-directory dir (expand-file-name name dest))
        (push (expand-file-name name dest) dirs))))
  (setq load-path (append dirs load-path))
  (dolist (dir dirs)
    (dolist (file (directory-files dir t "\\.el\\'\''"))
      (unless (or (string-match-p "-\\(pkg\\|autoloads\\)\\.el\\'\''" file)
                  (byte-compile-file file))
        (push file failed))))
  (when failed
    (error "Did not compile: %S" failed))))'

cache=${CTXLS_EDITORS:-$HOME/.cache/ctxls/editors}
sources=$(ls "$src")
for emacs in "$cache"/emacs-*/bin/emacs; do
	[ -x "$emacs" ] || continue
	root=$(dirname "$(dirname "$emacs")")
	# Its dump file beside the program, where Emacs looks for it when not
	# told (--dump-file, which the bin/emacs wrapper passes): the Emacs
	# processes it starts itself (native compilation of a trampoline,
	# Flymake's byte compiler) run the program by its name and would start
	# without one, loading all of Lisp anew (10 s each, here).
	for exe in "$root"/usr/bin/emacs-*; do
		case $exe in *.pdmp) continue ;; esac
		pdmp=$(ls "$root"/usr/libexec/emacs/*/*/*.pdmp 2>/dev/null | head -1)
		if [ -n "$pdmp" ] && [ ! -e "$exe.pdmp" ]; then
			ln -s "$(realpath --relative-to="$root/usr/bin" "$pdmp")" "$exe.pdmp"
			echo "editors/emacs: $exe.pdmp -> $pdmp"
		fi
	done
	dest=$root/elpa
	if [ "$(cat "$dest/.sources" 2>/dev/null)" = "$sources" ]; then
		echo "editors/emacs: $dest already compiled"
		continue
	fi
	rm -rf "$dest" "$dest.tmp"
	mkdir -p "$dest.tmp"
	# Its output (the packages' own warnings) only when it fails.
	if ! out=$("$emacs" -Q --batch --eval "$compile" "$src" "$dest.tmp" 2>&1); then
		echo "$out" >&2
		exit 1
	fi
	echo "$sources" >"$dest.tmp/.sources"
	mv "$dest.tmp" "$dest"
	echo "editors/emacs: $(ls "$dest" | tr '\n' ' ')compiled by $("$emacs" --version | head -1) in $dest"
done

#!/usr/bin/env bash
# Installs what the Emacs and Vim client tests need (editors/emacs/emacs_test.go):
# Debian's Emacs 28 without X, use-package (the documented variant), eglot 1.9
# and lsp-mode 8 (ctxls runs beside the language server; lsp-mode's add-on
# recipe; lsp-mode brings markdown-mode), and Vim 9 (vim.basic has +job
# +channel) with ALE (the documented Vim recipe).
# Idempotent: a second run installs nothing. Run as root (CI is root).
set -euo pipefail

pkgs=(emacs-nox elpa-eglot elpa-lsp-mode elpa-use-package vim vim-ale)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "editors/emacs: ${pkgs[*]} already installed"
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
emacs --version | head -1

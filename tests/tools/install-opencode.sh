#!/usr/bin/env bash
# Installs opencode (npm `opencode-ai`, pinned) into DIR for tests/agents/test_opencode.py,
# which finds it in DIR/node_modules/.bin when LSP_VERIFY_OPENCODE=DIR. A DIR that has the
# pinned version already is left alone, so CI can call this every time and download once.
# The package ships its own binary for the platform (an optional dependency): no build step.
set -euo pipefail

version=1.18.33
if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
bin="$dir/node_modules/.bin/opencode"

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null || true)" = "$version" ]; then
    exit 0
fi
bash "$(dirname "$0")/npm-prefix-install.sh" "$dir" lsp-verify-opencode \
    --save-exact "opencode-ai@$version"
"$bin" --version >/dev/null

#!/usr/bin/env bash
# Installs Claude Code (npm `@anthropic-ai/claude-code`, pinned) into DIR for
# tests/agents/test_claude_code.py, which finds it in DIR/node_modules/.bin when
# LSP_VERIFY_CLAUDE_CODE=DIR. A DIR that has the pinned version already is left alone, so CI
# can call this every time and download once. The package ships its own binary for the
# platform (an optional dependency): no build step, no download at run time.
set -euo pipefail

version=2.1.332
if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
bin="$dir/node_modules/.bin/claude"

installed() {
    [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^$version "
}
if installed; then
    exit 0
fi
bash "$(dirname "$0")/npm-prefix-install.sh" "$dir" lsp-verify-claude-code \
    --save-exact "@anthropic-ai/claude-code@$version"
installed || { echo "$0: $bin does not say version $version" >&2; exit 1; }

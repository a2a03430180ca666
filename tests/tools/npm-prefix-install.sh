#!/usr/bin/env bash
# Installs npm PACKAGES into DIR/node_modules (DIR gets a package.json named NAME of its own,
# which keeps npm from walking up and installing into an enclosing project). The install
# scripts beside it decide whether anything is missing; this only installs.
#
#   bash tests/tools/npm-prefix-install.sh DIR NAME [npm install option...] PACKAGE...
set -euo pipefail

if [ "$#" -lt 3 ]; then
    echo "usage: $0 DIR NAME PACKAGE..." >&2
    exit 2
fi
dir=$1
name=$2
shift 2
if ! command -v npm >/dev/null 2>&1; then
    echo "$0: npm is not on PATH" >&2
    exit 1
fi

mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
    printf '{\n  "name": "%s",\n  "private": true\n}\n' "$name" >"$dir/package.json"
fi
npm install --prefix "$dir" --no-audit --no-fund "$@"

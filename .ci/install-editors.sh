#!/usr/bin/env bash
# Installs the editors that tests/editors/ drive: Neovim, Emacs (no X) and eglot, and tmux, the
# terminal in which tests/editors/test_neovim_screen.py reads Neovim's screen.
# Quick and silent when they are already there, so .ci/run can call it every time; the
# package index is refreshed only when something is missing, because `apt-get update` alone
# costs more than the whole check.
set -euo pipefail

packages=(neovim emacs-nox elpa-eglot tmux)

missing=()
for package in "${packages[@]}"; do
    # dpkg-query prints the status even for removed packages; only "install ok installed" counts.
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    if [ "$status" != "install ok installed" ]; then
        missing+=("$package")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
else
    sudo=()
fi

echo "installing editors for tests/editors: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# --no-install-recommends keeps emacs from pulling in mail and spelling tools the tests never use.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

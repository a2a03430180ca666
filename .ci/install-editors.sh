#!/usr/bin/env bash
# Installs the editors that tests/editors/ drive: Neovim, Emacs (no X) and eglot, and tmux, the
# terminal in which tests/editors/test_neovim_screen.py reads Neovim's screen.
# Quick and silent when they are already there (see apt-install.sh), so .ci/run can call it
# every time.
set -euo pipefail

exec bash "$(dirname "$0")/apt-install.sh" "editors for tests/editors" \
    neovim emacs-nox elpa-eglot tmux

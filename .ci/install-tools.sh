#!/usr/bin/env bash
# Installs the command-line tools whose real output tests/e2e/test_real_tool_output.py checks the
# problem matchers against: Go (go test, go vet) and shellcheck from Debian's packages, and
# make and a C compiler for the C assert() case. Quick and silent when they are there
# (see apt-install.sh), so .ci/run can call it every time.
set -euo pipefail

exec bash "$(dirname "$0")/apt-install.sh" "tools for the matcher tests" \
    golang-go shellcheck make gcc libc6-dev

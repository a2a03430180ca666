#!/usr/bin/env bash
# Installs the command-line tools whose real output tests/e2e/test_real_tool_output.py checks the
# problem matchers against: Go (go test, go vet) and shellcheck from Debian's packages, and
# make and a C compiler for the C assert() case; and the toolchains of the detector's rules
# after the seed's five that Debian packages (tests/e2e/test_verdicts.py runs them): Ruby with
# rake, minitest, test-unit, RSpec and bundler, and Elixir. Deno, Zig and just come from
# tests/tools/install-lang-tools.sh. Quick and silent when they are there (see
# apt-install.sh), so .ci/run can call it every time.
set -euo pipefail

exec bash "$(dirname "$0")/apt-install.sh" "tools for the matcher and verdict tests" \
    golang-go shellcheck make gcc libc6-dev \
    ruby rake ruby-minitest ruby-test-unit ruby-rspec bundler elixir

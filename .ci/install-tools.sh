#!/usr/bin/env bash
# Installs the command-line tools whose real output tests/test_problems_real.py checks the
# problem matchers against: Go (go test, go vet) and shellcheck from Debian's packages, and
# make and a C compiler for the C assert() case. Quick and silent when they are there, so
# .ci/run can call it every time; the package index is refreshed only when something is missing.
set -euo pipefail

packages=(golang-go shellcheck make gcc libc6-dev)

missing=()
for package in "${packages[@]}"; do
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

echo "installing tools for the matcher tests: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Installs the Debian packages named that are not installed yet, as root (CI) or through sudo.
# Quick and silent when they are all there, so .ci/run's install scripts can call it every
# time: the package index is refreshed only when something is missing, because
# `apt-get update` alone costs more than the whole check.
#
#   bash .ci/apt-install.sh "what they are for" PACKAGE...
set -euo pipefail

what=$1
shift

missing=()
for package in "$@"; do
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

echo "installing $what: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
# --no-install-recommends keeps emacs from pulling in mail and spelling tools no test uses.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

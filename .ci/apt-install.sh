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

# Another package manager (a first boot's upgrade, another install) may hold apt's locks: wait
# for it, within APT_LOCK_WAIT_S seconds in all. apt-get waits for the dpkg lock itself when
# told to (DPkg::Lock::Timeout, apt >= 1.9.11; Debian 12 has 2.6), but not for the lock of the
# package lists that `update` takes: a command that failed on a lock is run again.
lock_wait=${APT_LOCK_WAIT_S:-300}
poll=${APT_LOCK_POLL_S:-5}
deadline=$((SECONDS + lock_wait))
told=""

apt_get() {
    local err
    while true; do
        local left=$((deadline - SECONDS))
        [ "$left" -gt 0 ] || left=0
        if err=$("${sudo[@]}" apt-get -o DPkg::Lock::Timeout="$left" "$@" 2>&1 >/dev/null); then
            [ -z "$err" ] || echo "$err" >&2
            return 0
        fi
        if [[ "$err" != *"Could not get lock"* ]]; then
            echo "$err" >&2
            return 1
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "$err" >&2
            echo "apt-install: another package manager still holds apt's lock after ${lock_wait}s" >&2
            return 1
        fi
        if [ -z "$told" ]; then
            echo "waiting for another package manager to let go of apt's lock (up to ${lock_wait}s)"
            told=1
        fi
        sleep "$poll"
    done
}

echo "installing $what: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
# --no-install-recommends keeps emacs from pulling in mail and spelling tools no test uses.
apt_get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The test suite again, with the newest pygls 2.x, when that is not the pygls the suite just
# ran with: the server uses some of pygls' internals, and a new pygls can break it.
#   - The newest is one that pyproject.toml admits (a new install gets it, a reused
#     environment does not): a failure here fails CI.
#   - The newest is outside the pin: a failure says to keep the pin, and fails nothing (no
#     install gets that pygls); a pass says the pin can be widened to it.
# Runs in a second environment, pytest invoked as .ci/run invokes it.
#
#   bash .ci/pygls-newest.sh VENV TRIAL_VENV [PYTEST ARGS...]
# VENV: the environment the suite ran in; TRIAL_VENV: the second one, made when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=$1
trial=$2
shift 2

read -r installed newest inside < <("$venv/bin/python" .ci/pygls_versions.py) || true
if [ -z "${inside:-}" ]; then
    echo "could not tell which pygls is the newest: see above" >&2
    exit 1
fi
if [ "$installed" = "$newest" ]; then
    echo "pygls $installed is the newest 2.x: the run above covers both"
    exit 0
fi
echo "pygls $installed was tested; the newest 2.x is $newest ($inside the pin): testing it too"

if [ ! -x "$trial/bin/python" ]; then
    "$venv/bin/python" -m venv "$trial"
fi
"$trial/bin/python" -m pip install --quiet --upgrade pip
# The project without its pin on pygls, then its requirements with pygls as the newest.
"$trial/bin/python" -m pip install --quiet --no-deps -e .
mapfile -t requirements < <("$venv/bin/python" .ci/pygls_versions.py --requirements-but-pygls)
"$trial/bin/python" -m pip install --quiet "pygls==$newest" "${requirements[@]}"

export LSP_VERIFY_PYGLS_TRIAL="$newest"  # tests/unit/test_pygls_pin.py: outside the pin on purpose
PATH="$(cd "$trial/bin" && pwd):$PATH"
export PATH
set +e
"$trial/bin/python" -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
if [ "$status" -eq 0 ]; then
    echo "pygls $newest passes the suite"
    exit 0
fi
if [ "$inside" = inside ]; then
    echo "pygls $newest, which pyproject.toml admits, fails the suite: pin it out" >&2
    exit "$status"
fi
echo "pygls $newest fails the suite: keep pyproject.toml's pin below it (it admits no such pygls)"

"""The CI's apt install scripts, with dpkg-query, apt-get and sudo stubbed on PATH: nothing is
installed for real, and what would be run is recorded."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CI = Path(__file__).resolve().parent.parent / ".ci"

STUBS = {
    # "Installed" for the packages named in $INSTALLED, unknown for the others.
    "dpkg-query": 'for p in $INSTALLED; do [ "$p" = "${!#}" ] && printf "install ok installed" '
    "&& exit 0; done; exit 1",
    "apt-get": 'echo "apt-get $*" >> "$APT_LOG"',
    "sudo": 'exec "$@"',
}


def run(tmp_path: Path, script: str, *args: str, installed: str) -> tuple[str, list[str]]:
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    for name, body in STUBS.items():
        (stubs / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (stubs / name).chmod(0o755)
    log = tmp_path / "apt.log"
    env = dict(os.environ, PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}")
    env.update(INSTALLED=installed, APT_LOG=str(log))
    done = subprocess.run(
        ["bash", str(CI / script), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, log.read_text().splitlines() if log.exists() else []


def test_nothing_is_run_when_every_package_is_there(tmp_path: Path) -> None:
    out, apt = run(tmp_path, "apt-install.sh", "things", "a", "b", installed="a b")
    assert (out, apt) == ("", [])


def test_only_the_missing_packages_are_installed(tmp_path: Path) -> None:
    out, apt = run(tmp_path, "apt-install.sh", "things", "a", "b", "c", installed="b")
    assert out == "installing things: a c\n"
    assert apt == [
        "apt-get update -qq",
        "apt-get install -y -qq --no-install-recommends a c",
    ]


@pytest.mark.parametrize(
    ("script", "packages"),
    [
        ("install-editors.sh", "neovim emacs-nox elpa-eglot tmux"),
        ("install-tools.sh", "golang-go shellcheck make gcc libc6-dev"),
    ],
)
def test_each_install_script_names_its_packages(tmp_path: Path, script: str, packages: str) -> None:
    assert run(tmp_path, script, installed=packages) == ("", [])
    apt = run(tmp_path, script, installed="")[1]
    assert apt[-1] == f"apt-get install -y -qq --no-install-recommends {packages}"

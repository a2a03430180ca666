"""The verdict is the bare command's: `lsp-verify check` exits as the command does when typed
by hand in the folder, on layouts where a copy of the manifest or a narrow PATH would change
it. Each case runs the bare command too, in a passing and a failing state, and compares."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lsp_session import server_env

BIN = os.path.dirname(sys.executable)


def env_for(state: Path) -> dict[str, str]:
    env = server_env(state, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    env["PATH"] = BIN + os.pathsep + env.get("PATH", os.defpath)
    return env


def bare(command: str, folder: Path, env: dict[str, str]) -> int:
    return subprocess.run(command, shell=True, cwd=folder, env=env, capture_output=True).returncode


def check(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_verify", "check", str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def pytest_pythonpath(folder: Path, failing: bool) -> str:
    (folder / "src").mkdir()
    (folder / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (folder / "tests").mkdir()
    want = 4 if failing else 3
    (folder / "tests" / "test_calc.py").write_text(
        f"from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == {want}\n"
    )
    (folder / "pytest.ini").write_text("[pytest]\npythonpath = src\ntestpaths = tests\n")
    return "pytest -x -q"


def makefile_list(folder: Path, failing: bool) -> str:
    (folder / "tests").mkdir()
    (folder / "tests" / "run.sh").write_text(f"exit {1 if failing else 0}\n")
    (folder / "Makefile").write_text(
        "HERE := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))\ntest:\n\tsh $(HERE)tests/run.sh\n"
    )
    return "make test"


def hoisted_npm_tool(folder: Path, failing: bool) -> str:
    """A package of a workspace whose test tool is installed at the workspace root."""
    root_bin = folder.parent / "node_modules" / ".bin"
    root_bin.mkdir(parents=True)
    tool = root_bin / "hoisted-tool"
    tool.write_text(f"#!/bin/sh\necho hoisted tool ran\nexit {1 if failing else 0}\n")
    tool.chmod(0o755)
    (folder / "package.json").write_text('{"name": "a", "scripts": {"test": "hoisted-tool"}}')
    return "PATH=../node_modules/.bin:$PATH hoisted-tool"  # what `npm test` does there


LAYOUTS = {
    "pytest.ini pythonpath": pytest_pythonpath,
    "Makefile MAKEFILE_LIST": makefile_list,
    "hoisted npm tool": hoisted_npm_tool,
}


@pytest.mark.parametrize("failing", [False, True], ids=["passing", "failing"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_check_exits_as_the_bare_command(
    tmp_path: Path, state: Path, layout: str, failing: bool
) -> None:
    folder = tmp_path / "ws" / "packages" / "a"
    folder.mkdir(parents=True)
    bare_command = LAYOUTS[layout](folder, failing)
    env = env_for(state)
    expected = bare(bare_command, folder, env)
    assert (expected != 0) == failing, "the layout itself is wrong"
    done = check(folder, env)
    assert done.returncode == expected, done.stdout + done.stderr
    assert "/lsp-verify-" not in done.stdout + done.stderr  # no temp path of ours

"""Running a real editor headless against the installed `lsp-verify`, safely.

Each run gets its own copy of the shipped demo project (one failing test), its own HOME and
XDG folders, a `timeout` around the editor, and a check afterwards that nothing it started
is still alive.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEMO = REPO / "examples" / "demo"

# Seconds one editor session may take in all; each wait inside it is WAIT_MS at most.
EDITOR_TIMEOUT = 120
WAIT_MS = 30000

# The command the editors' settings give the server: the demo's tests, with this Python's
# pytest and without the plugins installed beside it (they only slow it down).
PYTEST_COMMAND = (
    f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {shlex.quote(sys.executable)} "
    "-m pytest -x -q -p no:cacheprovider"
)


def server_dir() -> Path:
    """The folder whose `lsp-verify` the editors start.

    LSP_VERIFY_SERVER_DIR points the tests at another installation (a pipx or uv tool
    folder, or a deliberately broken server); by default, the one installed beside this
    Python.
    """
    chosen = os.environ.get("LSP_VERIFY_SERVER_DIR")
    folder = Path(chosen) if chosen else Path(sys.executable).parent
    if not (folder / "lsp-verify").exists():
        pytest.fail(f"no lsp-verify in {folder}: install the project first (pip install -e .)")
    return folder


def require(binary: str, package: str) -> str:
    """The editor's path; skip when it is missing, except in CI, where that is a failure."""
    found = shutil.which(binary)
    if found is None:
        reason = f"{binary} is not installed (apt-get install {package}, or .ci/install-editors.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    return found


@dataclass
class Workspace:
    project: Path
    out: Path
    env: dict[str, str]


def workspace(tmp_path: Path, *, git: bool = False) -> Workspace:
    project = tmp_path / "demo"
    shutil.copytree(DEMO, project, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NVIM", "VIM", "EMACS"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PATH=f"{server_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
        LSP_VERIFY_PROJECT=str(project),
        LSP_VERIFY_OUT=str(tmp_path / "out.json"),
        LSP_VERIFY_WAIT_MS=str(WAIT_MS),
    )
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    if git:
        # Eglot's project is the version-control root, as in any real checkout.
        git_bin = shutil.which("git")
        if git_bin is None:
            pytest.skip("git is not installed; eglot needs a project root")
        subprocess.run([git_bin, "init", "-q", str(project)], env=env, check=True, timeout=30)
    return Workspace(project, tmp_path / "out.json", env)


def run_editor(
    argv: list[str], ws: Workspace, stdin: bytes | None = None, **extra_env: str
) -> dict[str, Any]:
    """Run the editor under `timeout` (`stdin` on its standard input), then return what the
    driver wrote."""
    env = {**ws.env, **extra_env}
    try:
        proc = subprocess.run(
            ["timeout", "-k", "5", str(EDITOR_TIMEOUT), *argv],
            env=env,
            cwd=str(ws.project),
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=EDITOR_TIMEOUT + 30,
        )
    finally:
        leftovers = reap(ws.env["LSP_VERIFY_OUT"])
    output = (proc.stdout + proc.stderr).decode(errors="replace")
    assert not leftovers, f"processes outlived the editor: {leftovers}\n{output}"
    assert proc.returncode == 0, f"{argv[0]} exited {proc.returncode}:\n{output}"
    assert ws.out.exists(), f"the driver wrote no result:\n{output}"
    result: dict[str, Any] = json.loads(ws.out.read_text())
    result["_output"] = output
    return result


def _ours(marker: str) -> list[int]:
    """Live processes whose environment carries this run's unique LSP_VERIFY_OUT."""
    needle = f"LSP_VERIFY_OUT={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state = stat.rsplit(")", 1)[-1].split()[0]
        if needle in environ.split(b"\0") and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def reap(marker: str, grace: float = 5.0) -> list[int]:
    """Wait briefly for the server to follow the editor out; kill and report any that stay."""
    deadline = time.monotonic() + grace
    while True:
        alive = _ours(marker)
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in alive:
        with contextlib.suppress(OSError):  # it may have exited meanwhile
            os.kill(pid, signal.SIGKILL)
    return alive


def summary_and_located(diagnostics: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    summary = [d for d in diagnostics if d["message"].startswith("verify failed (exit ")]
    located = [d for d in diagnostics if d not in summary]
    return summary, located


def check_failed_run(record: dict[str, Any]) -> None:
    """The record runNow returned for the demo while its bug is in."""
    assert record["outcome"] == "failed", record
    assert record["exitCode"] == 1, record
    assert record["trigger"] == "runNow", record
    assert record["source"] == "settings", record
    assert record["command"] == PYTEST_COMMAND, record
    assert any("1 failed, 1 passed" in line for line in record["tail"]), record["tail"]
    [problem] = record["problems"]
    assert problem["path"] == "tests/test_calc.py", problem
    assert problem["line"] == 14, problem  # the assert of test_mean, 1-based in records
    assert "assert 1.5 == 2.0" in problem["message"], problem


def check_failing_save(diagnostics: list[dict[str, Any]], line_key: str) -> None:
    """The verify diagnostics the editor shows on tests/test_calc.py after the failing save."""
    assert diagnostics, "the editor shows no verify diagnostic after the failing save"
    assert all(d["source"] == "verify" for d in diagnostics), diagnostics
    summary, located = summary_and_located(diagnostics)
    assert len(summary) == 1, diagnostics
    assert summary[0]["message"].startswith("verify failed (exit 1):\n"), summary
    assert "1 failed, 1 passed" in summary[0]["message"], summary
    assert len(located) == 1, diagnostics
    assert located[0][line_key] == 13, located  # 0-based: the assert on line 14
    assert "test_mean" in located[0]["message"], located
    assert "assert 1.5 == 2.0" in located[0]["message"], located


def check_command_messages(failed: list[str], passed: list[str]) -> None:
    """What the run-now command told the user: one line each, before and after the fix."""
    [before] = failed
    assert before.startswith(f"verify failed (exit 1): {PYTEST_COMMAND} | 1 failed, 1 passed")
    assert "\n" not in before, before
    assert passed == [f"verify passed (exit 0): {PYTEST_COMMAND}"], passed

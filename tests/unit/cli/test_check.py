"""`lsp-verify check` in this process: a skipped run, and Windows, where runs need WSL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.stdio import server_env


@pytest.fixture
def folder(project: Path) -> Path:
    return project


def test_a_skipped_run_exits_3(folder: Path) -> None:
    # A manifest edited between planning and spawning skips the run (tests/e2e/test_runner.py
    # covers that); here, only how `check` maps that outcome to its exit status.
    from lsp_verify.cli.check import exit_status
    from lsp_verify.record import Record

    record = Record.not_started(str(folder), "cli", "skipped", "manifest changed: x")
    assert exit_status(record) == 3


def test_on_windows_check_starts_and_says_runs_need_wsl(
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Windows, selected in-process: `check` plans, runs nothing and says why, in one line."""
    from lsp_verify.cli import main
    from lsp_verify.running.runner import NEEDS_UNIX

    for name, value in server_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "platform", "win32")
    code = main(["check", str(folder), "--command", "touch ran"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith(f"verify failed (could not run: {NEEDS_UNIX}): touch ran  [settings")
    assert "WSL" in out
    assert not (folder / "ran").exists()

"""Runs of a plan that start no process: cancelled before the start, a vanished folder, a spawn
that fails, no plan, Windows."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_verify.running.execute import run_plan
from lsp_verify.running.runner import NEEDS_UNIX
from tests.support.runs import plan_for, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


# ----------------------------------------------------------------------------- helpers


# ------------------------------------------------------------------ timeout, cancel, kill


async def test_cancel_set_before_start_runs_nothing(tmp_path: Path) -> None:
    cancel = asyncio.Event()
    cancel.set()
    result = await run(tmp_path, "touch ran", cancel=cancel)
    assert (result.outcome, result.exit_code) == ("cancelled", None)
    assert not (tmp_path / "ran").exists()


# ------------------------------------------------------------------- results and errors


async def test_vanished_folder_is_a_failed_result(tmp_path: Path) -> None:
    result = await run(tmp_path / "gone", "true")
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert result.reason is not None and "gone" in result.reason
    assert result.tail == (result.reason,)


async def test_spawn_oserror_is_a_failed_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    result = await run(tmp_path, "true")
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert result.reason is not None and "Too many open files" in result.reason
    assert result.tail[-1] == result.reason


async def test_no_plan_is_skipped(tmp_path: Path) -> None:
    result = await run_plan(
        plan_for(tmp_path, None, reason="nothing found"),
        timeout_ms=1000,
        tail_lines=5,
    )
    assert (result.outcome, result.exit_code) == ("skipped", None)
    assert result.reason is not None and "nothing found" in result.reason


async def test_on_windows_nothing_runs_and_the_result_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    result = await run(tmp_path, "touch ran")
    assert (result.outcome, result.exit_code, result.reason) == ("failed", None, NEEDS_UNIX)
    assert result.tail == (NEEDS_UNIX,)
    assert "WSL" in NEEDS_UNIX
    assert not (tmp_path / "ran").exists()


# ------------------------------------------------------------------------------- tail


# --------------------------------------------------------------------------------- npm


# --------------------------------------------------------------- snapshots, fingerprints

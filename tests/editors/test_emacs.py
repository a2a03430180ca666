"""Emacs 28+ with eglot drives the installed lsp-verify with the file docs/editors.md shows.

The driver (emacs/drive.el) goes through a user's steps in `emacs --batch`: open, M-x
eglot, edit, save, read (flymake-diagnostics), verify.runNow through the server
connection, fix, save, and the lsp-verify-run-now command. These tests judge what it saw.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.editors import harness

EMACS_DIR = harness.HERE / "emacs"


def _emacs(
    tmp_path: Path, settings: dict[str, Any] | None, scenario: str, stdin: bytes | None = None
) -> dict[str, Any]:
    emacs = harness.require("emacs", "emacs-nox")
    ws = harness.workspace(tmp_path, git=True)
    probe = subprocess.run(
        ["timeout", "30", emacs, "--batch", "--eval", "(require 'eglot)"],
        env=ws.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    if probe.returncode != 0:
        reason = "eglot is not installed (apt-get install elpa-eglot, or Emacs 29+)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    argv = [
        emacs,
        "--batch",  # not -Q: Debian's site-start is what puts elpa-eglot on the load-path
        "-l",
        str(EMACS_DIR / "lsp-verify.el"),
        "-l",
        str(EMACS_DIR / "drive.el"),
    ]
    return harness.run_editor(
        argv,
        ws,
        stdin,
        LSP_VERIFY_SETTINGS=json.dumps(settings) if settings else "",
        LSP_VERIFY_SCENARIO=scenario,
    )


def test_save_shows_failure_run_now_returns_record_fix_clears(tmp_path: Path) -> None:
    out = _emacs(tmp_path, {"command": harness.PYTEST_COMMAND}, "full")
    assert out["ok"] is True, out.get("error")
    assert out["managed:tests/test_calc.py"] is True, out["_output"]
    harness.check_failing_save(out["after_failing_save"], "line")
    # What flymake shows is eglot's "source [code]: message" around the server's message.
    assert all(d["text"].startswith("verify") for d in out["after_failing_save"])
    harness.check_failed_run(out["run_now"])
    assert out["cleared"] is True, out["after_fix"]
    assert out["after_fix"] == []
    harness.check_command_messages(out["command_failed"], out["command_passed"])


def test_batch_question_is_declined_not_failed(tmp_path: Path) -> None:
    # No command in the settings: the detected `pytest -x -q` is the repository's choice,
    # so the server asks first; in --batch the file's handler answers no instead of failing.
    out = _emacs(tmp_path, None, "declined")
    assert out["ok"] is True, out.get("error")
    record = out["run_now"]
    assert record["outcome"] == "declined", record
    assert record["source"] == "detected", record
    assert record["command"] == "pytest -x -q", record
    # eglot 1.9 declares no window.showMessage; it is asked all the same, and in --batch the
    # file answers null: the file gets one warning that names what did not run and the
    # command that approves it.
    [warning] = out["diagnostics"]
    assert warning["source"] == "verify", warning
    assert "`pytest -x -q`" in warning["message"] and "lsp-verify approve" in warning["message"]


def test_the_question_in_the_minibuffer_always_runs_and_stores(tmp_path: Path) -> None:
    """eglot 1.9 declares no window.showMessage but answers window/showMessageRequest in the
    minibuffer: the question reaches it, "Always for this plan" runs the command and stores
    the approval, and the next run does not ask again."""
    out = _emacs(tmp_path, None, "approve", stdin=b"Always for this plan\n")
    assert out["ok"] is True, out.get("error")
    assert "verify wants to run a command from this repository" in out["_output"]
    record = out["run_now"]
    assert record["outcome"] == "failed", record  # it ran: the demo's test fails
    assert record["command"].startswith("pytest -x -q"), record
    again = out["run_again"]
    assert again["outcome"] == "failed" and again["startedAt"] != record["startedAt"], again
    assert out["_output"].count("verify wants to run a command") == 1

"""A matcher that raises, in a real run: said in the record, the log line and the server's log,
and under `lsp-verify check`'s verdict; a run without matcher errors says nothing of them."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_verify import problems as problems_module
from lsp_verify.config.settings import Settings
from lsp_verify.planning.plan import Plan
from lsp_verify.problems import (
    PytestMatcher,
)
from lsp_verify.record import log_line
from lsp_verify.running.execute import execute_plan
from tests.support.problems import (
    make_files,
)
from tests.support.stdio import server_env


def a_plan(folder: Path, command: str) -> Plan:
    return Plan(str(folder), "settings", None, command, "test", None, None, (command,))


@pytest.mark.skipif(sys.platform == "win32", reason="runs a command")
async def test_a_broken_matcher_is_said_in_the_record_the_log_line_and_the_server_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A matcher that raises means "no located problems" in silence, unless it is said.
    make_files(tmp_path, "test_a.py")

    def explode(self: object, line: str) -> bool:
        raise RuntimeError("matcher bug")

    monkeypatch.setattr(PytestMatcher, "take", explode)
    monkeypatch.setattr(problems_module, "_logged", set())
    plan = a_plan(tmp_path, "echo one; echo two; exit 1")
    settings = Settings(failed_first=False)
    with caplog.at_level(logging.ERROR, logger="lsp_verify.problems"):
        first = await execute_plan(plan, settings, trigger="cli")
        second = await execute_plan(plan, settings, trigger="cli")
    assert first.outcome == "failed"
    assert first.matcher_errors == 1  # not fed again once it failed
    assert first.to_json()["matcherErrors"] == 1
    assert log_line(first).endswith(
        " (a problem matcher failed once: located problems may be missing)"
    )
    # The traceback, once: the second run's failure is counted, not logged again.
    assert second.matcher_errors == 1
    logged = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(logged) == 1
    assert "PytestMatcher" in logged[0].getMessage()
    assert logged[0].exc_info is not None and "matcher bug" in str(logged[0].exc_info[1])


# `check` with the pytest matcher broken: a process of its own, since `check` claims the
# children of the process it runs in.
BROKEN_CHECK = """
import sys
from lsp_verify.cli import main
from lsp_verify.problems import PytestMatcher

def explode(self, line):
    raise RuntimeError("matcher bug")

PytestMatcher.take = explode
sys.exit(main(["check", sys.argv[1], "--command", "echo one; exit 1", "--no-failed-first"]))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="runs a command")
def test_check_says_a_broken_matcher_under_its_verdict(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", BROKEN_CHECK, str(folder)],
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("verify failed (exit 1)")
    assert lines[1] == "lsp-verify: a problem matcher failed once: located problems may be missing"
    # The traceback is in the log (stderr), once.
    assert done.stderr.count("problem matcher PytestMatcher failed") == 1
    assert "RuntimeError: matcher bug" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="runs a command")
async def test_a_run_without_matcher_errors_says_nothing_of_them(tmp_path: Path) -> None:
    record = await execute_plan(
        a_plan(tmp_path, "exit 1"), Settings(failed_first=False), trigger="cli"
    )
    assert (record.outcome, record.matcher_errors) == ("failed", 0)
    assert record.to_json()["matcherErrors"] == 0
    assert "problem matcher" not in log_line(record)

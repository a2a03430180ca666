"""ProblemCollector's robustness and bounds: a matcher that raises, odd and arbitrary input,
time linear in the output's length, state bounded whatever the output."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_verify import problems as problems_module
from lsp_verify.config.settings import Settings
from lsp_verify.planning.plan import Plan
from lsp_verify.problems import (
    ProblemCollector,
    PytestMatcher,
    RustMatcher,
    TracebackMatcher,
)
from lsp_verify.problems.base import Problem
from lsp_verify.problems.matcher import MAX_LINE
from lsp_verify.record import log_line
from lsp_verify.running.execute import execute_plan
from tests.cases.problems_cases import FIXTURES
from tests.support.lsp_session import server_env
from tests.test_problems import make_files, run, where

# -- the collector: robustness -------------------------------------------------------------


def test_a_matcher_that_raises_loses_nothing_of_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_files(tmp_path, "a.py", "b.ts")

    def explode(self: object, line: str) -> bool:
        raise RuntimeError("matcher bug")

    monkeypatch.setattr(PytestMatcher, "take", explode)
    monkeypatch.setattr(RustMatcher, "flush", lambda self: 1 / 0)
    text = "a.py:1: error: from gcc\nb.ts(2,3): error TS2322: from tsc"
    problems, collector = run(tmp_path, text)
    assert where(problems) == [("a.py", 1, 1), ("b.ts", 2, 3)]
    assert collector.errors == 2


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


def test_the_collector_never_raises_on_odd_input(tmp_path: Path) -> None:
    collector = ProblemCollector(str(tmp_path / "does-not-exist"))
    for line in ["\x00:1: error: nul", "a" * 10_000_000, "\udcff:1:1: x", "9" * 5000 + ":1: e"]:
        collector.feed(line)
    collector.feed(123)  # type: ignore[arg-type]
    assert collector.finish() == []
    assert collector.errors == 0


FIXTURE_LINES = sorted(
    {line for path in FIXTURES.rglob("*.txt") for line in path.read_text("utf-8").splitlines()}
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(FIXTURE_LINES),
            st.builds(
                lambda a, b: a + b,
                st.sampled_from(FIXTURE_LINES),
                st.text(alphabet=":()[]'\" 0123456789_=-E>|", max_size=40),
            ),
        ),
        max_size=60,
    )
)
def test_arbitrary_lines_never_raise_and_give_sane_problems(lines: list[str]) -> None:
    root = FIXTURES  # an existing folder with files in it, read only
    collector = ProblemCollector(str(root))
    for line in lines:
        collector.feed(line)
    problems = collector.finish()
    assert collector.errors == 0
    assert len(problems) <= 200
    for problem in problems:
        assert problem.line >= 1 and problem.column >= 1
        assert not os.path.isabs(problem.path) and ".." not in problem.path.split("/")
        assert (root / problem.path).is_file()


PATHOLOGICAL = [
    "a:",
    "(",
    "((((a)))",
    "1:",
    " ",
    "_ ",
    "E ",
    "'",
    "-",
    "a(1,1): error TS1: ",
    ' File "',
]
PREFIXES = ["", "thread 'x' panicked at ", '  File "', "E   ", " --> ", "FAIL  a > ", "  at "]


# CPU seconds, never reached: a hang guard. One line of 5 MB costs about 0.1 ms here.
HANG_GUARD = 20.0
# Lines 4 times as long cost 1 to 2.8 times as much here (each line has a fixed cost); a
# matcher quadratic in the line's length would make it 16 times.
LINEAR_RATIO = 8.0


def _cost(root: Path, line: str, count: int) -> tuple[float, list[Problem]]:
    """The least CPU time of this process that collecting `count` times `line` took in three
    tries (other processes on a loaded machine lengthen the wall clock, not this), and the
    problems found."""
    best, problems = float("inf"), []
    for _ in range(3):
        started = time.process_time()
        collector = ProblemCollector(str(root))
        for _ in range(count):
            collector.feed(line)
        problems = collector.finish()
        best = min(best, time.process_time() - started)
    return best, problems


def linear_problems(root: Path, line: str) -> list[Problem]:
    """The problems in 256 times `line`, a line a matcher examines whole, once it is shown
    that they cost time linear in the line's length, not quadratic: against a quarter of it."""
    long, problems = _cost(root, line, 256)
    short = _cost(root, line[: len(line) // 4], 256)[0]
    assert long < LINEAR_RATIO * short, (line[:40], long, short)
    return problems


@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_pathological_input_costs_time_linear_in_its_length(unit: str, tmp_path: Path) -> None:
    size = 5 * 1024 * 1024
    for prefix in PREFIXES:
        # One line of 5 MB: only its first MAX_LINE characters are examined.
        text = prefix + unit * (size // len(unit))
        assert _cost(tmp_path, text, 1)[0] < HANG_GUARD, (prefix, unit)
        # A megabyte as lines of the longest length a matcher examines.
        linear_problems(tmp_path, (prefix + unit * MAX_LINE)[:MAX_LINE])


def _state_size(matcher: object) -> int:
    """Characters held in a matcher's containers, a stand-in for its memory."""
    total = 0
    seen: list[object] = [vars(matcher)]
    while seen:
        item = seen.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            seen += list(item.values())
        elif isinstance(item, (list, tuple)):
            seen += list(item)
        elif hasattr(item, "__dict__") and not callable(item):
            seen.append(vars(item))
        elif hasattr(item, "__slots__"):
            seen += [getattr(item, name, None) for name in item.__slots__]
    return total


def test_state_stays_bounded_whatever_the_output() -> None:
    matcher = TracebackMatcher()
    matcher.feed("Traceback (most recent call last):")
    for n in range(1, 20_001):
        matcher.feed(f'  File "{"d" * 3000}/deep.py", line {n}, in f')
        matcher.feed("    f()")
        if n % 2000 == 0:
            assert _state_size(matcher) < 10_000
    matcher.feed("RecursionError: maximum recursion depth exceeded")
    (problem,) = matcher.finish()
    assert problem.line == 20_000

    pytest_matcher = PytestMatcher()
    pytest_matcher.feed(
        "=================================== FAILURES ==================================="
    )
    for n in range(1000):
        pytest_matcher.feed(f"______ test_{n} ______")
        for depth in range(20):
            pytest_matcher.feed(f"{'p' * 3000}/t.py:{depth + 1}: in test_{n}")
            pytest_matcher.feed("E   " + "x" * 3000)
    # Records wait for the summary: at most 300, each with a message's worth of text.
    assert _state_size(pytest_matcher) < 300 * 6_000
    for n in range(1000):
        pytest_matcher.feed(f"FAILED t.py::test_{n} - " + "m" * 3000)
    assert _state_size(pytest_matcher) < 300 * 6_000 + 500 * 1_100
    assert len(pytest_matcher.finish()) <= 300 + 500

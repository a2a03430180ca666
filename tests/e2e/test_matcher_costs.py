"""The matchers' cost on hostile output: time linear in the output's length whatever it holds,
near matches included, and state bounded however long a block goes on.

Pure functions, but each test feeds megabytes and times them (about 8 s of CPU in all): kept
out of tests/unit so that `pytest -m unit` stays a quick loop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsp_verify.problems import (
    LineSink,
    PytestMatcher,
    TracebackMatcher,
)
from lsp_verify.problems.deno import DenoTestMatcher
from lsp_verify.problems.exunit import ExUnitMatcher
from lsp_verify.problems.matcher import MAX_LINE
from lsp_verify.problems.node import (
    AvaMatcher,
    BiomeMatcher,
    EslintMatcher,
    MochaMatcher,
    NodeStackMatcher,
    NodeTestMatcher,
    TapMatcher,
)
from lsp_verify.problems.ruby import RubyTestMatcher
from lsp_verify.problems.zig import ZigTestMatcher
from tests.support.problems import cost, linear_problems, state_size

PATHOLOGICAL_PREFIXES = [
    "  ",
    "    ",
    "\t/",
    "panic: ",
    "make: *** [",
    "make[1]: Entering directory '",
    "x: y.c:1: ",
    "FAIL: t (",
    'File "',
    "  /a.py:1:1 - ",
    "error: '",
    "** (",
    "  1) Failure:",
    "    at file://",
]


UNITS = ["a:", ":1", "(", "` ", "' failed.", " - error: ", "*", "="]


@pytest.mark.parametrize("prefix", PATHOLOGICAL_PREFIXES)
def test_near_matches_stay_linear(prefix: str, tmp_path: Path) -> None:
    for unit in UNITS:
        assert linear_problems(tmp_path, (prefix + unit * MAX_LINE)[:MAX_LINE]) == []


MATCHERS = (
    MochaMatcher,
    NodeTestMatcher,
    TapMatcher,
    AvaMatcher,
    NodeStackMatcher,
    EslintMatcher,
    BiomeMatcher,
    DenoTestMatcher,
    ExUnitMatcher,
    RubyTestMatcher,
    ZigTestMatcher,
)


OPENINGS = {
    MochaMatcher: ["  1 failing", "  1) t:", "     Error: x"],
    NodeTestMatcher: ["\u2716 t (1ms)", "  Error: x"],
    TapMatcher: ["not ok 1 - t", "  ---", "  at:"],
    AvaMatcher: ["  \u2500", "", "  t", "  Error: x"],
    NodeStackMatcher: ["Error: x"],
    EslintMatcher: ["src/lint.js"],
    BiomeMatcher: ["src/lint.js:1:2 lint/x ━━"],
    DenoTestMatcher: [" ERRORS ", "t => ./a.ts:1:1", "error: Error: x"],
    ExUnitMatcher: ["  1) test t (M)", "     test/a_test.exs:1", "     ** (E) x"],
    RubyTestMatcher: ["  1) Error:", "T#test_x:", "E: x"],
    ZigTestMatcher: ["error: 'a.test.x' failed:", "       x"],
}


@pytest.mark.parametrize("family", MATCHERS, ids=lambda family: family.__name__)
def test_state_stays_bounded_and_matching_linear(family: type[LineSink]) -> None:
    sink = family()
    for line in OPENINGS[family]:
        sink.feed(line)
    started = time.perf_counter()
    for n in range(20_000):
        sink.feed(f"      at f{n} ({'d' * 3000}/x.js:{n + 1}:1)")
        sink.feed("  " + "m" * 3000 + (" (" * 500))
        sink.feed(f"    key{n}: {'v' * 3000}")
        if n % 5000 == 0:
            assert state_size(sink) < 400_000
    long = ("  at (" + "a:1:" * MAX_LINE)[:MAX_LINE]
    for _ in range(1000):
        sink.feed(long)
    assert time.perf_counter() - started < 10
    assert len(sink.finish()) <= 1


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


@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_pathological_input_costs_time_linear_in_its_length(unit: str, tmp_path: Path) -> None:
    size = 5 * 1024 * 1024
    for prefix in PREFIXES:
        # One line of 5 MB: only its first MAX_LINE characters are examined.
        text = prefix + unit * (size // len(unit))
        assert cost(tmp_path, text, 1)[0] < HANG_GUARD, (prefix, unit)
        # A megabyte as lines of the longest length a matcher examines.
        linear_problems(tmp_path, (prefix + unit * MAX_LINE)[:MAX_LINE])


def test_state_stays_bounded_whatever_the_output() -> None:
    matcher = TracebackMatcher()
    matcher.feed("Traceback (most recent call last):")
    for n in range(1, 20_001):
        matcher.feed(f'  File "{"d" * 3000}/deep.py", line {n}, in f')
        matcher.feed("    f()")
        if n % 2000 == 0:
            assert state_size(matcher) < 10_000
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
    assert state_size(pytest_matcher) < 300 * 6_000
    for n in range(1000):
        pytest_matcher.feed(f"FAILED t.py::test_{n} - " + "m" * 3000)
    assert state_size(pytest_matcher) < 300 * 6_000 + 500 * 1_100
    assert len(pytest_matcher.finish()) <= 300 + 500

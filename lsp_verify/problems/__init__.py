"""Problem matchers: a run's output lines -> located problems.

`ProblemCollector` is the `LineSink` the runner feeds. It hands every line to the family
matchers, most specific first, and resolves what they report against the workspace folder.

Which matcher wins a line: the matchers are asked in a fixed order, pytest, jest/vitest,
the Node runners and linters (mocha, node --test, TAP, ava, ESLint, Biome; `node.py`),
rustc/cargo, tsc, then the families of `REST_FAMILIES` (deno test, ExUnit, minitest,
test-unit and RSpec, zig test, unittest, doctest, pyright, go test, Python traceback, C
assert, make), a bare Node stack, then the generic `path:line[:col]:`
matcher. A matcher that recognises a line as part of a block it is reading (a pytest
failure section, a rustc diagnostic, a traceback) claims it, and the matchers after it never
see that line. So pytest's `tests/test_a.py:8: AssertionError`, or the native traceback it
prints with `--tb=native`, give only the pytest problem, never a second one from the
traceback or the generic matcher at another column; a mocha or ava failure's `at` frames give
only that runner's problem, never a second one from the bare Node stack. Lines nobody claims
reach every matcher, so mixed output (`mypy . && pytest`) gives the problems of both tools.

Resolution at the collector: a path relative to the folder or absolute (also `./x`) must name
an existing file inside the folder, else the problem is dropped and counted in `dropped`;
related locations outside are removed and the problem kept. Paths come out relative to the
folder, POSIX. Duplicates (same path, line, column, message) are kept once, the order is that
of first appearance in the output, and at most `limit` problems are returned. Positions are
1-based; `end_column`, where a tool gives one, is exclusive (LSP's convention, plus one).
"""

from __future__ import annotations

import heapq
import logging
from dataclasses import replace
from typing import Callable

from .base import LineSink, NullSink, Problem, Related
from .cassert import AssertMatcher
from .deno import DenoTestMatcher
from .exunit import ExUnitMatcher
from .gcc import GccMatcher
from .gotest import GoTestMatcher
from .jest import JestMatcher
from .locate import FolderLocator
from .make import MakeMatcher
from .matcher import MAX_LINE, Matcher
from .node import node_matchers
from .pydoctest import DoctestMatcher
from .pyright import PyrightMatcher
from .pytest import PytestMatcher
from .pytraceback import TracebackMatcher
from .pyunittest import UnittestMatcher
from .ruby import RubyTestMatcher
from .rust import RustMatcher
from .tsc import TscMatcher
from .zig import ZigTestMatcher

# Deno, Elixir, Ruby, Zig, Python, Go, C and make families, asked after tsc and before the
# generic matcher.
REST_FAMILIES: tuple[type[Matcher], ...] = (
    DenoTestMatcher,
    ExUnitMatcher,
    RubyTestMatcher,
    ZigTestMatcher,
    UnittestMatcher,
    DoctestMatcher,
    PyrightMatcher,
    GoTestMatcher,
    TracebackMatcher,
    AssertMatcher,
    MakeMatcher,
)

__all__ = [
    "AssertMatcher",
    "DoctestMatcher",
    "GccMatcher",
    "GoTestMatcher",
    "JestMatcher",
    "LineSink",
    "MakeMatcher",
    "NullSink",
    "Problem",
    "ProblemCollector",
    "PyrightMatcher",
    "PytestMatcher",
    "Related",
    "RustMatcher",
    "TracebackMatcher",
    "TscMatcher",
    "UnittestMatcher",
    "make_sink",
]

DEFAULT_LIMIT = 200

log = logging.getLogger(__name__)
# Where a failure was logged with its traceback already: each once per process, since a
# broken matcher fails the same way on every run.
_logged: set[str] = set()


def _log_failure(where: str) -> None:
    """Called in an `except` block: the traceback, at error level, the first time only."""
    if where not in _logged:
        _logged.add(where)
        log.error(
            "problem matcher %s failed; its located problems are missing from this run and "
            "from later ones (logged once)",
            where,
            exc_info=True,
        )


class ProblemCollector:
    """Feeds every family matcher and resolves their problems against `folder`.

    Never raises: a matcher that fails is counted in `errors` and not fed again; what it and
    the others reported before is kept. Counters: `dropped` (paths outside the folder or
    missing), `duplicates`, `over_limit` (problems past `limit`), and `errors`, which the
    record (`matcherErrors`) and the run's log line carry: a broken matcher must not read as
    "nothing located". The first traceback of each matcher is logged at error level.
    """

    def __init__(
        self,
        folder: str,
        limit: int = DEFAULT_LIMIT,
        on_problem: Callable[[Problem], None] | None = None,
    ) -> None:
        self.folder = folder
        # Told of each problem as it is kept, while the run goes (streaming to the editor).
        self.on_problem = on_problem
        self.limit = max(int(limit), 0)
        self.dropped = 0
        self.duplicates = 0
        self.over_limit = 0
        self.errors = 0
        self._index = 0
        self._result: list[Problem] | None = None
        self._locator = FolderLocator(folder)
        # Made at the first line: a run that prints nothing never pays for them, and one that
        # does pays while its command runs rather than before it starts.
        self._matchers: list[Matcher] = []
        self._broken: set[int] = set()
        # Max-heap on (start, arrival) keeping the `limit` earliest problems, bounded memory.
        self._heap: list[tuple[int, int, tuple[str, int, int, str], Problem]] = []
        self._keys: dict[tuple[str, int, int, str], int] = {}
        self._arrival = 0

    def feed(self, line: str) -> None:
        if self._result is not None:
            return
        try:
            if not self._matchers:
                self._matchers = [
                    PytestMatcher(self._locator),
                    JestMatcher(self._locator),
                    *node_matchers(self._locator, runners=True),
                    RustMatcher(self._locator),
                    TscMatcher(self._locator),
                    *(family(self._locator) for family in REST_FAMILIES),
                    *node_matchers(self._locator, runners=False),
                    GccMatcher(self._locator),
                ]
            self._feed(line)
        except Exception:
            self._failed("collector")

    def finish(self) -> list[Problem]:
        if self._result is not None:
            return list(self._result)
        for position, matcher in enumerate(self._matchers):
            try:
                matcher.index = self._index
                matcher.flush()
            except Exception:
                self._failed(type(matcher).__name__)
                self._broken.add(position)
            self._drain(matcher)
        entries = sorted(self._heap, key=lambda entry: (-entry[0], -entry[1]))
        self._result = [entry[3] for entry in entries]
        self._heap = []
        self._keys = {}
        return list(self._result)

    def _feed(self, line: str) -> None:
        if not isinstance(line, str):
            line = str(line)
        line = line[:MAX_LINE].rstrip("\r\n")
        index = self._index
        broken = self._broken
        for position, matcher in enumerate(self._matchers):
            if broken and position in broken:
                continue
            claimed = False
            try:
                matcher.index = index
                claimed = matcher.take(line)
            except Exception:
                self._failed(type(matcher).__name__)
                broken.add(position)
            # Most lines give no problem: drain only a matcher that holds one (a line costs
            # every matcher's `take`, so what is around it counts a dozen times over).
            if matcher.holding:
                self._drain(matcher)
            if claimed:
                break
        self._index = index + 1

    def _drain(self, matcher: Matcher) -> None:
        try:
            held = matcher.drain()
        except Exception:
            self._failed(type(matcher).__name__)
            return
        for start, problem in held:
            try:
                self._accept(start, problem)
            except Exception:
                self._failed(f"{type(matcher).__name__} (its problem's resolution)")

    def _failed(self, where: str) -> None:
        self.errors += 1
        _log_failure(where)

    def _accept(self, start: int, problem: Problem) -> None:
        resolved = self._resolve(problem)
        if resolved is None:
            self.dropped += 1
            return
        key = (resolved.path, resolved.line, resolved.column, resolved.message)
        if key in self._keys:
            self.duplicates += 1
            return
        self._arrival += 1
        entry = (-start, -self._arrival, key, resolved)
        if len(self._heap) < self.limit:
            heapq.heappush(self._heap, entry)
            self._keys[key] = start
            if self.on_problem is not None:
                self.on_problem(resolved)
            return
        if not self._heap or entry <= self._heap[0]:
            # Not earlier than the latest problem kept: it is past the limit.
            self.over_limit += 1
            return
        evicted = heapq.heapreplace(self._heap, entry)
        del self._keys[evicted[2]]
        self._keys[key] = start
        self.over_limit += 1

    def _resolve(self, problem: Problem) -> Problem | None:
        path = self._locator.relative(problem.path)
        if path is None:
            return None
        related = []
        for item in problem.related:
            where = self._locator.relative(item.path)
            if where is not None:
                related.append(replace(item, path=where, line=max(item.line, 1)))
        return replace(
            problem,
            path=path,
            line=max(problem.line, 1),
            column=max(problem.column, 1),
            related=tuple(related),
        )


def make_sink(folder: str, on_problem: Callable[[Problem], None] | None = None) -> ProblemCollector:
    """The sink a run of `folder` feeds: every matcher, the default limit of 200; `on_problem`
    hears of each problem as soon as it is kept."""
    return ProblemCollector(folder, on_problem=on_problem)

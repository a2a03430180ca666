"""`node --test --test-reporter spec`: Node's own test runner, its human reporter.

A failed test is `✖ name (1.2ms)`, then, indented deeper, the error's message, its `at`
frames and sometimes the error's properties (`{ code: 'ERR_ASSERTION', … }`). After the run
Node repeats every failure under `✖ failing tests:`, each below a `test at path:line:col`
line: that is the test file (and, when the stack has no project frame, the location). A
suite's own `✖ suite (5ms)` line, with nothing below it, is not a failure of its own. Where a
failure lands: see `nodestack.Frames.place`; message "<name>: <message>", code the name.
"""

from __future__ import annotations

import re

from .matcher import Locator, Matcher, split_location
from .nodestack import Failure, test_problem

_FAILED = re.compile(r"( *)\u2716 (.{1,500}?) \(\d{1,12}(?:\.\d{1,12})?m?s\)$")
_TEST_AT = "test at "


class NodeTestMatcher(Matcher):
    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._block: Failure | None = None
        self._test_at: tuple[str, int, int] | None = None
        self._block_test_at: tuple[str, int, int] | None = None

    def take(self, line: str) -> bool:
        if line.startswith(_TEST_AT):
            self._close()
            self._test_at = split_location(line[len(_TEST_AT) :].strip())
            return self._test_at is not None
        if "\u2716" in line:
            failed = _FAILED.match(line)
            if failed is not None:
                self._close()
                indent = len(failed.group(1))
                self._block = Failure(self.index, failed.group(2), self.locator, indent)
                self._block_test_at, self._test_at = self._test_at, None
                return True
        block = self._block
        if block is None:
            return False
        stripped = line.strip()
        if stripped and len(line) - len(line.lstrip(" ")) <= block.indent:
            self._close()
            return False
        if stripped.startswith("at ") and block.lines:
            block.frame(stripped)
        else:
            block.add(line)
        return True

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None or not any(line.strip() for line in block.lines):
            return
        test_at = self._block_test_at
        place = block.frames.place(test_at[0] if test_at else None)
        if place is None and test_at is not None:
            place = (test_at, ())
        if place is not None:
            self.emit(*test_problem(block.start, block.title, block.lines, place))

    def flush(self) -> None:
        self._close()

"""ava's default reporter: the failure details between two `─` lines.

      ─

      adds

      test/calc.test.js:6

       5: test("adds", (t) => {
       6:   t.is(add(1, 2), 4);

      Difference (- actual, + expected):
      …
      (U+203A) test/calc.test.js:6:5

Each failure starts with the test's title, after the opening `─` or after two blank lines.
`path:line` above the code frame names the test file; ava's own frames, U+203A then
`path:line:col` (a `file:///…` URL for ES modules), and, for a thrown error, the error's `at`
frames say where it failed. Where a failure lands: see `nodestack.Frames.place`; with no
project frame, on the `path:line` above the code frame. Message "<title>: <message>", code
the title.
"""

from __future__ import annotations

import re

from .matcher import Locator, Matcher
from .nodestack import Failure, test_problem

_RULE = "\u2500"
_ARROW = "\u203a "
_SOURCE = re.compile(r"\s*(\S{1,1024}):(\d{1,9})$")
_CODE_FRAME = re.compile(r"\s*\d{1,9}: ")


class _Block(Failure):
    def __init__(self, start: int, title: str, locator: Locator) -> None:
        super().__init__(start, title, locator)
        self.source: tuple[str, int] | None = None  # `path:line` above the code frame


class AvaMatcher(Matcher):
    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._section = False
        self._blanks = 0
        self._block: _Block | None = None

    def take(self, line: str) -> bool:
        stripped = line.strip()
        if stripped == _RULE:
            self._close()
            self._section = not self._section
            self._blanks = 2  # a title comes next
            return True
        if not self._section:
            return False
        if not stripped:
            self._blanks += 1
            return True
        blanks, self._blanks = self._blanks, 0
        if blanks >= 2:
            self._close()
            self._block = _Block(self.index, stripped[:500], self.locator)
            return True
        block = self._block
        if block is None:
            return True
        self._on_line(block, line, stripped)
        return True

    def _on_line(self, block: _Block, line: str, stripped: str) -> None:
        if stripped.startswith(_ARROW):
            block.frame(stripped[len(_ARROW) :].strip(), bare=True)
            return
        if stripped.startswith("at ") and block.lines:
            block.frame(stripped)
            return
        if block.in_frames:
            return
        source = _SOURCE.match(line) if block.source is None and not block.lines else None
        if source is not None:
            block.source = (source.group(1), int(source.group(2)))
        elif not _CODE_FRAME.match(line):
            block.add(line)

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        source = block.source
        place = block.frames.place(source[0] if source else None)
        if place is None and source is not None and self.locator.is_project(source[0]):
            place = ((source[0], source[1], 1), ())
        if place is not None:
            self.emit(*test_problem(block.start, block.title, block.lines, place))

    def flush(self) -> None:
        self._close()
        self._section = False

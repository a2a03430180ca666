"""mocha's failure list, which its spec and dot reporters (and most others) print the same.

After `  3 failing`, one block per failure:

      2) calc
           adds:
          AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
    ...
          at Context.<anonymous> (test/calc.test.js:7:12)

The title runs over lines (suite, then test) up to the one ending in `:`; the message up to
the first `at` frame. Where the failure lands: see `nodestack.Frames.place`. A failure with no
project frame (a timeout) lands on the test's `it(` line in the file mocha names at the end of
the message, `(…/test/x.js)`. Message "<title>: <message>", code the title.
"""

from __future__ import annotations

import re

from .base import Related
from .matcher import Locator, Matcher
from .nodestack import Failure, Frame, test_problem

_FAILING = re.compile(r"\s{0,8}\d{1,9} failing$")
_HEADER = re.compile(r"  (\d{1,9})\) (.*)$")
_MAX_TITLE = 500


class _Block(Failure):
    def __init__(self, start: int, title: str, locator: Locator) -> None:
        super().__init__(start, title, locator)
        self.parts = [title]  # the suites' titles, then the test's
        self.titled = title.endswith(":")
        self.cause = False  # past the frames: `Caused by:` and its frames


class MochaMatcher(Matcher):
    unit = "utf-16"  # V8's stack frames count JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._section = False
        self._block: _Block | None = None
        self._last = 0

    def take(self, line: str) -> bool:
        if not self._section:
            if "failing" in line and _FAILING.match(line):
                self._section = True
                self._last = 0
                return True
            return False
        header = _HEADER.match(line) if line.startswith("  ") else None
        if header is not None and int(header.group(1)) == self._last + 1:
            self._close()
            self._last += 1
            title = header.group(2).strip()[:_MAX_TITLE]
            self._block = _Block(self.index, title, self.locator)
            return True
        block = self._block
        if block is None:
            if line.strip():
                self._section = False
            return bool(not line.strip())
        stripped = line.strip()
        if not block.titled:
            if stripped and len(block.parts) < 20:
                block.parts.append(stripped[:_MAX_TITLE])
            block.titled = stripped.endswith(":")
            return True
        if block.cause:
            pass  # a `Caused by:` error's frames: the failure's own came first
        elif stripped.startswith("at ") and (block.lines or block.in_frames):
            block.frame(stripped)
            return True
        elif not block.in_frames:
            block.add(line)
            return True
        if not stripped or line.startswith("   "):
            block.cause = True
            return True
        # Not indented like a failure and not the next one: the failure list ended.
        self._close()
        self._section = False
        return False

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        block.parts[-1] = block.parts[-1].rstrip(":").strip()
        title = " ".join(block.parts)
        place = block.frames.place()
        if place is None:
            place = self._timeout_place(block, block.parts[-1])
        if place is None:
            return
        self.emit(*test_problem(block.start, title, block.lines, place))

    def _timeout_place(self, block: _Block, name: str) -> tuple[Frame, tuple[Related, ...]] | None:
        text = " ".join(line.strip() for line in block.lines).rstrip()
        if not text.endswith(")") or "(" not in text:
            return None
        path = text[text.rfind("(") + 1 : -1]
        if self.locator.relative(path) is None:
            return None
        starts = tuple(f"it({quote}{name}" for quote in ('"', "'", "`")) if name else ()
        return (path, self.locator.find_line(path, starts) or 1, 1), ()

    def flush(self) -> None:
        self._close()
        self._section = False

"""Python tracebacks printed by anything but pytest (a script, a CLI, a Django check).

`Traceback (most recent call last):`, `  File "x.py", line N, in f` frames, then the exception
line. The problem lands on the deepest frame that is project code, with the exception line as
message and the exception type as code. In a chain ("During handling of the above
exception..."), only the last traceback counts: it is the exception that escaped. A
SyntaxError raised while Python compiles a script has no "Traceback" line, only its
`  File "x.py", line N` frame, and is recognised from that.

A traceback may be indented as a whole (doctest prints it under "Exception raised:"): the
frames are the lines indented deeper than the header, the exception is the first line at the
header's own indentation, and a line indented less ends the traceback without a message.
"""

from __future__ import annotations

import re

from .base import Problem
from .matcher import FramePick, Locator, Matcher

_HEADER = "Traceback (most recent call last):"
_FRAME = re.compile(r'\s+File "([^"]+)", line (\d{1,9})(, in .*)?$')
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_EXC_NAME = re.compile(r"[A-Za-z_][\w.]{0,199}(?=:|$)")
_IDLE, _FRAMES, _AFTER = range(3)


class TracebackMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._state = _IDLE
        self._frames = FramePick(self.locator)
        self._start = 0
        self._indent = 0
        self._syntax_only = False
        self._pending: tuple[int, Problem] | None = None

    def take(self, line: str) -> bool:
        stripped = line.strip()
        if stripped == _HEADER:
            self._begin(syntax_only=False)
            self._indent = _indentation(line)
            return True
        if self._state == _FRAMES:
            return self._in_frames(line)
        if self._state == _AFTER:
            if not stripped:
                return False
            if stripped in _CHAIN:
                # The traceback printed so far was only the cause; the next one escaped.
                self._pending = None
                return True
            self._release()
        # A compile-time SyntaxError prints its frame with no header and no function name.
        if line.startswith("  File "):
            frame = _FRAME.match(line)
            if frame is not None and frame.group(3) is None:
                self._begin(syntax_only=True)
                self._frames.add(frame.group(1), int(frame.group(2)))
                return True
        return False

    def _begin(self, syntax_only: bool) -> None:
        self._release()
        self._state = _FRAMES
        self._frames.clear()
        self._start = self.index
        self._indent = 0
        self._syntax_only = syntax_only

    def _in_frames(self, line: str) -> bool:
        indent = _indentation(line)
        if indent > self._indent:
            frame = _FRAME.match(line)
            if frame is not None:
                self._frames.add(frame.group(1), int(frame.group(2)))
            return True  # frames, their source lines and carets
        if not line.strip() or indent < self._indent:
            self._state = _IDLE  # not a traceback after all
            return False
        self._state = _AFTER
        if self._syntax_only and not _looks_like_syntax_error(line):
            return False
        problem = self._problem(line.strip())
        if problem is not None:
            self._pending = (self._start, problem)
        return True

    def _problem(self, exception: str) -> Problem | None:
        chosen = self._frames.last or self._frames.deepest
        if chosen is None:
            return None
        name = _EXC_NAME.match(exception)
        return Problem(
            path=chosen[0],
            line=chosen[1],
            column=1,
            message=exception,
            code=name.group(0) if name else None,
        )

    def _release(self) -> None:
        if self._pending is not None:
            self.emit(*self._pending)
            self._pending = None
        self._state = _IDLE

    def flush(self) -> None:
        self._release()


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _looks_like_syntax_error(line: str) -> bool:
    name = line.split(":", 1)[0]
    return name.endswith(("SyntaxError", "IndentationError", "TabError"))

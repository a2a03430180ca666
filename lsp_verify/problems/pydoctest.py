"""doctest's report (`python -m doctest x.py`, `doctest.testmod()`): one block per failed
example, between lines of stars.

    **********************************************************************
    File "/repo/pkg/temps.py", line 6, in temps.to_kelvin
    Failed example:
        to_kelvin(-300)
    Exception raised:
        Traceback (most recent call last):
          File "/repo/pkg/temps.py", line 10, in to_kelvin
            raise ValueError("below absolute zero")
        ValueError: below absolute zero

The problem lands on the example's line, named after the doctest (`temps.to_kelvin`), with
the example's source and either Expected/Got or the exception as message. Where the example
raised, the deepest project frame of its (indented) traceback is related. Every line of a
block is claimed: its traceback is not reported a second time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import Problem, Related
from .chain import ChainPick
from .matcher import MAX_MESSAGE_CHARS, Locator, Matcher, clip_message, is_rule, keep_line

_LOCATION = re.compile(r'File "([^"]{1,1024})", line (\d{1,9}), in (\S{1,300})$')
_FRAME = re.compile(r'\s+File "([^"]{1,1024})", line (\d{1,9}), in (.{1,300})$')
_SECTIONS = ("Failed example:", "Expected:", "Got:", "Expected nothing", "Got nothing")
_RAISED = "Exception raised:"


@dataclass
class _Example:
    start: int
    path: str
    line: int
    name: str
    chain: ChainPick
    lines: list[str] = field(default_factory=list)
    raised: bool = False
    trace_indent: int | None = None
    exception: str = ""


class DoctestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._example: _Example | None = None
        self._stars_at = -2  # index of the last line of stars: a block's location follows it

    def take(self, line: str) -> bool:
        if not is_rule(line, "*"):
            return self._line(line)
        self._close()
        self._stars_at = self.index
        return True

    def _line(self, line: str) -> bool:
        if self._stars_at == self.index - 1 and line.startswith('File "'):
            found = _LOCATION.match(line)
            if found is not None:
                path, number, name = found.group(1), int(found.group(2)), found.group(3)
                chain = ChainPick(self.locator, name.rsplit(".", 1)[-1])
                self._example = _Example(self.index, path, number, name, chain)
                return True
        example = self._example
        if example is None:
            return False
        if line.startswith(" ") or line in _SECTIONS or line == _RAISED or not line.strip():
            self._body(example, line)
            return True
        self._close()  # doctest's summary ("2 items had failures:") or other output
        return False

    def _body(self, example: _Example, line: str) -> None:
        if line == _RAISED:
            example.raised = True
            return
        if example.raised:
            self._traceback(example, line)
            return
        if line.strip():
            keep_line(example.lines, line)

    def _traceback(self, example: _Example, line: str) -> None:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        if stripped == "Traceback (most recent call last):":
            example.trace_indent = indent
            return
        if example.trace_indent is None or not stripped:
            return
        if indent > example.trace_indent:
            frame = _FRAME.match(line)
            if frame is not None:
                example.chain.add(frame.group(1), int(frame.group(2)), frame.group(3))
        elif not example.exception:
            example.exception = stripped[:MAX_MESSAGE_CHARS]

    def _close(self) -> None:
        example, self._example = self._example, None
        if example is None:
            return
        lines = list(example.lines)
        if lines and lines[0] == "Failed example:":
            lines = lines[1:]
        if example.exception:
            lines.append(example.exception)
        if lines:
            lines[0] = lines[0].strip()
        message = f"{example.name}: {clip_message(lines) or 'failed'}"
        related: tuple[Related, ...] = ()
        raised = example.chain.last
        if raised is not None and raised != (example.path, example.line):
            related = (Related(path=raised[0], line=raised[1], column=1, message="raised here"),)
        problem = Problem.at(
            example.path, example.line, 1, message, code=example.name, related=related
        )
        self.emit(example.start, problem)

    def flush(self) -> None:
        self._close()

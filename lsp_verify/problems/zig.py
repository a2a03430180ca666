"""`zig build test` and `zig test`: a failed test, its message, and its stack trace.

    error: 'calc.test.adds' failed:
           expected 4, found 3
           /zig/lib/std/testing.zig:93:17: 0x124eaf4 in expectEqualInner (std.zig)
                           return error.TestExpectedEqual;
                           ^
           /abs/src/calc.zig:13:5: 0x124ebc2 in test.adds (calc.zig)

The frames come innermost first, each with its source line and a caret. The failing test is
the diagnostic, at the frame of the function `test.<name>`, and the deepest project frame is
related (see `chain.py`); frames of Zig's own library are outside the folder and never a
location. A test with no frame in the folder gives no problem. (Compile errors, `src/x.zig:3:5:
error: ...`, are the generic `path:line:col:` matcher's.)
"""

from __future__ import annotations

import re

from .chain import ChainPick
from .matcher import Locator, Matcher, clip_message, keep_line

_HEADER = re.compile(r"error: '(?P<name>[^']{1,500})' failed:(?: (?P<msg>.*))?$")
_FRAME = re.compile(
    r"\s{0,16}(?P<path>[^\s:][^:]{0,1023}\.zig):(?P<line>\d{1,9}):(?P<col>\d{1,9}): "
    r"0x[0-9a-f]{1,16} in (?P<fn>[^()]{1,300}) \([^()]{0,200}\)$"
)
# The start or the end of a frame line whose other piece was printed elsewhere (see
# ZigTestMatcher).
_FRAME_START = re.compile(r"\S{1,1024}\.zig:\d{1,9}:\d{1,9}: ")
_FRAME_END = re.compile(r" in [^()]{1,300} \([^()]{0,200}\.zig\)$")


MAX_TESTS = 200
MAX_FRAMES = 64

Frame = tuple[str, int, str]


class _Block:
    def __init__(self, start: int, name: str, function: str) -> None:
        self.start = start
        self.name = name
        self.function = function
        self.lines: list[str] = []
        self.helpers: list[Frame] = []  # frames inside the test's call, innermost first
        self.own: list[Frame] = []  # the test's own frame (printed once, or in pieces)


class ZigTestMatcher(Matcher):
    """The failures of one build are held until their run of indented lines ends, because the
    build runner can print a test's output in pieces, out of order (seen under load): a piece
    of the next test's report between two of another's, or the end of a test's stack trace at
    column 0 before its header. So each frame goes to the test its own chain names: a chain
    comes innermost first and ends at the test's frame, `test.<name>`; the frames before it
    belong to that test, wherever they are printed."""

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._tests: dict[str, _Block] = {}  # by the test's frame function, `test.<name>`
        self._current: _Block | None = None
        self._pending: list[Frame] = []  # frames before their test's frame
        self._early: dict[str, tuple[list[Frame], list[Frame]]] = {}  # before their header
        self._framed = False  # a frame came since the last header

    def take(self, line: str) -> bool:
        header = _HEADER.match(line) if line.startswith("error: '") else None
        if header is not None:
            return self._header(header.group("name"), header.group("msg"))
        frame = _FRAME.match(line) if ".zig:" in line else None
        if frame is not None and (self._tests or " in test." in line):
            self._framed = True
            self._frame((frame.group("path"), int(frame.group("line")), frame.group("fn")))
            return True
        if not self._tests:
            return False
        if not line.startswith(" "):
            self._finish()
            return False
        current = self._current
        stripped = line.strip()
        if (
            current is None
            or self._framed
            or not stripped
            or _FRAME_END.search(stripped)
            or _FRAME_START.match(stripped)
        ):
            return True  # a frame's source line and caret, or a piece of a frame
        if not stripped.strip("^~"):
            if current.lines:
                current.lines.pop()  # a source line and its caret, not the message
        else:
            keep_line(current.lines, stripped)
        return True

    def _header(self, name: str, message: str | None) -> bool:
        function = "test." + name.split(".test.", 1)[-1]
        block = self._tests.get(function)
        if block is None:
            block = _Block(self.index, name, function)
            if function in self._early:
                block.helpers, block.own = self._early.pop(function)
            if len(self._tests) < MAX_TESTS:
                self._tests[function] = block
        if message:
            keep_line(block.lines, message)
        self._current = block
        self._framed = False
        return True

    def _frame(self, frame: Frame) -> None:
        function = frame[2].strip()
        if not function.startswith("test."):
            if len(self._pending) < MAX_FRAMES:
                self._pending.append(frame)
            return
        helpers, self._pending = self._pending, []
        owner = self._tests.get(function)
        if owner is not None:
            owner.helpers[len(owner.helpers) :] = helpers[: MAX_FRAMES - len(owner.helpers)]
            if len(owner.own) < MAX_FRAMES:
                owner.own.append(frame)
        elif len(self._early) < MAX_TESTS:
            early = self._early.setdefault(function, ([], []))
            early[0].extend(helpers[: MAX_FRAMES - len(early[0])])
            if len(early[1]) < MAX_FRAMES:
                early[1].append(frame)

    def _finish(self) -> None:
        tests, self._tests = self._tests, {}
        if self._current is not None:
            self._current.helpers.extend(self._pending[:MAX_FRAMES])
        self._pending = []
        self._early = {}
        self._current = None
        for block in tests.values():
            chain = ChainPick(self.locator, block.function, innermost_first=True)
            for path, line, function in (*block.helpers, *block.own):
                chain.add(path, line, function.strip())
            message = f"{block.name}: {clip_message(block.lines) or 'failed'}"
            problem = chain.problem(message, block.name)
            if problem is not None:
                self.emit(block.start, problem)

    def flush(self) -> None:
        self._finish()

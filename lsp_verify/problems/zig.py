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
    r"\s{1,16}(?P<path>[^\s:][^:]{0,1023}\.zig):(?P<line>\d{1,9}):(?P<col>\d{1,9}): "
    r"0x[0-9a-f]{1,16} in (?P<fn>[^()]{1,300}) \([^()]{0,200}\)$"
)


class _Block:
    def __init__(self, start: int, name: str, chain: ChainPick) -> None:
        self.start = start
        self.name = name
        self.chain = chain
        self.lines: list[str] = []
        self.frames = False


class ZigTestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._block: _Block | None = None

    def take(self, line: str) -> bool:
        header = _HEADER.match(line) if line.startswith("error: '") else None
        if header is not None:
            self._close()
            name = header.group("name")
            # The test's frame is the function `test.<its name>`, its module's path left out.
            test = "test." + name.split(".test.", 1)[-1]
            self._block = _Block(self.index, name, ChainPick(self.locator, test, True))
            if header.group("msg"):
                keep_line(self._block.lines, header.group("msg"))
            return True
        block = self._block
        if block is None:
            return False
        if not line.startswith(" "):
            self._close()
            return False
        frame = _FRAME.match(line) if ".zig:" in line else None
        if frame is not None:
            block.frames = True
            block.chain.add(frame.group("path"), int(frame.group("line")), frame.group("fn"))
            return True
        if not block.frames and line.strip():
            keep_line(block.lines, line.strip())
        return True  # a frame's source line and caret

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        message = f"{block.name}: {clip_message(block.lines) or 'failed'}"
        problem = block.chain.problem(message, block.name)
        if problem is not None:
            self.emit(block.start, problem)

    def flush(self) -> None:
        self._close()

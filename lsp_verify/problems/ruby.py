"""Ruby's test runners: minitest, test-unit and RSpec.

minitest (`rake test`) numbers each failure and names where an assertion failed; an error
has a backtrace, innermost frame first:

      1) Failure:
    CalcTest#test_adds [/abs/test/test_calc.rb:6]:
    Expected: 4
      Actual: 3

      2) Error:
    CalcTest#test_boom:
    ArgumentError: bad value 5
        /abs/lib/calc.rb:7:in `boom'
        /abs/test/test_calc.rb:14:in `test_boom'

test-unit prints `Failure: test_adds(CalcTest)` or `Error: test_x(CalcTest): Error: msg`,
then the frames at column 0 and a few lines of source; RSpec prints `  1) Calc adds`, its
message, and `# ./spec/calc_spec.rb:5:in ...` frames. In each, the failing test is the
diagnostic (the frame of the test's method, else the outermost project frame) and the
deepest project frame is related (see `chain.py`); frames in installed gems or Ruby itself
are outside the folder or under vendor/, and never a location.
"""

from __future__ import annotations

import re

from .base import Problem
from .chain import ChainPick
from .matcher import Locator, Matcher, clip_message, keep_line

# `path:LINE:in `method'` (Ruby < 3.4) or `path:LINE:in 'Class#method'` (3.4), maybe `# `.
_FRAME = re.compile(
    r"(?:\s{0,12}# |\s{0,12})(?P<path>[^\s:#][^\s:]{0,1023}\.rb):(?P<line>\d{1,9})"
    r":in [`'](?P<fn>[^`']{0,300})'"
)
_MINI_HEAD = re.compile(r"\s{1,6}\d{1,6}\) (?P<kind>Failure|Error):$")
_MINI_NAME = re.compile(r"(?P<name>[\w:]{1,300}#\S{1,300}?)(?: \[(?P<where>[^\]]{1,1100})\])?:$")
_UNIT_HEAD = re.compile(
    r"(?P<kind>Failure|Error): (?P<test>[^\s()]{1,300})\((?P<cls>[\w:]{1,300})\)(?:: (?P<msg>.*))?$"
)
_UNIT_SOURCE = re.compile(r"\s{2,12}(?:=> )?\d{1,9}: ")
_RSPEC_HEAD = re.compile(r"\s{2}(?P<n>\d{1,6})\) (?P<name>.{1,500})$")
_RULE = "=" * 40


class _Block:
    def __init__(self, start: int, name: str, test: str, chain: ChainPick) -> None:
        self.start = start
        self.name = name
        self.chain = chain
        self.test = test
        self.lines: list[str] = []
        self.where: tuple[str, int] | None = None


class RubyTestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._block: _Block | None = None
        self._style = ""  # minitest, test-unit or rspec: how the open block ends
        self._minitest_head = False
        self._rspec_failures = False

    def take(self, line: str) -> bool:
        block = self._block
        if self._minitest_head:
            self._minitest_head = False
            found = _MINI_NAME.match(line)
            if found is not None:
                name = found.group("name")
                self._open(name, name.rsplit("#", 1)[-1], "minitest")
                where = found.group("where")
                if where:
                    assert self._block is not None
                    self._block.where = _split(where)
                return True
        if _MINI_HEAD.match(line):
            self._close()
            self._minitest_head = True
            return True
        unit = _UNIT_HEAD.match(line) if line.startswith(("Failure: ", "Error: ")) else None
        if unit is not None:
            self._close()
            name = f"{unit.group('cls')}#{unit.group('test')}"
            self._open(name, unit.group("test"), "test-unit")
            if unit.group("msg"):
                keep_line(self._lines(), unit.group("msg"))
            return True
        if line == "Failures:":
            self._rspec_failures = True
            return False
        if self._rspec_failures:
            head = _RSPEC_HEAD.match(line)
            if head is not None:
                self._close()
                # No method to name: the outermost project frame is the example's line.
                self._open(head.group("name"), "<example>", "rspec")
                return True
            if line.startswith(("Finished in ", "Failed examples:")):
                self._close()
                self._rspec_failures = False
                return False
        if block is None:
            return False
        return self._in_block(block, line)

    def _lines(self) -> list[str]:
        assert self._block is not None
        return self._block.lines

    def _open(self, name: str, test: str, style: str) -> None:
        chain = ChainPick(self.locator, test, innermost_first=True)
        self._block = _Block(self.index, name, test, chain)
        self._style = style

    def _in_block(self, block: _Block, line: str) -> bool:
        frame = _FRAME.match(line)
        if frame is not None:
            block.chain.add(frame.group("path"), int(frame.group("line")), frame.group("fn"))
            return True
        style = self._style
        if style == "test-unit":
            if line.startswith(_RULE):
                self._close()
                return True
            if not _UNIT_SOURCE.match(line):
                keep_line(block.lines, line)
            return True
        if not line.strip():
            if style == "minitest" and block.lines:
                self._close()
            return style != "minitest" or not block.lines
        keep_line(block.lines, line.strip() if style == "rspec" else line)
        return True

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        lines = [text for text in block.lines if not text.startswith("Failure/Error:")]
        text = clip_message(lines or block.lines) or "failed"
        message = f"{block.name}: {text}"
        if block.where is not None:
            problem: Problem | None = Problem.at(
                block.where[0], block.where[1], 1, message, code=block.name
            )
        else:
            problem = block.chain.problem(message, block.name)
        if problem is not None:
            self.emit(block.start, problem)

    def flush(self) -> None:
        self._close()


def _split(where: str) -> tuple[str, int] | None:
    path, _, line = where.rpartition(":")
    if not path or not line.isdigit() or len(line) > 9:
        return None
    return path, int(line)

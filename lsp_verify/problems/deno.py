"""`deno test`: the ERRORS section, one block per failed test.

    adds => ./tests/calc_test.ts:4:6
    error: AssertionError: Expected values to be strictly equal:
    ...
        at boom (file:///abs/src/calc.ts:7:11)
        at file:///abs/tests/calc_test.ts:13:3

The header names the test and where it is defined; the frames, innermost first, say where it
failed. The failing test is the diagnostic, at its outermost frame in project code (the test's
own line that called), the deepest project frame related (see `chain.py`); with no project
frame it is the test's definition. Frames of Deno itself (`ext:...`, `node:...`) and of
remote modules (`https://...`) are never a location. The FAILURES summary repeats the headers:
they give nothing twice.
"""

from __future__ import annotations

import re

from .base import Problem
from .chain import ChainPick
from .matcher import Locator, Matcher, clip_message, keep_line, split_location

_FRAME_START = re.compile(r"\s{2,12}at ")


class _Block:
    def __init__(self, start: int, name: str, where: tuple[str, int, int], chain: ChainPick):
        self.start = start
        self.name = name
        self.where = where
        self.chain = chain
        self.lines: list[str] = []


class DenoTestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._section = ""  # "ERRORS", "FAILURES" or "" (elsewhere)
        self._block: _Block | None = None

    def take(self, line: str) -> bool:
        stripped = line.strip()
        if stripped in ("ERRORS", "FAILURES"):
            self._close()
            self._section = stripped
            return True
        if not self._section:
            return False
        name, arrow, place = line.rpartition(" => ")
        if arrow and name.strip() and place and " " not in place:
            where = split_location(place)
            self._close()
            if where is not None and self._section == "ERRORS":
                chain = ChainPick(self.locator, "<test>", innermost_first=True)
                self._block = _Block(self.index, name.strip()[:500], where, chain)
            return True
        if self._section == "FAILURES":
            if stripped.startswith(("FAILED |", "ok |")):
                self._section = ""
            return False
        block = self._block
        if block is None:
            return False
        if _FRAME_START.match(line):
            found = _frame_location(line)
            if found is not None:
                block.chain.add(found[0], found[1])
            return True
        if stripped and not stripped.strip("^~"):
            if block.lines:
                block.lines.pop()  # a caret under the source line: both are noise here
        elif stripped:
            keep_line(block.lines, line.removeprefix("error: "))
        return True

    def _close(self) -> None:
        block, self._block = self._block, None
        if block is None:
            return
        message = f"{block.name}: {clip_message(block.lines) or 'failed'}"
        problem = block.chain.problem(message, block.name)
        if problem is None:
            path, line, column = block.where
            problem = Problem.at(path, line, column, message, code=block.name)
        self.emit(block.start, problem)

    def flush(self) -> None:
        self._close()


def _frame_location(line: str) -> tuple[str, int, int] | None:
    """`at fn (file:///p.ts:7:11)` or `at file:///p.ts:7:11`: the file's path and position;
    None for Deno's own frames (`ext:`, `node:`) and remote modules."""
    text = line.strip()
    if text.endswith(")") and " (" in text:
        text = text[text.rfind(" (") + 2 : -1]
    else:
        text = text[len("at ") :]
    if not text.startswith("file://"):
        return None
    return split_location(text[len("file://") :])

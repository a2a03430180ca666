"""`python -m unittest` (and anything built on its text runner): FAIL and ERROR blocks.

    ======================================================================
    FAIL: test_eq (tests.test_calc.TestCalc.test_eq)
    ----------------------------------------------------------------------
    Traceback (most recent call last):
      File "/repo/tests/test_calc.py", line 8, in test_eq
        self.assertEqual(1, 2)
    AssertionError: 1 != 2

The problem carries the test's name (`tests.test_calc.TestCalc.test_eq`, with a subtest's
parameters after it) as code and before the message, as pytest problems do. It lands on the
test's frame; the deepest project frame below it (the line in `calc.py` that raised) is
related (see `chain.py`). A module that fails to import (`unittest.loader._FailedTest`) lands
on its import line. Every line of a block is claimed, so the traceback matcher never reports
the same failure again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .chain import ChainPick
from .matcher import Locator, Matcher, clip_message, is_rule, keep_line

_HEADER = re.compile(
    r"(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<name>\S{1,300}) "
    r"\((?P<id>[^)\s]{1,500})\)(?: (?P<params>.{1,300}))?$"
)
_FRAME = re.compile(r'  File "([^"]{1,1024})", line (\d{1,9}), in (.{1,300})$')
_TRACEBACK = "Traceback (most recent call last):"
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_IDLE, _HEADING, _BODY = range(3)


@dataclass
class _Block:
    start: int
    test_id: str
    chain: ChainPick
    before: list[str] = field(default_factory=list)  # before the traceback: an import's headline
    after: list[str] = field(default_factory=list)  # the exception, after the frames
    in_frames: bool = False


class UnittestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._state = _IDLE
        self._block: _Block | None = None

    def take(self, line: str) -> bool:
        if is_rule(line, "="):
            self._close()
            self._state = _HEADING
            return True
        if self._state == _HEADING:
            self._state = _IDLE
            found = _HEADER.match(line) if ": " in line else None
            if found is None:
                return False
            self._open(found)
            return True
        if self._block is None:
            return False
        if is_rule(line, "-"):
            # The rule under the header, or the one before "Ran N tests": the end.
            if self._block.before or self._block.after or self._block.chain.deepest:
                self._close()
            return True
        self._body(self._block, line)
        return True

    def _open(self, found: re.Match[str]) -> None:
        name, test_id = found.group("name"), found.group("id")
        if not test_id.endswith("." + name) and test_id != name:
            test_id = f"{test_id}.{name}"  # Python before 3.11: `test_eq (module.Class)`
        if found.group("params"):
            test_id = f"{test_id} {found.group('params')}"
        self._block = _Block(self.index, test_id, ChainPick(self.locator, name))
        self._state = _BODY

    def _body(self, block: _Block, line: str) -> None:
        if line == _TRACEBACK:
            block.in_frames = True
            return
        if line in _CHAIN:
            block.chain.clear()
            block.after.clear()
            return
        if block.in_frames and line.startswith(" "):
            frame = _FRAME.match(line)
            if frame is not None:
                block.chain.add(frame.group(1), int(frame.group(2)), frame.group(3))
            return
        if block.in_frames:
            block.in_frames = False
        target = block.after if block.chain.deepest is not None else block.before
        if line.startswith(("Stdout:", "Stderr:")):
            return
        keep_line(target, line)

    def _close(self) -> None:
        block, self._block = self._block, None
        self._state = _IDLE
        if block is None:
            return
        text = clip_message(block.after or block.before) or "failed"
        problem = block.chain.problem(f"{block.test_id}: {text}", block.test_id)
        if problem is not None:
            self.emit(block.start, problem)

    def flush(self) -> None:
        self._close()

"""Where a failure with a call chain lands: on the failing test, with the raising line related.

A runner that prints a chain of frames (a Python traceback, a Go panic, a Rust backtrace)
names two places worth showing: the test that failed (its frame: the function of the test's
name, else the shallowest frame in project code) and the deepest frame in project code that is
not the test itself, where the failure was raised. The diagnostic is the test; the raising
line goes in its related information. Without a project frame for the test, the deepest
project frame is the diagnostic; with no project frame at all (only installed code, only
paths outside the folder) there is no problem.

`ChainPick` keeps what that needs in constant space however deep the chain is.
"""

from __future__ import annotations

from .base import Problem, Related
from .matcher import MAX_PATH, Locator

Frame = tuple[str, int]


class ChainPick:
    __slots__ = ("deepest", "first", "innermost_first", "last", "locator", "named", "test_name")

    def __init__(
        self, locator: Locator, test_name: str = "", innermost_first: bool = False
    ) -> None:
        self.locator = locator
        self.test_name = test_name
        # Python prints the outermost frame first; Go and Rust the innermost.
        self.innermost_first = innermost_first
        self.first: Frame | None = None  # shallowest frame in project code
        self.last: Frame | None = None  # deepest frame in project code
        self.named: Frame | None = None  # the frame of the function named like the test
        self.deepest: Frame | None = None

    def add(self, path: str, line: int, function: str = "") -> None:
        """A frame, in the order the chain prints them."""
        frame = (path[:MAX_PATH], line)
        inner_first = self.innermost_first
        if not inner_first or self.deepest is None:
            self.deepest = frame
        if not self.locator.is_project(frame[0]):
            return
        if self.first is None or inner_first:
            self.first = frame
        if self.last is None or not inner_first:
            self.last = frame
        named = self.test_name and function and _same_function(function, self.test_name)
        if named and (self.named is None or not inner_first):
            self.named = frame

    def clear(self) -> None:
        self.first = self.last = self.named = self.deepest = None

    def test_frame(self) -> Frame | None:
        """The failing test's frame; None where no test is named (a script, a program)."""
        if not self.test_name:
            return None
        return self.named or self.first

    def problem(
        self, message: str, code: str | None, raised: str = "raised here"
    ) -> Problem | None:
        """The problem on the test's frame, the raising frame related; None without frames."""
        test = self.test_frame()
        related: tuple[Related, ...] = ()
        if test is not None and self.last is not None and self.last != test:
            path, line = self.last
            related = (Related(path=path, line=line, column=1, message=raised),)
            where: Frame = test
        elif self.last is not None:
            where = self.last
        else:
            return None  # no frame in project code: installed code is not where to look
        return Problem.at(where[0], where[1], 1, message, code=code, related=related)


def _same_function(function: str, test_name: str) -> bool:
    """`TestAt` is `example.com/demo/scale.TestAt(0xc0...)` in a Go frame, `test_x` in Python."""
    name = function.split("(", 1)[0].strip()
    return name == test_name or name.endswith("." + test_name)

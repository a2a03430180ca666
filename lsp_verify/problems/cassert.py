"""C and C++ `assert()` failures, as glibc prints them behind the program's name:

    tests: tests.c:153: main: Assertion `x == 1' failed.

The path is the one the compiler was given (`__FILE__`), relative to where it ran. The
problem lands on the assertion's line, named after the function that holds it.
"""

from __future__ import annotations

import re

from .base import Problem
from .matcher import Matcher

_ASSERT = re.compile(
    r"(?P<prog>[^\s:]{1,1024}): (?P<path>[^\s:]{1,1024}):(?P<line>\d{1,9}): "
    r"(?P<func>[^`]{1,300}?): Assertion `(?P<expr>.{0,2000})' failed\.$"
)


class AssertMatcher(Matcher):
    def take(self, line: str) -> bool:
        if "Assertion `" not in line or not line.endswith("' failed."):
            return False
        found = _ASSERT.match(line)
        if found is None:
            return False
        function = found.group("func")
        message = f"{function}: Assertion `{found.group('expr')}' failed."
        self.emit(
            self.index,
            Problem.at(found.group("path"), int(found.group("line")), 1, message, code=function),
        )
        return True

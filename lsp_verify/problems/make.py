"""GNU make's own failures: `make: *** [Makefile:7: test] Error 1` points at the recipe line
that failed (line 7 of Makefile), whatever the command printed before it.

A recursive make names its makefile relative to the directory it entered
(`make[1]: Entering directory '/repo/sub'`), so that directory is remembered per level.
Older makes print `make: *** [test] Error 1` without a location: nothing is located then.
"""

from __future__ import annotations

import os
import re

from .base import Problem
from .matcher import Locator, Matcher

_FAILED = re.compile(
    r"(?P<make>[\w.+-]{0,64}make)(?:\[(?P<level>\d{1,4})\])?: \*\*\* "
    r"\[(?P<file>[^\s:\]][^:\]]{0,1023}):(?P<line>\d{1,9}): (?P<target>[^\]]{1,500})\] "
    r"(?P<what>.{1,200})$"
)
_ENTERING = re.compile(
    r"[\w.+-]{0,64}make(?:\[(?P<level>\d{1,4})\])?: Entering directory [`'](?P<dir>.{1,4096})'$"
)
_MAX_LEVELS = 64


class MakeMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._dirs: dict[str, str] = {}

    def take(self, line: str) -> bool:
        if "make" not in line:
            return False
        if "***" in line:
            found = _FAILED.match(line)
            if found is None:
                return False
            path = found.group("file")
            folder = self._dirs.get(found.group("level") or "0")
            if folder is not None and not os.path.isabs(path):
                path = os.path.join(folder, path)
            message = f"make target '{found.group('target')}' failed: {found.group('what')}"
            self.emit(
                self.index, Problem.at(path, int(found.group("line")), 1, message, code="make")
            )
            return True
        if "Entering directory" in line:
            entering = _ENTERING.match(line)
            if entering is not None and len(self._dirs) < _MAX_LEVELS:
                self._dirs[entering.group("level") or "0"] = entering.group("dir")
        return False

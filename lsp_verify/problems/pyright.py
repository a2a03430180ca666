"""pyright's command-line report (`pyright`, also `basedpyright`).

    /repo/pkg/typed.py
      /repo/pkg/typed.py:10:11 - error: Argument of type "List[int]" cannot be assigned ...
        "List[int]" is not assignable to "List[float]" (reportArgumentType)

A problem line is indented by two spaces: `path:line:col - severity: message`; the lines
indented deeper below it continue the message, and the rule in parentheses at the end of the
last of them is the code (those lines are indented with no-break spaces). The problem is
held until its last continuation line has been seen.
"""

from __future__ import annotations

import re

from .base import Problem
from .matcher import MAX_MESSAGE_CHARS, MAX_MESSAGE_LINES, Locator, Matcher, severity_of

_PROBLEM = re.compile(
    r"  (?P<path>\S.{0,1023}?):(?P<line>\d{1,9}):(?P<col>\d{1,9}) - "
    r"(?P<sev>error|warning|information): (?P<msg>.*)$"
)
_RULE = re.compile(r" \((?P<rule>report[A-Za-z]{1,60})\)$")
# pyright indents continuation lines with no-break spaces after the problem's two spaces.
_CONTINUED = ("  \u00a0", "    ")
_WORDS = (" - error: ", " - warning: ", " - information: ")


class _Held:
    def __init__(self, start: int, found: re.Match[str]) -> None:
        self.start = start
        self.path = found.group("path")
        self.line = int(found.group("line"))
        self.column = int(found.group("col"))
        self.severity = severity_of(found.group("sev"))
        self.lines = [found.group("msg")[:MAX_MESSAGE_CHARS]]


class PyrightMatcher(Matcher):
    unit = "utf-16"  # pyright runs on Node: JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._pending: _Held | None = None

    def take(self, line: str) -> bool:
        held = self._pending
        if held is not None and line.startswith(_CONTINUED):
            if len(held.lines) < MAX_MESSAGE_LINES:
                held.lines.append(line.strip()[:MAX_MESSAGE_CHARS])
            return True
        self._release()
        if line.startswith("  ") and any(word in line for word in _WORDS):
            found = _PROBLEM.match(line)
            if found is not None:
                self._pending = _Held(self.index, found)
                return True
        return False

    def _release(self) -> None:
        held, self._pending = self._pending, None
        if held is None:
            return
        code: str | None = None
        rule = _RULE.search(held.lines[-1])
        if rule is not None:
            code = rule.group("rule")
            held.lines[-1] = held.lines[-1][: rule.start()]
        message = "\n".join(text for text in held.lines if text.strip())[:MAX_MESSAGE_CHARS]
        problem = Problem.at(
            held.path, held.line, held.column, message, severity=held.severity, code=code
        )
        self.emit(held.start, problem)

    def flush(self) -> None:
        self._release()

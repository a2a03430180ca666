"""TypeScript's compiler: `src/a.ts(3,7): error TS2322: message` and the `--pretty` form
`src/a.ts:3:7 - error TS2322: message`.

A diagnostic's message continues on the following lines indented by two spaces (the chain of
"Type X is not assignable..." reasons), in both forms; they are appended. Paths may contain
parentheses (Next.js route groups such as `app/(shop)/page.tsx`).
"""

from __future__ import annotations

import re

from .base import Problem
from .matcher import Locator, Matcher, clip_message, severity_of

_PLAIN = re.compile(
    r"(?P<path>\S.*?)\((?P<line>\d{1,9}),(?P<col>\d{1,9})\): "
    r"(?P<sev>error|warning|message|suggestion) (?P<code>TS\d{1,6}): (?P<msg>.*)$"
)
_PRETTY = re.compile(
    r"(?P<path>\S.*?):(?P<line>\d{1,9}):(?P<col>\d{1,9}) - "
    r"(?P<sev>error|warning|message|suggestion) (?P<code>TS\d{1,6}): (?P<msg>.*)$"
)
_MAX_CONTINUATION = 12


class TscMatcher(Matcher):
    unit = "utf-16"  # TypeScript counts in JavaScript string indices

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._open: Problem | None = None
        self._start = 0
        self._more: list[str] = []

    def take(self, line: str) -> bool:
        if self._open is not None:
            if line.startswith("  ") and line.strip():
                if len(self._more) < _MAX_CONTINUATION:
                    self._more.append(line.strip())
                return True
            self._close()
        if " TS" not in line:
            return False
        found = _PLAIN.match(line) or _PRETTY.match(line)
        if found is None:
            return False
        problem = Problem.at(
            found.group("path"),
            int(found.group("line")),
            int(found.group("col")),
            found.group("msg").strip(),
            severity=severity_of(found.group("sev")),
            code=found.group("code"),
        )
        self._open = problem
        self._start = self.index
        self._more = []
        return True

    def _close(self) -> None:
        problem = self._open
        if problem is None:
            return
        self._open = None
        if self._more:
            message = clip_message([problem.message, *self._more])
            problem = Problem(
                path=problem.path,
                line=problem.line,
                column=problem.column,
                message=message,
                severity=problem.severity,
                code=problem.code,
            )
        self.emit(self._start, problem)

    def flush(self) -> None:
        self._close()

"""JavaScript linters' human formats: ESLint's stylish (its default) and compact, and Biome.

stylish: the file's path alone on a line, then its problems indented below it,
`  7:20  error  Strings must use singlequote  quotes` (the rule is missing for a parsing
error), up to a blank line. Only a path that names a file inside the folder opens a file's
block, so a line of another tool's output that happens to look like `  1:2  error  x` is not
taken for one.

compact: `/abs/a.js: line 7, col 20, Error - Strings must use singlequote. (quotes)`.

Biome: `src/a.js:1:7 lint/correctness/noUnusedVariables  FIXABLE  ━━━━`, then the message
marked U+00D7 (error), `!` (warning) or `i` (information). A header without a line and column
(`src/a.js format ━━━`) concerns the whole file and is not located.
"""

from __future__ import annotations

import re

from .base import Problem
from .matcher import MAX_PATH, Locator, Matcher, severity_of, split_location
from .nodestack import plausible_path

_STYLISH = re.compile(r"  +(\d{1,9}):(\d{1,9}) +(error|warning|Error|Warning) +(.*)$")
_COMPACT = re.compile(r"line (\d{1,9}), col (\d{1,9}), (Error|Warning) - (.*)$")
_RULE = re.compile(r"[@\w][\w@/.-]{0,127}$")
_BIOME_MARKS = {"\u00d7": "error", "!": "warning", "i": "information", "\u2139": "information"}
_HEAVY = "\u2501"


class EslintMatcher(Matcher):
    """ESLint's stylish and compact formats."""

    unit = "utf-16"  # JavaScript string indices

    # The file whose stylish entries are being read, and the last unindented one-word line
    # (a file's path if stylish entries follow it); set on the instance as lines come.
    _file: str | None = None
    _candidate: str | None = None

    def take(self, line: str) -> bool:
        candidate, self._candidate = self._candidate, None
        stylish = line.startswith("  ") and line[2:12].lstrip(" ")[:1].isdigit()
        entry = _STYLISH.match(line) if stylish else None
        if entry is not None:
            if self._file is None and candidate and plausible_path(candidate):
                self._file = candidate if self.locator.relative(candidate) else None
            if self._file is not None:
                self._stylish(self._file, entry)
                return True
        if self._file is not None:
            self._file = None
            if not line.strip():
                return True
        if not line or line[0].isspace():
            return False
        if ": line " in line:
            return self._compact(line)
        if " " not in line and "\t" not in line and len(line) <= MAX_PATH:
            self._candidate = line
        return False

    def _stylish(self, path: str, entry: re.Match[str]) -> None:
        message, rule = entry.group(4).rstrip(), None
        head, gap, last = message.rpartition("  ")
        if gap and _RULE.match(last.strip()):
            message, rule = head.rstrip(), last.strip()
        self._emit(path, entry, message, rule)

    def _compact(self, line: str) -> bool:
        path, _, rest = line.partition(": line ")
        found = _COMPACT.match("line " + rest)
        if found is None or not plausible_path(path) or self.locator.relative(path) is None:
            return False
        message, rule = found.group(4).rstrip(), None
        if message.endswith(")") and " (" in message:
            head, _, last = message[:-1].rpartition(" (")
            if _RULE.match(last):
                message, rule = head, last
        self._emit(path, found, message, rule)
        return True

    def _emit(self, path: str, found: re.Match[str], message: str, rule: str | None) -> None:
        """Groups 1 to 3 of both formats: line, column, severity."""
        line, column = int(found.group(1)), int(found.group(2))
        severity = severity_of(found.group(3))
        self.emit(self.index, Problem.at(path, line, column, message, severity=severity, code=rule))


class BiomeMatcher(Matcher):
    """Biome's diagnostics (`biome lint`, `biome check`), each a header and a marked message."""

    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._pending: tuple[int, str, int, int, str] | None = None

    def take(self, line: str) -> bool:
        if _HEAVY in line and not line[:1].isspace():
            return self._header(line)
        pending = self._pending
        if pending is None:
            return False
        stripped = line.strip()
        if not stripped:
            return True
        mark, _, message = stripped.partition(" ")
        self._pending = None
        if mark in _BIOME_MARKS and message.strip():
            start, path, row, column, category = pending
            problem = Problem.at(
                path,
                row,
                column,
                message=message.strip(),
                severity=severity_of(_BIOME_MARKS[mark]),
                code=category,
            )
            self.emit(start, problem)
            return True
        return False

    def _header(self, line: str) -> bool:
        words = line.split(None, 2)
        if len(words) < 2 or not words[1][:1].isalpha():
            return False
        where = split_location(words[0])
        if where is None or words[0].count(":") < 2 or not plausible_path(where[0]):
            return False
        if self.locator.relative(where[0]) is None:
            return False
        self._pending = (self.index, where[0], where[1], where[2], words[1])
        return True

"""The `path:line[:col]: [severity:] message` family, the most common shape of all.

gcc and clang (`a.c:6:20: error: ... [-Wfoo]`), mypy (`a.py:3: error: ...  [arg-type]`, also
with `--show-column-numbers --show-error-end`), ruff and flake8 concise output
(`a.py:1:8: F401 ...`), pylint (text, whose columns are 0-based, and parseable
`a.py:1: [W0611(unused-import), ] ...`), go vet (`vet: ./x.go:5:2: ...`), shellcheck's gcc
format (`x.sh:3:8: note: ... [SC2086]`), eslint's unix format (`a.js:1:7: message
[Error/rule]`), GNU make (`Makefile:3: *** ...`) and Python warnings (`a.py:3:
DeprecationWarning: ...`). `go test`'s indented messages are gotest.py's.

This is the least specific matcher: it sees only lines no other matcher claimed. A path is
one run of non-blank characters at the start of the line. Notes are information problems of
their own (gcc's `previous declaration`, mypy's `reveal_type`), except a note on a Python
file at the line of the error just before it: mypy's notes about that error (`"list" is
invariant`, `See https://...`) are added to its message. Such an error is held until the next
line says whether a note follows (mypy prints its summary line right after the last one);
every other problem is handed out at once.

Columns count differently by tool, so by the file's language and the line's shape (checked
against the tools' real output): gcc counts display columns (`-fdiagnostics-column-unit`'s
default: tabs to multiples of 8, wide characters 2); mypy and go vet count UTF-8 bytes; ESLint
counts UTF-16 units; ruff counts code points, as does anything else. clang counts bytes: on a
C line with other than ASCII its columns are read as gcc's (both print the same shape).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .base import ColumnUnit, Problem, Severity
from .matcher import MAX_MESSAGE_CHARS, Locator, Matcher, severity_of

_LINE = re.compile(
    r"(?P<indent>[ \t]*)(?P<vet>vet: )?(?P<path>[^\s:]+):(?P<line>\d{1,9})"
    r"(?::(?P<col>\d{1,9}))?(?::(?P<eline>\d{1,9}):(?P<ecol>\d{1,9}))?:(?: (?P<rest>.*))?$"
)
_SEVERITY = re.compile(
    r"(?P<sev>fatal error|error|warning|note|info|remark|hint|help)"
    r"(?:\[(?P<code>[^\]\s]{1,64})\])?:(?: (?P<msg>.*))?$",
    re.IGNORECASE,
)
_LEADING_CODE = re.compile(r"(?P<code>[A-Z]{1,4}\d{1,5})(?::)? (?:\[\*\] )?(?P<msg>.*)$")
_PYLINT_TEXT = re.compile(r"(?P<code>[CRWEFI]\d{4}): (?P<msg>.*)$")
_PYLINT_PARSEABLE = re.compile(
    r"\[(?P<code>[CRWEFI]\d{4})\((?P<symbol>[\w-]{1,64})\), [^\]]*\] (?P<msg>.*)$"
)
_KEBAB_CODE = re.compile(r"(?P<code>[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){1,8}): (?P<msg>.*)$")
_PY_WARNING = re.compile(r"(?P<code>[A-Z]\w{0,63}Warning): (?P<msg>.*)$")
_BRACKET_CODE = re.compile(
    r"-W[\w=+-]{1,64}$|SC\d{4}$|[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){0,8}$"
)
_PYLINT_SEVERITY: dict[str, Severity] = {
    "C": "information",
    "R": "information",
    "I": "information",
    "W": "warning",
}
_NOISE = ("recipe for target",)


_NOTES_OF = (".py", ".pyi")
_C_FAMILY = (".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".m", ".mm")
_JAVASCRIPT = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")


class GccMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._pending: tuple[int, Problem] | None = None

    def take(self, line: str) -> bool:
        found = _LINE.match(line) if ":" in line else None
        if found is None:
            self._release()
            return False
        path = found.group("path")
        if path.isdigit():
            self._release()
            return False  # a time of day (12:30:45: ...), not a file
        if found.group("indent") or (found.group("vet") and not path.endswith(".go")):
            self._release()
            return False
        rest = (found.group("rest") or "").strip()
        if not rest or rest.startswith(_NOISE):
            self._release()
            return False
        problem = self._parse(found, path, rest)
        held = self._pending
        if (
            held is not None
            and problem.severity == "information"
            and (problem.path, problem.line) == (held[1].path, held[1].line)
            and held[1].severity != "information"
            and problem.path.endswith(_NOTES_OF)
            and len(held[1].message) < MAX_MESSAGE_CHARS
        ):
            joined = f"{held[1].message}\nnote: {problem.message}"[:MAX_MESSAGE_CHARS]
            self._pending = (held[0], replace(held[1], message=joined))
            return True
        self._release()
        if problem.path.endswith(_NOTES_OF) and problem.severity != "information":
            self._pending = (self.index, problem)  # until the next line: a note may follow
        else:
            self.emit(self.index, problem)  # at once: a run streams what it has located
        return True

    def _release(self) -> None:
        if self._pending is not None:
            self.emit(*self._pending)
            self._pending = None

    def flush(self) -> None:
        self._release()

    def _parse(self, found: re.Match[str], path: str, rest: str) -> Problem:
        line = int(found.group("line"))
        column = int(found.group("col")) if found.group("col") else 1
        end_line: int | None = None
        end_column: int | None = None
        if found.group("eline"):
            # mypy --show-error-end gives an inclusive end; ours, like LSP's, is exclusive.
            end_line = int(found.group("eline"))
            end_column = int(found.group("ecol")) + 1
        severity: Severity = "error"
        code: str | None = None
        message = rest
        head = _SEVERITY.match(rest)
        if head is not None:
            severity = severity_of(head.group("sev"))
            code = head.group("code")
            message = (head.group("msg") or "").strip() or rest
        message, code, severity, zero_based = _codes(message, code, severity, head is None)
        if zero_based and found.group("col"):
            column += 1
        return Problem.at(
            path,
            line,
            column,
            message=message,
            severity=severity,
            code=code,
            end_line=end_line,
            end_column=end_column,
            unit=_unit(path, head is not None),
        )


def _unit(path: str, severity_word: bool) -> ColumnUnit | None:
    """What the columns of a line about `path` count (see the module's docstring); a
    Python line with a severity word is mypy's, one with a leading code ruff's."""
    if path.endswith(_C_FAMILY):
        return "gcc-display"
    if path.endswith(".go") or (severity_word and path.endswith(_NOTES_OF)):
        return "utf-8"
    if path.endswith(_JAVASCRIPT):
        return "utf-16"
    return None


def _codes(
    message: str, code: str | None, severity: Severity, bare: bool
) -> tuple[str, str | None, Severity, bool]:
    """Rule codes at the end (`[arg-type]`, `[-Wunused]`, `[Error/no-var]`) or the start.

    Also says whether the tool counts columns from 0 (pylint does)."""
    if message.endswith("]"):
        opening = message.rfind("[")
        inner = message[opening + 1 : -1] if opening > 0 else ""
        if opening > 0 and message[opening - 1] == " " and inner and " " not in inner:
            kind, slash, rule = inner.partition("/")
            if slash and kind in ("Error", "Warning"):
                # eslint's unix formatter: its severity word is the only one on the line.
                return message[:opening].rstrip(), rule or None, severity_of(kind), False
            if inner in ("Error", "Warning"):
                return message[:opening].rstrip(), None, severity_of(inner), False
            if code is None and _BRACKET_CODE.match(inner):
                return message[:opening].rstrip(), inner, severity, False
    if not bare or code is not None:
        return message, code, severity, False
    # pylint's parseable format counts columns from 1; its text format from 0, unlike
    # everyone else.
    for pattern, zero_based in ((_PYLINT_PARSEABLE, False), (_PYLINT_TEXT, True)):
        pylint = pattern.match(message)
        if pylint is not None:
            severity = _PYLINT_SEVERITY.get(pylint.group("code")[0], "error")
            return pylint.group("msg"), pylint.group("code"), severity, zero_based
    leading = _LEADING_CODE.match(message)
    if leading is not None:
        return leading.group("msg"), leading.group("code"), severity, False
    warning = _PY_WARNING.match(message)
    if warning is not None:
        return message, warning.group("code"), "warning", False
    kebab = _KEBAB_CODE.match(message)
    if kebab is not None:
        return kebab.group("msg"), kebab.group("code"), severity, False
    return message, code, severity, False

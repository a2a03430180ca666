"""rustc / cargo diagnostics and Rust test panics.

Diagnostics are a header line followed by an arrow to the location:

    error[E0308]: mismatched types
     --> src/lib.rs:3:18

This annotated-snippet layout is shared by other tools (ruff's default output,
`F401 [*] ... / --> a.py:1:8`), so any header is accepted when an arrow follows it; the
header gives severity (`error`, `warning`) and code (`E0308`, `F401`, a lint from
``= note: `#[warn(unused_variables)]` ``). A `note:`/`help:` with its own arrow inside the
same diagnostic, and `::: path:line:col`, become related locations. The primary label of the
first snippet (`^^^ expected i32, found &str`) is added to the message.

Panics: `thread 'tests::adds' panicked at src/lib.rs:18:9:` followed by the message (Rust
1.73+), or the older `panicked at 'message', src/main.rs:2:5`. With `RUST_BACKTRACE=1` the
test function's own frame is known: the problem lands there, and the panic's location is
related (the failing test is the diagnostic, see chain.py).

Columns, as rustc 1.95 prints them: an arrow's count code points; a panic's location counts
display columns (a tab is 4, a wide character 2); a backtrace frame's counts UTF-8 bytes.
"""

from __future__ import annotations

import os
import re

from .base import ColumnUnit, Problem, Related, Severity
from .matcher import Locator, Matcher, clip_message, severity_of, split_location

_RUST_HEADER = re.compile(
    r"(?P<sev>error|warning|note|help|info)(?:\[(?P<code>[^\]\s]{1,64})\])?: (?P<msg>.*)$"
)
_CODE_HEADER = re.compile(
    r"(?P<code>[A-Z]{1,4}\d{1,5}|[a-z][a-z0-9]{0,30}(?:-[a-z0-9]{1,30}){1,8})"
    r"(?::)? (?:\[\*\] )?(?P<msg>.*)$"
)
_ARROW = re.compile(r"\s*(?P<kind>-->|:::) (?P<loc>\S.*)$")
_LINT = re.compile(r"#\[(?:warn|deny|forbid)\((?P<lint>[\w:]{1,100})\)\]")
_PANIC = re.compile(r"thread '(?P<name>[^']{0,300})'(?: \(\d{1,12}\))? panicked at (?P<rest>.*)$")
_FRAME_SYMBOL = re.compile(r"\s+\d{1,6}: (?P<symbol>\S.*)$")
_FRAME_AT = re.compile(r"\s+at (?P<loc>\S.*)$")
_PANIC_END = ("note: run with", "stack backtrace:", "---- ", "failures:", "test result:")
_MAX_RELATED = 8
_MAX_PANIC_LINES = 12


class _Diagnostic:
    def __init__(self, start: int, severity: Severity, code: str | None, message: str) -> None:
        self.start = start
        self.severity = severity
        self.code = code
        self.message = message
        self.location: tuple[str, int, int] | None = None
        self.label = ""
        self.caret_seen = False
        self.related: list[Related] = []
        self.sub: str | None = None  # message of a note/help header waiting for its arrow


class _Panic:
    def __init__(self, start: int, name: str, location: tuple[str, int, int]) -> None:
        self.start = start
        self.name = name
        self.location = location
        self.lines: list[str] = []
        self.reading = True
        self.symbol_matches = False
        self.related: Related | None = None


class RustMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._previous = ""
        self._diag: _Diagnostic | None = None
        self._panic: _Panic | None = None

    def take(self, line: str) -> bool:
        previous, self._previous = self._previous, line
        if self._panic is not None and self._in_panic(line):
            return True
        if "panicked at " in line:
            found = _PANIC.match(line)
            if found is not None:
                return self._start_panic(found)
        return self._in_diagnostic(line, previous)

    # -- diagnostics -----------------------------------------------------------------------

    def _in_diagnostic(self, line: str, previous: str) -> bool:
        if "--> " in line or "::: " in line:
            arrow = _ARROW.match(line)
            if arrow is not None:
                location = split_location(arrow.group("loc").strip())
                if location is not None:
                    return self._on_arrow(arrow.group("kind"), location, previous)
        diag = self._diag
        if diag is None:
            return False
        if not line.strip():
            self._close()
            return False
        if line.startswith((" ", "|")) or line[:1].isdigit():
            self._on_snippet(diag, line)
            return True
        header = _RUST_HEADER.match(line)
        if header is not None and header.group("sev") in ("note", "help"):
            diag.sub = header.group("msg")  # becomes related if an arrow follows
            return True
        self._close()
        return False

    def _on_arrow(self, kind: str, location: tuple[str, int, int], previous: str) -> bool:
        diag = self._diag
        if kind == ":::":
            if diag is not None and len(diag.related) < _MAX_RELATED:
                diag.related.append(_related(location, "see also"))
            return True
        if diag is not None and diag.sub is not None and previous.startswith(("note", "help")):
            if len(diag.related) < _MAX_RELATED:
                diag.related.append(_related(location, diag.sub))
            diag.sub = None
            return True
        header = previous.strip()
        if not header or previous.startswith((" ", "|")):
            return diag is not None  # an arrow inside a snippet: part of the open diagnostic
        self._close()
        severity, code, message = _parse_header(header)
        diag = _Diagnostic(max(self.index - 1, 0), severity, code, message)
        diag.location = location
        self._diag = diag
        return True

    def _on_snippet(self, diag: _Diagnostic, line: str) -> None:
        stripped = line.strip()
        if stripped.startswith("= note:") and diag.code is None:
            lint = _LINT.search(stripped)
            if lint is not None:
                diag.code = lint.group("lint")
            return
        if diag.caret_seen or "|" not in line:
            return
        content = line.split("|", 1)[1]
        caret = content.find("^")
        if caret < 0:
            return
        # Only the primary span's label: later snippets belong to notes and helps.
        diag.caret_seen = True
        end = caret
        while end < len(content) and content[end] == "^":
            end += 1
        # Only a label right after the primary carets belongs to them.
        if content[end : end + 1] == " " and content[end + 1 :].strip():
            diag.label = content[end + 1 :].strip()

    def _close(self) -> None:
        diag = self._diag
        self._diag = None
        if diag is None or diag.location is None:
            return
        path, line, column = diag.location
        message = diag.message
        if diag.label and diag.label not in message:
            message = f"{message}\n{diag.label}"
        self.emit(
            diag.start,
            Problem.at(
                path,
                line,
                column,
                message=message,
                severity=diag.severity,
                code=diag.code,
                related=tuple(diag.related),
                unit="utf-32",
            ),
        )

    # -- panics ----------------------------------------------------------------------------

    def _start_panic(self, found: re.Match[str]) -> bool:
        self._close()
        self._end_panic()
        rest = found.group("rest")
        inline = ""
        if rest.startswith("'") and "', " in rest:
            # Before Rust 1.73: panicked at 'message', src/main.rs:2:5
            cut = rest.rfind("', ")
            inline, rest = rest[1:cut], rest[cut + 3 :]
        location = split_location(rest.rstrip(":").strip())
        if location is None:
            return False
        panic = _Panic(self.index, found.group("name"), location)
        if inline:
            panic.lines.append(inline)
        self._panic = panic
        return True

    def _in_panic(self, line: str) -> bool:
        panic = self._panic
        assert panic is not None
        if panic.reading:
            if not line.strip() or line.startswith(_PANIC_END) or line.startswith("thread '"):
                panic.reading = False
            else:
                if len(panic.lines) < _MAX_PANIC_LINES:
                    panic.lines.append(line)
                return True
        symbol = _FRAME_SYMBOL.match(line)
        if symbol is not None:
            name = symbol.group("symbol")
            panic.symbol_matches = name == panic.name or name.endswith("::" + panic.name)
            return True
        at = _FRAME_AT.match(line)
        if at is not None:
            if panic.symbol_matches and panic.related is None:
                location = split_location(at.group("loc").strip())
                if location is not None and _key(location) != _key(panic.location):
                    panic.related = _related(location, f"test {panic.name}", "utf-8")
            panic.symbol_matches = False
            return True
        if line.startswith(("stack backtrace:", "note: ")):
            return True
        self._end_panic()
        return False

    def _end_panic(self) -> None:
        panic = self._panic
        self._panic = None
        if panic is None:
            return
        path, line, column = panic.location
        unit: ColumnUnit = "rust-display"
        related: tuple[Related, ...] = ()
        if panic.related is not None:
            # The failing test is the diagnostic; where it panicked is related (see chain.py).
            test = panic.related
            related = (_related(panic.location, "panicked here", "rust-display"),)
            path, line, column, unit = test.path, test.line, test.column, "utf-8"
        text = clip_message(panic.lines) or "panicked"
        named = panic.name not in ("", "main", "<unnamed>")
        self.emit(
            panic.start,
            Problem.at(
                path,
                line,
                column,
                message=f"{panic.name}: {text}" if named else text,
                code=panic.name if named else None,
                related=related,
                unit=unit,
            ),
        )

    def flush(self) -> None:
        self._close()
        self._end_panic()


def _parse_header(header: str) -> tuple[Severity, str | None, str]:
    rust = _RUST_HEADER.match(header)
    if rust is not None:
        return severity_of(rust.group("sev")), rust.group("code"), rust.group("msg").strip()
    coded = _CODE_HEADER.match(header)
    if coded is not None:
        return "error", coded.group("code"), coded.group("msg").strip()
    return "error", None, header


def _key(location: tuple[str, int, int]) -> tuple[str, int, int]:
    return os.path.normpath(location[0]), location[1], location[2]


def _related(location: tuple[str, int, int], message: str, unit: ColumnUnit = "utf-32") -> Related:
    path, line, column = location
    return Related(path=path, line=max(line, 1), column=max(column, 1), message=message, unit=unit)

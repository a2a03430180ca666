"""What every family matcher shares: the claim protocol, bounded output, small parsing helpers.

A family matcher is fed one cleaned output line at a time. `take(line)` returns True when the
line belongs to a block the matcher is parsing (a pytest failure section, a rustc diagnostic);
the collector then does not offer that line to less specific matchers. `feed`/`finish` make
every matcher usable on its own as a `LineSink` too.

Bounds: only the first `MAX_LINE` characters of a line are examined; a matcher keeps a capped
amount of state for the block it is in and hands finished problems out through `drain`, so its
memory does not grow with the output.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from .base import ColumnUnit, Problem, Severity

MAX_LINE = 4096
MAX_MESSAGE_CHARS = 1000
MAX_MESSAGE_LINES = 20
# Problems a matcher holds before someone drains it; the collector drains after every line,
# so this only bounds a matcher used on its own.
MAX_HELD = 1000
# Longer paths cannot name a file worth showing; cutting them bounds what a frame holds.
MAX_PATH = 1024

_SEVERITY_WORDS: dict[str, Severity] = {
    "error": "error",
    "fatal error": "error",
    "fatal": "error",
    "failure": "error",
    "warning": "warning",
    "warn": "warning",
    "note": "information",
    "info": "information",
    "information": "information",
    "message": "information",
    "remark": "information",
    "hint": "hint",
    "help": "hint",
}


def severity_of(word: str) -> Severity:
    """LSP-style severity for a tool's own word; anything unknown is an error."""
    return _SEVERITY_WORDS.get(word.strip().lower(), "error")


class Locator(Protocol):
    """What a matcher may ask about paths while it chooses a frame (see `FolderLocator`)."""

    def relative(self, path: str) -> str | None:
        """The path relative to the folder, POSIX, when it names a file inside; else None."""
        ...

    def is_project(self, path: str) -> bool:
        """Inside the folder and not in installed or vendored code (site-packages, node_modules)."""
        ...

    def find_line(self, path: str, starts: tuple[str, ...]) -> int | None:
        """1-based number of the first line that starts (after indentation) with one of
        `starts`: where a test is defined, when the output names it but gives no line."""
        ...


class AnyLocator:
    """For a matcher used without a folder: every path counts, nothing can be looked up."""

    def relative(self, path: str) -> str | None:
        return path

    def is_project(self, path: str) -> bool:
        return True

    def find_line(self, path: str, starts: tuple[str, ...]) -> int | None:
        return None


class Matcher:
    """Base of the family matchers. Subclasses implement `take` and, if they hold a block
    open across lines, `flush`. `unit` is what the family's columns count, where a problem
    does not say (see `ColumnUnit`)."""

    unit: ColumnUnit | None = None

    def __init__(self, locator: Locator | None = None) -> None:
        self.locator: Locator = locator if locator is not None else AnyLocator()
        # Index of the current line in the whole output; the collector sets it before `take`
        # so that problems from different matchers can be put back in output order.
        self.index = 0
        self.overflow = 0
        self._held: list[tuple[int, Problem]] = []

    def take(self, line: str) -> bool:
        raise NotImplementedError

    def flush(self) -> None:
        """End of output: turn whatever block is open into problems."""
        return None

    def feed(self, line: str) -> None:
        self.take(line[:MAX_LINE])
        self.index += 1

    def finish(self) -> list[Problem]:
        self.flush()
        return [problem for _, problem in self.drain()]

    @property
    def holding(self) -> bool:
        """Whether `drain` would hand out something."""
        return bool(self._held)

    def drain(self) -> list[tuple[int, Problem]]:
        held, self._held = self._held, []
        return held

    def emit(self, start: int, problem: Problem) -> None:
        if len(self._held) >= MAX_HELD:
            self.overflow += 1
            return
        if problem.unit is None and self.unit is not None:
            problem = replace(problem, unit=self.unit)
        self._held.append((start, problem))


class FramePick:
    """What choosing a traceback's location needs, in constant space however deep it is:
    the shallowest and the deepest frame in project code (the test's line and where it
    failed) and the deepest frame of all (reported, then dropped, when none is ours)."""

    __slots__ = ("deepest", "first", "last", "locator")

    def __init__(self, locator: Locator) -> None:
        self.locator = locator
        self.first: tuple[str, int] | None = None
        self.last: tuple[str, int] | None = None
        self.deepest: tuple[str, int] | None = None

    def add(self, path: str, line: int) -> None:
        frame = (path[:MAX_PATH], line)
        self.deepest = frame
        if self.locator.is_project(frame[0]):
            if self.first is None:
                self.first = frame
            self.last = frame

    def clear(self) -> None:
        self.first = self.last = self.deepest = None


def keep_line(lines: list[str], line: str) -> None:
    """Add a message line, keeping no more than `clip_message` could show."""
    if len(lines) < MAX_MESSAGE_LINES and sum(map(len, lines)) < MAX_MESSAGE_CHARS:
        lines.append(line[:MAX_MESSAGE_CHARS])


def is_rule(line: str, char: str, length: int = 20) -> bool:
    """A line of one character repeated (unittest's `=====`, doctest's `*****`)."""
    return len(line) >= length and line.startswith(char * length) and not line.strip(char)


def to_int(text: str | None, default: int = 1) -> int:
    """A 1-based position from digits (callers' regexes cap the digit count)."""
    if not text or not text.isdigit() or len(text) > 9:
        return default
    return max(int(text), 1)


def split_location(text: str) -> tuple[str, int, int] | None:
    """`path:line:col` (col optional) without a backtracking regex: split from the right."""
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and _digits(parts[1]) and _digits(parts[2]) and parts[0]:
        return parts[0], int(parts[1]), int(parts[2])
    if len(parts) >= 2 and _digits(parts[-1]):
        path = text[: len(text) - len(parts[-1]) - 1]
        if path:
            return path, int(parts[-1]), 1
    return None


def _digits(text: str) -> bool:
    return 0 < len(text) <= 9 and text.isdigit() and text.isascii()


def clip_message(lines: list[str]) -> str:
    """Join message lines, dropping blank ones, and trim to a size an editor shows whole."""
    kept: list[str] = []
    total = 0
    cut = False
    for line in lines:
        line = line.rstrip()
        if not line.strip():
            continue
        if len(kept) >= MAX_MESSAGE_LINES or total + len(line) > MAX_MESSAGE_CHARS:
            room = MAX_MESSAGE_CHARS - total
            if not kept and room > 0:
                kept.append(line[:room])
            cut = True
            break
        kept.append(line)
        total += len(line) + 1
    text = "\n".join(kept)
    return text + " …" if cut else text


def dedent(lines: list[str]) -> list[str]:
    """Remove the indentation the first non-blank line has from every line."""
    indent: int | None = None
    for line in lines:
        if line.strip():
            indent = len(line) - len(line.lstrip(" "))
            break
    if not indent:
        return lines
    out = []
    for line in lines:
        lead = len(line) - len(line.lstrip(" "))
        out.append(line[min(lead, indent) :])
    return out

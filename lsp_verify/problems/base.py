"""The interface every problem matcher implements, and the located Problem value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]
# What a tool counts its columns in (lsp_verify/positions.py converts them): UTF-8 bytes,
# UTF-16 code units, code points, or display columns (gcc's: tabs to multiples of 8; Rust's
# panic locations: a tab is 4). None: the matcher's own unit, code points when it has none.
ColumnUnit = Literal["utf-8", "utf-16", "utf-32", "gcc-display", "rust-display"]


@dataclass(frozen=True)
class Related:
    """A second location that explains a problem (the test line that called failing code)."""

    path: str
    line: int
    column: int
    message: str
    unit: ColumnUnit | None = None


@dataclass(frozen=True)
class Problem:
    """A failure located in a file.

    `path` is as the output gave it until a collector resolves it; after resolution it is
    relative to the folder, POSIX separators. Lines and columns are 1-based; columns count
    in `unit` (the tool's), for this problem and its related locations that give none.
    """

    path: str
    line: int
    column: int
    message: str
    severity: Severity = "error"
    code: str | None = None
    end_line: int | None = None
    end_column: int | None = None
    related: tuple[Related, ...] = ()
    unit: ColumnUnit | None = None

    @classmethod
    def at(cls, path: str, line: int, column: int, message: str, **rest: Any) -> Problem:
        """A problem at a position as a tool printed it: a line or column 0 means the first."""
        return cls(path, max(line, 1), max(column, 1), message, **rest)


class LineSink(Protocol):
    """What the runner feeds: one cleaned output line at a time, then finish once."""

    def feed(self, line: str) -> None: ...

    def finish(self) -> list[Problem]: ...


class NullSink:
    """The sink used when no matcher is wanted: keeps nothing."""

    def feed(self, line: str) -> None:
        return None

    def finish(self) -> list[Problem]:
        return []

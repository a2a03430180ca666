"""`.lsp-verify.toml`, read safely: a file the repository ships may be anything (a FIFO, a
symlink, huge, not UTF-8, not TOML) and costs at most a message, never a hang or a crash.
`read_limited` is the one way the server reads a file a repository controls."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsp_verify.config.settings import (
    MAX_FILE_BYTES,
    PROJECT_FILE,
    ParsedSettings,
    SettingsMessage,
    parse_settings,
)

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on Python < 3.11
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


@dataclass(frozen=True)
class ProjectFile:
    """`.lsp-verify.toml` as read: absolute path, its bytes (empty when unreadable), parsed."""

    path: str
    data: bytes
    parsed: ParsedSettings


def read_limited(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, at most `limit` of them.

    Raises FileNotFoundError when nothing is there, OSError (with a readable strerror) for
    everything else a user can cause: a directory, a FIFO (opened non-blocking so that it
    cannot hang the server), a symlink loop, no permission, or a file over the limit.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "is a directory", path)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file", path)
        if info.st_size > limit:
            raise OSError(0, f"larger than {limit // 1024} KiB ({info.st_size} bytes)", path)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                # The file grew after fstat; still never hold more than the limit.
                raise OSError(0, f"larger than {limit // 1024} KiB", path)
        return b"".join(chunks)
    finally:
        os.close(fd)


def describe_os_error(exc: OSError) -> str:
    """An OSError as a short phrase without the path (the caller names the file)."""
    if exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def toml_module() -> Any:
    """tomllib, or tomli before Python 3.11: imported when a TOML file is first read, after
    the server has answered `initialize`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on Python < 3.11
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    return tomllib


_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def toml_error(exc: tomllib.TOMLDecodeError) -> tuple[str, int | None]:
    """tomllib's message without the position suffix, and the 1-based line it names."""
    text = str(exc)
    line: int | None = None
    lineno = getattr(exc, "lineno", None)  # Python 3.14+ has it as an attribute
    if isinstance(lineno, int):
        line = lineno
    match = _TOML_POSITION.search(text)
    if match:
        if line is None:
            line = int(match.group(1))
        text = (text[: match.start()] + text[match.end() :]).strip()
    return text, line


# The first key of a line, bare or quoted, as a key/value or a [table] header starts it.
_FIRST_KEY = re.compile(
    r"""[ \t]*(?:\[\[?[ \t]*)?(?:([A-Za-z0-9_-]+)|"([^"\\\n]*)"|'([^'\n]*)')[ \t]*[=.\]]"""
)


def _key_lines(text: str) -> dict[str, int]:
    """The 1-based line where each top-level key or table is first written, in one pass."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        found = _FIRST_KEY.match(line)
        if found is not None:
            lines.setdefault(found.group(found.lastindex or 1), number)
    return lines


# What parsing TOML costs: tomllib is pure Python, about 3 us for each key, value or table
# (an `=`, `,`, `.` or a line that starts with `[`), less for a line, a backslash or a byte
# of a string; and a dotted key costs the square of its parts. (Brackets nested deep cost
# little: the parse gives up at Python's recursion limit.) A file past the budget (about
# 0.15 s here) or with a key of more parts than MAX_KEY_PARTS is not parsed: a repository's
# file read on every save must not cost more than a save may (SPEC section 7). Real files
# use a few percent of it.
TOML_BUDGET = 1_500_000
MAX_KEY_PARTS = 64
# A key starts a line (or a [table] header), or follows `{` or `,` in an inline table: from
# each such place the key is read once, so the search is linear.
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_DEEP_KEY = re.compile(
    r"(?:^|(?<=[{,]))[ \t]*(?:\[\[?[ \t]*)?"
    + _PART
    + r"(?:[ \t]*\.[ \t]*"
    + _PART
    + r"){"
    + str(MAX_KEY_PARTS)
    + "}",
    re.MULTILINE,
)


_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)


class TooCostly(ValueError):
    """A file a save must not parse: what would make it cost too much."""


def parse_toml(text: str) -> dict[str, Any]:
    """tomllib.loads, with its cost bounded first (TooCostly)."""
    items = sum(text.count(c) for c in "=,.") + len(_TABLE.findall(text))
    lines = text.count("\n")
    cost = 30 * items + 5 * lines + 3 * text.count("\\") + 2 * len(text)
    if cost > TOML_BUDGET:
        raise TooCostly(
            f"it would take too long to parse on a save ({items} keys, values and tables "
            f"in {lines} lines and {len(text)} characters)"
        )
    deep = _DEEP_KEY.search(text) if text.count(".") >= MAX_KEY_PARTS else None
    if deep is not None:
        line = text.count("\n", 0, deep.start()) + 1
        raise TooCostly(f"a key of more than {MAX_KEY_PARTS} dotted parts at line {line}")
    document: dict[str, Any] = toml_module().loads(text)
    return document


MAX_MESSAGES = 20  # about keys other than `command`; then one message counts the rest


def load_project_file(folder: str) -> ProjectFile | None:
    """`.lsp-verify.toml` at the folder root, parsed; None when there is none.

    A broken file (unreadable, a directory, over 1 MiB, not UTF-8, invalid TOML) gives a
    ProjectFile with no values and a message saying why.
    """
    path = os.path.join(os.path.abspath(folder), PROJECT_FILE)
    try:
        data = read_limited(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return _broken(path, b"", "is a symbolic link to a missing file", None)
        return None
    except NotADirectoryError:
        return None  # the folder itself is a file: nothing to load
    except OSError as exc:
        return _broken(path, b"", f"cannot be read: {describe_os_error(exc)}", None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _broken(path, data, f"is not UTF-8 (invalid byte at offset {exc.start})", None)
    toml = toml_module()
    try:
        document = parse_toml(text)
    except TooCostly as exc:
        return _broken(path, data, f"is not read: {exc}", None)
    except toml.TOMLDecodeError as exc:
        problem, line = toml_error(exc)
        return _broken(path, data, f"is not valid TOML: {problem}", line)
    except RecursionError:
        return _broken(path, data, "is not valid TOML: nested too deeply", None)
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        return _broken(path, data, f"is not valid TOML: {exc}", None)
    parsed = parse_settings(document, origin=PROJECT_FILE, limit=MAX_MESSAGES)
    lines = _key_lines(text) if parsed.messages else {}
    messages: list[SettingsMessage] = []
    for message in parsed.messages:
        if message.key is not None:
            line = lines.get(message.key)
            text_ = message.text
            if message.key == "verify" and isinstance(document.get("verify"), dict):
                text_ += "; the keys belong at the top level of the file, without [verify]"
            message = dataclasses.replace(message, line=line, text=text_)
        messages.append(message)
    return ProjectFile(path, data, ParsedSettings(parsed.values, tuple(messages)))


def _broken(path: str, data: bytes, problem: str, line: int | None) -> ProjectFile:
    text = f"{PROJECT_FILE} {problem}; its settings are ignored"
    return ProjectFile(path, data, ParsedSettings({}, (SettingsMessage(None, text, line),)))

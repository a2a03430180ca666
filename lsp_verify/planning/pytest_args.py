"""A shell command read as a pytest run: is it one, and what its options say.

Conservative by design: a command is a pytest run only when it is one simple command (no
`;`, `&&`, pipes, redirections, substitutions or comments) whose program is `pytest`,
`py.test`, `python -m pytest` or `uv run pytest`, optionally after `NAME=value` assignments.
Whatever this module cannot read for certain counts as "unsure", and the caller then leaves
the command alone.
"""

from __future__ import annotations

import functools
import io
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Call", "Options", "parse_call", "read_options"]

_SHELL = re.compile(r"[;&|<>()$`\\\n#]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"python[0-9.]*")
_PYTEST = ("pytest", "py.test")

# Options that order tests or pick them by the cache's state: the project chose an order.
_ORDERING = (
    "--ff",
    "--failed-first",
    "--lf",
    "--last-failed",
    "--nf",
    "--new-first",
    "--sw",
    "--stepwise",
    "--sw-skip",
    "--stepwise-skip",
    "--lfnf",
    "--last-failed-no-failures",
)
# Of those, the ones that change which tests run, not only their order.
_SELECTING = ("--lf", "--last-failed", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip")
_CONFIG = ("-c", "--config-file", "--rootdir", "--inifile")
# Short options that take a value (`-k expr`, `-kexpr`), and flags that take none.
_SHORT_VALUED = frozenset("kmpocWrn")
_SHORT_FLAGS = frozenset("qvxslh")
_LONG_VALUED = frozenset(
    (
        "--maxfail",
        "--tb",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--basetemp",
        "--durations",
        "--durations-min",
        "--junitxml",
        "--junit-xml",
        "--log-level",
        "--log-cli-level",
        "--color",
        "--capture",
        "--import-mode",
        "--override-ini",
        "--show-capture",
        "--verbosity",
        "--numprocesses",
        "--dist",
        "--timeout",
        "--asyncio-mode",
        *_CONFIG,
    )
)
_LONG_FLAGS = frozenset(
    (
        "--exitfirst",
        "--quiet",
        "--verbose",
        "--showlocals",
        "--strict-markers",
        "--strict-config",
        "--strict",
        "--runxfail",
        "--no-header",
        "--no-summary",
        "--disable-warnings",
        "--disable-pytest-warnings",
        "--full-trace",
        "--cache-clear",
        "--doctest-modules",
        "--no-cov",
        *_ORDERING,
    )
)


@dataclass(frozen=True)
class Call:
    """A command that runs pytest: its words, how many of them name the program (with the
    assignments before it), and where in the text the program's last word ends."""

    command: str
    words: tuple[str, ...]
    program: int
    program_end: int

    @property
    def args(self) -> tuple[str, ...]:
        return self.words[self.program :]


@functools.lru_cache(maxsize=64)  # every save reads the same command again (shlex: 20 us)
def parse_call(command: str) -> Call | None:
    """The command as a pytest run, or None when it is not one (or not surely one)."""
    if _SHELL.search(command):
        return None
    stream = io.StringIO(command)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    ends: list[int] = []
    try:
        while (word := lexer.get_token()) is not None:
            words.append(word)
            ends.append(stream.tell())
    except ValueError:  # an unclosed quote
        return None
    start = 0
    while start < len(words) and _ASSIGNMENT.match(words[start]):
        start += 1
    rest = words[start:]
    if not rest:
        return None
    name = os.path.basename(rest[0])
    module = _PYTHON.fullmatch(name) and rest[1:3] == ["-m", "pytest"]
    uv_run = rest[0] == "uv" and rest[1:2] == ["run"] and rest[2:3] and rest[2] in _PYTEST
    if name in _PYTEST:
        length = 1
    elif module or uv_run:
        length = 3
    else:
        return None
    last = start + length - 1
    return Call(command, tuple(words), start + length, ends[last])


@dataclass(frozen=True)
class Options:
    """What a list of pytest arguments says. `unsure`: an option this module does not know
    takes a value or not, so whether a word is a path is not known."""

    no_cache: bool = False
    ordering: str | None = None
    selecting: bool = False
    config: str | None = None
    separator: bool = False
    maxfail: int | None = None
    positional: str | None = None
    unsure: str | None = None


def read_options(args: Sequence[str], before: Options | None = None) -> Options:
    """Read `args` as pytest does, after what `before` (addopts) said."""
    o = before or Options()
    no_cache, ordering, selecting = o.no_cache, o.ordering, o.selecting
    config, separator, maxfail = o.config, o.separator, o.maxfail
    positional, unsure = o.positional, o.unsure
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            separator = True
            break
        if not word.startswith("-") or word == "-":
            positional = positional or word
            continue
        if word.startswith("--"):
            name, has_value, value = word.partition("=")
            if name in _LONG_VALUED and not has_value:
                value = args[index] if index < len(args) else ""
                index += 1
            elif name not in _LONG_VALUED and name not in _LONG_FLAGS and not has_value:
                unsure = unsure or name
            if name in _ORDERING:
                ordering = ordering or name
                selecting = selecting or name in _SELECTING
            elif name in _CONFIG:
                config = config or name
            elif name == "--override-ini" and value.strip().startswith("addopts"):
                config = config or word
            elif name == "--exitfirst":
                maxfail = 1
            elif name == "--maxfail":
                digits = re.fullmatch(r"[0-9]{1,9}", value.strip())
                maxfail = int(digits.group()) if digits else None
            continue
        # A cluster of short options: -xq, -kexpr, -k expr, -pno:cacheprovider.
        for position, letter in enumerate(word[1:], start=1):
            if letter in _SHORT_VALUED:
                value = word[position + 1 :]
                if not value:
                    value = args[index] if index < len(args) else ""
                    index += 1
                if letter == "p" and value.strip() == "no:cacheprovider":
                    no_cache = True
                elif letter == "c":
                    config = config or "-c"
                elif letter == "o" and value.strip().startswith("addopts"):
                    config = config or "-o addopts"
                break
            if letter == "x":
                maxfail = 1
            elif letter not in _SHORT_FLAGS:
                unsure = unsure or f"-{letter}"
    return Options(no_cache, ordering, selecting, config, separator, maxfail, positional, unsure)

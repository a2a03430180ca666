"""Which targets a Makefile has rules for: the same answers as the line-by-line reading
it replaces (kept below as an oracle), at a cost linear in the file however hostile."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_verify.planning.makefile import MAX_LINES, WANTED, has_test_rule, rule_targets
from tests.support.cost import cpu_clock
from tests.support.properties import examples

# --- the line-by-line reading this module had before, as an oracle --------------------------

_ASSIGNMENT = re.compile(
    r"^\s*(?:(?:export|override|private|unexport)\s+)*[^\s:#=]+\s*(?::::=|::=|:=|\?=|\+=|!=|=)"
)
_DEFINE = re.compile(r"^(?:(?:export|override|private)\s+)*define(?:\s|$)")


def _logical_lines(text: str) -> list[str]:
    """Physical lines joined where make joins them: at a backslash-newline."""
    lines: list[str] = []
    pending = ""
    # make splits on newlines only; str.splitlines would also split on form feeds and such.
    for raw in text.replace("\r\n", "\n").split("\n"):
        stripped = raw.rstrip("\\")
        if (len(raw) - len(stripped)) % 2 == 1:
            pending += raw[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _strip_comment(line: str) -> str:
    index = 0
    while True:
        index = line.find("#", index)
        if index < 0:
            return line
        if index == 0 or line[index - 1] != "\\":
            return line[:index]
        index += 1


def old_rule_targets(text: str) -> set[str]:
    """The targets of the rule lines at column 0.

    Recipe lines (a tab first), indented lines, `define` bodies, variable assignments
    (`test := x`, `test ?= x`) and target-specific variables (`test: X = 1`) do not count.
    """
    found: set[str] = set()
    define_depth = 0
    for line in _logical_lines(text):
        if define_depth:
            body = _strip_comment(line).strip()
            if body == "endef" or body.startswith("endef "):
                define_depth -= 1
            elif _DEFINE.match(body):
                define_depth += 1
            continue
        if not line or line[0] in " \t":
            continue
        line = _strip_comment(line)
        if _DEFINE.match(line):
            define_depth += 1
            continue
        colon = line.find(":")
        equals = line.find("=")
        if colon < 0 or (0 <= equals < colon):
            continue  # no rule separator, or `NAME = value` / `NAME ?= value`
        if _ASSIGNMENT.match(line):
            continue  # `NAME := value`, `NAME ::= value`
        targets = line[:colon].rstrip("&")
        rest = line[colon + 1 :].lstrip(":")
        if _ASSIGNMENT.match(rest):
            continue  # `target: VAR = value` sets a variable, it makes no rule
        found.update(targets.split())
    return found


# --- agreement ------------------------------------------------------------------------------

_PIECES = [
    "test",
    "tests",
    "check",
    "test-all",
    "unittest",
    "all",
    "x",
    ":",
    "::",
    "&:",
    "=",
    ":=",
    "?=",
    " ",
    "\t",
    "\n",
    "\n",
    "\\\n",
    "\\",
    "#",
    "\\#",
    "define ",
    "endef",
    "export ",
    "override ",
    ";",
    "\r\n",
    "$(X)",
]
makefiles = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)


@settings(max_examples=examples(2000), deadline=None)
@given(makefiles)
def test_the_same_targets_as_the_line_by_line_reading(text: str) -> None:
    assert rule_targets(text) == old_rule_targets(text) & WANTED


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("test:\n\ttrue\n", True),
        ("all: x\n\ttest: y\n", False),
        ("define T\ntest:\nendef\n", False),
        ("check \\\ntest: x\n", True),
        ("test := 1\n", False),
        ("a\\\\\ntest:\n", True),  # an even run of backslashes joins nothing
        ("x: \\", False),
        ("test: \\", True),  # continued into the end of the file
    ],
)
def test_rule_lines(text: str, found: bool) -> None:
    assert has_test_rule(text) is found


# --- cost -----------------------------------------------------------------------------------

MIB = 1024 * 1024


def _fill(line: str) -> str:
    return (line * (MIB // len(line) + 1))[:MIB]


@pytest.mark.parametrize(
    "text",
    [
        _fill("a:\n"),  # short rules: 0.75 s of CPU line by line
        _fill("a:\r\n"),
        _fill("test1: x\n"),  # lines that name a word like a target
        _fill("x = test\n"),
        _fill("define a\n"),
        _fill("\ttest\n"),
        _fill("a \\\n"),
        _fill("\\#test"),
        "a" + " " * (MIB - 4) + ":\n",
        _fill("export "),
        _fill("test"),
        "test:" + " " * (MIB - 8) + "=\n",
    ],
    ids=lambda text: repr(text[:12]),
)
def test_a_hostile_makefile_costs_little(text: str) -> None:
    start = cpu_clock()
    rule_targets(text)
    assert time.process_time() - start < 0.1


def test_lines_past_the_limit_are_not_read() -> None:
    text = "x = test\n" * MAX_LINES + "test:\n"
    assert not has_test_rule(text)
    assert has_test_rule("x = test\n" * (MAX_LINES - 1) + "test:\n")

"""Which targets a Makefile has rules for, as make reads it, at a cost linear in the file.

Only the targets the planner asks about matter (`test`, and those a project may use for its
tests under another name), so only the lines that name one of them, or open or close a
`define`, are read one by one; the rest are passed over by a search done in C. Rule lines
are read as before: at column 0, not a recipe, not inside a `define`, not a variable
assignment (`test := x`, `test: X = 1`), with make's backslash-newline joins.
"""

from __future__ import annotations

import re

WANTED = frozenset({"test", "tests", "check", "test-all", "unittest"})
MAX_LINES = 5_000  # lines naming a wanted target or a define read: past that, no more

# `NAME op value` at the start of a (target-specific) variable assignment.
_ASSIGNMENT = re.compile(
    r"^\s*(?:(?:export|override|private|unexport)\s+)*[^\s:#=]+\s*(?::::=|::=|:=|\?=|\+=|!=|=)"
)
_DEFINE = re.compile(r"^(?:(?:export|override|private)\s+)*define(?:\s|$)")
# A newline escaped by an odd run of backslashes: make joins the lines with a space.
_JOIN = re.compile(r"(?<!\\)((?:\\\\)*)\\\n")
_COMMENT = re.compile(r"(?<!\\)#")
_KEYWORD = re.compile("test|check|define|endef")  # each wanted target holds test or check


def has_test_rule(text: str) -> bool:
    """True when a rule line at column 0 lists `test` among its targets."""
    return "test" in rule_targets(text)


def rule_targets(text: str, wanted: frozenset[str] = WANTED) -> set[str]:
    """The `wanted` targets (each holds `test` or `check`) of the rule lines at column 0.

    Recipe lines (a tab first), indented lines, `define` bodies, variable assignments
    (`test := x`, `test ?= x`) and target-specific variables (`test: X = 1`) do not count.
    """
    if "test" not in text and "check" not in text:
        return set()
    text = text.replace("\r\n", "\n")
    if "\\\n" in text:
        text = _JOIN.sub(r"\1 ", text)
    run = len(text) - len(text.rstrip("\\"))
    if run % 2:  # the last line, continued into the end of the file
        text = text[:-1] + " "
    found: set[str] = set()
    define_depth = 0
    position = 0
    for _ in range(MAX_LINES):
        hit = _KEYWORD.search(text, position)
        if hit is None:
            break
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        end = len(text) if end < 0 else end
        position = end + 1
        line = text[start:end]
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
        found.update(_rule_line_targets(line) & wanted)
        if found >= wanted:
            break
    return found


def _rule_line_targets(line: str) -> set[str]:
    colon = line.find(":")
    equals = line.find("=")
    if colon < 0 or (0 <= equals < colon):
        return set()  # no rule separator, or `NAME = value` / `NAME ?= value`
    if _ASSIGNMENT.match(line):
        return set()  # `NAME := value`, `NAME ::= value`
    targets = line[:colon].rstrip("&")
    rest = line[colon + 1 :].lstrip(":").lstrip()  # blanks first: no backtracking over them
    if _ASSIGNMENT.match(rest):
        return set()  # `target: VAR = value` sets a variable, it makes no rule
    return set(targets.split())


def _strip_comment(line: str) -> str:
    """The line before its first `#` that no backslash escapes."""
    found = _COMMENT.search(line)
    return line if found is None else line[: found.start()]

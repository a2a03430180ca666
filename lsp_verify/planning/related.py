"""Affected first where the runner finds the related tests itself (see SPEC section 4): jest
(`--findRelatedTests FILES`) and vitest (`related FILES --run`) for an npm test script that is
one plain call of either, and `go test` (the changed files' packages first).

"Plain" is read as conservatively as pytest calls are (`pytest_args.py`): one simple command
(no `;`, `&&`, pipes, redirections, substitutions), the program `jest` or `vitest` (`vitest
run`), and options only: a word that is not an option may name what to run, or be the value
of an option this module does not know, and such a script runs as it is.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from lsp_verify.planning.plan import Plan

__all__ = ["Related", "related"]

_SHELL = re.compile(r"[;&|<>()$`\\\n#]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SOURCE = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte")


@dataclass(frozen=True)
class Related:
    """The quick phase's command (None when there is none), the files it names (relative
    to the folder), and what was done or why not, in words."""

    command: str | None
    files: tuple[str, ...]
    note: str


def related(plan: Plan, changed: Sequence[str]) -> Related:
    """The quick phase of a jest, vitest or go test plan for the absolute paths `changed`."""
    command = plan.command or ""
    if plan.runner == "npm":
        if len(plan.steps) != 1:
            why = "the npm script has pretest or posttest scripts"
            return Related(None, (), f"affected first: no quick phase: {why}")
        return _node(plan.folder, plan.steps[0], changed)
    words = _words(command)
    if words is not None and words[:2] == ["go", "test"]:
        return _go(plan.folder, command, words, changed)
    return Related(None, (), "affected first: no quick phase: only for pytest, jest, vitest, go")


def _words(script: str) -> list[str] | None:
    if _SHELL.search(script):
        return None
    try:
        words = shlex.split(script)
    except ValueError:
        return None
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def _node(folder: str, script: str, changed: Sequence[str]) -> Related:
    words = _words(script)
    program = os.path.basename(words[0]) if words else ""
    if words is None or program not in ("jest", "vitest"):
        why = f"the npm test script is not a plain jest or vitest call ({script!r})"
        return Related(None, (), f"affected first: no quick phase: {why}")
    args = words[1:]
    if program == "vitest" and args[:1] == ["run"]:
        args = args[1:]
    bare = next((a for a in args if not a.startswith("-")), None)
    if bare is not None:
        why = f"the npm test script names what to run, or an option's value ({bare!r})"
        return Related(None, (), f"affected first: no quick phase: {why}")
    files = _inside(folder, changed, _SOURCE)
    if not files:
        note = "affected first: no quick phase: no JavaScript or TypeScript file changed"
        return Related(None, (), note)
    quoted = " ".join(shlex.quote(f) for f in files)
    rest = " ".join(shlex.quote(a) for a in args)
    if program == "jest":
        quick = f"{words[0]} {rest} --passWithNoTests --findRelatedTests {quoted}"
        how = "jest --findRelatedTests"
    else:
        quick = f"{words[0]} related {quoted} --run --passWithNoTests {rest}"
        how = "vitest related"
    note = f"affected first: the tests related to what changed run first ({how})"
    return Related(" ".join(quick.split()), tuple(files), note)


def _go(folder: str, command: str, words: list[str], changed: Sequence[str]) -> Related:
    """`go test FLAGS ./...` -> `go test FLAGS ./pkg` for the changed files' packages."""
    packages = [w for w in words[2:] if not w.startswith("-")]
    if packages != ["./..."]:
        why = "the go test command does not test ./... with options only"
        return Related(None, (), f"affected first: no quick phase: {why}")
    files = _inside(folder, changed, (".go",))
    if not files:
        return Related(None, (), "affected first: no quick phase: no Go file changed")
    directories = sorted({"./" + os.path.dirname(f) if os.path.dirname(f) else "." for f in files})
    flags = [w for w in words[2:] if w.startswith("-")]
    quick = " ".join(["go", "test", *map(shlex.quote, flags), *directories])
    note = "affected first: the changed files' packages run first (go test)"
    return Related(quick, tuple(files), note)


def _inside(folder: str, changed: Sequence[str], suffixes: tuple[str, ...]) -> list[str]:
    found = []
    for path in changed:
        try:
            relative = os.path.relpath(os.path.abspath(path), folder)
        except ValueError:
            continue
        parts = relative.split(os.sep)
        if relative.startswith(os.pardir) or "node_modules" in parts:
            continue
        if relative.endswith(suffixes) and os.path.isfile(path):
            found.append(relative.replace(os.sep, "/"))
    return sorted(set(found))

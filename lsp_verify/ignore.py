"""What never triggers a run: a folder's ignore rules.

Two sources, both about places rather than times:
- built-in names, wherever they appear: version control, environments, dependencies, caches
  and build output (NEVER_TRIGGERS);
- what the repository's own `.gitignore` files ignore, at every level (a nested file's
  patterns are relative to its directory and override those above it, as in git), plus
  `.git/info/exclude`. Patterns are matched by `pathspec`'s gitwildmatch, the matcher black
  and many other tools use, so that lsp-verify agrees with git on what is ignored.

A `.gitignore` is read again only when its stat changes; one that cannot be read or
decoded counts as empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a .gitignore is first read: not before `initialize`
    from pathspec import GitIgnoreSpec

# Folders (and files) whose changes never trigger a run, at any depth.
NEVER_TRIGGERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".hypothesis",
        "build",
        "dist",
        "target",
        ".eggs",
        "htmlcov",
        ".nyc_output",
        "coverage",
        ".next",
        ".cache",
    }
)
MAX_IGNORE_FILE = 1024 * 1024  # a bigger .gitignore is not read: it counts as empty


def never_triggers_dir(rel: str) -> bool:
    """Is the folder-relative directory `rel` (or anything above it) a built-in never?"""
    return any(p in NEVER_TRIGGERS or p.endswith(".egg-info") for p in rel.split("/"))


def never_triggers_name(name: str) -> bool:
    """Does a change of a file (or folder) so named never trigger a run, wherever it is?"""
    return name in NEVER_TRIGGERS or name.endswith(".egg-info") or name.startswith(".coverage")


@dataclass(frozen=True)
class _Level:
    base: str  # folder-relative directory of the ignore file, "" at the root
    spec: GitIgnoreSpec


@dataclass(frozen=True)
class Chain:
    """The ignore files that apply inside one directory, deepest last."""

    rel_dir: str  # folder-relative, "" at the root
    levels: tuple[_Level, ...]

    def ignores(self, name: str, is_dir: bool = False) -> bool:
        """Is the entry `name` of this directory ignored by the ignore files?"""
        rel = f"{self.rel_dir}/{name}" if self.rel_dir else name
        return _decide(self.levels, rel, is_dir)


class IgnoreRules:
    """One folder's ignore rules, with each ignore file cached by its stat."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._files: dict[str, tuple[tuple[int, ...] | None, GitIgnoreSpec | None]] = {}

    def ignored(self, rel: str) -> bool:
        """Is the folder-relative path `rel` (a file) out of what triggers?"""
        head, _, name = rel.rpartition("/")
        if never_triggers_name(name):
            return True
        chain = self.chain(head)
        return chain is None or chain.ignores(name)

    def chain(self, rel_dir: str) -> Chain | None:
        """The rules inside the folder-relative directory `rel_dir` ("" for the root), or
        None when the directory itself is ignored (git cannot re-include below it)."""
        if rel_dir in (".", ""):
            rel_dir = ""
        elif never_triggers_dir(rel_dir):
            return None
        levels: list[_Level] = []
        exclude = self._spec(os.path.join(self.root, ".git", "info", "exclude"))
        if exclude is not None:
            levels.append(_Level("", exclude))
        parts = rel_dir.split("/") if rel_dir else []
        for depth in range(len(parts) + 1):
            base = "/".join(parts[:depth])
            if depth and _decide(tuple(levels), base, True):
                return None
            spec = self._spec(os.path.join(self.root, base, ".gitignore"))
            if spec is not None:
                levels.append(_Level(base, spec))
        return Chain(rel_dir, tuple(levels))

    def _spec(self, path: str) -> GitIgnoreSpec | None:
        try:
            st = os.stat(path)
            stat: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            stat = None
        cached = self._files.get(path)
        if cached is not None and cached[0] == stat:
            return cached[1]
        spec = _read_spec(path) if stat is not None else None
        if len(self._files) > 4096:  # a folder with that many ignore files: start over
            self._files.clear()
        self._files[path] = (stat, spec)
        return spec


def _read_spec(path: str) -> GitIgnoreSpec | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_IGNORE_FILE + 1)
    except OSError:
        return None
    if len(data) > MAX_IGNORE_FILE:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    from pathspec import GitIgnoreSpec

    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:  # pathspec refuses a pattern it cannot compile: the file counts as empty
        return None
    return spec if spec.patterns else None


def _decide(levels: tuple[_Level, ...], rel: str, is_dir: bool) -> bool:
    """git's answer for `rel`: the deepest ignore file with a matching pattern decides, and
    within it the last matching pattern."""
    for level in reversed(levels):
        if level.base:
            prefix = level.base + "/"
            if not rel.startswith(prefix):
                continue
            sub = rel[len(prefix) :]
        else:
            sub = rel
        result = level.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            return bool(result.include)
    return False

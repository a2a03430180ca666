"""What never triggers a run: a folder's ignore rules.

Two sources, both about places rather than times:
- built-in names, wherever they appear: version control, environments, dependencies, caches
  and build output (NEVER_TRIGGERS);
- what the repository's own `.gitignore` files ignore, at every level (a nested file's
  patterns are relative to its directory and override those above it, as in git), plus
  `.git/info/exclude`. Patterns are git's, matched by gitwildmatch.py without backtracking.

The repository writes these files, so what they cost is bounded (SPEC section 7): each file
is compiled once (by its stat, and by its inode, so that a directory reached again through a
symbolic link, even a loop, costs no new compile); what a directory says (whether it is
ignored, and the matcher states of every ignore file above it) is kept and extended one
level at a time, so that a path costs its new components only. A `.gitignore` is read again
only when its stat changes; one that cannot be read counts as empty.
"""

from __future__ import annotations

import logging
import os
from typing import Optional

from lsp_verify.config.project_file import describe_os_error, read_limited
from lsp_verify.workspace.ignore.file import PatternFile
from lsp_verify.workspace.ignore.wildmatch import TooComplex

log = logging.getLogger("lsp_verify")

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
_MAX_CACHED = 4096  # ignore files, and directories, kept; past that, start over
# The ignore files that apply in one directory, in all: past that, a deeper one counts as
# empty (each compile costs about 0.1 s a MiB; a path must not cost a compile per level).
_MAX_CHAIN_BYTES = 2 * MAX_IGNORE_FILE
# Ignore files kept compiled, in bytes of their text (compiled, one takes up to about 40
# times that): past that, start over.
_MAX_COMPILED_BYTES = 8 * MAX_IGNORE_FILE
# The matcher states kept with the directories: a bit per pattern token each, so a huge
# ignore file makes them big. Past this many bytes in all, the directories start over.
_MAX_STATE_BYTES = 32 * 1024 * 1024


def never_triggers_dir(rel: str) -> bool:
    """Is the folder-relative directory `rel` (or anything above it) a built-in never?"""
    return any(p in NEVER_TRIGGERS or p.endswith(".egg-info") for p in rel.split("/"))


def never_triggers_name(name: str) -> bool:
    """Does a change of a file (or folder) so named never trigger a run, wherever it is?"""
    return name in NEVER_TRIGGERS or name.endswith(".egg-info") or name.startswith(".coverage")


_State = Optional[tuple[int, ...]]  # a path matcher's state; None: at its start


class _Level:
    """One ignore file that applies below its directory."""

    __slots__ = ("file", "skip")

    def __init__(self, file: PatternFile, skip: int) -> None:
        self.file = file
        self.skip = skip  # bytes of a folder-relative path before the part relative to it


class Chain:
    """A directory, with the ignore files that apply inside it (deepest last) and each one's
    path-matcher state after reading this directory's path from that file's directory."""

    __slots__ = ("files", "ignored", "levels", "parent", "path", "stat", "states")

    def __init__(
        self,
        parent: Chain | None,
        path: bytes,
        stat: tuple[int, ...] | None,
        levels: tuple[_Level, ...] = (),
        states: tuple[_State, ...] = (),
        ignored: bool = False,
    ) -> None:
        self.parent = parent  # what this was worked out from; a new parent makes it stale
        self.path = path  # folder-relative, b"" at the root
        self.stat = stat  # of the directory's own ignore file when this was made
        self.levels = levels
        self.states = states
        self.ignored = ignored  # the directory itself: nothing below it can be re-included
        self.files: dict[tuple[int, ...], int] = {}  # the ignore files read (stat: bytes)

    def ignores(self, name: str, is_dir: bool = False) -> bool:
        """Is the entry `name` of this directory ignored by the ignore files?"""
        return self.decide(os.fsencode(name), is_dir)[0]

    def decide(self, name: bytes, is_dir: bool) -> tuple[bool, list[_State]]:
        """git's answer for `name`: the deepest ignore file with a matching pattern decides,
        and within it the last matching pattern. Also each level's state after `name`."""
        path = self.path + b"/" + name if self.path else name
        afters = [level.file.path_state(s, name) for level, s in zip(self.levels, self.states)]
        for level, after in zip(reversed(self.levels), reversed(afters)):
            decision = level.file.decide(name, path[level.skip :], after, is_dir)
            if decision is not None:
                return decision, afters
        return False, afters


class IgnoreRules:
    """One folder's ignore rules: each ignore file compiled once, each directory kept."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._compiled: dict[tuple[int, ...], PatternFile | None] = {}
        self._compiled_bytes = 0  # of the files compiled and kept
        self._chains: dict[str, Chain] = {}
        self._state_bytes = 0  # of the states the kept directories hold
        self._warned: set[tuple[int, ...]] = set()

    def ignored(self, rel: str) -> bool:
        """Is the folder-relative path `rel` (a file) out of what triggers?"""
        head, _, name = rel.rpartition("/")
        if never_triggers_name(name):
            return True
        chain = self.chain(head)
        return chain is None or chain.ignores(name)

    def chain(self, rel_dir: str) -> Chain | None:
        """The rules inside the folder-relative directory `rel_dir` ("" for the root), or
        None when the directory itself is ignored (git cannot re-include below it).

        Costs a stat per level (an edited ignore file anywhere above counts at once), and
        matching only for the levels not seen before."""
        if rel_dir in (".", ""):
            rel_dir = ""
        elif never_triggers_dir(rel_dir):
            return None
        node = self._root()
        key = ""
        for part in rel_dir.split("/") if rel_dir else ():
            key = f"{key}/{part}" if key else part
            stat = _stat(os.path.join(self.root, key, ".gitignore"))
            child = self._chains.get(key)
            if child is None or child.parent is not node or child.stat != stat:
                child = self._child(node, key, part, stat)
            if child.ignored:
                return None
            node = child
        return node

    def _root(self) -> Chain:
        exclude_path = os.path.join(self.root, ".git", "info", "exclude")
        exclude_stat = _stat(exclude_path)
        stat = _stat(os.path.join(self.root, ".gitignore"))
        root = self._chains.get("")
        base = root.parent if root is not None else None  # it keeps the exclude file's stat
        if root is not None and base is not None and (root.stat, base.stat) == (stat, exclude_stat):
            return root
        levels: list[_Level] = []
        for path, file_stat in (
            (exclude_path, exclude_stat),
            (os.path.join(self.root, ".gitignore"), stat),
        ):
            compiled = self._compile(path, file_stat)
            if compiled is not None:
                levels.append(_Level(compiled, 0))
        base = Chain(None, b"", exclude_stat)
        root = Chain(base, b"", stat, tuple(levels), tuple(None for _ in levels))
        root.files = {s: s[2] for s in (exclude_stat, stat) if s is not None}
        self._chains = {"": root}
        self._state_bytes = 0
        return root

    def _child(self, parent: Chain, key: str, part: str, stat: tuple[int, ...] | None) -> Chain:
        name = os.fsencode(part)
        path = os.fsencode(key)
        ignored, afters = parent.decide(name, True)
        if ignored:
            child = Chain(parent, path, stat, ignored=True)
        else:
            levels = parent.levels
            states: tuple[_State, ...] = tuple(
                level.file.path_state(after, b"/") for level, after in zip(levels, afters)
            )
            own, files = self._own_file(parent, key, stat)
            if own is not None:
                levels += (_Level(own, len(path) + 1),)
                states += (None,)
            child = Chain(parent, path, stat, levels, states)
            child.files = files
        size = sum(s.bit_length() for state in child.states if state for s in state) // 8
        self._state_bytes += size
        if len(self._chains) >= _MAX_CACHED or self._state_bytes > _MAX_STATE_BYTES:
            self._chains = {"": self._chains[""]}
            self._state_bytes = size
        self._chains[key] = child
        return child

    def _own_file(
        self, parent: Chain, key: str, stat: tuple[int, ...] | None
    ) -> tuple[PatternFile | None, dict[tuple[int, ...], int]]:
        """The ignore file of the directory `key`, compiled, unless with the distinct files
        above it (a symlinked one counts once) it is past _MAX_CHAIN_BYTES; the files read."""
        path = os.path.join(self.root, key, ".gitignore")
        files = parent.files
        if stat is None or stat in files:
            return self._compile(path, stat), files
        if sum(files.values()) + stat[2] > _MAX_CHAIN_BYTES:
            self._warn(
                stat,
                f"{path} is not read: with the ignore files above it, over "
                f"{_MAX_CHAIN_BYTES >> 20} MiB; it counts as empty",
            )
            return None, files
        return self._compile(path, stat), {**files, stat: stat[2]}

    def _compile(self, path: str, stat: tuple[int, ...] | None) -> PatternFile | None:
        """The ignore file at `path`, compiled once per content: by its stat, which names the
        inode, so that a file reached again through a symbolic link is not compiled again."""
        if stat is None:
            return None
        if stat in self._compiled:
            return self._compiled[stat]
        compiled: PatternFile | None = None
        try:
            data = read_limited(path, MAX_IGNORE_FILE)
            compiled = PatternFile(data)
        except OSError as exc:  # a directory, a FIFO, too big: it counts as empty
            self._warn(stat, f"{path} is not read ({describe_os_error(exc)}): it counts as empty")
        except TooComplex as exc:
            self._warn(stat, f"{path} has {exc}: it counts as empty")
        if compiled is not None and not compiled.count:
            compiled = None
        if len(self._compiled) >= _MAX_CACHED or self._compiled_bytes > _MAX_COMPILED_BYTES:
            self._compiled.clear()  # the chains keep what they use
            self._compiled_bytes = 0
        self._compiled[stat] = compiled
        self._compiled_bytes += stat[2]
        return compiled

    def _warn(self, stat: tuple[int, ...], text: str) -> None:
        if stat not in self._warned and len(self._warned) < _MAX_CACHED:
            self._warned.add(stat)
            log.warning("%s", text)


def _stat(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

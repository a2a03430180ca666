"""Affected first for pytest (see SPEC section 4): the test files that import what changed
since the folder's last run, directly or through the project's own modules.

What changed: the files named (the saved document, `check --changed`) and every file whose
modification time or size differs from the graph kept at the last run (kept in memory and in
`$XDG_CACHE_HOME/lsp-verify/imports/`, so that `check` sees what changed since the last
`check` or save). A test file is affected when it imports a changed file, directly or through
other files of the folder, or when a conftest.py above it does. Everything is affected, and
the quick phase left out, when a conftest.py, a manifest or pytest's configuration changed,
a changed file cannot be parsed (its imports are unknown), or a file was removed.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import fnmatch
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_verify.config.project_file import read_limited
from lsp_verify.planning.imports import MANIFESTS, Entry, Graph, scan
from lsp_verify.planning.pytest_config import PytestConfig
from lsp_verify.record import Affected

__all__ = ["MAX_SELECTED", "select"]

MAX_SELECTED = 300  # test files on one command line; past it the quick phase is no quicker
MAX_LISTED = 50  # changed files named in the record
_PARSED_AT_MOST = 50  # changed files parsed whole, for a syntax error
_VERSION = 1
_memory: dict[str, dict[str, Entry]] = {}
_lock = threading.Lock()


def select(
    folder: str,
    config: PytestConfig,
    named: Sequence[str] = (),
    *,
    remember: bool = True,
) -> Affected:
    """What affected-first runs first in `folder`; `named`: absolute paths said to have
    changed. `remember`: keep this scan as the last run's (False for `explain`)."""
    previous = _load(folder)
    graph = scan(folder, previous, config.pythonpath, config.python_files)
    if remember and graph.problem is None:
        _store(folder, graph.entries, changed=previous is None or bool(graph.changed))
    if graph.problem is not None:
        return Affected(f"affected first: left out: {graph.problem}")
    changed = sorted({*graph.changed, *_inside(folder, named)})
    if not changed:
        return Affected("affected first: nothing changed since the last run")
    listed = tuple(changed[:MAX_LISTED])  # a checkout changes thousands: the record names some
    everything = _affects_everything(graph, changed, config)
    if everything is not None:
        note = f"affected first: left out: {everything}: every test is affected"
        return Affected(note, listed)
    tests = [path for path in graph.entries if _is_test(path, config)]
    parents = _reach(graph, changed, tests)
    selected = sorted(path for path in tests if path in parents)
    if not selected:
        return Affected("affected first: no test file imports what changed", listed)
    if len(selected) * 2 > len(tests):
        note = (
            f"affected first: left out: {len(selected)} of {len(tests)} test files are "
            "affected, more than half the suite"
        )
        return Affected(note, listed)
    if len(selected) > MAX_SELECTED:
        note = f"affected first: left out: {len(selected)} test files, more than {MAX_SELECTED}"
        return Affected(note, listed)
    chain = _chain(parents, selected[0])
    note = f"affected first: {len(selected)} of {len(tests)} test files import what changed"
    return Affected(note, listed, tuple(selected), chain)


def _inside(folder: str, named: Iterable[str]) -> Iterable[str]:
    for path in named:
        try:
            relative = os.path.relpath(os.path.abspath(path), folder)
        except ValueError:  # another drive
            continue
        if not relative.startswith(os.pardir) and not os.path.isdir(path):
            yield relative.replace(os.sep, "/")


def _affects_everything(graph: Graph, changed: Sequence[str], config: PytestConfig) -> str | None:
    settings = os.path.basename(config.path) if config.path else None
    parsed = 0
    for path in changed:
        name = path.rpartition("/")[2]
        entry = graph.entries.get(path)
        if name == "conftest.py" or name in MANIFESTS or path == settings:
            return f"{path} changed"
        if entry is None:
            if path.endswith(".py") and not os.path.exists(os.path.join(graph.folder, path)):
                return f"{path} was removed"
            continue
        if entry.unreadable:
            return f"{path} cannot be read"
        if path.endswith(".py") and parsed < _PARSED_AT_MOST:
            parsed += 1
            if not _parses(os.path.join(graph.folder, path)):
                return f"{path} does not parse (its imports are unknown)"
    return None


def _parses(path: str) -> bool:
    try:
        ast.parse(read_limited(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _is_test(path: str, config: PytestConfig) -> bool:
    """Whether a run with no paths collects `path` (relative to the rootdir, the folder)."""
    directory, _, name = path.rpartition("/")
    if not any("/" not in p and fnmatch.fnmatch(name, p) for p in config.python_files):
        return False
    if config.testpaths and not any(_under(path, t) for t in config.testpaths):
        return False
    segments = directory.split("/") if directory else []
    return not any(fnmatch.fnmatch(s, p) for s in segments for p in config.norecursedirs)


def _under(path: str, testpath: str) -> bool:
    base = os.path.normpath(testpath).replace(os.sep, "/")
    if any(c in base for c in "*?["):
        return fnmatch.fnmatch(path.split("/")[0], base)
    return base == "." or path == base or path.startswith(base + "/")


def _reach(graph: Graph, changed: Sequence[str], tests: Sequence[str]) -> dict[str, str | None]:
    """Every file that depends on a changed one, with the file it was reached through
    (None for a changed file). A conftest.py reached makes each test file below it reached."""
    importers = graph.importers()
    parents: dict[str, str | None] = {path: None for path in changed}
    queue = collections.deque(changed)
    while queue:
        current = queue.popleft()
        followers = set(importers.get(current, ()))
        directory, _, name = current.rpartition("/")
        if name == "conftest.py":
            prefix = f"{directory}/" if directory else ""
            followers.update(t for t in tests if t.startswith(prefix))
        for follower in sorted(followers):
            if follower not in parents:
                parents[follower] = current
                queue.append(follower)
    return parents


def _chain(parents: Mapping[str, str | None], start: str) -> tuple[str, ...]:
    chain = [start]
    while True:
        parent = parents.get(chain[-1])
        if parent is None or parent in chain:
            return tuple(chain)
        chain.append(parent)


# ----- the graph kept from the last run -----


def _cache_file(folder: str) -> Path | None:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    except (RuntimeError, KeyError):
        return None
    if not base.is_absolute():
        return None
    key = hashlib.sha256(os.path.realpath(folder).encode("utf-8", "surrogatepass")).hexdigest()
    return base / "lsp-verify" / "imports" / f"{key[:32]}.json"


def _load(folder: str) -> dict[str, Entry] | None:
    with _lock:
        known = _memory.get(folder)
    if known is not None:
        return known
    path = _cache_file(folder)
    if path is None:
        return None
    try:
        data = json.loads(path.read_bytes())
        if data.get("version") != _VERSION or data.get("folder") != folder:
            return None
        return {name: _entry(value) for name, value in data["files"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None  # no cache, or not ours: the first scan compares with nothing


def _entry(value: Any) -> Entry:
    """One file of the cache as `_store` wrote it; a TypeError or ValueError otherwise."""
    mtime, size, unreadable, imports = value
    read = tuple((int(i[0]), str(i[1]), tuple(str(n) for n in i[2])) for i in imports)
    return Entry((int(mtime), int(size)), read, bool(unreadable))


def _store(folder: str, entries: Mapping[str, Entry], changed: bool) -> None:
    with _lock:
        _memory[folder] = dict(entries)
    path = _cache_file(folder)
    if path is None or (not changed and path.exists()):
        return
    files = {
        name: [e.key[0], e.key[1], e.unreadable, [list(i) for i in e.imports]]
        for name, e in entries.items()
    }
    text = json.dumps({"version": _VERSION, "folder": folder, "files": files})
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".imports-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError:
        # A cache that cannot be written: the next process compares with nothing.
        if temporary is not None and os.path.exists(temporary):
            with contextlib.suppress(OSError):
                os.unlink(temporary)

"""A static import graph of a folder's own Python files, for affected-first (see SPEC section
4): which files import which, read without running anything.

Each file's import statements are found by a scan of its lines (`import ...`, `from ...
import ...`, at any indentation) rather than a full parse: a full `ast.parse` of 5 000 files
costs seconds, the scan a tenth of one. The scan over-reads (an `import x` line inside a
docstring adds an edge that may not exist) and under-reads (`__import__`, importlib, an import
after `;` or `:` on a line): more tests in the quick phase, or fewer; the full command still
decides. What each file imports is kept with its modification time and size, so a scan after
a few changes reads only the changed files.

Module names resolve as Python would find them under pytest: from the folder, from `src/`,
from the configured `pythonpath`, and from each directory that is not a package (pytest's
`prepend` import mode puts a test module's first non-package directory on `sys.path`).
Importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` too; namespace packages (no
`__init__.py`) resolve the same way; relative imports resolve by directory.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lsp_verify.config.project_file import read_limited

__all__ = ["MAX_FILES", "MAX_READ_BYTES", "Entry", "Graph", "Import", "read_imports", "scan"]

MAX_FILES = 50_000
MAX_FILE_BYTES = 1024 * 1024
MAX_READ_BYTES = 256 * 1024 * 1024  # a scan's reading, whatever the files: a bounded wait
# Directories no project's own importable code lives in (pytest's default norecursedirs, the
# byte-code caches, eggs): never walked.
_SKIPPED = frozenset(("_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"))
# Files beside the Python files whose change affects every test.
MANIFESTS = frozenset(
    ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", ".pytest.ini", "setup.py")
)

_STATEMENT = re.compile(r"^[ \t]*(?:import|from)[ \t\\(]", re.M)
_IMPORT = re.compile(r"import\s+(.+)", re.S)
_FROM = re.compile(r"from\s+(\.*)\s*([\w.]*)\s+import\s*(.+)", re.S)
_NAME = re.compile(r"[^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*")

# (level, module, names): `import a.b` is (0, "a.b", ()); `from ..c import d, e` is
# (2, "c", ("d", "e")).
Import = tuple[int, str, tuple[str, ...]]


@dataclass(frozen=True)
class Entry:
    """One file as last read: its (mtime_ns, size), its import statements, and whether they
    could not be read (too big, not readable): such a file is taken to affect everything."""

    key: tuple[int, int]
    imports: tuple[Import, ...] = ()
    unreadable: bool = False


@dataclass(frozen=True)
class Graph:
    """A folder's files (paths relative to it, with `/`) and what each imports.

    changed: the files whose key differs from the previous scan's, or that are new or gone
    (empty for a first scan: nothing to compare with). edges: file -> the files it imports.
    problem: why the folder could not be scanned (too many files), or None."""

    folder: str
    entries: Mapping[str, Entry]
    edges: Mapping[str, frozenset[str]] = field(default_factory=dict)
    changed: tuple[str, ...] = ()
    problem: str | None = None

    def importers(self) -> dict[str, set[str]]:
        """file -> the files that import it."""
        reverse: dict[str, set[str]] = {}
        for source, targets in self.edges.items():
            for target in targets:
                reverse.setdefault(target, set()).add(source)
        return reverse


def read_imports(text: str) -> tuple[Import, ...]:
    """The import statements of a module's source, by a scan of its lines."""
    found: list[Import] = []
    consumed = 0  # each line is read as part of one statement at most: linear in the text
    for match in _STATEMENT.finditer(text):
        if match.start() < consumed:
            continue
        statement, consumed = _logical_line(text, match.start())
        for part in statement.split(";"):
            parsed = _parse_statement(part.strip())
            if parsed is not None:
                found.extend(parsed)
    return tuple(dict.fromkeys(found))


def _logical_line(text: str, start: int) -> tuple[str, int]:
    """The statement from `start`: one line, or more while a parenthesis is open or the line
    ends with a backslash; comments left out. At most 200 lines. And where it ends."""
    lines: list[str] = []
    depth = 0
    position = start
    for _ in range(200):
        end = text.find("\n", position)
        line = text[position:] if end < 0 else text[position:end]
        code = line.split("#", 1)[0]
        depth += code.count("(") - code.count(")")
        continued = code.rstrip().endswith("\\")
        lines.append(code.rstrip().rstrip("\\"))
        if end < 0:
            return " ".join(lines).strip(), len(text)
        position = end + 1
        if depth <= 0 and not continued:
            break
    return " ".join(lines).strip(), position


def _parse_statement(statement: str) -> list[Import] | None:
    if statement.startswith("from"):
        match = _FROM.fullmatch(statement)
        if match is None:
            return None
        level = len(match.group(1))
        module = re.sub(r"\s+", "", match.group(2))
        if not level and not module:
            return None
        names = tuple(_names(match.group(3).strip().strip("()")))
        return [(level, module, tuple(n for n in names if "." not in n))]
    match = _IMPORT.fullmatch(statement)
    if match is None:
        return None
    return [(0, name, ()) for name in _names(match.group(1))]


def _names(listing: str) -> Iterable[str]:
    """`a.b as c, d` -> a.b, d (an `as` name is the importer's own)."""
    for item in listing.split(","):
        found = _NAME.match(item.strip())
        if found is not None:
            yield re.sub(r"\s+", "", found.group())


def scan(
    folder: str,
    previous: Mapping[str, Entry] | None = None,
    pythonpath: Iterable[str] = (),
    python_files: Iterable[str] = ("test_*.py", "*_test.py"),
) -> Graph:
    """The folder's graph now; files whose key matches `previous` are not read again.
    `pythonpath` and `python_files` as pytest's configuration says (the test modules'
    directories are on sys.path)."""
    entries: dict[str, Entry] = {}
    old = previous or {}
    budget = MAX_READ_BYTES
    for relative, key in _walk(folder):
        if len(entries) >= MAX_FILES:
            return Graph(folder, entries, problem=f"more than {MAX_FILES} Python files")
        known = old.get(relative)
        if known is not None and known.key == key:
            entries[relative] = known
        elif relative.endswith(".py"):
            budget -= key[1] if key[1] <= MAX_FILE_BYTES else 0  # a bigger one is not read
            if budget < 0:
                why = f"more than {MAX_READ_BYTES // 2**20} MiB of Python to read"
                return Graph(folder, entries, problem=why)
            entries[relative] = _read(os.path.join(folder, relative), key)
        else:
            entries[relative] = Entry(key)
    changed: tuple[str, ...] = ()
    if previous is not None:
        gone = [path for path in old if path not in entries]
        moved = [path for path, entry in entries.items() if old.get(path) != entry]
        changed = tuple(sorted({*gone, *moved}))
    edges = _resolve(entries, _roots(entries, pythonpath, tuple(python_files)))
    return Graph(folder, entries, edges, changed)


def _walk(folder: str) -> Iterable[tuple[str, tuple[int, int]]]:
    """(relative path, key) of each Python file under `folder`, and of the manifests at its
    top; never follows a directory link out of the tree's order, never raises."""
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            with os.scandir(os.path.join(folder, relative)) as items:
                listing = list(items)
        except OSError:
            continue
        for item in listing:
            name = item.name
            path = f"{relative}/{name}" if relative else name
            try:
                if item.is_dir(follow_symlinks=False):
                    if _walked(item.path, name):
                        pending.append(path)
                    continue
                if not (name.endswith(".py") or (not relative and name in MANIFESTS)):
                    continue
                info = item.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):  # never a FIFO or a device behind a link
                yield path, (info.st_mtime_ns, info.st_size)


def _walked(path: str, name: str) -> bool:
    if name.startswith(".") or name in _SKIPPED or name == "__pycache__":
        return False
    if name.endswith((".egg", ".egg-info", ".dist-info")):
        return False
    return not os.path.exists(os.path.join(path, "pyvenv.cfg"))


def _read(path: str, key: tuple[int, int]) -> Entry:
    if key[1] > MAX_FILE_BYTES:
        return Entry(key, unreadable=True)
    try:
        data = read_limited(path, MAX_FILE_BYTES)
    except OSError:
        return Entry(key, unreadable=True)
    return Entry(key, read_imports(data.decode("utf-8", errors="replace")))


def _roots(
    entries: Mapping[str, Entry], pythonpath: Iterable[str], python_files: tuple[str, ...]
) -> frozenset[str]:
    """The directories (relative, "" for the folder) that module names are found from: the
    folder, src/, `pythonpath`, and the first directory above each test module and
    conftest.py that is not a package (where pytest's `prepend` mode imports them from)."""
    roots = {"", "src", *(_clean(p) for p in pythonpath)}
    packages = {path.rpartition("/")[0] for path in entries if path.endswith("__init__.py")}
    for path in entries:
        directory, _, name = path.rpartition("/")
        if name != "conftest.py" and not any(fnmatch.fnmatch(name, p) for p in python_files):
            continue
        while directory in packages and directory:
            directory = directory.rpartition("/")[0]
        if directory not in packages:
            roots.add(directory)
    return frozenset(roots)


def _clean(path: str) -> str:
    normal = os.path.normpath(path).replace(os.sep, "/")
    return "" if normal == "." else normal


def _resolve(entries: Mapping[str, Entry], roots: frozenset[str]) -> dict[str, frozenset[str]]:
    # Module paths ("a/b/c" for .../a/b/c.py and .../a/b/c/__init__.py) under each root that
    # holds the file: one dictionary look-up per module an import names.
    modules: dict[str, list[str]] = {}
    for path in entries:
        if not path.endswith(".py"):
            continue
        stem = path[: -len("/__init__.py")] if path.endswith("/__init__.py") else path[:-3]
        if stem == "__init__" or not stem:
            continue
        if "" in roots:
            modules.setdefault(stem, []).append(path)
        slash = stem.find("/")
        while slash >= 0:
            if stem[:slash] in roots:
                modules.setdefault(stem[slash + 1 :], []).append(path)
            slash = stem.find("/", slash + 1)
    memo: dict[str, tuple[str, ...]] = {}

    def absolute(module: str) -> tuple[str, ...]:
        """The files `import module` runs: each package's __init__.py on the way, then it."""
        if module not in memo:
            parts = module.split(".")
            found: list[str] = []
            for depth in range(1, len(parts) + 1):
                found.extend(modules.get("/".join(parts[:depth]), ()))
            memo[module] = tuple(found)
        return memo[module]

    edges: dict[str, frozenset[str]] = {}
    for path, entry in entries.items():
        targets: set[str] = set()
        for level, module, names in entry.imports:
            if level:
                targets.update(_relative(entries, path, level, module, names))
            else:
                targets.update(absolute(module))
                prefix = module.replace(".", "/")
                for name in names:
                    targets.update(modules.get(f"{prefix}/{name}", ()))
        targets.discard(path)
        if targets:
            edges[path] = frozenset(targets)
    return edges


def _relative(
    entries: Mapping[str, Entry], path: str, level: int, module: str, names: tuple[str, ...]
) -> list[str]:
    """The files of `from .{level}module import names` in `path`, found by directory."""
    directory = path.rpartition("/")[0]
    for _ in range(level - 1):
        if not directory:
            return []  # above the folder: not the project's own
        directory = directory.rpartition("/")[0]
    base = [directory] if directory else []
    parts = [p for p in module.split(".") if p]
    found: list[str] = []
    for depth in range(len(parts) + 1):
        stem = "/".join(base + parts[:depth])
        found.extend(_at(entries, stem, package_only=depth < len(parts) or not parts))
    for name in names:
        found.extend(_at(entries, "/".join(base + parts + [name])))
    return found


def _at(entries: Mapping[str, Entry], stem: str, package_only: bool = False) -> list[str]:
    """The files of the module at `stem` (a package's __init__.py, or stem.py)."""
    init = f"{stem}/__init__.py" if stem else "__init__.py"
    candidates = [init] if package_only or not stem else [init, f"{stem}.py"]
    return [c for c in candidates if c in entries]

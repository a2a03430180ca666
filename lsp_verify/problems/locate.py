"""Paths as tools print them -> files inside the workspace folder."""

from __future__ import annotations

import functools
import os

# Installed or generated code inside a folder: a traceback frame there is not where the
# user's failure is, even though the file is inside the folder.
NOT_PROJECT = frozenset(
    {
        "node_modules",
        "site-packages",
        "dist-packages",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".git",
        "__pypackages__",
    }
)
_CACHE_SIZE = 1024
_CACHE_KEY = 1024
_FIND_MAX_BYTES = 4 * 1024 * 1024


class FolderLocator:
    """Resolves paths relative to `folder` (or absolute) and remembers the answers.

    A path counts when it names an existing regular file inside the folder, compared first as
    written (normalised) and then with symlinks resolved, because tools print either form.
    """

    def __init__(self, folder: str) -> None:
        self.folder = os.path.normpath(os.path.abspath(folder))
        self._cache: dict[str, str | None] = {}
        self._lines: dict[tuple[str, tuple[str, ...]], int | None] = {}

    @functools.cached_property
    def _real(self) -> str:
        return os.path.realpath(self.folder)

    def relative(self, path: str) -> str | None:
        try:
            return self._cache[path]
        except KeyError:
            pass
        result = self._resolve(path)
        if len(path) <= _CACHE_KEY:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.clear()
            self._cache[path] = result
        return result

    def is_project(self, path: str) -> bool:
        rel = self.relative(path)
        if rel is None:
            return False
        return not any(part in NOT_PROJECT for part in rel.split("/")[:-1])

    def find_line(self, path: str, starts: tuple[str, ...]) -> int | None:
        rel = self.relative(path)
        if rel is None or not starts:
            return None
        key = (rel, starts)
        if key in self._lines:
            return self._lines[key]
        found: int | None = None
        try:
            with open(os.path.join(self.folder, rel), encoding="utf-8", errors="replace") as handle:
                seen = 0
                for number, line in enumerate(handle, 1):
                    seen += len(line)
                    if seen > _FIND_MAX_BYTES:
                        break
                    if line.lstrip().startswith(starts):
                        found = number
                        break
        except OSError:
            found = None
        if len(self._lines) >= _CACHE_SIZE:
            self._lines.clear()
        self._lines[key] = found
        return found

    def _resolve(self, path: str) -> str | None:
        if not path or "\x00" in path:
            return None
        if path.startswith("file://"):
            path = path[len("file://") :]
        if os.path.isabs(path):
            candidate = os.path.normpath(path)
        else:
            candidate = os.path.normpath(os.path.join(self.folder, path))
        rel = _under(candidate, self.folder)
        if rel is None:
            try:
                rel = _under(os.path.realpath(candidate), self._real)
            except (OSError, ValueError):
                rel = None
        if rel is None or not os.path.isfile(os.path.join(self.folder, rel)):
            return None
        return rel.replace(os.sep, "/")


def _under(path: str, base: str) -> str | None:
    prefix = base if base.endswith(os.sep) else base + os.sep
    if path.startswith(prefix) and len(path) > len(prefix):
        return path[len(prefix) :]
    return None

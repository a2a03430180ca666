"""One `.gitignore` (or `.git/info/exclude`), compiled: git's answer for a path in it.

The lines are read as git's dir.c reads them: a UTF-8 byte-order mark at the start goes, a
line is cut at a carriage return before its newline (and, being a C string, at a NUL),
`#` starts a comment, trailing spaces go unless a backslash escapes one, `!` negates, a
trailing `/` matches directories only. A pattern without another slash matches the last
component of a path (its name); any other matches the path from the file's directory, a
leading `/` only anchoring it.

Names and paths without glob characters, and names like `*.log`, are dictionary lookups;
the rest go to the bit-parallel matcher (gitwildmatch.py). `**/x`, where x is one segment,
is the name pattern x (gitignore(5): "**/foo matches file or directory foo anywhere"), which
keeps the path matcher to the patterns that need it.
"""

from __future__ import annotations

import re

from lsp_verify.workspace.ignore.tokens import SPECIALS
from lsp_verify.workspace.ignore.wildmatch import Globs, TooComplex

_BOM = b"\xef\xbb\xbf"
_LEADING_STARSTAR = re.compile(rb"\*\*+/")
# A line that is a name and nothing else (most lines of a big file): no comment, negation,
# glob character, slash, carriage return, NUL or trailing space.
_PLAIN_NAME = re.compile(rb"[^#!*?[\\/\x00\r][^*?[\\/\x00\r]*(?<! )")
_UNUSUAL_END = b" \r"
MAX_PATTERNS = 50_000  # patterns other than plain names: past that, the file is too complex


class PatternFile:
    """One ignore file. The path matcher is read incrementally: a caller keeps its state
    after `dir/` and reads only the next component from there."""

    def __init__(self, data: bytes) -> None:
        if data.startswith(_BOM):
            data = data[len(_BOM) :]
        # A line that comes again later can never be the last to match: read the last one.
        lines = list(dict.fromkeys(reversed(data.split(b"\n"))))
        lines.reverse()
        plain = _PLAIN_NAME.fullmatch
        # Each pattern's index is its line's: only their order counts.
        self._names: dict[bytes, int] = {}
        self._names_file: dict[bytes, int] = {}
        self._suffixes: dict[bytes, int] = {}
        self._suffixes_file: dict[bytes, int] = {}
        self._paths: dict[bytes, int] = {}
        self._paths_file: dict[bytes, int] = {}
        self._name_globs = Globs(pathname=False)
        self._path_globs = Globs(pathname=True)
        self._negative = bytearray(len(lines))
        plain_names: dict[bytes, int] = {}
        others = 0
        for index, raw in enumerate(lines):
            if plain(raw):
                plain_names[raw] = index
            elif raw and raw[0] != 0x23:  # `#`: a comment (checked before the \r goes)
                others += 1
                if others > MAX_PATTERNS:
                    raise TooComplex(f"more than {MAX_PATTERNS} patterns other than plain names")
                if raw[-1] in _UNUSUAL_END or 0 in raw:
                    raw = _trim_trailing_spaces(raw.partition(b"\0")[0].removesuffix(b"\r"))
                self._add(raw, index)
        self.count = len(plain_names) + others
        for names in (self._names, self._names_file):
            if names:
                names.update((n, i) for n, i in plain_names.items() if i > names.get(n, -1))
            else:
                names.update(plain_names)
        self._suffix_lengths = sorted({len(s) for s in self._suffixes})
        self._name_globs.finish()
        self._path_globs.finish()
        self._name_cache: dict[tuple[bytes, bool], int] = {}

    def _add(self, line: bytes, index: int) -> None:
        negative = line.startswith(b"!")
        if negative:
            line = line[1:]
            self._negative[index] = 1
        dir_only = line.endswith(b"/")
        if dir_only:
            line = line[:-1]
        if not line:
            return  # matches nothing
        if b"/" in line:
            line = line[1:] if line.startswith(b"/") else line
            leading = _LEADING_STARSTAR.match(line)
            if leading is None or b"/" in line[leading.end() :]:
                self._add_path(line, index, dir_only)
                return
            line = line[leading.end() :]  # `**/name`: the name pattern `name`
        special = SPECIALS.search(line)
        if special is None:
            _put(self._names, self._names_file, line, index, dir_only)
        elif line[0] == 0x2A and SPECIALS.search(line, 1) is None:  # `*literal`
            _put(self._suffixes, self._suffixes_file, line[1:], index, dir_only)
        else:
            self._name_globs.add(line, index, dir_only)

    def _add_path(self, line: bytes, index: int, dir_only: bool) -> None:
        special = SPECIALS.search(line)
        if special is None:
            _put(self._paths, self._paths_file, line, index, dir_only)
        else:
            # git compares the part before the first glob character as it is, then
            # wildmatches the rest as a pattern of its own.
            self._path_globs.add(line, index, dir_only, special.start())

    def path_state(self, state: tuple[int, ...] | None, text: bytes) -> tuple[int, ...] | None:
        """The path matcher's state after `text`, from `state` (None: the start)."""
        if not self._path_globs:
            return None
        return self._path_globs.run(state, text)

    def decide(
        self, name: bytes, path: bytes, after: tuple[int, ...] | None, is_dir: bool
    ) -> bool | None:
        """Ignored (True), re-included (False) or not named (None): `name` is the last
        component, `path` the whole path from the file's directory, `after` the path
        matcher's state after reading it."""
        best = self._name_index(name, is_dir)
        paths = self._paths if is_dir else self._paths_file
        if paths:
            best = max(best, paths.get(path, -1))
        if after is not None:
            best = max(best, self._path_globs.last_match(after, is_dir))
        return None if best < 0 else not self._negative[best]

    def _name_index(self, name: bytes, is_dir: bool) -> int:
        key = (name, is_dir)
        cached = self._name_cache.get(key)
        if cached is not None:
            return cached
        best = (self._names if is_dir else self._names_file).get(name, -1)
        suffixes = self._suffixes if is_dir else self._suffixes_file
        for length in self._suffix_lengths:
            if length > len(name):
                break
            best = max(best, suffixes.get(name[len(name) - length :], -1))
        if self._name_globs:
            globs = self._name_globs
            best = max(best, globs.last_match(globs.run(None, name), is_dir))
        if len(self._name_cache) >= 4096:
            self._name_cache.clear()
        self._name_cache[key] = best
        return best


def _trim_trailing_spaces(line: bytes) -> bytes:
    """git's trim_trailing_spaces: spaces at the end go, unless a backslash escapes one."""
    if not line.endswith(b" "):
        return line
    stripped = line.rstrip(b" ")
    run = len(stripped) - len(stripped.rstrip(b"\\"))
    if run % 2:  # an odd run of backslashes escapes the first space
        return line[: len(stripped) + 1]
    return stripped


def _put(
    every: dict[bytes, int], files: dict[bytes, int], key: bytes, index: int, dir_only: bool
) -> None:
    """`index` is the later pattern for `key` unless a plain name came later still."""
    every[key] = max(every.get(key, -1), index)
    if not dir_only:
        files[key] = max(files.get(key, -1), index)

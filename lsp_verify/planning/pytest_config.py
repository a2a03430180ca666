"""The configuration pytest itself would use for a run in a folder, read as pytest reads it.

Only what decides how lsp-verify may arrange a pytest run is read: `addopts`, `testpaths`,
`python_files`, `norecursedirs`, `cache_dir` and `pythonpath` (where imports resolve from).
The file is found as pytest finds it when given no paths: in the folder, then in each folder
above it, the first of `pytest.ini`, `.pytest.ini`,
`pyproject.toml` with a `[tool.pytest.ini_options]` (or pytest 9's `[tool.pytest]`) table,
`tox.ini` with `[pytest]`, `setup.cfg` with `[tool:pytest]`. A file that cannot be read or
parsed is a reason, never an exception: the caller then leaves the run as it is.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass

from lsp_verify.config.project_file import describe_os_error, parse_toml, read_limited, toml_module
from lsp_verify.planning.ini import read_ini

tomllib = toml_module()

__all__ = [
    "DEFAULT_NORECURSE",
    "DEFAULT_PYTHON_FILES",
    "PytestConfig",
    "failed_files",
    "failed_last_time",
    "locate",
]

DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
DEFAULT_NORECURSE = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)
_KEYS = ("addopts", "testpaths", "python_files", "norecursedirs", "cache_dir", "pythonpath")
# (file name, section that makes it pytest's, or None when the file counts by existing)
_CANDIDATES = (
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", "tool.pytest"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
)


@dataclass(frozen=True)
class PytestConfig:
    """path: the configuration file (absolute), or None when pytest would find none.
    problem: why the file could not be read, or None. Each value is a list of words."""

    path: str | None
    addopts: tuple[str, ...] = ()
    testpaths: tuple[str, ...] = ()
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSE
    cache_dir: tuple[str, ...] = ()
    problem: str | None = None
    pythonpath: tuple[str, ...] = ()

    @property
    def rootdir(self) -> str | None:
        return os.path.dirname(self.path) if self.path is not None else None

    @property
    def name(self) -> str:
        return os.path.basename(self.path) if self.path else "no configuration file"


def locate(start: str) -> PytestConfig:
    """pytest's configuration for a run started in `start` with no paths given."""
    current = os.path.abspath(start)
    while True:
        for name, section in _CANDIDATES:
            found = _read(os.path.join(current, name), section)
            if found is not None:
                return found
        parent = os.path.dirname(current)
        if parent == current:
            return PytestConfig(None)
        current = parent


def _read(path: str, section: str | None) -> PytestConfig | None:
    """The configuration in `path`, or None when that file does not configure pytest."""
    try:
        data = read_limited(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return PytestConfig(path, problem=f"{path} cannot be read: {describe_os_error(exc)}")
    try:
        text = data.decode("utf-8")
        toml = path.endswith(".toml")
        values = _toml_values(text) if toml else _ini_values(text, section)
    except (ValueError, RecursionError) as exc:  # not UTF-8, not INI or TOML, too costly
        return PytestConfig(path, problem=f"{path} cannot be parsed: {_first_line(exc)}")
    if values is None:
        return None
    return PytestConfig(
        path,
        addopts=values.get("addopts", ()),
        testpaths=values.get("testpaths", ()),
        python_files=values.get("python_files", DEFAULT_PYTHON_FILES),
        norecursedirs=values.get("norecursedirs", DEFAULT_NORECURSE),
        cache_dir=values.get("cache_dir", ()),
        pythonpath=values.get("pythonpath", ()),
    )


def failed_last_time(config: PytestConfig, folder: str, relative: str) -> bool | None:
    """Whether pytest's cache says tests of `relative` (a path from the rootdir) failed in
    the last run; None when the cache cannot be read."""
    root = config.rootdir or folder
    cache = os.path.join(root, config.cache_dir[0] if config.cache_dir else ".pytest_cache")
    try:
        data = read_limited(os.path.join(cache, "v", "cache", "lastfailed"), 16 * 1024 * 1024)
    except OSError:
        return None
    # pytest writes the cache with json.dumps: {"<node id>": true, ...}, the file's node ids
    # starting with the file's path. A search for that key in the bytes costs a few ms where
    # parsing a big cache took half a second on every save of a test file.
    key = json.dumps(relative).encode()[:-1]
    return data.find(key + b"::") >= 0 or data.find(key + b'"') >= 0


def failed_files(config: PytestConfig, folder: str, limit: int = 50) -> tuple[str, ...]:
    """The files (paths from the rootdir) of the tests pytest's cache says failed in the last
    run, at most `limit`; none when the cache cannot be read."""
    root = config.rootdir or folder
    cache = os.path.join(root, config.cache_dir[0] if config.cache_dir else ".pytest_cache")
    try:
        data = json.loads(
            read_limited(os.path.join(cache, "v", "cache", "lastfailed"), 16 * 1024 * 1024)
        )
    except (OSError, ValueError, RecursionError):
        return ()
    if not isinstance(data, dict):
        return ()
    files = dict.fromkeys(str(key).split("::", 1)[0] for key in data)
    return tuple(files)[:limit]


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _ini_values(text: str, section: str | None) -> dict[str, tuple[str, ...]] | None:
    ini = read_ini(text, strict=False)  # a section or option twice: the later one counts
    name = section or "pytest"
    if name not in ini.sections:
        # pytest.ini configures pytest by existing, whatever its sections say.
        return {} if section is None else None
    values = {key: ini.get(name, key) for key in _KEYS}
    return {key: _words(value) for key, value in values.items() if value is not None}


def _toml_values(text: str) -> dict[str, tuple[str, ...]] | None:
    try:
        document = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from exc
    tool = document.get("tool")
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    options = table.get("ini_options", table)
    if not isinstance(options, dict):
        raise ValueError("[tool.pytest.ini_options] is not a table")
    values: dict[str, tuple[str, ...]] = {}
    for key in _KEYS:
        value = options.get(key)
        if isinstance(value, str):
            values[key] = _words(value)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            # A list in TOML: each item is one argument (addopts) or one pattern.
            values[key] = tuple(value)
        elif value is not None:
            raise ValueError(f"{key} is neither a string nor a list of strings")
    return values


def _words(value: str) -> tuple[str, ...]:
    """An INI value as pytest splits it: shell-like words (addopts), whitespace (the rest)."""
    return tuple(shlex.split(value))

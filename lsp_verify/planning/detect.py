"""The detector: the seed's five runner rules, in their fixed order, and the manifests they read
(rules 6 and after, for more toolchains, are in `toolchains.py`).

Each rule looks at root-level files of one folder (plus the fixed paths `uv.lock` and
`.venv/bin/pytest`) through a `Root`, which reads and parses each file at most once, and
returns a `Match` (the command, its manifest and why) or the reason it does not apply. It
never lists a directory, runs nothing and never raises on what a folder contains: a broken
manifest is a reason naming the file and the error. `plan.make_plan` puts the rules after the
project's own sources and turns the first match into a Plan.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from lsp_verify.config.project_file import (
    TooCostly,
    describe_os_error,
    parse_toml,
    read_limited,
    toml_error,
    toml_module,
)
from lsp_verify.config.settings import show
from lsp_verify.planning.ini import IniError, read_ini
from lsp_verify.planning.makefile import rule_targets
from lsp_verify.planning.manifests import jsonc

tomllib = toml_module()
log = logging.getLogger("lsp_verify")


MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1'
PYTEST_ARGS = "-x -q"


# --- reading root-level files -------------------------------------------------------------


@dataclass(frozen=True)
class File:
    """A root-level file as read: bytes, or absent, or a problem phrase."""

    name: str
    data: bytes | None
    problem: str | None = None

    @property
    def exists(self) -> bool:
        return self.data is not None or self.problem is not None


class Root:
    """The root-level files of one folder, each read and parsed at most once per plan."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._files: dict[str, File] = {}
        self._parsed: dict[tuple[str, str], tuple[object, str | None]] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def file(self, name: str) -> File:
        cached = self._files.get(name)
        if cached is None:
            cached = self._files[name] = self._read(name)
        return cached

    def _read(self, name: str) -> File:
        path = self.path(name)
        try:
            return File(name, read_limited(path))
        except (FileNotFoundError, NotADirectoryError):
            if os.path.islink(path):
                return File(name, None, "is a symbolic link to a missing file")
            return File(name, None)
        except OSError as exc:
            return File(name, None, f"cannot be read: {describe_os_error(exc)}")

    def text(self, name: str) -> tuple[str | None, str]:
        """(text, "") or (None, why not): absent, unreadable, or not UTF-8."""
        found = self.file(name)
        if found.data is None:
            return None, f"{name} {found.problem}" if found.problem else f"no {name}"
        try:
            return found.data.decode("utf-8"), ""
        except UnicodeDecodeError as exc:
            return None, f"{name} is not UTF-8 (invalid byte at offset {exc.start})"

    def first_text(self, names: tuple[str, ...], absent: str) -> tuple[str, str] | str:
        """The first of `names` that exists and its text, for a tool that reads only the first
        of them (make, rake); else why not (`absent` when none exists)."""
        for name in names:
            if self.file(name).exists:
                text, why = self.text(name)
                return (name, text) if text is not None else why
        return absent

    def _parse(
        self, name: str, kind: str, parse: Callable[[str], object]
    ) -> tuple[object, str | None]:
        key = (name, kind)
        if key not in self._parsed:
            text, why = self.text(name)
            if text is None:
                self._parsed[key] = (None, why)
            else:
                self._parsed[key] = _guarded(name, kind, parse, text)
        return self._parsed[key]

    def toml(self, name: str) -> tuple[dict[str, object] | None, str]:
        value, why = self._parse(name, "TOML", parse_toml)
        if isinstance(value, dict):
            return value, ""
        return None, why or f"{name} is not a TOML table"

    def ini_sections(self, name: str) -> tuple[frozenset[str] | None, str]:
        value, why = self._parse(name, "INI", _ini_sections)
        if isinstance(value, frozenset):
            return value, ""
        return None, why or f"{name} is not valid INI"

    def json(self, name: str) -> tuple[object, str]:
        value, why = self._parse(name, "JSON", _json_loads)
        return value, why or ""

    def jsonc(self, name: str) -> tuple[object, str]:
        """JSON that may hold comments and trailing commas (deno.json, deno.jsonc)."""
        value, why = self._parse(name, "JSON", _jsonc_loads)
        return value, why or ""

    def is_file(self, relative: str) -> bool:
        try:
            return stat.S_ISREG(os.stat(self.path(relative)).st_mode)
        except (OSError, ValueError):
            return False

    def is_executable(self, relative: str) -> bool:
        return self.is_file(relative) and os.access(self.path(relative), os.X_OK)


def _guarded(
    name: str, kind: str, parse: Callable[[str], object], text: str
) -> tuple[object, str | None]:
    # Parsers meet arbitrary user bytes here. What they raise for a bad file (a ValueError,
    # a RecursionError) is the user's file being wrong, and becomes a reason; anything else
    # is a bug of ours, logged with its traceback and said to be one.
    try:
        return parse(text), None
    except TooCostly as exc:
        return None, f"{name} is not read: {exc}"
    except tomllib.TOMLDecodeError as exc:
        message, line = toml_error(exc)
        where = f" at line {line}" if line is not None else ""
        return None, f"{name} is not valid TOML{where}: {message}"
    except IniError as exc:
        return None, f"{name} is not valid INI: {exc}"
    except json.JSONDecodeError as exc:
        return None, f"{name} is not valid JSON at line {exc.lineno}: {exc.msg}"
    except RecursionError:
        return None, f"{name} is not valid {kind}: nested too deeply"
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        return None, f"{name} is not valid {kind}: {exc}"
    except Exception as exc:
        _log_internal_error(name, kind, exc)
        return None, (
            f"{name} could not be read: an internal error of lsp-verify ({type(exc).__name__}), "
            "not a problem with the file; the server log has the details"
        )


_logged: set[tuple[str, str, str]] = set()


def _log_internal_error(name: str, kind: str, exc: Exception) -> None:
    """A bug of ours, in the log with its traceback once (every plan reads the file again)."""
    key = (name, kind, f"{type(exc).__name__}: {exc}"[:200])
    if key in _logged or len(_logged) >= 100:
        return
    _logged.add(key)
    log.error("reading %s as %s failed: a bug in lsp-verify", name, kind, exc_info=exc)


def _json_loads(text: str) -> object:
    # npm reads package.json with a byte-order mark; json.loads alone rejects it.
    return json.loads(text[1:] if text.startswith("\ufeff") else text)


def _jsonc_loads(text: str) -> object:
    return _json_loads(jsonc(text))


def _ini_sections(text: str) -> frozenset[str]:
    # strict: setuptools and tox reject duplicate sections and options, as pytest does.
    return frozenset(read_ini(text, strict=True).sections)


# --- the seed's five detector rules --------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    manifest: str
    command: str
    why: str
    steps: tuple[str, ...] = ()
    snapshot: bool = False
    env: tuple[tuple[str, str], ...] = ()


RuleResult = Union[Match, str]


def _pytest_config(root: Root) -> tuple[str | None, str, list[str]]:
    """(manifest, what configures pytest there, why-nots of the files checked before it)."""
    misses: list[str] = []

    found = root.file("pytest.ini")
    if found.exists:
        sections, why = root.ini_sections("pytest.ini")
        if sections is not None:
            return "pytest.ini", "pytest.ini exists", misses
        misses.append(why)
    else:
        misses.append("no pytest.ini")

    document, why = root.toml("pyproject.toml")
    if document is None:
        misses.append(why)
    else:
        tool = document.get("tool")
        table = tool.get("pytest") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            name = "[tool.pytest.ini_options]" if "ini_options" in table else "[tool.pytest]"
            return "pyproject.toml", f"pyproject.toml has a {name} table", misses
        misses.append("pyproject.toml has no [tool.pytest] or [tool.pytest.ini_options] table")

    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        sections, why = root.ini_sections(name)
        if sections is None:
            misses.append(why)
        elif section in sections:
            return name, f"{name} has a [{section}] section", misses
        elif name == "setup.cfg" and "pytest" in sections:
            misses.append(
                "setup.cfg has [pytest], which pytest rejects there ([tool:pytest] counts)"
            )
        else:
            misses.append(f"{name} has no [{section}] section")
    return None, "", misses


def _pytest_command(root: Root) -> tuple[str, str]:
    """The pytest command for this folder and the clauses saying why that one."""
    notes: list[str] = []
    if root.is_file("uv.lock"):
        if shutil.which("uv"):
            return f"uv run pytest {PYTEST_ARGS}", "uv.lock is beside it and uv is on PATH"
        # Plain `uv run` elsewhere would create a virtual environment nobody asked for.
        notes.append("uv.lock is beside it but uv is not on PATH")
    for venv in (".venv", "venv"):
        candidate = f"{venv}/bin/pytest"
        if root.is_executable(candidate):
            notes.append(f"the folder has {candidate}")
            return f"{candidate} {PYTEST_ARGS}", "; ".join(notes)
    notes.append("there is no .venv/bin/pytest or venv/bin/pytest")
    return f"pytest {PYTEST_ARGS}", "; ".join(notes)


def rule_pytest(root: Root) -> RuleResult:
    manifest, what, misses = _pytest_config(root)
    if manifest is None:
        return "pytest is not configured: " + "; ".join(misses)
    command, why_command = _pytest_command(root)
    return Match(
        manifest=manifest,
        command=command,
        why=f"pytest is configured ({what}); {why_command}, so the command is `{command}`",
    )


# Where tox may be configured, in the order tox looks: the file, how to read it, what in it
# says tox, and that thing in words.
_TOX_PLACES = (
    ("tox.ini", "ini", "tox", "a [tox] section"),
    ("pyproject.toml", "toml", "tool.tox", "a tool.tox table"),
    ("setup.cfg", "ini", "tox:tox", "a [tox:tox] section"),
    ("tox.toml", "toml", None, None),
)


def rule_tox(root: Root) -> RuleResult:
    misses: list[str] = []
    for name, kind, key, what in _TOX_PLACES:
        if kind == "ini":
            sections, why = root.ini_sections(name)
            found = sections is not None and key in sections
            readable = sections is not None
        else:
            document, why = root.toml(name)
            tool = document.get("tool") if document is not None else None
            found = document is not None and (
                key is None or (isinstance(tool, dict) and isinstance(tool.get("tox"), dict))
            )
            readable = document is not None
        if found:
            has = f"has {what}" if what else "exists"
            return Match(name, "tox", f"tox is configured ({name} {has})")
        misses.append(why if not readable else f"{name} has no {what}")
    return "tox is not configured: " + "; ".join(misses)


def rule_npm(root: Root) -> RuleResult:
    name = "package.json"
    value, why = root.json(name)
    if why:
        return why
    if not isinstance(value, dict):
        return f"{name} is not a JSON object"
    scripts = value.get("scripts")
    if not isinstance(scripts, dict):
        return f"{name} has no scripts object"
    test = scripts.get("test")
    if test is None:
        others = sorted(k for k in scripts if isinstance(k, str) and k.startswith("test"))
        named = ", ".join(k if len(k) <= 40 else k[:37] + "..." for k in others[:5])
        if len(others) > 5:
            named += f" and {len(others) - 5} more"
        also = f" ({named} alone does not count)" if others else ""
        return f"{name} has no scripts.test{also}"
    if not isinstance(test, str):
        return f"{name}: scripts.test is not a string (got {show(test)})"
    if not test.strip():
        return f"{name}: scripts.test is empty"
    if test.strip() == NPM_PLACEHOLDER:
        return f"{name}: scripts.test is npm's placeholder that fails by design"
    lifecycle = [
        (key, script)
        for key in ("pretest", "test", "posttest")
        if isinstance(script := scripts.get(key), str) and script.strip()
    ]
    env = tuple(
        (f"npm_package_{key}", field)
        for key in ("name", "version")
        if isinstance(field := value.get(key), str)
    )
    replayed = ", ".join(key for key, _ in lifecycle)
    return Match(
        manifest=name,
        command="npm test",
        why=f"{name} has scripts.test {show(test)}; the run replays {replayed}",
        steps=tuple(script for _, script in lifecycle),
        snapshot=True,
        env=env,
    )


def rule_cargo(root: Root) -> RuleResult:
    found = root.file("Cargo.toml")
    if not found.exists:
        return "no Cargo.toml"
    if found.data is None:
        return f"Cargo.toml {found.problem}"
    # A broken Cargo.toml still marks a Rust project: cargo's own error is the useful feedback.
    document, why = root.toml("Cargo.toml")
    note = "" if document is not None else f" ({why}; cargo will report it)"
    return Match("Cargo.toml", "cargo test", f"Cargo.toml exists{note}")


def rule_make(root: Root) -> RuleResult:
    # make reads only the first of the three that exists, so the others are never consulted.
    first = root.first_text(MAKEFILES, "no GNUmakefile, makefile or Makefile")
    if isinstance(first, str):
        return first
    name, text = first
    targets = rule_targets(text)
    if "test" in targets:
        return Match(name, "make test", f"{name} has a rule for the target test")
    why = f"{name} has no rule line whose targets include test"
    near = sorted(targets & _NEAR_TEST_TARGETS)
    if near:
        named = " and ".join(f"`{t}`" for t in near)
        why += f" (it has {named}: set verify.command to `make {near[0]}` to run it)"
    return why


# Targets a project may use for its tests under another name: named in the reason, never run.
_NEAR_TEST_TARGETS = frozenset({"tests", "check", "test-all", "unittest"})


RULES: tuple[tuple[str, Callable[[Root], RuleResult]], ...] = (
    ("pytest", rule_pytest),
    ("tox", rule_tox),
    ("npm", rule_npm),
    ("cargo", rule_cargo),
    ("make", rule_make),
)

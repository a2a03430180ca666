"""The detector: the five runner rules, in their fixed order, and the manifests they read.

Each rule looks at root-level files of one folder (plus the fixed paths `uv.lock` and
`.venv/bin/pytest`) through a `Root`, which reads and parses each file at most once, and
returns a `Match` (the command, its manifest and why) or the reason it does not apply. It
never lists a directory, runs nothing and never raises on what a folder contains: a broken
manifest is a reason naming the file and the error. `plan.make_plan` puts the rules after the
project's own sources and turns the first match into a Plan.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from lsp_verify.project_file import describe_os_error, read_limited, toml_error, toml_module
from lsp_verify.settings import show

tomllib = toml_module()


RUNNERS = ("pytest", "tox", "npm", "cargo", "make")
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
        value, why = self._parse(name, "TOML", tomllib.loads)
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
    # Parsers meet arbitrary user bytes here; whatever they raise is the user's file being
    # wrong, and must become a reason rather than stop the planner.
    try:
        return parse(text), None
    except tomllib.TOMLDecodeError as exc:
        message, line = toml_error(exc)
        where = f" at line {line}" if line is not None else ""
        return None, f"{name} is not valid TOML{where}: {message}"
    except configparser.Error as exc:
        return None, f"{name} is not valid INI: {_ini_error(exc)}"
    except json.JSONDecodeError as exc:
        return None, f"{name} is not valid JSON at line {exc.lineno}: {exc.msg}"
    except RecursionError:
        return None, f"{name} is not valid {kind}: nested too deeply"
    except Exception as exc:
        return None, f"{name} is not valid {kind}: {exc}"


def _json_loads(text: str) -> object:
    # npm reads package.json with a byte-order mark; json.loads alone rejects it.
    return json.loads(text[1:] if text.startswith("\ufeff") else text)


def _ini_sections(text: str) -> frozenset[str]:
    # strict=True: setuptools and tox reject duplicate sections and options, as pytest does.
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(text)
    return frozenset(parser.sections())


def _ini_error(exc: configparser.Error) -> str:
    if isinstance(exc, configparser.MissingSectionHeaderError):
        return f"line {exc.lineno}: text before the first [section] header"
    if isinstance(exc, configparser.ParsingError) and exc.errors:
        lineno, line = exc.errors[0]
        return f"line {lineno}: cannot parse {line.replace(chr(92) + 'n', '')}"
    text = re.sub(r"While reading from '[^']*' \[line\s+(\d+)\]", r"line \1", str(exc))
    text = re.sub(r"Source contains parsing errors: '[^']*'\s*", "", text)
    text = re.sub(r"\[line\s+(\d+)\]", r"line \1", text)
    return " ".join(text.split())


# --- the five detector rules --------------------------------------------------------------


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
        also = f" ({', '.join(others)} alone does not count)" if others else ""
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
    for name in MAKEFILES:
        if root.file(name).exists:
            break
    else:
        return "no GNUmakefile, makefile or Makefile"
    # make reads only the first of the three that exists, so the others are never consulted.
    text, why = root.text(name)
    if text is None:
        return why
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

# `NAME op value` at the start of a (target-specific) variable assignment.
_ASSIGNMENT = re.compile(
    r"^\s*(?:(?:export|override|private|unexport)\s+)*[^\s:#=]+\s*(?::::=|::=|:=|\?=|\+=|!=|=)"
)
_DEFINE = re.compile(r"^(?:(?:export|override|private)\s+)*define(?:\s|$)")


def _logical_lines(text: str) -> list[str]:
    """Physical lines joined where make joins them: at a backslash-newline."""
    lines: list[str] = []
    pending = ""
    # make splits on newlines only; str.splitlines would also split on form feeds and such.
    for raw in text.replace("\r\n", "\n").split("\n"):
        stripped = raw.rstrip("\\")
        if (len(raw) - len(stripped)) % 2 == 1:
            pending += raw[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _strip_comment(line: str) -> str:
    index = 0
    while True:
        index = line.find("#", index)
        if index < 0:
            return line
        if index == 0 or line[index - 1] != "\\":
            return line[:index]
        index += 1


def has_test_rule(text: str) -> bool:
    """True when a rule line at column 0 lists `test` among its targets."""
    return "test" in rule_targets(text)


def rule_targets(text: str) -> set[str]:
    """The targets of the rule lines at column 0.

    Recipe lines (a tab first), indented lines, `define` bodies, variable assignments
    (`test := x`, `test ?= x`) and target-specific variables (`test: X = 1`) do not count.
    """
    found: set[str] = set()
    define_depth = 0
    for line in _logical_lines(text):
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
        colon = line.find(":")
        equals = line.find("=")
        if colon < 0 or (0 <= equals < colon):
            continue  # no rule separator, or `NAME = value` / `NAME ?= value`
        if _ASSIGNMENT.match(line):
            continue  # `NAME := value`, `NAME ::= value`
        targets = line[:colon].rstrip("&")
        rest = line[colon + 1 :].lstrip(":")
        if _ASSIGNMENT.match(rest):
            continue  # `target: VAR = value` sets a variable, it makes no rule
        found.update(targets.split())
    return found

"""Which command runs for a folder, and why.

`make_plan` walks the sources in order: editor settings (the user's `command`, else a
`workspaceCommand`, the repository's), `.lsp-verify.toml`, an executable
`.gptme/verify-completion.sh`, then the five detector rules. It reads only files at the folder
root (plus the fixed paths `.gptme/verify-completion.sh`, `uv.lock` and `.venv/bin/pytest`),
never lists a directory, and runs nothing.

Every source and rule is evaluated and listed in `Plan.rules`, in precedence order, so that
`explain` can say what else would have applied; the rule that decided the plan is always the
first one with `matched=True`. A matching rule after it says "(not used: ...)" in its `why`.
When autoDetect is off the detector rules are listed as not evaluated.
"""

from __future__ import annotations

import configparser
import dataclasses
import enum
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from lsp_verify.settings import (
    PROJECT_FILE,
    ParsedSettings,
    ProjectFile,
    describe_os_error,
    effective_settings,
    load_project_file,
    read_limited,
    show,
    toml_error,
    toml_module,
)

tomllib = toml_module()


@dataclass(frozen=True)
class Rule:
    """One rule the planner looked at: did it match, and why (or why not)."""

    runner: str
    matched: bool
    why: str


@dataclass(frozen=True)
class Plan:
    """What would run in a folder. `command is None` means there is no plan.

    folder: absolute path. manifest: relative to the folder, POSIX, or None.
    fingerprint: "sha256:<hex>" of the manifest bytes, or None.
    steps: the shell commands a run executes, in order (npm: pretest/test/posttest strings).
    snapshot: the manifest bytes for Makefile / package.json / pytest.ini, else None.
    env: extra environment for the run (npm_package_name, npm_package_version).
    """

    folder: str
    source: str | None
    runner: str | None
    command: str | None
    reason: str
    manifest: str | None
    fingerprint: str | None
    steps: tuple[str, ...]
    snapshot: bytes | None = None
    env: tuple[tuple[str, str], ...] = ()
    rules: tuple[Rule, ...] = ()


SCRIPT = ".gptme/verify-completion.sh"
# The source of a command the client says the workspace supplied (`workspaceCommand`).
WORKSPACE_SETTINGS = "workspace-settings"
SCRIPT_COMMAND = "./" + SCRIPT
RUNNERS = ("pytest", "tox", "npm", "cargo", "make")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1'
PYTEST_ARGS = "-x -q"


class _Load(enum.Enum):
    TOKEN = "load"


# make_plan's default for `project`: read .lsp-verify.toml from the folder.
LOAD = _Load.TOKEN


def fingerprint(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# --- reading root-level files -------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    """A root-level file as read: bytes, or absent, or a problem phrase."""

    name: str
    data: bytes | None
    problem: str | None = None

    @property
    def exists(self) -> bool:
        return self.data is not None or self.problem is not None


class _Root:
    """The root-level files of one folder, each read and parsed at most once per plan."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._files: dict[str, _File] = {}
        self._parsed: dict[tuple[str, str], tuple[object, str | None]] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def file(self, name: str) -> _File:
        cached = self._files.get(name)
        if cached is None:
            cached = self._files[name] = self._read(name)
        return cached

    def _read(self, name: str) -> _File:
        path = self.path(name)
        try:
            return _File(name, read_limited(path))
        except (FileNotFoundError, NotADirectoryError):
            if os.path.islink(path):
                return _File(name, None, "is a symbolic link to a missing file")
            return _File(name, None)
        except OSError as exc:
            return _File(name, None, f"cannot be read: {describe_os_error(exc)}")

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
class _Match:
    manifest: str
    command: str
    why: str
    steps: tuple[str, ...] = ()
    snapshot: bool = False
    env: tuple[tuple[str, str], ...] = ()


_Outcome = Union[_Match, str]


def _pytest_config(root: _Root) -> tuple[str | None, str, list[str]]:
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

    sections, why = root.ini_sections("setup.cfg")
    if sections is None:
        misses.append(why)
    elif "tool:pytest" in sections:
        return "setup.cfg", "setup.cfg has a [tool:pytest] section", misses
    elif "pytest" in sections:
        misses.append("setup.cfg has [pytest], which pytest rejects there ([tool:pytest] counts)")
    else:
        misses.append("setup.cfg has no [tool:pytest] section")

    sections, why = root.ini_sections("tox.ini")
    if sections is None:
        misses.append(why)
    elif "pytest" in sections:
        return "tox.ini", "tox.ini has a [pytest] section", misses
    else:
        misses.append("tox.ini has no [pytest] section")
    return None, "", misses


def _pytest_command(root: _Root) -> tuple[str, str]:
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


def rule_pytest(root: _Root) -> _Outcome:
    manifest, what, misses = _pytest_config(root)
    if manifest is None:
        return "pytest is not configured: " + "; ".join(misses)
    command, why_command = _pytest_command(root)
    return _Match(
        manifest=manifest,
        command=command,
        why=f"pytest is configured ({what}); {why_command}, so the command is `{command}`",
        snapshot=manifest == "pytest.ini",
    )


def rule_tox(root: _Root) -> _Outcome:
    misses: list[str] = []
    sections, why = root.ini_sections("tox.ini")
    if sections is None:
        misses.append(why)
    elif "tox" in sections:
        return _Match("tox.ini", "tox", "tox is configured (tox.ini has a [tox] section)")
    else:
        misses.append("tox.ini has no [tox] section")

    document, why = root.toml("pyproject.toml")
    if document is None:
        misses.append(why)
    else:
        tool = document.get("tool")
        if isinstance(tool, dict) and isinstance(tool.get("tox"), dict):
            return _Match(
                "pyproject.toml", "tox", "tox is configured (pyproject.toml has a tool.tox table)"
            )
        misses.append("pyproject.toml has no tool.tox table")

    sections, why = root.ini_sections("setup.cfg")
    if sections is None:
        misses.append(why)
    elif "tox:tox" in sections:
        return _Match("setup.cfg", "tox", "tox is configured (setup.cfg has a [tox:tox] section)")
    else:
        misses.append("setup.cfg has no [tox:tox] section")

    document, why = root.toml("tox.toml")
    if document is None:
        misses.append(why)
    else:
        return _Match("tox.toml", "tox", "tox is configured (tox.toml exists)")
    return "tox is not configured: " + "; ".join(misses)


def rule_npm(root: _Root) -> _Outcome:
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
    return _Match(
        manifest=name,
        command="npm test",
        why=f"{name} has scripts.test {show(test)}; the run replays {replayed}",
        steps=tuple(script for _, script in lifecycle),
        snapshot=True,
        env=env,
    )


def rule_cargo(root: _Root) -> _Outcome:
    found = root.file("Cargo.toml")
    if not found.exists:
        return "no Cargo.toml"
    if found.data is None:
        return f"Cargo.toml {found.problem}"
    # A broken Cargo.toml still marks a Rust project: cargo's own error is the useful feedback.
    document, why = root.toml("Cargo.toml")
    note = "" if document is not None else f" ({why}; cargo will report it)"
    return _Match("Cargo.toml", "cargo test", f"Cargo.toml exists{note}")


def rule_make(root: _Root) -> _Outcome:
    for name in MAKEFILES:
        if root.file(name).exists:
            break
    else:
        return "no GNUmakefile, makefile or Makefile"
    # make reads only the first of the three that exists, so the others are never consulted.
    text, why = root.text(name)
    if text is None:
        return why
    if has_test_rule(text):
        return _Match(name, "make test", f"{name} has a rule for the target test", snapshot=True)
    return f"{name} has no rule line whose targets include test"


_RULES: tuple[tuple[str, Callable[[_Root], _Outcome]], ...] = (
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
    """True when a rule line at column 0 lists `test` among its targets.

    Recipe lines (a tab first), indented lines, `define` bodies, variable assignments
    (`test := x`, `test ?= x`) and target-specific variables (`test: X = 1`) do not count.
    """
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
        if "test" in targets.split():
            return True
    return False


# --- the sources and the plan -------------------------------------------------------------

# Every path, relative to the folder, that planning may look at. `plan_signature` stats them
# so that a caller can reuse a plan while none of them changed; a test checks that planning
# never touches a path missing here.
PLAN_INPUTS = (
    PROJECT_FILE,
    SCRIPT,
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "tox.toml",
    "package.json",
    "Cargo.toml",
    *MAKEFILES,
    "uv.lock",
    ".venv/bin/pytest",
    "venv/bin/pytest",
)


def plan_signature(folder: str) -> tuple[object, ...]:
    """What a plan of `folder` depends on besides the editor settings: the identity and
    change times of every input, and PATH (which decides whether `uv` is there).

    Every save asks, and most inputs do not exist: each is first looked up with access(),
    which says no without the cost of an exception, and only what exists is stat'ed."""
    signature: list[object] = [os.environ.get("PATH")]
    if not _DIR_FD:
        return (*signature, *(_input_stat(os.path.join(folder, n), None) for n in PLAN_INPUTS))
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (OSError, ValueError):
        return (*signature, *(None for _ in PLAN_INPUTS))
    try:
        signature.extend(_input_stat(name, fd) for name in PLAN_INPUTS)
    finally:
        os.close(fd)
    return tuple(signature)


_DIR_FD = os.access in os.supports_dir_fd and os.stat in os.supports_dir_fd


def _input_stat(path: str, dir_fd: int | None) -> tuple[int, ...] | None:
    try:
        if not os.access(path, os.F_OK, dir_fd=dir_fd):
            return None
        st = os.stat(path, dir_fd=dir_fd)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def make_plan(
    folder: str,
    editor: ParsedSettings | None = None,
    *,
    project: ProjectFile | _Load | None = LOAD,
) -> Plan:
    """The plan for `folder`: settings, project file, script, detector, or none.

    project: the already loaded `.lsp-verify.toml` (or None for "there is none"); by default
    it is loaded here. Reads only root-level files; never raises on the folder's contents.
    """
    folder = os.path.abspath(folder)
    if isinstance(project, _Load):
        project = load_project_file(folder)
    root = _Root(folder)
    rules: list[Rule] = []
    chosen: Plan | None = None
    winner: str | None = None

    def offer(rule: Rule, plan: Plan | None, label: str) -> None:
        nonlocal chosen, winner
        if rule.matched:
            if winner is None:
                chosen, winner = plan, label
            else:
                rule = Rule(rule.runner, True, f"{rule.why} (not used: {winner} comes first)")
        rules.append(rule)

    offer(*_from_settings(folder, editor), "verify.command in the editor's settings")
    offer(*_from_project_file(folder, project), PROJECT_FILE)
    offer(*_from_script(folder, root), SCRIPT)

    auto_detect = effective_settings(editor, project).auto_detect
    if not auto_detect:
        for runner, _ in _RULES:
            rules.append(Rule(runner, False, "not evaluated: autoDetect is off"))
        if chosen is not None:
            return _with_rules(chosen, rules)
        return _no_plan(
            folder,
            rules,
            "No plan: no command in the editor's settings or .lsp-verify.toml, no executable "
            f"{SCRIPT}, and autoDetect is off; nothing runs.",
        )

    matches: list[tuple[str, _Match]] = []
    for runner, rule in _RULES:
        outcome = rule(root)
        if isinstance(outcome, str):
            offer(Rule(runner, False, outcome), None, runner)
        else:
            offer(Rule(runner, True, outcome.why), None, runner)
            matches.append((runner, outcome))
    if chosen is not None:
        return _with_rules(chosen, rules)
    if not matches:
        return _no_plan(
            folder,
            rules,
            "No plan: no command in the editor's settings or .lsp-verify.toml, no executable "
            f"{SCRIPT}, and no detector rule matched; nothing runs.",
        )
    return _detected(root, matches, rules)


def _with_rules(plan: Plan, rules: list[Rule]) -> Plan:
    return dataclasses.replace(plan, rules=tuple(rules))


def _no_plan(folder: str, rules: list[Rule], reason: str) -> Plan:
    return Plan(folder, None, None, None, reason, None, None, (), rules=tuple(rules))


def _detected(root: _Root, matches: list[tuple[str, _Match]], rules: list[Rule]) -> Plan:
    runner, match = matches[0]
    data = root.file(match.manifest).data or b""
    reason = f"Detected {runner}: {match.why}."
    others = [name for name, _ in matches[1:]]
    if others:
        verb = "matches" if len(others) == 1 else "match"
        reason += (
            f" {' and '.join(others)} also {verb} here: the first runner found ({runner}) may "
            "cover only part of this polyglot project; a command in the settings or in "
            f"{PROJECT_FILE} can run a combined check."
        )
    return Plan(
        folder=root.folder,
        source="detected",
        runner=runner,
        command=match.command,
        reason=reason,
        manifest=match.manifest,
        fingerprint=fingerprint(data),
        steps=match.steps or (match.command,),
        snapshot=data if match.snapshot else None,
        env=match.env,
        rules=tuple(rules),
    )


def command_plan(folder: str, command: str, reason: str) -> Plan:
    """The plan of a command the user gave (editor settings, `check --command`)."""
    return Plan(
        folder=folder,
        source="settings",
        runner=None,
        command=command,
        reason=reason,
        manifest=None,
        fingerprint=None,
        steps=(command,),
    )


def _from_settings(folder: str, editor: ParsedSettings | None) -> tuple[Rule, Plan | None]:
    values = editor.values if editor is not None else {}
    command = values.get("command")
    if isinstance(command, str):
        plan = command_plan(
            folder, command, "The command comes from the editor's settings (verify.command)."
        )
        return Rule("settings", True, f"verify.command is set to {show(command)}"), plan
    workspace = values.get("workspace_command")
    if isinstance(workspace, str):
        # The client says the workspace supplied it (VS Code's .vscode/settings.json): the
        # repository's command, so its source asks for approval like a project file's.
        plan = dataclasses.replace(
            command_plan(
                folder,
                workspace,
                "The command comes from the workspace's own settings (verify.command in "
                ".vscode/settings.json or the .code-workspace file), which the repository "
                "controls, so it runs once you approve it.",
            ),
            source=WORKSPACE_SETTINGS,
        )
        why = f"the workspace's settings set verify.command to {show(workspace)}"
        return Rule("settings", True, why), plan
    problems = (
        [m.text for m in editor.messages if m.key in ("command", "workspaceCommand")]
        if editor
        else []
    )
    why = "no command in the editor's settings"
    if problems:
        why += f" ({'; '.join(problems)})"
    return Rule("settings", False, why), None


def _from_project_file(folder: str, project: ProjectFile | None) -> tuple[Rule, Plan | None]:
    if project is None:
        return Rule("project-file", False, f"no {PROJECT_FILE}"), None
    command = project.parsed.values.get("command")
    if isinstance(command, str):
        plan = Plan(
            folder=folder,
            source="project-file",
            runner=None,
            command=command,
            reason=f"The command comes from {PROJECT_FILE} at the folder root.",
            manifest=PROJECT_FILE,
            fingerprint=fingerprint(project.data),
            steps=(command,),
        )
        return Rule("project-file", True, f"{PROJECT_FILE} sets command {show(command)}"), plan
    problems = [m.text for m in project.parsed.messages if m.key in (None, "command")]
    why = f"{PROJECT_FILE} sets no command"
    if problems:
        why = "; ".join(problems)
    return Rule("project-file", False, why), None


def _from_script(folder: str, root: _Root) -> tuple[Rule, Plan | None]:
    path = root.path(SCRIPT)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return Rule("script", False, f"no {SCRIPT}"), None
    except OSError as exc:
        return Rule("script", False, f"{SCRIPT} cannot be read: {describe_os_error(exc)}"), None
    if not stat.S_ISREG(info.st_mode):
        return Rule("script", False, f"{SCRIPT} is not a regular file"), None
    if not os.access(path, os.X_OK):
        return Rule("script", False, f"{SCRIPT} exists but is not executable"), None
    found = root.file(SCRIPT)
    if found.data is None:
        return Rule("script", False, f"{SCRIPT} {found.problem or 'cannot be read'}"), None
    plan = Plan(
        folder=folder,
        source="script",
        runner=None,
        command=SCRIPT_COMMAND,
        reason=f"The folder has an executable {SCRIPT} (gptme's convention), so the plan runs it.",
        manifest=SCRIPT,
        fingerprint=fingerprint(found.data),
        steps=(SCRIPT_COMMAND,),
    )
    return Rule("script", True, f"{SCRIPT} is executable"), plan


def plan_to_json(plan: Plan) -> dict[str, object]:
    """The explain object: folder, source, runner, command, reason, manifest, fingerprint, steps,
    rules (each {runner, matched, why}). Snapshot and env stay out: they are bytes and
    derived values a user does not need to read."""
    return {
        "folder": plan.folder,
        "source": plan.source,
        "runner": plan.runner,
        "command": plan.command,
        "reason": plan.reason,
        "manifest": plan.manifest,
        "fingerprint": plan.fingerprint,
        "steps": list(plan.steps),
        "rules": [
            {"runner": rule.runner, "matched": rule.matched, "why": rule.why} for rule in plan.rules
        ],
    }

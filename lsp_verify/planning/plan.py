"""Which command runs for a folder, and why: the Plan.

`make_plan` walks the sources in order: editor settings (the user's `command`, else a
`workspaceCommand`, the repository's), `.lsp-verify.toml`, an executable
`.gptme/verify-completion.sh`, then the detector's rules (the seed's five in `detect.py`, then
those of `toolchains.py`). It reads only files
at the folder root (plus a few fixed paths, all in PLAN_INPUTS), never lists a directory, and
runs nothing.

Every source and rule is evaluated and listed in `Plan.rules`, in precedence order, so that
`explain` can say what else would have applied; the rule that decided the plan is always the
first one with `matched=True`. A matching rule after it says "(not used: ...)" in its `why`.
When autoDetect is off the detector rules are listed as not evaluated.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsp_verify.config.project_file import ProjectFile, describe_os_error, load_project_file
from lsp_verify.config.settings import PROJECT_FILE, ParsedSettings, effective_settings, show
from lsp_verify.planning.detect import MAKEFILES, Match, Root
from lsp_verify.planning.toolchains import INPUTS as TOOLCHAIN_INPUTS
from lsp_verify.planning.toolchains import RULES
from lsp_verify.record import Affected, Outcome, Phase, Record, Trigger, now_iso

if TYPE_CHECKING:
    from lsp_verify.problems.base import Problem


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
    manifest_sha256: "sha256:<hex>" of the manifest bytes, or None (checked just before the
    spawn); the plan's one fingerprint, which approvals are stored under, is `plan_fingerprint`.
    steps: the shell commands a run executes, in order (npm: pretest/test/posttest strings).
    snapshot: package.json's bytes for the npm path (which lifecycle scripts the steps are).
    env: extra environment for the run (npm_package_name, npm_package_version).
    """

    folder: str
    source: str | None
    runner: str | None
    command: str | None
    reason: str
    manifest: str | None
    manifest_sha256: str | None
    steps: tuple[str, ...]
    snapshot: bytes | None = None
    env: tuple[tuple[str, str], ...] = ()
    rules: tuple[Rule, ...] = ()


SCRIPT = ".gptme/verify-completion.sh"
# The source of a command the client says the workspace supplied (`workspaceCommand`).
WORKSPACE_SETTINGS = "workspace-settings"
SCRIPT_COMMAND = "./" + SCRIPT


class _Load(enum.Enum):
    TOKEN = "load"


# make_plan's default for `project`: read .lsp-verify.toml from the folder.
LOAD = _Load.TOKEN


def fingerprint(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


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
    *TOOLCHAIN_INPUTS,
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
    root = Root(folder)
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
        for runner, _ in RULES:
            rules.append(Rule(runner, False, "not evaluated: autoDetect is off"))
        if chosen is not None:
            return _with_rules(chosen, rules)
        return _no_plan(
            folder,
            rules,
            "No plan: no command in the editor's settings or .lsp-verify.toml, no executable "
            f"{SCRIPT}, and autoDetect is off; nothing runs.",
        )

    matches: list[tuple[str, Match]] = []
    for runner, rule in RULES:
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


def _detected(root: Root, matches: list[tuple[str, Match]], rules: list[Rule]) -> Plan:
    runner, match = matches[0]
    data = root.file(match.manifest).data or b""
    reason = f"Detected {runner}: {match.why}."
    others = [name for name, _ in matches[1:]]
    if others:
        verb = "matches" if len(others) == 1 else "match"
        reason += (
            f" {' and '.join(others)} also {verb} here; the first in the detector's order "
            f"({runner}) is the one that runs. If they check different things, a command in "
            f"the settings or in {PROJECT_FILE} can run them all."
        )
    return Plan(
        folder=root.folder,
        source="detected",
        runner=runner,
        command=match.command,
        reason=reason,
        manifest=match.manifest,
        manifest_sha256=fingerprint(data),
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
        manifest_sha256=None,
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
        reason = f"The command comes from {PROJECT_FILE} at the folder root."
        plan = _manifest_plan(folder, "project-file", command, reason, PROJECT_FILE, project.data)
        return Rule("project-file", True, f"{PROJECT_FILE} sets command {show(command)}"), plan
    problems = [m.text for m in project.parsed.messages if m.key in (None, "command")]
    why = f"{PROJECT_FILE} sets no command"
    if problems:
        why = "; ".join(problems)
    return Rule("project-file", False, why), None


def _from_script(folder: str, root: Root) -> tuple[Rule, Plan | None]:
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
    reason = f"The folder has an executable {SCRIPT} (gptme's convention), so the plan runs it."
    plan = _manifest_plan(folder, "script", SCRIPT_COMMAND, reason, SCRIPT, found.data)
    return Rule("script", True, f"{SCRIPT} is executable"), plan


def _manifest_plan(
    folder: str, source: str, command: str, reason: str, manifest: str, data: bytes
) -> Plan:
    """The plan of a command a file in the repository names: the file is its manifest."""
    return Plan(folder, source, None, command, reason, manifest, fingerprint(data), (command,))


def plan_to_json(plan: Plan) -> dict[str, object]:
    """The explain object: folder, source, runner, command, reason, manifest, fingerprint (the
    plan's, as `approve` stores it; null without a plan), manifestSha256 (the manifest's bytes),
    steps, rules (each {runner, matched, why}). Snapshot and env stay out: they are bytes and
    derived values a user does not need to read."""
    return {
        "folder": plan.folder,
        "source": plan.source,
        "runner": plan.runner,
        "command": plan.command,
        "reason": plan.reason,
        "manifest": plan.manifest,
        "fingerprint": plan_id(plan),
        "manifestSha256": plan.manifest_sha256,
        "steps": list(plan.steps),
        "rules": [
            {"runner": rule.runner, "matched": rule.matched, "why": rule.why} for rule in plan.rules
        ],
    }


# Bumping this changes every plan fingerprint, so every stored approval is asked again.
_FINGERPRINT_TAG = "lsp-verify plan v1"


def plan_fingerprint(plan: Plan) -> str:
    """sha256 over what decides what runs: source, runner, command, steps, manifest and its bytes.

    The folder is not part of it (the store keys by folder already); neither are the reason,
    the rules, nor the snapshot and env, which are derived from the manifest bytes that
    `plan.manifest_sha256` already covers.
    """
    return _fingerprint(
        plan.source, plan.runner, plan.command, plan.steps, plan.manifest, plan.manifest_sha256
    )


def plan_id(plan: Plan) -> str | None:
    """The fingerprint every view shows (explain, the record, approve): None without a plan."""
    return None if plan.command is None else plan_fingerprint(plan)


@functools.lru_cache(maxsize=256)  # every save asks for the fingerprint of the same plan
def _fingerprint(
    source: str | None,
    runner: str | None,
    command: str | None,
    steps: tuple[str, ...],
    manifest: str | None,
    manifest_fingerprint: str | None,
) -> str:
    canonical = json.dumps(
        [_FINGERPRINT_TAG, source, runner, command, list(steps), manifest, manifest_fingerprint],
        ensure_ascii=True,
        separators=(",", ":"),
    )
    return fingerprint(canonical.encode("ascii"))


def record_for_plan(
    plan: Plan,
    *,
    trigger: Trigger,
    outcome: Outcome,
    reason: str | None = None,
    document: str | None = None,
    started_at: str | None = None,
    duration_ms: int = 0,
    exit_code: int | None = None,
    tail: tuple[str, ...] = (),
    problems: tuple[Problem, ...] = (),
    failed_first: str | None = None,
    phases: tuple[Phase, ...] = (),
    command: str | None = None,
    affected: Affected | None = None,
    matcher_errors: int = 0,
) -> Record:
    """The record of a run of `plan`: by default one that never started (no plan, declined,
    skipped before spawning); a finished run gives what its process did. `command`: the
    command as it ran, where lsp-verify arranged it (`--ff`); the fingerprint stays the plan's."""
    ran = command is not None and command != plan.command
    return Record(
        folder=plan.folder,
        command=command if ran else plan.command,
        source=plan.source,
        runner=plan.runner,
        reason=reason if reason is not None else plan.reason,
        manifest=plan.manifest,
        fingerprint=plan_id(plan),
        manifest_sha256=plan.manifest_sha256,
        steps=(command,) if ran and command is not None else plan.steps,
        trigger=trigger,
        started_at=started_at if started_at is not None else now_iso(),
        duration_ms=duration_ms,
        exit_code=exit_code,
        outcome=outcome,
        tail=tail,
        problems=problems,
        document=document,
        failed_first=failed_first,
        phases=phases,
        affected=affected,
        matcher_errors=matcher_errors,
    )

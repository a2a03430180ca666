"""The Settings value: parsed from editor settings, a bare string, or .lsp-verify.toml.

Parsing never raises on user input: every problem becomes a message and the default is used.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from lsp_verify.config.project_file import ProjectFile

    if sys.version_info >= (3, 11):
        pass
    else:  # pragma: no cover - exercised only on Python < 3.11
        pass  # type: ignore[import-not-found, unused-ignore]

RUN_ON_VALUES = ("save", "edit", "sync", "manual")
CONFIRM_VALUES = ("onChange", "always", "never")

PROJECT_FILE = ".lsp-verify.toml"
# The same bound as for manifests: a settings file is never legitimately this big.
MAX_FILE_BYTES = 1024 * 1024
# Upper bounds of our own. Past them a value is a typo, not an intent, and an
# absurd one would overflow a float timer or let the tail buffer grow without bound.
MAX_TIMEOUT_MS = 2**31 - 1  # about 24.8 days; the largest timer delay JavaScript clients allow
MAX_TAIL_LINES = 100_000


@dataclass(frozen=True)
class Settings:
    command: str | None = None
    globs: tuple[str, ...] = ()
    timeout_ms: int = 60000
    run_on: str = "save"
    tail_lines: int = 40
    auto_detect: bool = True
    confirm: str = "onChange"
    failed_first: bool = True
    affected_first: bool = True
    workspace_command: str | None = None


DEFAULTS = Settings()

# camelCase setting key -> field of Settings, in the order the README lists them.
KEYS: Mapping[str, str] = {
    "command": "command",
    "globs": "globs",
    "timeoutMs": "timeout_ms",
    "runOn": "run_on",
    "tailLines": "tail_lines",
    "autoDetect": "auto_detect",
    "confirm": "confirm",
    "failedFirst": "failed_first",
    "affectedFirst": "affected_first",
    "workspaceCommand": "workspace_command",
}

# The keys a repository may set: at the top level of `.lsp-verify.toml` (and, through the
# VS Code client, in the workspace's own settings). The others are the user's alone: `confirm`
# and `autoDetect` decide whether a repository's command runs without the user's yes, and
# `workspaceCommand` is how a client marks a command as the repository's. A project file's
# parse never yields them, and merging never takes them from it. `failedFirst` and
# `affectedFirst` are safe to take from a repository: they only order the tests the approved
# command runs anyway.
REPOSITORY_KEYS: frozenset[str] = frozenset(
    {"command", "globs", "timeoutMs", "runOn", "tailLines", "failedFirst", "affectedFirst"}
)
_REPOSITORY_FIELDS = frozenset(KEYS[key] for key in REPOSITORY_KEYS)
# Keys whose null means "unset".
_NULLABLE = ("command", "workspaceCommand")


@dataclass(frozen=True)
class SettingsMessage:
    """One problem with the settings, as a full sentence.

    key: the camelCase key it concerns, or None when it concerns the whole value or file.
    line: 1-based line in `.lsp-verify.toml` where known (subtract 1 for an LSP range).
    """

    key: str | None
    text: str
    line: int | None = None


@dataclass(frozen=True)
class ParsedSettings:
    """values: Settings field names -> validated values, only for keys explicitly and validly
    given (so that merging can tell "not set" from "set to the default")."""

    values: Mapping[str, object]
    messages: tuple[SettingsMessage, ...] = ()


def show(value: object, limit: int = 80) -> str:
    """A value as the user wrote it (JSON/TOML spelling), shortened for a one-line message."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, int) and value.bit_length() > 256:
        # repr of a huge int is slow and, past 4300 digits, raises.
        text = f"a number of about {int(value.bit_length() * 0.30103)} digits"
    elif isinstance(value, (str, int, float)):
        text = repr(value)
    elif isinstance(value, (list, tuple, dict)):
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (ValueError, TypeError, RecursionError):
            text = type(value).__name__
    else:
        text = str(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _show_default(field: str) -> str:
    value = getattr(DEFAULTS, field)
    if isinstance(value, tuple):
        return show(list(value))
    return show(value)


def _positive_int(value: object, maximum: int) -> int | None:
    # bool is an int subclass, but `true` for a count is a mistake, not 1.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        # JSON has one number type: 30000.0 from a client means 30000.
        number = int(value)
    else:
        return None
    if 0 < number <= maximum:
        return number
    return None


def _too_large(value: object, maximum: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value > maximum and (isinstance(value, int) or value.is_integer())


def _validate(key: str, value: object) -> tuple[bool, object, str]:
    """(ok, converted value, what was expected) for one known key; value None is handled
    by the caller for the command keys."""
    if key in _NULLABLE:
        if isinstance(value, str):
            if value.strip():
                return True, value, ""
            return False, None, "a non-empty command string"
        return False, None, "a command string or null"
    if key == "globs":
        if isinstance(value, (list, tuple)) and all(isinstance(g, str) for g in value):
            return True, tuple(value), ""
        return False, None, "a list of strings"
    if key in ("timeoutMs", "tailLines"):
        maximum = MAX_TIMEOUT_MS if key == "timeoutMs" else MAX_TAIL_LINES
        number = _positive_int(value, maximum)
        if number is not None:
            return True, number, ""
        if _too_large(value, maximum):
            return False, None, f"a positive integer no larger than {maximum}"
        return False, None, "a positive integer"
    if key == "runOn":
        if isinstance(value, str) and value in RUN_ON_VALUES:
            # "edit" is accepted as the same as "save": normalised here so that nothing
            # downstream has to remember it.
            return True, "save" if value == "edit" else value, ""
        return False, None, "one of " + ", ".join(f'"{v}"' for v in RUN_ON_VALUES)
    if key in ("autoDetect", "failedFirst", "affectedFirst"):
        if isinstance(value, bool):
            return True, value, ""
        return False, None, "true or false"
    if key == "confirm":
        if isinstance(value, str) and value in CONFIRM_VALUES:
            return True, value, ""
        return False, None, "one of " + ", ".join(f'"{v}"' for v in CONFIRM_VALUES)
    raise AssertionError(f"unhandled key {key}")  # pragma: no cover - KEYS and this agree


def parse_settings(
    value: object, origin: str = "settings", limit: int | None = None
) -> ParsedSettings:
    """Validate the `verify` settings object (or a bare command string).

    origin names where the value came from. Messages about the editor's section (origin
    "settings", "initializationOptions", ...) write keys as `verify.<key>`; for origins
    ".lsp-verify.toml" and "command line" they write bare keys, since the caller shows the
    file or the flags beside the message. From ".lsp-verify.toml", the repository's file, only
    REPOSITORY_KEYS are taken; every other known key is ignored with a message.

    limit: at most this many messages about keys other than `command`, then one that counts
    the rest (a repository's file may hold a million keys: each costs a message only up to
    the limit, and a count past it).
    """
    bare = origin in (PROJECT_FILE, "command line")
    prefix = "" if bare else "verify."
    whole = origin if bare else "verify"
    if value is None:
        return ParsedSettings({}, ())
    if isinstance(value, str):
        value = {"command": value}
    if not isinstance(value, Mapping):
        text = (
            f"{whole}: expected a command string or an object with the keys "
            f"{', '.join(KEYS)}, got {show(value)}; using the defaults"
        )
        return ParsedSettings({}, (SettingsMessage(None, text),))

    values: dict[str, object] = {}
    messages: list[SettingsMessage] = []
    listed = 0  # messages about keys other than `command`
    untold: list[str] = []  # keys whose problems go untold past the limit
    for raw_key, item in value.items():
        over = limit is not None and listed >= limit and raw_key != "command"
        if not isinstance(raw_key, str) or raw_key not in KEYS:
            if over:
                untold.append(_message_key(raw_key))
                continue
            key_text = _shown_key(raw_key)
            text = f"{prefix}{key_text}: unknown key; ignored"
            if isinstance(raw_key, str):
                hint = _suggest(raw_key, REPOSITORY_KEYS if origin == PROJECT_FILE else KEYS)
                if hint:
                    text += f" (did you mean {hint}?)"
            messages.append(SettingsMessage(_message_key(raw_key), text))
            listed += 1
            continue
        if origin == PROJECT_FILE and raw_key not in REPOSITORY_KEYS:
            if over:
                untold.append(raw_key)
                continue
            messages.append(SettingsMessage(raw_key, _not_the_repositorys(raw_key)))
            listed += 1
            continue
        field = KEYS[raw_key]
        if raw_key in _NULLABLE and item is None:
            continue  # null is how a user unsets the command
        ok, converted, expected = _validate(raw_key, item)
        if ok:
            values[field] = converted
        elif over:
            untold.append(raw_key)
        else:
            text = (
                f"{prefix}{raw_key}: expected {expected}, got {show(item)}; "
                f"using {_show_default(field)}"
            )
            messages.append(SettingsMessage(raw_key, text))
            if raw_key != "command":
                listed += 1
    if untold:
        first = _shown_key(untold[0])
        text = (
            f"{prefix}{first} and {len(untold) - 1} more keys after it have problems too; "
            f"only the first {limit} are listed"
        )
        messages.append(SettingsMessage(untold[0], text))
    return ParsedSettings(values, tuple(messages))


def _shown_key(key: object) -> str:
    """A key as a message names it: whole when short, as it begins when long."""
    if not isinstance(key, str):
        return show(key)
    return key if len(key) <= 80 else key[:77] + "..."


def _message_key(key: object) -> str:
    return key if isinstance(key, str) else show(key)


def _not_the_repositorys(key: str) -> str:
    return (
        f"{key}: ignored here; only your editor's settings can set it "
        "(a repository cannot decide whether its own command runs without your approval)"
    )


def _suggest(key: str, keys: Collection[str]) -> str:
    if len(key) > 80:
        return ""  # no key is that long; and difflib's cost grows with it
    camel = re.sub(r"[_-]([a-z])", lambda m: m.group(1).upper(), key)
    if camel in keys:
        return camel
    lower = {k.lower(): k for k in keys}
    if key.lower() in lower:
        return lower[key.lower()]
    import difflib  # only for an unknown key

    close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=0.75)
    return close[0] if close else ""


def effective_settings(editor: ParsedSettings | None, project: ProjectFile | None) -> Settings:
    """Editor values beat project-file values beat defaults, key by key. Only the editor
    sets the keys outside REPOSITORY_KEYS."""
    merged: dict[str, object] = {}
    if project is not None:
        merged.update((k, v) for k, v in project.parsed.values.items() if k in _REPOSITORY_FIELDS)
    if editor is not None:
        merged.update(editor.values)
    known = {f.name for f in dataclasses.fields(Settings)}
    # parse_settings validated every value against its field's type; Any says so to mypy.
    changes: dict[str, Any] = {k: v for k, v in merged.items() if k in known}
    return dataclasses.replace(DEFAULTS, **changes)


def settings_json(settings: Settings) -> dict[str, Any]:
    return {
        "command": settings.command,
        "globs": list(settings.globs),
        "timeoutMs": settings.timeout_ms,
        "runOn": settings.run_on,
        "tailLines": settings.tail_lines,
        "autoDetect": settings.auto_detect,
        "confirm": settings.confirm,
        "failedFirst": settings.failed_first,
        "affectedFirst": settings.affected_first,
    }


# ----- what the client says at initialize, parsed once -----

LogLevel = Literal["log", "info", "warning", "error"]
# "auto": pull when the client can, else push. VS Code's extension asks for "push", since VS
# Code shows pushed and pulled diagnostics in separate lists and only pushes reach files
# that are not open.
DiagnosticMode = Literal["auto", "push", "pull"]
_OPTION_KEYS = ("workspaceTrusted", "diagnosticMode", "liveOutput", "agentHooks")


@dataclass(frozen=True)
class InitOptions:
    """initializationOptions: the `verify` settings (a section or the bare keys), whether
    the client trusts the workspace, and how diagnostics reach it. `pull`, `push` and
    `related` (whether diagnostics may carry relatedInformation) are decided once the
    client's capabilities are known: a client that pulls but cannot be told to pull again
    (no refreshSupport) gets pushes as well. `live_output`: the client asked for each run's
    output as it streams (`verify/output` notifications). `encoding`: the `positionEncoding`
    the server declared, which every position it sends counts in. `agent_hooks`: an agent's
    hooks read each folder's run file (`workspace/run_file.py`) and tell the model about
    approval themselves."""

    settings: object = None
    trusted: bool = True
    mode: DiagnosticMode = "auto"
    pull: bool = False
    live_output: bool = False
    related: bool = True
    push: bool = True
    encoding: str = "utf-16"
    agent_hooks: bool = False


def parse_init_options(
    options: object, client_pulls: bool, client_refreshes: bool = False
) -> InitOptions:
    """initializationOptions: `{"verify": {...}, "workspaceTrusted": .., "diagnosticMode": ..,
    "liveOutput": ..}`, or the settings keys bare beside the flags, or a bare command string."""
    trusted = _trusted_flag(options)
    mode: DiagnosticMode = "auto"
    value = options
    if isinstance(options, dict):
        given = options.get("diagnosticMode")
        if given == "push" or given == "pull":
            mode = given
        if "verify" in options:
            value = options["verify"]
        else:
            value = {k: v for k, v in options.items() if k not in _OPTION_KEYS} or None
    pull = mode == "pull" or (mode == "auto" and client_pulls)
    live = isinstance(options, dict) and options.get("liveOutput") is True
    hooks = isinstance(options, dict) and options.get("agentHooks") is True
    push = not pull or not client_refreshes
    trusted_ = True if trusted is None else trusted
    return InitOptions(value, trusted_, mode, pull, live_output=live, push=push, agent_hooks=hooks)


def apply_config_change(options: InitOptions, settings: object) -> InitOptions:
    """workspace/didChangeConfiguration's settings: a new `verify` section and trust flag,
    where they are given; anything else leaves the options as they were."""
    trusted = _trusted_flag(settings)
    if trusted is not None:
        options = dataclasses.replace(options, trusted=trusted)
    if isinstance(settings, dict) and "verify" in settings:
        options = dataclasses.replace(options, settings=settings["verify"])
    return options


def _trusted_flag(options: object) -> bool | None:
    flag = options.get("workspaceTrusted") if isinstance(options, dict) else None
    return flag if isinstance(flag, bool) else None

"""The Settings value: parsed from editor settings, a bare string, or .lsp-verify.toml.

Parsing never raises on user input: every problem becomes a message and the default is used.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import stat
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on Python < 3.11
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

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
    "workspaceCommand": "workspace_command",
}

# The keys a repository may set: at the top level of `.lsp-verify.toml` (and, through the
# VS Code client, in the workspace's own settings). The others are the user's alone: `confirm`
# and `autoDetect` decide whether a repository's command runs without the user's yes, and
# `workspaceCommand` is how a client marks a command as the repository's. A project file's
# parse never yields them, and merging never takes them from it.
REPOSITORY_KEYS: frozenset[str] = frozenset({"command", "globs", "timeoutMs", "runOn", "tailLines"})
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


@dataclass(frozen=True)
class ProjectFile:
    """`.lsp-verify.toml` as read: absolute path, its bytes (empty when unreadable), parsed."""

    path: str
    data: bytes
    parsed: ParsedSettings


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
    if key == "autoDetect":
        if isinstance(value, bool):
            return True, value, ""
        return False, None, "true or false"
    if key == "confirm":
        if isinstance(value, str) and value in CONFIRM_VALUES:
            return True, value, ""
        return False, None, "one of " + ", ".join(f'"{v}"' for v in CONFIRM_VALUES)
    raise AssertionError(f"unhandled key {key}")  # pragma: no cover - KEYS and this agree


def parse_settings(value: object, origin: str = "settings") -> ParsedSettings:
    """Validate the `verify` settings object (or a bare command string).

    origin names where the value came from. Messages about the editor's section (origin
    "settings", "initializationOptions", ...) write keys as `verify.<key>`; for origins
    ".lsp-verify.toml" and "command line" they write bare keys, since the caller shows the
    file or the flags beside the message. From ".lsp-verify.toml", the repository's file, only
    REPOSITORY_KEYS are taken; every other known key is ignored with a message.
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
    for raw_key, item in value.items():
        if not isinstance(raw_key, str) or raw_key not in KEYS:
            key_text = raw_key if isinstance(raw_key, str) else show(raw_key)
            text = f"{prefix}{key_text}: unknown key; ignored"
            if isinstance(raw_key, str):
                hint = _suggest(raw_key, REPOSITORY_KEYS if origin == PROJECT_FILE else KEYS)
                if hint:
                    text += f" (did you mean {hint}?)"
            messages.append(SettingsMessage(key_text, text))
            continue
        if origin == PROJECT_FILE and raw_key not in REPOSITORY_KEYS:
            messages.append(SettingsMessage(raw_key, _not_the_repositorys(raw_key)))
            continue
        field = KEYS[raw_key]
        if raw_key in _NULLABLE and item is None:
            continue  # null is how a user unsets the command
        ok, converted, expected = _validate(raw_key, item)
        if ok:
            values[field] = converted
        else:
            text = (
                f"{prefix}{raw_key}: expected {expected}, got {show(item)}; "
                f"using {_show_default(field)}"
            )
            messages.append(SettingsMessage(raw_key, text))
    return ParsedSettings(values, tuple(messages))


def _not_the_repositorys(key: str) -> str:
    return (
        f"{key}: ignored here; only your editor's settings can set it "
        "(a repository cannot decide whether its own command runs without your approval)"
    )


def _suggest(key: str, keys: Collection[str]) -> str:
    camel = re.sub(r"[_-]([a-z])", lambda m: m.group(1).upper(), key)
    if camel in keys:
        return camel
    lower = {k.lower(): k for k in keys}
    if key.lower() in lower:
        return lower[key.lower()]
    import difflib  # only for an unknown key

    close = difflib.get_close_matches(key, sorted(keys), n=1, cutoff=0.75)
    return close[0] if close else ""


def read_limited(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file, at most `limit` of them.

    Raises FileNotFoundError when nothing is there, OSError (with a readable strerror) for
    everything else a user can cause: a directory, a FIFO (opened non-blocking so that it
    cannot hang the server), a symlink loop, no permission, or a file over the limit.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "is a directory", path)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file", path)
        if info.st_size > limit:
            raise OSError(0, f"larger than {limit // 1024} KiB ({info.st_size} bytes)", path)
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                # The file grew after fstat; still never hold more than the limit.
                raise OSError(0, f"larger than {limit // 1024} KiB", path)
        return b"".join(chunks)
    finally:
        os.close(fd)


def describe_os_error(exc: OSError) -> str:
    """An OSError as a short phrase without the path (the caller names the file)."""
    if exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def toml_module() -> Any:
    """tomllib, or tomli before Python 3.11: imported when a TOML file is first read, after
    the server has answered `initialize`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on Python < 3.11
        import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
    return tomllib


_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def toml_error(exc: tomllib.TOMLDecodeError) -> tuple[str, int | None]:
    """tomllib's message without the position suffix, and the 1-based line it names."""
    text = str(exc)
    line: int | None = None
    lineno = getattr(exc, "lineno", None)  # Python 3.14+ has it as an attribute
    if isinstance(lineno, int):
        line = lineno
    match = _TOML_POSITION.search(text)
    if match:
        if line is None:
            line = int(match.group(1))
        text = (text[: match.start()] + text[match.end() :]).strip()
    return text, line


def _key_line(lines: list[str], key: str) -> int | None:
    """The 1-based line where a top-level key or table named `key` is written, if findable."""
    quoted = re.escape(key)
    pattern = re.compile(rf"""^\s*(?:\[\[?\s*)?(?:{quoted}|"{quoted}"|'{quoted}')\s*(?:[=.\]])""")
    for number, text in enumerate(lines, start=1):
        if pattern.match(text):
            return number
    return None


def load_project_file(folder: str) -> ProjectFile | None:
    """`.lsp-verify.toml` at the folder root, parsed; None when there is none.

    A broken file (unreadable, a directory, over 1 MiB, not UTF-8, invalid TOML) gives a
    ProjectFile with no values and a message saying why.
    """
    path = os.path.join(os.path.abspath(folder), PROJECT_FILE)
    try:
        data = read_limited(path)
    except FileNotFoundError:
        if os.path.islink(path):
            return _broken(path, b"", "is a symbolic link to a missing file", None)
        return None
    except NotADirectoryError:
        return None  # the folder itself is a file: nothing to load
    except OSError as exc:
        return _broken(path, b"", f"cannot be read: {describe_os_error(exc)}", None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _broken(path, data, f"is not UTF-8 (invalid byte at offset {exc.start})", None)
    toml = toml_module()
    try:
        document = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        problem, line = toml_error(exc)
        return _broken(path, data, f"is not valid TOML: {problem}", line)
    except RecursionError:
        return _broken(path, data, "is not valid TOML: nested too deeply", None)
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        return _broken(path, data, f"is not valid TOML: {exc}", None)
    parsed = parse_settings(document, origin=PROJECT_FILE)
    lines = text.splitlines()
    messages: list[SettingsMessage] = []
    for message in parsed.messages:
        if message.key is not None:
            line = _key_line(lines, message.key)
            text_ = message.text
            if message.key == "verify" and isinstance(document.get("verify"), dict):
                text_ += "; the keys belong at the top level of the file, without [verify]"
            message = dataclasses.replace(message, line=line, text=text_)
        messages.append(message)
    return ProjectFile(path, data, ParsedSettings(parsed.values, tuple(messages)))


def _broken(path: str, data: bytes, problem: str, line: int | None) -> ProjectFile:
    text = f"{PROJECT_FILE} {problem}; its settings are ignored"
    return ProjectFile(path, data, ParsedSettings({}, (SettingsMessage(None, text, line),)))


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


# ----- what the client says at initialize, parsed once -----

LogLevel = Literal["log", "info", "warning", "error"]
# "auto": pull when the client can, else push. VS Code's extension asks for "push", since VS
# Code shows pushed and pulled diagnostics in separate lists and only pushes reach files
# that are not open.
DiagnosticMode = Literal["auto", "push", "pull"]
_OPTION_KEYS = ("workspaceTrusted", "diagnosticMode")


@dataclass(frozen=True)
class InitOptions:
    """initializationOptions: the `verify` settings (a section or the bare keys), whether
    the client trusts the workspace, and how diagnostics reach it. `pull` is decided once
    the client's capabilities are known."""

    settings: object = None
    trusted: bool = True
    mode: DiagnosticMode = "auto"
    pull: bool = False


def parse_init_options(options: object, client_pulls: bool) -> InitOptions:
    """initializationOptions: `{"verify": {...}, "workspaceTrusted": .., "diagnosticMode": ..}`,
    or the settings keys bare beside the two flags, or a bare command string."""
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
    return InitOptions(value, True if trusted is None else trusted, mode, pull)


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

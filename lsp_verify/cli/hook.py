"""`lsp-verify hook post-edit|stop`: Claude Code's hooks, on the language server's runs.

Claude Code starts lsp-verify as a language server (the plugin's `lspServers`, with the
initialization option `agentHooks`) and tells it of each Edit/Write with a save; the server
runs the project's command as it does for an editor and writes the folder's run file
(`workspace/run_file.py`). These hooks never run the command: they read that file, wait for
the run that saw the edit, and put its verdict where the model reads it (the hook's JSON
answer on stdout). So one edit is one run, and a folder has one process at a time.

- post-edit (PostToolUse on Edit|Write|MultiEdit): when the run that saw the edited file
  fails, `{"decision": "block", "reason": the failure}`: the reason reaches the model with the
  tool's result. Quiet on green; at once for a file the plugin does not map to the server
  or a save the settings do not run for; after `HEARD_WITHIN` seconds when no server heard
  of the edit.
- stop (Stop): when the run that saw the latest edit failed, `{"decision": "block"}` with the
  failure, so the model goes on fixing; never twice in a row (`stop_hook_active`), never for
  a run that did not happen.
- An unapproved plan: the server declines (it cannot ask Claude Code's user a question); the
  first hook of a session that meets it tells the model how the user approves, once per
  session and folder, and Stop is never blocked for it.

Exit status 0 always, whatever the input: a hook's failure must not become the model's.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import IO, Any

from lsp_verify.cli import EXIT_OK, EXIT_USAGE
from lsp_verify.workspace import run_file

HEARD_WITHIN = 8.0  # seconds for a server to hear of an edit (a cold start included)
WAIT_AT_MOST = 600.0  # seconds for the run that saw it (the hooks.json timeout is longer)
POLL = 0.05
MAX_EVENT = 1024 * 1024  # bytes of the hook's input read at most
FAILED = ("failed", "timed-out")


def hook_main(event_name: str, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    try:
        event = json.loads(stdin.read(MAX_EVENT) or "{}")
    except ValueError:
        print("lsp-verify hook: the input is not JSON; nothing to do", file=sys.stderr)
        return EXIT_OK
    if not isinstance(event, dict):
        return EXIT_OK
    if event_name == "post-edit":
        answer = post_edit(event)
    elif event_name == "stop":
        answer = stop(event)
    else:
        print(f"lsp-verify hook: unknown event {event_name!r}", file=sys.stderr)
        return EXIT_USAGE
    if answer is not None:
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return EXIT_OK


def post_edit(event: dict[str, Any]) -> dict[str, Any] | None:
    tool_input = event.get("tool_input")
    given = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(given, str) or not given:
        return None
    path = os.path.realpath(os.path.join(_cwd(event), given))
    mapped = _mapped_extensions()
    if mapped is not None and os.path.splitext(path)[1] not in mapped:
        return None  # Claude Code does not tell the server of this file
    try:
        written = os.stat(path).st_mtime
    except OSError:
        written = time.time()  # deleted since: any run from now on saw it
    last = _verdict(_folders_of(path), written)
    return _answer(event, last, "after this edit")


def stop(event: dict[str, Any]) -> dict[str, Any] | None:
    if event.get("stop_hook_active") is True:
        return None  # it was refused once already and went on: let it end
    folders = _folders_of(os.path.realpath(_cwd(event)))
    value = _innermost(folders)
    if value is None or not _alive(value.get("pid")):
        return None  # no server of this session has run anything here
    saved = value.get("saved")
    if not isinstance(saved, (int, float)) or saved <= 0:
        return None  # no edit triggered a run this session
    last = _verdict(folders, float(saved))
    if last is None or last.get("outcome") not in FAILED:
        return None  # a pass, or nothing ran (not approved, no plan): it may end
    return {"decision": "block", "reason": failure_text(last, "after your last edit")}


def _answer(event: dict[str, Any], last: dict[str, Any] | None, when: str) -> dict[str, Any] | None:
    if last is None:
        return None
    outcome = last.get("outcome")
    if outcome in FAILED:
        return {"decision": "block", "reason": failure_text(last, when)}
    if outcome == "declined" and last.get("needsApproval") is True:
        folder = str(last.get("folder") or "")
        if _first_time(event, folder, str(last.get("command"))):
            return {"decision": "block", "reason": approval_text(last, folder)}
    return None


def failure_text(last: dict[str, Any], when: str) -> str:
    problems = [str(p) for p in last.get("problems") or []]
    lines = [f"lsp-verify: the project's check `{last.get('command')}` fails {when}."]
    if problems:
        lines.append("Failures:")
        lines.extend(f"- {p}" for p in problems)
    lines.append(str(last.get("summary", "")))
    return "\n".join(lines)


def approval_text(last: dict[str, Any], folder: str) -> str:
    return (
        f"lsp-verify did not run `{last.get('command')}`: a repository's command runs only "
        "once the user has approved it, so no check runs after your edits. Only the user "
        f"can approve it, from a terminal of their own: `lsp-verify approve {folder}` "
        "(lsp-verify refuses approval from inside Claude Code's tools). Tell the user; do not "
        "try to approve it yourself."
    )


def _mapped_extensions() -> set[str] | None:
    """The extensions the plugin maps to its language server (plugin.json's lspServers), or
    None when the plugin is not where $CLAUDE_PLUGIN_ROOT says."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if not root:
        return None
    try:
        with open(os.path.join(root, ".claude-plugin", "plugin.json"), "rb") as handle:
            manifest = json.loads(handle.read(MAX_EVENT))
        servers = manifest["lspServers"].values()
        return {ext for server in servers for ext in server["extensionToLanguage"]}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _cwd(event: dict[str, Any]) -> str:
    cwd = event.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def _folders_of(path: str) -> list[str]:
    """`path` and the folders above it, innermost first: where a run file may be."""
    out = []
    current = path
    while True:
        out.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            return out
        current = parent


def _innermost(folders: list[str]) -> dict[str, Any] | None:
    for folder in folders:
        value = run_file.read(folder)
        if value is not None:
            return value
    return None


def _verdict(folders: list[str], since: float) -> dict[str, Any] | None:
    """The record of the first run that began at or after `since` in the innermost folder
    with a run file, once it has ended; None when no server hears of it in time (a run file
    a gone server left, from an earlier session, is waited past: a new server may start),
    the server that heard of it is gone, or the wait is over."""
    started = time.monotonic()
    while True:
        value = _innermost(folders)
        waited = time.monotonic() - started
        heard = False
        if value is not None:
            last = value.get("last")
            if isinstance(last, dict) and float(last.get("began") or 0) >= since:
                return {**last, "folder": value.get("folder")}
            heard = float(value.get("saved") or 0) >= since
            if not heard and float(value.get("ignored") or 0) >= since:
                return None  # a save the settings do not run for (runOn, globs)
            if heard and not _alive(value.get("pid")):
                return None  # its server died before the run ended
        if (not heard and waited > HEARD_WITHIN) or waited > WAIT_AT_MOST:
            return None
        time.sleep(POLL)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process: it exists
    return True


def _first_time(event: dict[str, Any], folder: str, command: str) -> bool:
    """Whether this session has not been told about this folder's plan yet (and mark it)."""
    session = str(event.get("session_id") or "")
    key = hashlib.sha256(f"{session}\0{folder}\0{command}".encode(errors="replace")).hexdigest()
    try:
        marks = os.path.join(os.path.dirname(run_file.path_for(folder)), "told")
        run_file.make_private_dirs(marks)
        fd = os.open(os.path.join(marks, key[:32]), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    except (OSError, RuntimeError):
        return True  # better told twice than never
    os.close(fd)
    return True

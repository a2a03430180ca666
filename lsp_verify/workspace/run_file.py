"""The run file: what a folder's server heard and ran last, for an agent's hooks.

A client that asks for it (the initialization option `agentHooks`, which the Claude Code
plugin sets) gets, per workspace folder, a small JSON file in the state folder
(`$XDG_STATE_HOME/lsp-verify/runs/`), rewritten whole (a rename) when an edit triggers a run
and when a run ends. `lsp-verify hook` reads it to give the model the verdict of the run
that saw an edit, and never runs the command itself: one process per folder at a time, one
run per edit, whoever asks.

    {"version": 1, "folder": ..., "pid": the server's pid,
     "saved": time.time() of the latest edit that triggered a run,
     "ignored": that of the latest save the settings do not run for (runOn, globs),
     "last": {"began": ..., "ended": ..., "outcome": ..., "command": ..., "reason": ...,
              "needsApproval": declined because the client cannot ask the user,
              "summary": the failure's summary, "problems": ["path:line: message", ...]}}
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import TYPE_CHECKING, Any

from lsp_verify.record import failure_header

if TYPE_CHECKING:
    from lsp_verify.record import Record

VERSION = 1
MAX_BYTES = 256 * 1024  # a run file is small; a bigger one is not ours
MAX_PROBLEMS = 20  # located problems named in the file; the summary has the output's tail


def path_for(folder: str) -> str:
    from lsp_verify.trust.store import state_dir  # the trust store's folder; loaded only here

    key = hashlib.sha256(os.path.realpath(folder).encode("utf-8", "surrogatepass")).hexdigest()
    return str(state_dir() / "runs" / f"{key[:32]}.json")


def last_of(record: Record, began: float, needs_approval: bool) -> dict[str, Any]:
    """What the hooks need of a finished run."""
    return {
        "needsApproval": needs_approval,
        "began": began,
        "ended": time.time(),
        "outcome": record.outcome,
        "command": record.command,
        "reason": record.reason,
        "summary": failure_header(record) + ":\n" + "\n".join(record.tail) if record.failed else "",
        "problems": [
            f"{p.path}:{p.line}: {p.message.splitlines()[0] if p.message else ''}"
            for p in record.problems[:MAX_PROBLEMS]
        ],
    }


class RunFile:
    """One folder's run file, as its server writes it."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.value: dict[str, Any] = {
            "version": VERSION,
            "folder": folder,
            "pid": os.getpid(),
            "saved": 0.0,
            "ignored": 0.0,
            "last": None,
        }
        self.failed = False  # a write failed once: the log said so, the server goes on

    def saved(self, at: float) -> str | None:
        self.value["saved"] = at
        return self._write()

    def ignored(self, at: float) -> str | None:
        self.value["ignored"] = at
        return self._write()

    def finished(self, record: Record, began: float, needs_approval: bool) -> str | None:
        self.value["last"] = last_of(record, began, needs_approval)
        return self._write()

    def _write(self) -> str | None:
        """Write the file (a small JSON, renamed into place); the error, once, if it fails."""
        try:
            path = path_for(self.folder)
            make_private_dirs(os.path.dirname(path))
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(self.value, handle)
            os.replace(tmp, path)
        except (OSError, RuntimeError, ValueError) as exc:
            if self.failed:
                return None
            self.failed = True
            return f"cannot write the run file for {self.folder}: {exc}"
        return None


def make_private_dirs(path: str) -> None:
    """`path` and its missing parents, each 0700 whatever the umask (0277 would make a new
    folder 0500, and nothing could be written inside it)."""
    missing = []
    current = path
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue
        os.chmod(folder, 0o700)


def read(folder: str) -> dict[str, Any] | None:
    """A folder's run file, or None when there is none or it is not one."""
    try:
        with open(path_for(folder), "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except (OSError, RuntimeError):
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("version") != VERSION:
        return None
    return value

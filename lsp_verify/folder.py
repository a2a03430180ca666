"""One workspace folder: its settings, its plan, its verifier, and the caches that keep a
save cheap.

Every save asks for the folder's settings and plan. Both are made again only when what they
are made from changed: the editor's settings (a new value object), `.lsp-verify.toml` (its
stat) and the files planning reads (`plan_signature`). A cache that misses an edit (same
size within the clock's granularity) is still safe: the manifest's bytes are checked against
the plan's fingerprint just before the spawn, and a skipped run drops the caches.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from lsp_verify.settings import (
    PROJECT_FILE,
    ParsedSettings,
    ProjectFile,
    Settings,
    effective_settings,
    load_project_file,
)
from lsp_verify.uris import path_to_uri
from lsp_verify.verifier import FolderVerifier, Job

if TYPE_CHECKING:
    from lsp_verify.plan import Plan
    from lsp_verify.record import Record

# Called with the URI of `.lsp-verify.toml` and its problems (message, 1-based line or None).
ConfigProblems = Callable[[str, list[tuple[str, "int | None"]]], None]


@dataclass(frozen=True)
class _ProjectCache:
    stat: tuple[int, ...] | None
    project: ProjectFile | None


@dataclass(frozen=True)
class _SettingsCache:
    editor: ParsedSettings | None
    project: ProjectFile | None
    settings: Settings


@dataclass(frozen=True)
class _PlanCache:
    editor: ParsedSettings | None
    signature: tuple[object, ...]
    plan: Plan


class Folder:
    def __init__(
        self,
        path: str,
        uri: str,
        job: Job,
        on_record: Callable[[Folder, Record], None],
        on_state: Callable[[Folder], None],
        on_config: ConfigProblems,
    ) -> None:
        self.path = path
        self.uri = uri
        # Sent at once on a state change, before a trigger spawns its command: a client that
        # wakes up to read it then does so while the server prepares, not while the command
        # runs beside it on a machine with few cores (measured: a tenth of a millisecond).
        self.verifier = FolderVerifier(
            path, job, on_record=lambda r: on_record(self, r), on_state=lambda _: on_state(self)
        )
        self.editor: ParsedSettings | None = None  # the editor's settings, once known
        self.ready = asyncio.Event()  # set while `editor` is current
        self._on_config = on_config
        self._project: _ProjectCache | None = None
        self._settings: _SettingsCache | None = None
        self._plan: _PlanCache | None = None
        # Wall-clock spans of this folder's recent runs (end None while running): a file that
        # changed inside one, and that the client does not have open, was written by the run.
        self.run_spans: deque[list[float | None]] = deque(maxlen=8)

    def project(self) -> ProjectFile | None:
        """`.lsp-verify.toml`, read again only when its stat changes; its problems are
        reported whenever it is read."""
        path = os.path.join(self.path, PROJECT_FILE)
        try:
            st = os.stat(path)
            stat: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            stat = None
        cached = self._project
        if cached is not None and cached.stat == stat:
            return cached.project
        project = load_project_file(self.path)
        self._project = _ProjectCache(stat, project)
        messages = project.parsed.messages if project else ()
        self._on_config(path_to_uri(path), [(m.text, m.line) for m in messages])
        return project

    def settings(self) -> Settings:
        project = self.project()
        cached = self._settings
        if cached is not None and cached.editor is self.editor and cached.project is project:
            return cached.settings
        settings = effective_settings(self.editor, project)
        self._settings = _SettingsCache(self.editor, project, settings)
        return settings

    def plan(self) -> Plan:
        """The folder's plan, made again only when the editor settings or one of the files
        planning reads changed."""
        from lsp_verify.plan import make_plan, plan_signature

        project = self.project()
        signature = plan_signature(self.path)
        cached = self._plan
        if cached is not None and cached.editor is self.editor and cached.signature == signature:
            return cached.plan
        plan = make_plan(self.path, self.editor, project=project)
        self._plan = _PlanCache(self.editor, signature, plan)
        return plan

    def forget_plan(self) -> None:
        """A run was skipped because its manifest changed: plan again on the next trigger."""
        self._project = None
        self._plan = None

    def status(self) -> dict[str, Any]:
        """The folder's `verify/status` as it is now."""
        last = self.verifier.last_record
        plan = self._plan.plan if self._plan is not None else None
        return {
            "folder": self.uri,
            "state": self.verifier.state,
            "lastOutcome": last.outcome if last else None,
            "needsApproval": last is not None and last.outcome == "declined",
            "command": plan.command if plan else (last.command if last else None),
        }

    def summary_uri(self, record: Record) -> str:
        """Where a failed run's summary goes when no document triggered it."""
        return record.document or path_to_uri(
            os.path.join(self.path, record.manifest or PROJECT_FILE)
        )

    def written_by_a_run(self, path: str) -> bool:
        """Did the file change while one of this folder's runs was going? Test runs write
        files (coverage data, reports); re-running for those would never stop."""
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return False
        for start, end in self.run_spans:
            assert start is not None
            if start <= mtime and (end is None or mtime <= end + RUN_SPAN_GRACE):
                return True
        return False


RUN_SPAN_GRACE = 1.0  # seconds after a run in which its own writes may still be reported

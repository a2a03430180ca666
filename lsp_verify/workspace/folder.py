"""A workspace folder: its settings, plan, verifier, what triggers it, and the caches that
keep a save cheap.

Every save asks for the folder's settings and plan. Both are made again only when what they
are made from changed: the editor's settings (a new value object), `.lsp-verify.toml` (its
stat) and the files planning reads (`plan_signature`). A cache that misses an edit (same
size within the clock's granularity) is still safe: the manifest's bytes are checked against
the plan's fingerprint just before the spawn, and a skipped run drops the caches.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from lsp_verify.config.project_file import ProjectFile, load_project_file
from lsp_verify.config.settings import (
    PROJECT_FILE,
    ParsedSettings,
    Settings,
    effective_settings,
)
from lsp_verify.uris import path_to_uri
from lsp_verify.workspace.held import Holds
from lsp_verify.workspace.ignore import IgnoreRules
from lsp_verify.workspace.loopguard import LoopGuard
from lsp_verify.workspace.verifier import FolderVerifier, Job

if TYPE_CHECKING:
    from lsp_verify.planning.plan import Plan
    from lsp_verify.record import Record

log = logging.getLogger("lsp_verify")

# Where a folder's current run is, for `verify/status` (see Folder.stage).
Stage = Literal["gate", "waiting", "running"]
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
        # runs beside it on a machine with few cores.
        self.verifier = FolderVerifier(
            path, job, on_record=lambda r: on_record(self, r), on_state=lambda _: on_state(self)
        )
        # Where the folder's current run is, for `verify/status`: "gate" until the trust gate
        # lets it spawn (nothing to report yet: it may be declined at once), "waiting" while
        # the approval question is open, "running" once it spawns.
        self.stage: Stage = "gate"
        self.began = 0.0  # time.time() when the current or last run began (saw the files)
        self.editor: ParsedSettings | None = None  # the editor's settings, once known
        self.ready = asyncio.Event()  # set while `editor` is current
        self._on_config = on_config
        self._project: _ProjectCache | None = None
        self._settings: _SettingsCache | None = None
        self._plan: _PlanCache | None = None
        self.holds = Holds()  # triggers waiting for the settings
        self.ignore = IgnoreRules(path)  # what never triggers
        self.guard = LoopGuard()  # what the folder's own runs write triggers once

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
        from lsp_verify.planning.plan import make_plan, plan_signature

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
        state: str = self.verifier.state
        if state != "idle" and self.stage == "waiting":
            state = "waiting"
        return {
            "folder": self.uri,
            "state": state,
            "lastOutcome": last.outcome if last else None,
            "needsApproval": last is not None and last.outcome == "declined",
            "command": plan.command if plan else (last.command if last else None),
        }

    def summary_uri(self, record: Record) -> str:
        """Where a failed run's summary goes when no document triggered it."""
        return record.document or path_to_uri(
            os.path.join(self.path, record.manifest or PROJECT_FILE)
        )

"""The workspace folders: each one's settings, plan, verifier and the caches that keep a save
cheap (`Folder`), and the set of them (`Folders`).

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
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from lsp_verify.config.project_file import ProjectFile, load_project_file
from lsp_verify.config.settings import (
    PROJECT_FILE,
    InitOptions,
    LogLevel,
    ParsedSettings,
    Settings,
    apply_config_change,
    effective_settings,
    parse_settings,
    settings_json,
)
from lsp_verify.logs import log_failures, one_line
from lsp_verify.results.diagnostics import Diagnostics
from lsp_verify.uris import path_to_uri, relative_to, uri_to_path
from lsp_verify.workspace.held import Holds, settle
from lsp_verify.workspace.ignore import IgnoreRules
from lsp_verify.workspace.loopguard import LoopGuard
from lsp_verify.workspace.verifier import FolderVerifier, Job, RunRequest

if TYPE_CHECKING:
    from lsp_verify.planning.plan import Plan
    from lsp_verify.record import Record
    from lsp_verify.trust import TrustStore
    from lsp_verify.workspace.run import UI

log = logging.getLogger("lsp_verify")

MAX_SHOWN = 10  # settings problems a session shows as pop-ups; the log has every one
MAX_REMEMBERED = 1000  # problems remembered as said (a flood of distinct ones is logged)

# Called with the URI of `.lsp-verify.toml` and its problems (message, 1-based line or None).
Phase = Literal["gate", "waiting", "running"]
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
        self.phase: Phase = "gate"
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
        if state != "idle" and self.phase == "waiting":
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


class Folders:
    """The workspace's folders: the set and its lookup, their settings from the client, the
    commands' work on them, and the lifetime of what they run. `Workspace` adds what
    triggers a run and what a run does (its `_job`, `_on_record` and `_publish`)."""

    def __init__(self, ui: UI, options: InitOptions | None = None) -> None:
        self.ui = ui
        self.folders: dict[str, Folder] = {}
        self.options = options or InitOptions()
        self.diagnostics = Diagnostics(self._publish)
        self.closing = False
        self._warned: set[str] = set()
        self._shown = 0  # settings problems shown as pop-ups so far
        self._trust: TrustStore | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def trust(self) -> TrustStore:
        if self._trust is None:
            from lsp_verify.trust import TrustStore

            self._trust = TrustStore()
        return self._trust

    async def _job(self, request: RunRequest) -> Record:
        raise NotImplementedError

    def _on_record(self, folder: Folder, record: Record) -> None:
        raise NotImplementedError

    def _publish(self, uri: str) -> None:
        raise NotImplementedError

    # ----- folders -----

    def add_folder(self, uri: str) -> Folder | None:
        path = uri_to_path(uri)
        if path is None:
            self.log(f"ignoring workspace folder {uri}: not a file:// folder")
            return None
        if path not in self.folders:
            self.folders[path] = Folder(
                path, uri, self._job, self._on_record, self.send_status, self.diagnostics.set_config
            )
        return self.folders[path]

    def folder_of(self, path: str) -> Folder | None:
        """The innermost workspace folder holding `path`."""
        best: Folder | None = None
        for folder in self.folders.values():
            if relative_to(folder.path, path) is not None and (
                best is None or len(folder.path) > len(best.path)
            ):
                best = folder
        return best

    def folder_of_uri(self, uri: str) -> tuple[Folder | None, str | None]:
        path = uri_to_path(uri)
        return (self.folder_of(path) if path is not None else None), path

    def remove_folder(self, uri: str) -> None:
        """A folder left the workspace: stop its runs, then withdraw its diagnostics."""
        path = uri_to_path(uri)
        folder = self.folders.pop(path, None) if path else None
        if folder is not None:
            self.spawn(self._retire(folder))

    async def _retire(self, folder: Folder) -> None:
        await folder.verifier.close()

        def was_its(uri: str) -> bool:
            path = uri_to_path(uri)
            return (
                path is not None
                and relative_to(folder.path, path) is not None
                and self.folder_of(path) is None
            )

        self.diagnostics.replace_verify({}, was_its)

    def target(self, uri: str | None) -> tuple[Folder | None, str | None]:
        """Folder and document a command names (a document or folder URI, or nothing)."""
        if uri is None:
            folders = list(self.folders.values())
            recent = [f for f in folders if f.verifier.last_document is not None]
            candidates = recent or folders
            return (candidates[0] if candidates else None), None
        path = uri_to_path(uri)
        if path is None:
            return None, None
        if path in self.folders:
            return self.folders[path], None
        folder = self.folder_of(path)
        return folder, (uri if folder is not None and not os.path.isdir(path) else None)

    async def ready_target(self, uri: str | None) -> tuple[Folder | None, str | None]:
        """`target`, once the folder's settings are known."""
        folder, document = self.target(uri)
        if folder is not None:
            await folder.ready.wait()
        return folder, document

    # ----- the commands' work -----

    async def cancel(self, uri: str | None) -> list[Record]:
        """Cancel the runs of the folder `uri` names, or of every folder."""
        folders = [self.target(uri)[0]] if uri is not None else list(self.folders.values())
        cancelled: list[Record] = []
        for folder in folders:
            if folder is not None:
                cancelled.extend(await folder.verifier.cancel())
        return cancelled

    def last_records(self, uri: str | None) -> Any:
        """The last record of the folder `uri` names; of every folder when it names none
        and there are several."""
        if uri is None and len(self.folders) > 1:
            records = [f.verifier.last_record for f in self.folders.values()]
            return [r.to_json() for r in records if r is not None]
        folder = self.target(uri)[0]
        record = folder.verifier.last_record if folder is not None else None
        return record.to_json() if record is not None else None

    def last_run_folder(self, uri: str | None) -> Folder | None:
        """The folder `uri` names; when it names none, the folder whose last run started last
        (the record `last_records` lists with the others), else `target`'s guess."""
        if uri is None:
            started = [
                (f.verifier.last_record.started_at, i, f)
                for i, f in enumerate(self.folders.values())
                if f.verifier.last_record is not None
            ]
            if started:
                return max(started)[2]
        return self.target(uri)[0]

    def explain(self, folder: Folder) -> dict[str, Any]:
        from lsp_verify.planning.arrange import arrangement_json
        from lsp_verify.planning.plan import plan_to_json

        plan, settings = folder.plan(), folder.settings()
        return {
            **plan_to_json(plan),
            **arrangement_json(plan, settings.failed_first),
            "settings": settings_json(settings),
        }

    async def approve(self, folder: Folder) -> dict[str, Any]:
        from lsp_verify.trust import needs_question, plan_fingerprint

        plan = folder.plan()
        if not needs_question(plan):
            return {"approved": False, "reason": "nothing to approve: " + plan.reason}
        stored = await asyncio.to_thread(self.trust.approve, plan)
        self.trust_warnings()
        return {"approved": stored, "command": plan.command, "fingerprint": plan_fingerprint(plan)}

    async def revoke(self, folder: Folder) -> dict[str, Any]:
        removed = await asyncio.to_thread(self.trust.revoke, folder.path)
        self.trust_warnings()
        return {"revoked": removed}

    # ----- settings -----

    async def load_settings(self, folders: list[Folder]) -> None:
        """Each folder's `verify` section from the client, where it can answer; else the
        initialization options."""
        try:
            answers = await self.ui.configuration([f.uri for f in folders]) if folders else None
        except Exception as exc:  # a bug of ours: the folders still get ready, on init options
            log.error("asking the client for settings failed: %s", one_line(exc))
            answers = None
        for n, folder in enumerate(folders):
            answer = answers[n] if answers is not None and n < len(answers) else None
            origin = "settings" if answers is not None else "initializationOptions"
            value = answer if answer not in (None, {}) else self.options.settings
            try:
                folder.editor = self._parse(value, origin)
            except Exception as exc:
                log.error("reading the settings of %s failed: %s", folder.path, one_line(exc))
                folder.editor = None
            finally:
                folder.ready.set()  # never left unready: its saves would be held for good

    def settings_changed(self, settings: object) -> None:
        """workspace/didChangeConfiguration: saves from now on wait for the new settings."""
        self.options = apply_config_change(self.options, settings)
        folders = list(self.folders.values())
        for folder in folders:
            folder.ready.clear()
        self.spawn(self.load_settings(folders))

    def _parse(self, value: object, origin: str) -> ParsedSettings:
        parsed = parse_settings(value, origin)
        for message in parsed.messages:
            self.warn_once(message.text)
        return parsed

    def trust_warnings(self) -> None:
        for warning in self.trust.take_warnings():
            self.warn_once(warning)

    def warn_once(self, text: str) -> None:
        """A settings problem is shown once (showMessage) and logged, never repeated; past
        MAX_SHOWN of them in a session, only logged (each is a pop-up in the editor)."""
        if text in self._warned:
            return
        if len(self._warned) < MAX_REMEMBERED:
            self._warned.add(text)
        self.log(text, "warning")
        if self.closing:
            return
        self._shown += 1
        if self._shown <= MAX_SHOWN:
            self.ui.show_warning(text)
        elif self._shown == MAX_SHOWN + 1:
            self.ui.show_warning("verify: more problems with the settings; the log has them all")

    async def wait_for_pending(self, uri: str | None) -> None:
        """A pull waits for the triggers the document's folder holds (all folders for a
        workspace pull), then for its queued or running run: that run saw the latest change.
        Bounded by timeoutMs (the settings' once known)."""
        folders = list(self.folders.values())
        if uri is not None:
            folder = self.folder_of_uri(uri)[0]
            folders = [folder] if folder is not None else []
        waits = []
        for folder in folders:
            if folder.holds.count or folder.verifier.pending() is not None:
                settings = folder.settings() if folder.ready.is_set() else Settings()
                limit = settings.timeout_ms / 1000 + 5
                waits.append(asyncio.wait_for(settle(folder.holds, folder.verifier), limit))
        if waits:
            results = await asyncio.gather(*waits, return_exceptions=True)
            log_failures("waiting for a run", results, (asyncio.TimeoutError,))

    # ----- status, log, lifetime -----

    def send_status(self, folder: Folder) -> None:
        # A run still at the gate may be declined without a process: "running" would be untrue.
        if folder.verifier.state != "idle" and folder.phase == "gate":
            return
        if not self.closing:
            self.ui.send_status(folder.status())

    def log(self, text: str, level: LogLevel = "log") -> None:
        log.info("%s", text)
        if not self.closing:
            self.ui.log(text, level)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task the workspace keeps a reference to until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log_failures("a background task", [task.exception()])

    async def close_all(self) -> None:
        results = await asyncio.gather(
            *(f.verifier.close() for f in list(self.folders.values())), return_exceptions=True
        )
        log_failures("stopping a folder's runs", results)

"""The workspace: its folders, what a change triggers, and one run from plan to record.

No pygls here. What needs the client (publishing, questions, progress, status, the log,
the client's settings) goes through `UI`, which the server implements; a test can drive a
Workspace with a fake UI and no client at all.

The path of a save: `on_save` finds the innermost folder, waits for its settings only when
they are still loading, and `_gate` decides on runOn and globs; the folder's verifier
coalesces triggers and calls `_job` for one run: plan, trust gate, the question, execute.
The record comes back through `_on_record` to the diagnostics layers and is published.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Callable, Protocol

from lsp_verify.diagnostics import Diagnostics, record_entries
from lsp_verify.folder import Folder
from lsp_verify.globs import matches_any
from lsp_verify.record import Record, Trigger, log_line, record_for_plan
from lsp_verify.settings import InitOptions, LogLevel, apply_config_change, parse_settings
from lsp_verify.uris import relative_to, uri_to_path
from lsp_verify.verifier import RunRequest
from lsp_verify.watched import trigger_changed

if TYPE_CHECKING:
    from lsp_verify.plan import Plan
    from lsp_verify.settings import ParsedSettings, Settings
    from lsp_verify.trust import TrustStore

log = logging.getLogger("lsp_verify")

RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"
HOW_TO_APPROVE = (
    "approve it with the verify.approve command or `lsp-verify approve`, "
    "or set verify.command in the editor settings"
)


class Progress(Protocol):
    def line(self, text: str) -> None: ...
    def end(self, outcome: str) -> None: ...


class UI(Protocol):
    """What the workspace needs from the client, as the server provides it."""

    def publish(self, uri: str, payloads: list[bytes]) -> None: ...
    def send_status(self, status: dict[str, Any]) -> None: ...
    def log(self, text: str, level: LogLevel = "log") -> None: ...
    def show_warning(self, text: str) -> None: ...
    def can_ask(self) -> bool: ...
    async def ask(self, text: str, actions: Sequence[str]) -> str | None: ...
    def begin_progress(self, command: str, cancel: asyncio.Event) -> Progress | None: ...
    def refresh_pulls(self) -> None: ...
    async def configuration(self, uris: list[str]) -> list[Any] | None: ...
    def document_text(self, uri: str) -> str | None: ...


class Workspace:
    def __init__(self, ui: UI, options: InitOptions | None = None) -> None:
        self.ui = ui
        self.folders: dict[str, Folder] = {}
        self.options = options or InitOptions()
        self.diagnostics = Diagnostics(self._publish)
        self.closing = False
        self._warned: set[str] = set()
        self._trust: TrustStore | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def trust(self) -> TrustStore:
        if self._trust is None:
            from lsp_verify.trust import TrustStore

            self._trust = TrustStore()
        return self._trust

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

    # ----- settings -----

    async def load_settings(self, folders: list[Folder]) -> None:
        """Each folder's `verify` section from the client, where it can answer; else the
        initialization options."""
        answers = await self.ui.configuration([f.uri for f in folders]) if folders else None
        for n, folder in enumerate(folders):
            answer = answers[n] if answers is not None and n < len(answers) else None
            origin = "settings" if answers is not None else "initializationOptions"
            value = answer if answer not in (None, {}) else self.options.settings
            folder.editor = self._parse(value, origin)
            folder.ready.set()

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

    def warn_once(self, text: str) -> None:
        """A settings problem is shown once (showMessage) and logged, never repeated."""
        if text in self._warned:
            return
        self._warned.add(text)
        self.log(text, "warning")
        if not self.closing:
            self.ui.show_warning(text)

    # ----- triggers -----

    def on_save(self, uri: str, trigger: Trigger = "save") -> None:
        folder, path = self.folder_of_uri(uri)
        if folder is None or path is None:
            self.log(f"{uri}: outside every workspace folder; not verified")
            return
        self.when_ready(folder, functools.partial(self._gate, folder, path, uri, trigger))

    def on_change(self, uri: str) -> None:
        if self.diagnostics.withdraw_stale(uri, functools.partial(self.line_text, uri)):
            self.diagnostics.changed(uri)
        self.on_open(uri)

    def on_open(self, uri: str) -> None:
        """runOn "sync": an open or changed document whose text equals the file on disk
        counts as a save (an agent wrote the file, then synced it)."""
        folder, path = self.folder_of_uri(uri)
        if folder is not None and path is not None:
            self.when_ready(folder, functools.partial(self._sync, folder, path, uri))

    def on_watched(self, changes: Sequence[tuple[str, int]]) -> None:
        """Files changed on disk: (uri, FileChangeType), as the client's watchers saw them."""
        trigger_changed(self, changes)

    def when_ready(self, folder: Folder, action: Callable[[], None]) -> None:
        """Run `action` once the folder's settings are known: at once in the usual case
        (every loop turn before the spawn is latency), else when the client has answered
        workspace/configuration."""
        if folder.ready.is_set():
            action()
            return

        async def later() -> None:
            await folder.ready.wait()
            action()

        self.spawn(later())

    def _gate(self, folder: Folder, path: str, uri: str | None, trigger: Trigger) -> None:
        """runOn and globs decide whether this trigger runs anything."""
        settings = folder.settings()
        if settings.run_on == "manual":
            return
        if matches_any(settings.globs, relative_to(folder.path, path) or ""):
            folder.verifier.trigger(trigger, uri)

    def _sync(self, folder: Folder, path: str, uri: str) -> None:
        if folder.settings().run_on != "sync":
            return
        source = self.ui.document_text(uri)
        if source is None:
            return
        text = source.encode("utf-8", errors="surrogatepass")
        try:
            if os.path.getsize(path) != len(text):
                return
            with open(path, "rb") as handle:
                on_disk = handle.read(len(text) + 1)
        except OSError:
            return
        if on_disk == text:
            self._gate(folder, path, uri, "save")

    # ----- one run -----

    async def _job(self, request: RunRequest) -> Record:
        from lsp_verify.execute import execute_plan

        folder = self.folders.get(request.folder)
        if folder is None:  # removed while queued
            return Record.not_started(
                request.folder, request.trigger, "cancelled", "workspace folder was removed"
            )
        await folder.ready.wait()
        settings = folder.settings()
        plan = folder.plan()
        if plan.command is None:
            return record_for_plan(
                plan, trigger=request.trigger, outcome="no-plan", document=request.document
            )
        refusal = await self._approve(folder, plan, settings, request)
        if refusal is not None or request.cancel.is_set():
            return record_for_plan(
                plan,
                trigger=request.trigger,
                outcome="declined" if refusal is not None else "cancelled",
                reason=refusal,
                document=request.document,
            )
        progress = self.ui.begin_progress(plan.command, request.cancel)
        outcome = "cancelled"
        span: list[float | None] = [time.time(), None]
        folder.run_spans.append(span)
        try:
            record = await execute_plan(
                plan,
                settings,
                trigger=request.trigger,
                document=request.document,
                cancel=request.cancel,
                on_line=progress.line if progress else None,
            )
            outcome = record.outcome
            return record
        finally:
            span[1] = time.time()
            if progress is not None:
                progress.end(outcome)

    async def _approve(
        self, folder: Folder, plan: Plan, settings: Settings, request: RunRequest
    ) -> str | None:
        """The trust gate: None to run, or why the plan does not run."""
        from lsp_verify.trust import describe, gate, needs_question, plan_fingerprint

        decision = gate(
            plan,
            self.trust,
            confirm=settings.confirm,
            run_now=request.trigger == "runNow",
            workspace_trusted=self.options.trusted,
        )
        self.trust_warnings()
        if decision.action == "run":
            if settings.confirm == "never" and needs_question(plan):
                key = f"never:{folder.path}:{plan_fingerprint(plan)}"
                if key not in self._warned:
                    self._warned.add(key)
                    self.log(f'confirm is "never": running {plan.command!r} without asking')
            return None
        if decision.action == "decline":
            return f"{decision.why}; {HOW_TO_APPROVE}"
        if not self.ui.can_ask():
            return f"this editor cannot answer a question; {HOW_TO_APPROVE}"
        actions = [RUN_ONCE, *([ALWAYS] if decision.offer_always else []), DONT_RUN]
        text = "verify wants to run a command from this repository:\n" + "\n".join(describe(plan))
        title = await self.ui.ask(text, actions)
        # Saves that came while the question was open are answered by this run.
        request.absorb()
        if title == ALWAYS:
            await asyncio.to_thread(self.trust.approve, plan)
        elif title == DONT_RUN:
            await asyncio.to_thread(self.trust.refuse, plan)
        self.trust_warnings()
        if title in (RUN_ONCE, ALWAYS):
            return None
        if title == DONT_RUN:
            return f"you chose not to run it; {HOW_TO_APPROVE}"
        return f"the question was dismissed; {HOW_TO_APPROVE}"

    def trust_warnings(self) -> None:
        for warning in self.trust.take_warnings():
            self.warn_once(warning)

    # ----- results -----

    def _on_record(self, folder: Folder, record: Record) -> None:
        if record.outcome == "skipped":
            folder.forget_plan()
        # Diagnostics first: they are what the user waits for; the log line can follow.
        if record.outcome == "passed":
            self._replace_verify_layer(folder, {})
        elif record.failed:
            summary = folder.summary_uri(record)
            self._replace_verify_layer(folder, record_entries(record, summary, self.line_text))
        # cancelled, declined, skipped and no-plan runs speak only through the record.
        if self.options.pull and not self.closing:
            self.ui.refresh_pulls()
        self.log(log_line(record), "warning" if record.failed else "info")

    def _replace_verify_layer(self, folder: Folder, entries: dict[str, list[Any]]) -> None:
        def in_folder(uri: str) -> bool:
            return self.folder_of_uri(uri)[0] is folder

        self.diagnostics.replace_verify(entries, in_folder)

    def line_text(self, uri: str, line: int) -> str | None:
        from lsp_verify.diagnostics import read_line

        source = self.ui.document_text(uri)
        if source is not None:
            lines = source.splitlines()
            return lines[line] if 0 <= line < len(lines) else None
        path = uri_to_path(uri)
        return read_line(path, line) if path is not None else None

    def _publish(self, uri: str) -> None:
        if not self.closing and not self.options.pull:
            self.ui.publish(uri, self.diagnostics.union_payloads(uri))

    async def wait_for_pending(self, uri: str | None) -> None:
        """A pull waits for the queued or running run of the document's folder (all folders
        for a workspace pull): that run saw the latest change. Bounded by timeoutMs."""
        folders = list(self.folders.values())
        if uri is not None:
            folder = self.folder_of_uri(uri)[0]
            folders = [folder] if folder is not None else []
        waits = []
        for folder in folders:
            pending = folder.verifier.pending()
            if pending is not None:
                limit = folder.settings().timeout_ms / 1000 + 5
                waits.append(asyncio.wait_for(asyncio.shield(pending), limit))
        if waits:
            await asyncio.gather(*waits, return_exceptions=True)

    # ----- status, log, lifetime -----

    def send_status(self, folder: Folder) -> None:
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
        task.add_done_callback(self._tasks.discard)

    async def close_all(self) -> None:
        await asyncio.gather(
            *(f.verifier.close() for f in list(self.folders.values())), return_exceptions=True
        )

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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Protocol

from lsp_verify.config.settings import LogLevel
from lsp_verify.globs import matches_any
from lsp_verify.record import Record, Trigger, log_line
from lsp_verify.results.approval import (
    HOW_TO_APPROVE,
    approval_entries,
    cannot_ask,
    is_cannot_ask,
    withdraw_warnings,
)
from lsp_verify.results.diagnostics import record_entries
from lsp_verify.uris import relative_to, uri_to_path
from lsp_verify.workspace.folder import Folder, Folders
from lsp_verify.workspace.verifier import RunCancelled, RunRequest, unless_cancelled
from lsp_verify.workspace.watched import trigger_changed

if TYPE_CHECKING:
    from lsp_verify.config.settings import Settings
    from lsp_verify.planning.plan import Plan

log = logging.getLogger("lsp_verify")

RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"


class Progress(Protocol):
    def line(self, text: str) -> None: ...
    def end(self, outcome: str) -> None: ...


class UI(Protocol):
    """What the workspace needs from the client, as the server provides it."""

    def publish(self, uri: str, payloads: list[bytes]) -> None: ...
    def send_status(self, status: dict[str, Any]) -> None: ...
    def send_output(self, payload: dict[str, Any]) -> None: ...
    def log(self, text: str, level: LogLevel = "log") -> None: ...
    def show_warning(self, text: str) -> None: ...
    def can_ask(self) -> bool: ...
    async def ask(self, text: str, actions: Sequence[str]) -> str | None: ...
    def begin_progress(self, command: str, cancel: asyncio.Event) -> Progress | None: ...
    def refresh_pulls(self) -> None: ...
    async def configuration(self, uris: list[str]) -> list[Any] | None: ...
    def document_text(self, uri: str) -> str | None: ...


class Workspace(Folders):
    """The folders (see Folders), what triggers their runs, and what a run does."""

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
        counts as a save (an agent wrote the file, then synced it). A file whose change the
        loop guard dropped was the client's after all: it triggers."""
        folder, path = self.folder_of_uri(uri)
        if folder is not None and path is not None:
            if folder.guard.reclaim(uri):
                self.when_ready(folder, functools.partial(self._gate, folder, path, uri, "save"))
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
        release = folder.holds.hold()  # a pull meanwhile waits for it

        async def later() -> None:
            try:
                await folder.ready.wait()
                action()
            finally:
                release()

        self.spawn(later())

    def _gate(self, folder: Folder, path: str, uri: str | None, trigger: Trigger) -> None:
        """runOn and globs decide whether this trigger runs anything."""
        settings = folder.settings()
        if settings.run_on == "manual":
            return
        if matches_any(settings.globs, relative_to(folder.path, path) or ""):
            folder.guard.note(False)
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
        from lsp_verify.results.live_output import OutputStream
        from lsp_verify.results.streaming import LiveProblems
        from lsp_verify.planning.plan import record_for_plan
        from lsp_verify.running.execute import execute_plan

        folder = self.folders.get(request.folder)
        if folder is None:  # removed while queued
            return Record.not_started(
                request.folder, request.trigger, "cancelled", "workspace folder was removed"
            )
        echo = folder.guard.take()
        try:
            await unless_cancelled(folder.ready.wait(), request.cancel)
        except RunCancelled:
            return Record.not_started(
                request.folder, request.trigger, "cancelled", "cancelled before it started"
            )
        settings = folder.settings()
        plan = folder.plan()
        if plan.command is None:
            return record_for_plan(
                plan, trigger=request.trigger, outcome="no-plan", document=request.document
            )
        try:
            refusal = await self._approve(folder, plan, settings, request)
        except RunCancelled:
            refusal = None  # the cancel is set: the run is cancelled below
        finally:
            folder.phase = "gate"
        if request.cancel.is_set():
            return record_for_plan(
                plan, trigger=request.trigger, outcome="cancelled", document=request.document
            )
        if refusal is not None:
            return record_for_plan(
                plan,
                trigger=request.trigger,
                outcome="declined",
                reason=refusal,
                document=request.document,
            )
        folder.phase = "running"
        self.send_status(folder)
        progress = self.ui.begin_progress(plan.command, request.cancel)
        outcome = "cancelled"
        span = folder.guard.begin(echo)
        # Located failures reach the editor while the run goes; its output, if asked for.
        live = LiveProblems(
            folder.path,
            self.diagnostics,
            self.line_text,
            on_batch=self._refresh_pulls,
            related=self.options.related,
            encoding=self.options.encoding,
        )
        output = None
        if self.options.live_output:
            output = OutputStream(self.ui.send_output, folder.uri, request.trigger)
        listeners: list[Callable[[str], None]] = []
        if progress is not None:
            listeners.append(progress.line)
        if output is not None:
            listeners.append(output.line)
        try:
            record = await execute_plan(
                plan,
                settings,
                trigger=request.trigger,
                document=request.document,
                saved=_saved_path(request),
                cancel=request.cancel,
                on_line=_each(listeners),
                on_problem=live.add,
                on_phase=output.begin if output is not None else None,
            )
            outcome = record.outcome
            if output is not None:
                output.end(record)
            return record
        finally:
            # Before the record is delivered: no streamed batch may land after the final layer.
            live.close()
            if output is not None:
                output.close()
            if outcome not in ("passed", "failed", "timed-out"):
                live.withdraw()
            folder.phase = "gate"
            span.end = time.time()
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
            return cannot_ask(folder.path)
        actions = [RUN_ONCE, *([ALWAYS] if decision.offer_always else []), DONT_RUN]
        text = "verify wants to run a command from this repository:\n" + "\n".join(describe(plan))
        folder.phase = "waiting"
        self.send_status(folder)
        title = await unless_cancelled(self.ui.ask(text, actions), request.cancel)
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

    # ----- results -----

    def _on_record(self, folder: Folder, record: Record) -> None:
        if record.outcome == "skipped":
            folder.forget_plan()
        # Diagnostics first: they are what the user waits for; the log line can follow.
        if record.outcome == "passed":
            # The triggering document speaks even when its set was empty already: a client
            # waiting for the verdict on the file it just wrote (an agent) gets it now.
            document = record.document
            self._replace_verify_layer(folder, {document: []} if document else {})
        elif record.failed:
            summary = folder.summary_uri(record)
            entries = record_entries(
                record, summary, self.line_text, self.options.related, self.options.encoding
            )
            self._replace_verify_layer(folder, entries)
        elif is_cannot_ask(record):
            self._replace_verify_layer(folder, approval_entries(record, folder.summary_uri(record)))
        # cancelled, skipped, no-plan and other declined runs speak only through the record.
        self._refresh_pulls()
        self.log(log_line(record), "warning" if record.failed else "info")

    def _refresh_pulls(self) -> None:
        if self.options.pull and not self.closing:
            self.ui.refresh_pulls()

    def _replace_verify_layer(self, folder: Folder, entries: dict[str, list[Any]]) -> None:
        self.diagnostics.replace_verify(entries, self._in(folder))

    def _in(self, folder: Folder) -> Callable[[str], bool]:
        def in_folder(uri: str) -> bool:
            return self.folder_of_uri(uri)[0] is folder

        return in_folder

    async def approve(self, folder: Folder) -> dict[str, Any]:
        result = await super().approve(folder)
        if result.get("approved"):
            withdraw_warnings(self.diagnostics, self._in(folder))
        return result

    def line_text(self, uri: str, line: int) -> str | None:
        from lsp_verify.results.diagnostics import read_line

        source = self.ui.document_text(uri)
        if source is not None:
            lines = source.splitlines()
            return lines[line] if 0 <= line < len(lines) else None
        path = uri_to_path(uri)
        return read_line(path, line) if path is not None else None

    def _publish(self, uri: str) -> None:
        if not self.closing and self.options.push:
            self.ui.publish(uri, self.diagnostics.union_payloads(uri))


def _saved_path(request: RunRequest) -> str | None:
    """The file a save named, for the quick phase; runNow and the CLI run the full command."""
    if request.trigger != "save" or request.document is None:
        return None
    return uri_to_path(request.document)


def _each(listeners: list[Callable[[str], None]]) -> Callable[[str], None] | None:
    """One line callback that feeds every listener (None when there are none)."""
    if not listeners:
        return None
    if len(listeners) == 1:
        return listeners[0]

    def feed(text: str) -> None:
        for listener in listeners:
            listener(text)

    return feed

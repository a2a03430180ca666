"""Per-folder scheduling of runs: idle, running, running + one queued run.

The verifier knows nothing of plans, trust or processes: it is handed a `Job` that does one
whole run (plan, approval, process) and returns its Record. What it guarantees:
- a trigger while a run is in flight never starts a second process beside it; it queues
  exactly one trailing run, however many triggers come;
- every finished run is delivered (`on_record`) when it ends, in order, before the queued
  run starts, so a steady stream of saves cannot starve the diagnostics;
- `run_now` while a run is in flight joins the trailing run and returns *its* record;
- `cancel` kills the in-flight run and drops the queued one; both come back `cancelled`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Callable, Literal, TypeVar

from lsp_verify.record import Record, Trigger

log = logging.getLogger(__name__)

State = Literal["idle", "running", "queued"]


@dataclass(frozen=True)
class RunRequest:
    """What a job is asked to do: one run for a folder, cancellable through `cancel`."""

    folder: str
    trigger: Trigger
    document: str | None
    cancel: asyncio.Event
    absorb: Callable[[], None] = lambda: None


Job = Callable[[RunRequest], Awaitable[Record]]
T = TypeVar("T")


class RunCancelled(Exception):
    """The run was cancelled while it waited, before it started any process."""


async def unless_cancelled(work: Awaitable[T], cancel: asyncio.Event) -> T:
    """`work`'s result, unless `cancel` is set first: then `work` is cancelled and
    RunCancelled raised. What a run waits for before its process (the settings, the user's
    answer) must never keep a cancel, a shutdown or an exit waiting."""
    task = asyncio.ensure_future(work)
    if cancel.is_set():
        task.cancel()
        raise RunCancelled
    stop = asyncio.ensure_future(cancel.wait())
    try:
        await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not task.done():
            task.cancel()  # the cancel came first (or the waiter itself was cancelled)
    if not task.done() or task.cancelled():
        raise RunCancelled
    return task.result()


@dataclass(eq=False)
class _Run:
    trigger: Trigger
    document: str | None
    future: asyncio.Future[Record]
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    followers: list[asyncio.Future[Record]] = field(default_factory=list)


class FolderVerifier:
    def __init__(
        self,
        folder: str,
        job: Job,
        *,
        on_record: Callable[[Record], None] | None = None,
        on_state: Callable[[State], None] | None = None,
    ) -> None:
        self.folder = folder
        self._job = job
        self._on_record = on_record
        self._on_state = on_state
        self._running: _Run | None = None
        self._queued: _Run | None = None
        self._task: asyncio.Task[None] | None = None
        self.last_record: Record | None = None
        self.last_document: str | None = None

    @property
    def state(self) -> State:
        if self._running is None:
            return "idle"
        return "queued" if self._queued is not None else "running"

    def pending(self) -> asyncio.Future[Record] | None:
        """The future of the newest run that has not finished yet (queued, else running)."""
        run = self._queued or self._running
        return run.future if run is not None else None

    def trigger(self, trigger: Trigger, document: str | None = None) -> asyncio.Future[Record]:
        """Ask for a run; returns the future of the run that will see this trigger.

        A trigger without a document (runNow from the palette) runs for the last document
        that triggered this folder, so the summary lands where the user last saved.
        """
        if document is not None:
            self.last_document = document
        document = self.last_document
        if self._running is None:
            run = self._new_run(trigger, document)
            self._start(run)
            self._notify_state()
            return run.future
        if self._queued is None:
            self._queued = self._new_run(trigger, document)
            self._notify_state()
        else:
            # The queued run has not started: it runs for the newest trigger and document.
            self._queued.trigger = trigger
            self._queued.document = document
        return self._queued.future

    async def run_now(self, document: str | None = None) -> Record:
        # shield: a client cancelling its request must not cancel a run others wait on.
        return await asyncio.shield(self.trigger("runNow", document))

    async def cancel(self) -> list[Record]:
        """Kill the in-flight run and drop the queued one; returns their cancelled records."""
        cancelled: list[Record] = []
        queued, self._queued = self._queued, None
        if queued is not None:
            record = Record.not_started(
                self.folder, queued.trigger, "cancelled", "cancelled before it started"
            )
            if not queued.future.done():
                queued.future.set_result(record)
            cancelled.append(record)
        running, task = self._running, self._task
        if running is not None and task is not None:
            running.cancel.set()
            self._notify_state()
            record = await asyncio.shield(running.future)
            if record.outcome == "cancelled":
                cancelled.append(record)
        return cancelled

    async def close(self) -> None:
        """Cancel everything and wait until the in-flight run has ended (processes dead)."""
        await self.cancel()
        task = self._task
        if task is not None and not task.done():
            await asyncio.gather(task, return_exceptions=True)

    def _new_run(self, trigger: Trigger, document: str | None) -> _Run:
        return _Run(trigger, document, asyncio.get_running_loop().create_future())

    def _start(self, run: _Run) -> None:
        self._running = run
        self._task = asyncio.get_running_loop().create_task(self._drive(run))

    async def _drive(self, run: _Run) -> None:
        request = RunRequest(
            self.folder, run.trigger, run.document, run.cancel, lambda: self._absorb(run)
        )
        try:
            record = await self._job(request)
        except asyncio.CancelledError:
            record = Record.not_started(self.folder, run.trigger, "cancelled", "shut down")
            self._finish(run, record)
            self._running = None
            raise
        except Exception as exc:  # a bug in a job must not wedge the folder forever
            log.exception("verify run for %s failed inside the server", self.folder)
            record = Record.not_started(
                self.folder, run.trigger, "failed", f"internal error: {exc!r}"
            )
        self._finish(run, record)
        nxt, self._queued = self._queued, None
        if nxt is not None:
            self._start(nxt)
        else:
            self._running = None
            self._task = None
        self._notify_state()

    def _absorb(self, run: _Run) -> None:
        """Fold the queued run into `run`: its triggers came while `run` had not yet started
        its process (it was waiting for an approval), so `run` sees what they saw."""
        queued, self._queued = self._queued, None
        if queued is not None:
            run.followers.append(queued.future)
            self._notify_state()

    def _finish(self, run: _Run, record: Record) -> None:
        self.last_record = record
        for future in (run.future, *run.followers):
            if not future.done():
                future.set_result(record)
        if self._on_record is not None:
            try:
                self._on_record(record)
            except Exception:
                log.exception("delivering a verify record failed")

    def _notify_state(self) -> None:
        if self._on_state is not None:
            try:
                self._on_state(self.state)
            except Exception:
                log.exception("reporting verify state failed")

"""One run, from the verifier's request to the published record: plan, trust gate, the
question, execute, and the record to the diagnostics layers.

The folder's verifier calls `job` for each run it starts (coalescing is its business) and
hands the record to `on_record` when the run ends, in order.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Callable

from lsp_verify.record import Record, log_line
from lsp_verify.results.approval import (
    HOW_TO_APPROVE,
    approval_entries,
    cannot_ask,
    is_cannot_ask,
    no_answer,
)
from lsp_verify.results.diagnostics import record_entries
from lsp_verify.uris import uri_to_path
from lsp_verify.workspace.ui import CannotAnswer
from lsp_verify.workspace.verifier import RunCancelled, RunRequest, unless_cancelled

if TYPE_CHECKING:
    from lsp_verify.config.settings import Settings
    from lsp_verify.planning.plan import Plan
    from lsp_verify.workspace.folder import Folder
    from lsp_verify.workspace.state import State

RUN_ONCE, ALWAYS, DONT_RUN = "Run once", "Always for this plan", "Don't run"


async def job(state: State, request: RunRequest) -> Record:
    """One whole run for the folder `request` names: plan, gate, process, record."""
    from lsp_verify.planning.plan import record_for_plan

    folder = state.folders.get(request.folder)
    if folder is None:  # removed while queued
        return Record.not_started(
            request.folder, request.trigger, "cancelled", "workspace folder was removed"
        )
    echo = folder.guard.take()
    folder.began = time.time()
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
        refusal = await _approve(state, folder, plan, settings, request)
    except RunCancelled:
        refusal = None  # the cancel is set: the run is cancelled below
    finally:
        folder.stage = "gate"
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
    return await _execute(state, folder, plan, plan.command, settings, request, echo)


async def _execute(
    state: State,
    folder: Folder,
    plan: Plan,
    command: str,
    settings: Settings,
    request: RunRequest,
    echo: bool,
) -> Record:
    """The run's process, with what the client sees of it while it goes: progress, located
    failures as they come, the output for a client that asked for it."""
    from lsp_verify.results.live_output import OutputStream
    from lsp_verify.results.streaming import LiveProblems
    from lsp_verify.running.execute import execute_plan

    folder.stage = "running"
    state.send_status(folder)
    progress = state.ui.begin_progress(command, request.cancel)
    outcome = "cancelled"
    span = folder.guard.begin(echo)
    # Saves folded into this run while it waited for an answer are seen by its process.
    began = folder.began = time.time()
    live = LiveProblems(
        folder.path,
        state.diagnostics,
        state.line_text,
        on_batch=lambda: refresh_pulls(state),
        fresh=lambda uri: state.diagnostics.saw(uri, began),
        related=state.options.related,
        encoding=state.options.encoding,
    )
    output = None
    if state.options.live_output:
        output = OutputStream(state.ui.send_output, folder.uri, request.trigger)
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
            changed=_changed(request),
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
        folder.stage = "gate"
        span.end = time.time()
        if progress is not None:
            progress.end(outcome)


async def _approve(
    state: State, folder: Folder, plan: Plan, settings: Settings, request: RunRequest
) -> str | None:
    """The trust gate: None to run, or why the plan does not run."""
    from lsp_verify.trust import describe, gate, needs_question, plan_fingerprint

    decision = gate(
        plan,
        state.trust,
        confirm=settings.confirm,
        run_now=request.trigger == "runNow",
        workspace_trusted=state.options.trusted,
    )
    state.trust_warnings()
    if decision.action == "run":
        said = f"never:{folder.path}:{plan_fingerprint(plan)}"
        if settings.confirm == "never" and needs_question(plan) and state.first_time(said):
            state.log(f'confirm is "never": running {plan.command!r} without asking')
        return None
    if decision.action == "decline":
        return f"{decision.why}; {HOW_TO_APPROVE}"
    if not state.ui.can_ask():
        return cannot_ask(folder.path)
    actions = [RUN_ONCE, *([ALWAYS] if decision.offer_always else []), DONT_RUN]
    text = "verify wants to run a command from this repository:\n" + "\n".join(describe(plan))
    folder.stage = "waiting"
    state.send_status(folder)
    try:
        title = await unless_cancelled(state.ui.ask(text, actions), request.cancel)
    except CannotAnswer as exc:
        # A client that never said it could ask: the warning it can act on, as for one that
        # cannot ask at all (results/approval.py).
        return cannot_ask(folder.path) if not exc.again else no_answer(folder.path)
    # Saves that came while the question was open are answered by this run.
    request.absorb()
    if title == ALWAYS:
        await asyncio.to_thread(state.trust.approve, plan)
    elif title == DONT_RUN:
        await asyncio.to_thread(state.trust.refuse, plan)
    state.trust_warnings()
    if title in (RUN_ONCE, ALWAYS):
        return None
    if title == DONT_RUN:
        return f"you chose not to run it; {HOW_TO_APPROVE}"
    return f"the question was dismissed; {HOW_TO_APPROVE}"


# ----- results -----


def on_record(state: State, folder: Folder, record: Record) -> None:
    """A finished run: its diagnostics layer (what the user waits for), then its log line."""
    if record.outcome == "skipped":
        folder.forget_plan()
    if record.outcome == "passed":
        # The triggering document speaks even when its set was empty already: a client
        # waiting for the verdict on the file it just wrote (an agent) gets it now.
        document = record.document
        _replace_verify_layer(state, folder, {document: []} if document else {})
    elif record.failed:
        summary = folder.summary_uri(record)
        entries = record_entries(
            record, summary, state.line_text, state.options.related, state.options.encoding
        )
        _replace_verify_layer(state, folder, entries)
    elif is_cannot_ask(record) and not state.options.agent_hooks:
        # An agent's hooks say it once, in the model's view (see cli/hook.py).
        _replace_verify_layer(state, folder, approval_entries(record, folder.summary_uri(record)))
    # cancelled, skipped, no-plan and other declined runs speak only through the record.
    state.run_ended(folder, record, is_cannot_ask(record))
    refresh_pulls(state)
    state.log(log_line(record), "warning" if record.failed else "info")


def refresh_pulls(state: State) -> None:
    if state.options.pull and not state.closing:
        state.ui.refresh_pulls()


def publish(state: State, uri: str) -> None:
    """A document's diagnostics changed: push them, to a client that takes pushes."""
    if not state.closing and state.options.push:
        state.ui.publish(uri, state.diagnostics.union_payloads(uri))


def _replace_verify_layer(state: State, folder: Folder, entries: dict[str, list[Any]]) -> None:
    state.diagnostics.replace_verify(entries, state.holds(folder), folder.began)


def _saved_path(request: RunRequest) -> str | None:
    """The file a save named, for the quick phase; runNow and the CLI run the full command."""
    if request.trigger != "save" or request.document is None:
        return None
    return uri_to_path(request.document)


def _changed(request: RunRequest) -> tuple[str, ...]:
    """The file a save, a change on disk or runNow named: changed, for affected-first (the
    run finds the files changed on disk since the last run itself)."""
    if request.document is None:
        return ()
    path = uri_to_path(request.document)
    return () if path is None else (path,)


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

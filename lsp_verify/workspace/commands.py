"""The work of the `verify.*` commands on the state: which folder a command names, and what
cancel, showLastRun, explain, approve and revoke do. The server's handlers call these."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from lsp_verify.config.settings import Settings
from lsp_verify.logs import log_failures
from lsp_verify.results.approval import withdraw_warnings
from lsp_verify.uris import uri_to_path
from lsp_verify.workspace.held import settle

if TYPE_CHECKING:
    from lsp_verify.record import Record
    from lsp_verify.workspace.folder import Folder
    from lsp_verify.workspace.state import State


def target(state: State, uri: str | None) -> tuple[Folder | None, str | None]:
    """Folder and document a command names (a document or folder URI, or nothing: the
    folder last triggered, else the first)."""
    if uri is None:
        folders = list(state.folders.values())
        recent = [f for f in folders if f.verifier.last_document is not None]
        candidates = recent or folders
        return (candidates[0] if candidates else None), None
    path = uri_to_path(uri)
    if path is None:
        return None, None
    if path in state.folders:
        return state.folders[path], None
    folder = state.folder_of(path)
    return folder, (uri if folder is not None and not os.path.isdir(path) else None)


async def ready_target(state: State, uri: str | None) -> tuple[Folder | None, str | None]:
    """`target`, once the folder's settings are known."""
    folder, document = target(state, uri)
    if folder is not None:
        await folder.ready.wait()
    return folder, document


async def cancel(state: State, uri: str | None) -> list[Record]:
    """Cancel the runs of the folder `uri` names, or of every folder."""
    folders = [target(state, uri)[0]] if uri is not None else list(state.folders.values())
    cancelled: list[Record] = []
    for folder in folders:
        if folder is not None:
            cancelled.extend(await folder.verifier.cancel())
    return cancelled


def last_records(state: State, uri: str | None) -> Any:
    """The last record of the folder `uri` names; of every folder when it names none and
    there are several."""
    if uri is None and len(state.folders) > 1:
        records = [f.verifier.last_record for f in state.folders.values()]
        return [r.to_json() for r in records if r is not None]
    folder = target(state, uri)[0]
    record = folder.verifier.last_record if folder is not None else None
    return record.to_json() if record is not None else None


def last_run_folder(state: State, uri: str | None) -> Folder | None:
    """The folder `uri` names; when it names none, the folder whose last run started last
    (the record `last_records` lists with the others), else `target`'s guess."""
    if uri is None:
        started = [
            (f.verifier.last_record.started_at, i, f)
            for i, f in enumerate(state.folders.values())
            if f.verifier.last_record is not None
        ]
        if started:
            return max(started)[2]
    return target(state, uri)[0]


async def explain(folder: Folder) -> dict[str, Any]:
    """The explain document of the folder's plan as it stands (see planning/explain.py).
    Off the event loop: what affected-first would select reads the folder's Python files."""
    from lsp_verify.planning.explain import explain_document

    plan, settings, project = folder.plan(), folder.settings(), folder.project()
    return await asyncio.to_thread(explain_document, plan, settings, project)


async def approve(state: State, folder: Folder) -> dict[str, Any]:
    """Store the approval of the folder's plan, and take back its not-approved warning."""
    from lsp_verify.trust import needs_question, plan_fingerprint

    plan = folder.plan()
    if not needs_question(plan):
        return {"approved": False, "reason": "nothing to approve: " + plan.reason}
    stored = await asyncio.to_thread(state.trust.approve, plan)
    state.trust_warnings()
    if stored:
        withdraw_warnings(state.diagnostics, state.holds(folder))
    return {"approved": stored, "command": plan.command, "fingerprint": plan_fingerprint(plan)}


async def revoke(state: State, folder: Folder) -> dict[str, Any]:
    removed = await asyncio.to_thread(state.trust.revoke, folder.path)
    state.trust_warnings()
    return {"revoked": removed}


async def wait_for_pending(state: State, uri: str | None) -> None:
    """A pull waits for the triggers the document's folder holds (all folders for a
    workspace pull), then for its queued or running run: that run saw the latest change.
    Bounded by timeoutMs (the settings' once known)."""
    folders = list(state.folders.values())
    if uri is not None:
        folder = state.folder_of_uri(uri)[0]
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

"""No stale verdict (SPEC section 5, "Stale after edit"): once an edit of a document is on
disk and has triggered a run, nothing published for that document carries the verdict of a
run that did not see the edit. Checked for a client that drops empty publishes and shows
every other one to a model as new (Claude Code), and for one that shows every publish (an
editor). While the user types without saving, a located mark on an edited line is still
withdrawn at once and the summary stays."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_session import Session, session

BROKEN = "one\nwrong\nthree\n"
FIXED = "one\nright\nthree\n"
# Reads the file when it starts and answers a moment later: a fix saved meanwhile is not
# seen. Its failure is located (gcc style) on line 2 and summarised.
COMMAND = (
    "if grep -q wrong a.txt; then sleep 0.6; echo 'a.txt:2:1: error: wrong word'; exit 1; "
    "else sleep 0.6; fi"
)


def claude_code_capabilities() -> types.ClientCapabilities:
    """What Claude Code 2.1 declares: pushes with relatedInformation, no pull, no window."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=False
            ),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True
            ),
        ),
    )


CLIENTS = {
    # Shows a model every non-empty publish, drops the empty ones.
    "drops-empty": lambda project, state: session(
        project,
        state=state,
        capabilities=claude_code_capabilities(),
        init_options={"command": COMMAND},
    ),
    # Shows the user every publish.
    "editor": lambda project, state: session(
        project, state=state, profile="visual_studio_code", init_options={"command": COMMAND}
    ),
}


def client(kind: str, project: Path, state: Path) -> AbstractAsyncContextManager[Session]:
    (project / "a.txt").write_text(BROKEN)
    return CLIENTS[kind](project, state)


def shown(s: Session, kind: str, since: int, uri: str) -> list[list[types.Diagnostic]]:
    """What the client shows of `uri`'s publishes from the `since`-th on."""
    sets = [diags for u, diags in s.publishes[since:] if u == uri]
    return [d for d in sets if d] if kind == "drops-empty" else sets


def agent_edit(s: Session, uri: str, text: str, version: int) -> None:
    """Claude Code's Edit tool: write the file, sync the full text, save; no waiting."""
    (s.root / "a.txt").write_text(text)
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    s.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def failed_once(s: Session) -> str:
    uri = s.open("a.txt")
    s.save("a.txt")
    await s.wait_for(lambda: len(s.diagnostics(uri)) == 2, what="located + summary")
    return uri


@pytest.mark.parametrize("kind", sorted(CLIENTS))
async def test_a_fix_is_never_answered_with_the_old_failure(
    kind: str, project: Path, state: Path
) -> None:
    async with client(kind, project, state) as s:
        uri = await failed_once(s)
        since = len(s.publishes)
        agent_edit(s, uri, FIXED, version=2)
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="the passing run")
        await asyncio.sleep(0.2)
        assert [d for d in shown(s, kind, since, uri) if d] == []
        assert s.diagnostics(uri) == []


@pytest.mark.parametrize("kind", sorted(CLIENTS))
async def test_a_run_that_began_before_the_fix_does_not_speak_for_the_fixed_file(
    kind: str, project: Path, state: Path
) -> None:
    async with client(kind, project, state) as s:
        uri = await failed_once(s)
        (project / "a.txt").write_text(BROKEN + "\n")
        s.save("a.txt")  # a second failing run, in flight while the fix lands
        await s.wait_for(lambda: s.statuses[-1]["state"] == "running", what="the run")
        await asyncio.sleep(0.2)  # its process has read the broken file
        since = len(s.publishes)
        agent_edit(s, uri, FIXED, version=2)
        await s.wait_for(lambda: len(s.run_logs()) == 3, what="the run that saw the fix")
        await asyncio.sleep(0.2)
        assert "failed" in s.run_logs()[1]  # the run in flight did fail
        assert [d for d in shown(s, kind, since, uri) if d] == []
        assert s.diagnostics(uri) == []


@pytest.mark.parametrize("kind", sorted(CLIENTS))
async def test_a_failure_after_the_edit_is_shown(kind: str, project: Path, state: Path) -> None:
    async with client(kind, project, state) as s:
        uri = await failed_once(s)
        since = len(s.publishes)
        agent_edit(s, uri, BROKEN.replace("three", "four"), version=2)
        await s.wait_for(lambda: len(s.run_logs()) == 2, what="the second run")
        await s.wait_for(lambda: len(s.diagnostics(uri)) == 2, what="its failure")
        # Nothing between the edit and the new verdict carried the old summary.
        sets = shown(s, kind, since, uri)
        assert sets and all(len(d) == 2 for d in sets[-1:])
        before_end = sets[:-1]
        assert all(not any(x.message.startswith("verify failed") for x in d) for d in before_end)


async def test_typing_withdraws_an_edited_line_s_mark_at_once_and_keeps_the_summary(
    project: Path, state: Path
) -> None:
    async with client("editor", project, state) as s:
        uri = await failed_once(s)
        since = len(s.publishes)
        # Typing on line 2, unsaved: the buffer differs from the file.
        s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=FIXED)],
            )
        )
        await s.wait_for(lambda: len(s.publishes) > since, what="the withdrawal")
        [summary] = s.publishes[since][1]
        assert summary.message.startswith("verify failed")

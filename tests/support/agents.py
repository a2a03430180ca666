"""Clients that behave like coding agents: no didSave, files written to disk and reported
as watched changes, diagnostics pulled."""

from __future__ import annotations

import asyncio
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.support.lsp_session import Session, session

FAILING = "def test_answer():\n    assert 6 * 7 == 43\n"
PASSING = "def test_answer():\n    assert 6 * 7 == 42\n"
PYTEST = f"{sys.executable} -m pytest -x -q -p no:cacheprovider"


def agent_capabilities() -> types.ClientCapabilities:
    """An agent-like client: watches files (dynamic registration) and pulls diagnostics."""
    base = client_capabilities("neovim@v0.11.0")
    workspace = attrs.evolve(
        base.workspace,
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        ),
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
    )
    assert base.text_document is not None and base.text_document.diagnostic is not None
    return attrs.evolve(base, workspace=workspace)


def agent_session(
    project: Path,
    state: Path,
    command: str | None,
    capabilities: types.ClientCapabilities | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[Session]:
    """A session of a client that behaves like an agent (agent_capabilities unless told), with
    `command` as the verify command (None: the plan the folder's files give)."""
    return session(
        project,
        state=state,
        capabilities=capabilities or agent_capabilities(),
        init_options=None if command is None else {"command": command},
        **options,
    )


def reported(
    s: Session, path: Path, kind: types.FileChangeType = types.FileChangeType.Changed
) -> None:
    """A file change, as a client that watches files reports it."""
    s.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=path.as_uri(), type=kind)])
    )


def agent_writes(s: Session, rel: str, text: str, version: int) -> str:
    """What an agent does: write the file, sync the open document, report the change."""
    path = s.root / rel
    path.write_text(text)
    uri = path.as_uri()
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    reported(s, path)
    return uri


async def pull(
    s: Session, uri: str, previous: str | None = None, timeout: float = 60
) -> types.DocumentDiagnosticReport:
    return await asyncio.wait_for(
        s.client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=previous
            )
        ),
        timeout,
    )


def verify_items(report: types.DocumentDiagnosticReport) -> list[types.Diagnostic]:
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport), report
    return [d for d in report.items if d.source == "verify"]

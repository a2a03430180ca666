"""A run declined because the client cannot ask: never silent.

A client that cannot answer `window/showMessageRequest` (a headless coding agent answers it
with MethodNotFound) cannot be asked to approve a repository's command; one that never
declared it could and gives no choice is treated the same for that run. The run is declined,
and the triggering document gets one Warning diagnostic that says what did not run and the
exact command that approves it; the next run that does happen replaces it, and approving the
plan from the editor (`verify.approve`) withdraws it at once.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Callable

from lsprotocol import types

from lsp_verify.results.diagnostics import SOURCE, VERIFY, Diagnostics, Entry

if TYPE_CHECKING:
    from lsp_verify.record import Record

HOW_TO_APPROVE = (
    "approve it with the verify.approve command or `lsp-verify approve`, "
    "or set verify.command in the editor settings"
)
_CANNOT_ASK = "this client cannot answer a question"
_NO_ANSWER = "the question got no answer"
CODE = "not-approved"  # the code actions approve or explain it (actions.py)


def cannot_ask(folder: str) -> str:
    """The declined record's reason when the client cannot be asked."""
    return (
        f"{_CANNOT_ASK}; approve it with `lsp-verify approve {shlex.quote(folder)}` "
        "(or the verify.approve command), or set verify.command in the editor's or agent's "
        "settings"
    )


def no_answer(folder: str) -> str:
    """The reason when a client that never said it could ask gave no choice this time."""
    return (
        f"{_NO_ANSWER}; approve it with `lsp-verify approve {shlex.quote(folder)}` "
        "(or the verify.approve command), or set verify.command in the editor's or agent's "
        "settings"
    )


def is_cannot_ask(record: Record) -> bool:
    """A run declined for want of an answer: the document gets the warning."""
    return record.outcome == "declined" and record.reason.startswith((_CANNOT_ASK, _NO_ANSWER))


def approval_entries(record: Record, uri: str) -> dict[str, list[Entry]]:
    """The verify layer a run declined for want of a question leaves: one Warning."""
    zero = types.Position(line=0, character=0)
    warning = types.Diagnostic(
        range=types.Range(start=zero, end=zero),
        message=f"verify did not run `{record.command}`: it needs approval, and {record.reason}",
        severity=types.DiagnosticSeverity.Warning,
        source=SOURCE,
        code=CODE,
    )
    return {uri: [Entry(warning)]}


def withdraw_warnings(store: Diagnostics, in_folder: Callable[[str], bool]) -> None:
    """The plan was approved: the warnings that asked for it go, whatever else stays."""
    for uri in sorted(store.uris(VERIFY)):
        if not in_folder(uri):
            continue
        entries = store.entries(uri, VERIFY)
        kept = [e for e in entries if e.diagnostic.code != CODE]
        if len(kept) != len(entries) and store.set(uri, VERIFY, kept):
            store.changed(uri)

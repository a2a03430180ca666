"""A run declined because the client cannot ask (lsp_verify/results/approval.py): the reason
says how to approve, the document gets one Warning that says what did not run, and approving
withdraws those warnings and nothing else."""

from __future__ import annotations

from dataclasses import replace

from lsprotocol import types

from lsp_verify.record import Record
from lsp_verify.results.approval import (
    CODE,
    approval_entries,
    cannot_ask,
    is_cannot_ask,
    withdraw_warnings,
)
from lsp_verify.results.diagnostics import CONFIG, SOURCE, VERIFY, Diagnostics, Entry

FOLDER = "/work/my project"
URI = "file:///work/my%20project/a.py"


def declined(reason: str, command: str | None = "make test") -> Record:
    record = Record.not_started(FOLDER, "save", "declined", reason)
    return replace(record, command=command)


def entry(message: str, code: str | None = None) -> Entry:
    zero = types.Position(line=0, character=0)
    diagnostic = types.Diagnostic(
        range=types.Range(start=zero, end=zero), message=message, source=SOURCE, code=code
    )
    return Entry(diagnostic)


def test_the_reason_names_the_command_that_approves_the_folder_quoted_for_a_shell() -> None:
    reason = cannot_ask(FOLDER)
    assert "lsp-verify approve '/work/my project'" in reason
    assert "verify.approve" in reason and "verify.command" in reason


def test_only_a_declined_run_with_that_reason_is_one_the_client_could_not_be_asked() -> None:
    assert is_cannot_ask(declined(cannot_ask(FOLDER)))
    assert not is_cannot_ask(declined("the user said Don't run"))
    skipped = Record.not_started(FOLDER, "save", "skipped", cannot_ask(FOLDER))
    assert not is_cannot_ask(skipped)


def test_the_triggering_document_gets_one_warning_saying_what_did_not_run() -> None:
    record = declined(cannot_ask(FOLDER))
    [(uri, [warning])] = approval_entries(record, URI).items()
    assert uri == URI
    diagnostic = warning.diagnostic
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert (diagnostic.source, diagnostic.code) == (SOURCE, CODE)
    assert diagnostic.message == (
        f"verify did not run `make test`: it needs approval, and {record.reason}"
    )
    assert diagnostic.range.start == diagnostic.range.end == types.Position(line=0, character=0)


def test_approving_withdraws_the_warnings_of_the_folder_and_keeps_everything_else() -> None:
    published: list[str] = []
    store = Diagnostics(published.append)
    other = "file:///elsewhere/b.py"
    warning = approval_entries(declined(cannot_ask(FOLDER)), URI)[URI][0]
    failure = entry("verify failed (exit 1)")
    store.set(URI, VERIFY, [warning, failure])
    store.set(URI, CONFIG, [entry("a bad key", "settings")])
    store.set(other, VERIFY, [warning])
    withdraw_warnings(store, lambda uri: uri.startswith("file:///work/"))
    assert store.entries(URI, VERIFY) == [failure]
    assert len(store.entries(URI, CONFIG)) == 1
    assert store.entries(other, VERIFY) == [warning]  # another folder's: not approved
    assert published == [URI]
    assert store.result_id(URI) == "1"


def test_nothing_to_withdraw_publishes_nothing() -> None:
    published: list[str] = []
    store = Diagnostics(published.append)
    store.set(URI, VERIFY, [entry("verify failed (exit 1)")])
    withdraw_warnings(store, lambda uri: True)
    assert published == []
    assert len(store.entries(URI, VERIFY)) == 1

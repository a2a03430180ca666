"""Diagnostics as LSP JSON: written by hand for speed, so checked against lsprotocol's own."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter

from lsp_verify.diagnostics import (
    CONFIG,
    VERIFY,
    DiagnosticStore,
    Entry,
    diagnostic_json,
    json_bytes,
)
from lsp_verify.transport import publish_message

AT = types.Position(line=3, character=7)
SPAN = types.Range(start=AT, end=types.Position(line=3, character=12))
WHERE = types.Location(uri="file:///p/a.py", range=SPAN)

CASES = [
    types.Diagnostic(range=SPAN, message="plain"),
    types.Diagnostic(
        range=SPAN,
        message="verify failed (exit 1):\nü ✓ \x00",
        severity=types.DiagnosticSeverity.Error,
        source="verify",
        code="failed",
    ),
    types.Diagnostic(
        range=SPAN, message="numeric code", code=7, severity=types.DiagnosticSeverity.Hint
    ),
    types.Diagnostic(
        range=SPAN,
        message="related",
        related_information=[types.DiagnosticRelatedInformation(location=WHERE, message="r")],
    ),
    types.Diagnostic(range=SPAN, message="empty related", related_information=[]),
    types.Diagnostic(
        range=SPAN,
        message="everything else",
        code_description=types.CodeDescription(href="https://example.org/E1"),
        tags=[types.DiagnosticTag.Unnecessary, types.DiagnosticTag.Deprecated],
        data={"any": ["json", 1]},
    ),
]


@pytest.mark.parametrize("diagnostic", CASES, ids=[c.message.split()[0] for c in CASES])
def test_diagnostic_json_is_what_lsprotocol_writes(diagnostic: types.Diagnostic) -> None:
    assert diagnostic_json(diagnostic) == get_converter().unstructure(diagnostic)


def test_union_json_is_the_union_as_json() -> None:
    store = DiagnosticStore()
    entries = [Entry(CASES[1]), Entry(CASES[3], anchor="x = 1")]
    store.set("file:///p/a.py", VERIFY, entries)
    assert store.union_json("file:///p/a.py") == [
        diagnostic_json(d) for d in store.union("file:///p/a.py")
    ]
    assert store.union_json("file:///p/other.py") == []


def parse_framed(data: bytes) -> object:
    header, _, body = data.partition(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(body)
    return json.loads(body.decode("utf-8"))


def test_publish_message_is_the_notification_framed() -> None:
    store = DiagnosticStore()
    uri = "file:///p/caf%C3%A9.py"
    store.set(uri, VERIFY, [Entry(CASES[1]), Entry(CASES[3], anchor="x = 1")])
    store.set(uri, CONFIG, [Entry(CASES[0])])
    message = publish_message(uri, store.union_payloads(uri))
    assert parse_framed(message) == {
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": uri, "diagnostics": store.union_json(uri)},
    }
    assert parse_framed(publish_message(uri, [])) == {
        "jsonrpc": "2.0",
        "method": "textDocument/publishDiagnostics",
        "params": {"uri": uri, "diagnostics": []},
    }


def test_a_payload_is_serialised_once_and_in_utf8() -> None:
    entry = Entry(types.Diagnostic(range=SPAN, message="\U0001f600" * 1000))
    assert entry.payload is entry.payload
    # An emoji costs its 4 UTF-8 bytes, not a 12-byte surrogate-pair escape.
    assert len(entry.payload) < 4 * 1000 + 200
    assert json.loads(entry.payload) == diagnostic_json(entry.diagnostic)


def test_a_lone_surrogate_is_escaped_not_an_error() -> None:
    value = {"message": "bad \udcff name"}
    assert json.loads(json_bytes(value)) == value

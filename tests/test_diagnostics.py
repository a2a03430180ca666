"""Diagnostics as LSP JSON: written by hand for speed, so checked against lsprotocol's own."""

from __future__ import annotations

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter

from lsp_verify.diagnostics import VERIFY, DiagnosticStore, Entry, diagnostic_json

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

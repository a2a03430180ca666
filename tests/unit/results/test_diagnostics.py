"""Diagnostics as LSP JSON: written by hand for speed, so checked against lsprotocol's own."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter

from lsp_verify.lsp.messages import publish_message
from lsp_verify.problems import Problem, make_sink
from lsp_verify.results import positions
from lsp_verify.results.diagnostics import (
    CONFIG,
    VERIFY,
    DiagnosticStore,
    Entry,
    diagnostic_json,
    json_bytes,
    located_entry,
)
from lsp_verify.results.positions import character, line_end

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


# ----- positions: the tools' columns in the encoding the server declared (SPEC section 5) -----

ENCODINGS = ("utf-8", "utf-16", "utf-32")


def units(text: str, encoding: str) -> int:
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text.encode("utf-8")) if encoding == "utf-8" else len(text)


# (tool and what it printed, the line, the column it printed, its unit, the text before the
# place it points at). Each printed by the real tool on this machine for this very line.
REAL_COLUMNS = [
    ("gcc 12: c.c:2:41", '  const char *s = "😀😀"; int x = "é" + nope;', 41, "gcc-display"),
    ("gcc 12: c.c:2:40", '\tconst char *s = "中é\u0301"; int x = nope;', 40, "gcc-display"),
    ("gcc 12: c.c:2:25", "  int s = 1;\tint x = nope;", 25, "gcc-display"),
    ("rustc 1.95: --> m.rs:2:32", '    let s = "😀😀"; let x: i32 = nope;', 32, "utf-32"),
    ("rustc 1.95: --> r.rs:2:30", '\tlet s = "中é\u0301"; let x: i32 = nope;', 30, "utf-32"),
    ("rust panic: p.rs:2:21", '    let s = "😀😀"; panic!("boom");', 21, "rust-display"),
    ("rust panic: q.rs:2:20", '\tlet s = "中é\u0301"; panic!("boom");', 20, "rust-display"),
    ("rust panic: q2.rs:2:23", '\t\tlet s = 1;\tpanic!("boom");', 23, "rust-display"),
    ("rust backtrace: bt.rs:3:23", '    let s = "é😀"; f();', 23, "utf-8"),
    ("mypy 1.20: t.py:2:33", 's = "😀😀中é\u0301"; x: int = "a"', 33, "utf-8"),
    ("ruff: t.py:2:12", 's = "😀😀中é\u0301"; x: int = "a"', 12, "utf-32"),
    ("go vet: main.go:6:17", '\ts := "é😀"; fmt.Printf("%d\\n", s)', 17, "utf-8"),
    ("tsc: t.ts(1,26)", 'const s = "😀中é\u0301";\tconst x: number = "a";', 26, "utf-16"),
    ("node: n.js:1:26", 'const s = "😀中é\u0301";\tthrow new Error("x");', 26, "utf-16"),
    ("eslint: 1:20", 'const s = "😀中é\u0301";\tdebugger;', 20, "utf-16"),
    ("pyright: p.py:2:23", 's = "😀中é\u0301";\ty: int = "a"', 23, "utf-16"),
    ("biome: bio.js:1:19", 'const s = "😀中é\u0301";\tdebugger;', 19, "utf-32"),
]
TARGETS = {  # what each tool pointed at, as the first occurrence after its column's prefix
    "gcc 12: c.c:2:41": "nope",
    "gcc 12: c.c:2:40": "nope",
    "gcc 12: c.c:2:25": "nope",
    "rustc 1.95: --> m.rs:2:32": "nope",
    "rustc 1.95: --> r.rs:2:30": "nope",
    "rust panic: p.rs:2:21": "panic",
    "rust panic: q.rs:2:20": "panic",
    "rust panic: q2.rs:2:23": "panic",
    "rust backtrace: bt.rs:3:23": "f()",
    "mypy 1.20: t.py:2:33": '"a"',
    "ruff: t.py:2:12": ";",
    "go vet: main.go:6:17": "fmt",
    "tsc: t.ts(1,26)": "x:",
    "node: n.js:1:26": "new",
    "eslint: 1:20": "debugger",
    "pyright: p.py:2:23": '"a"',
    "biome: bio.js:1:19": "debugger",
}


@pytest.mark.parametrize(
    ("tool", "line", "column", "unit"), REAL_COLUMNS, ids=[c[0] for c in REAL_COLUMNS]
)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_tools_column_lands_where_it_pointed(
    tool: str, line: str, column: int, unit: str, encoding: str
) -> None:
    before = line[: line.index(TARGETS[tool])]
    assert character(line, column - 1, unit, encoding) == units(before, encoding)


@pytest.mark.parametrize(
    ("line", "column", "unit", "index"),
    [
        ("a😀b", 2, "utf-8", 1),  # inside the emoji's four bytes: its start
        ("a😀b", 4, "utf-8", 1),
        ("a😀b", 5, "utf-8", 2),
        ("a😀b", 2, "utf-16", 1),  # between the surrogates: the emoji's start
        ("a😀b", 3, "utf-16", 2),
        ("a中b", 2, "gcc-display", 1),  # the second column of a wide character
        ("a\tb", 5, "gcc-display", 1),  # inside the tab's display columns
        ("e\u0301x", 1, "gcc-display", 2),  # a combining mark has no width: past it
        ("a😀b", 99, "utf-16", 3),  # past the end: the end of the line
        ("abc", 99, "utf-8", 3),
    ],
)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_column_inside_a_character_rounds_down_to_it(
    line: str, column: int, unit: str, index: int, encoding: str
) -> None:
    assert character(line, column, unit, encoding) == units(line[:index], encoding)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_end_of_a_line_in_each_encoding(encoding: str) -> None:
    # 32 code points, 33 UTF-16 units, 35 bytes: a line ending in an emoji.
    line = "total = add(1, nope)  # summed 🎉"
    assert line_end(line, encoding) == {"utf-8": 35, "utf-16": 33, "utf-32": 32}[encoding]
    assert line_end("ascii", encoding) == 5


def test_an_ascii_line_is_never_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    # The save path's fast path: ASCII counts the same in every unit and encoding.
    def walk(*args: object) -> int:
        raise AssertionError("walked an ASCII line")

    monkeypatch.setattr(positions, "code_point_index", walk)
    assert character("x = 1  # ok", 4, "utf-8", "utf-16") == 4
    assert character("x = 1", 40, "utf-16", "utf-8") == 5
    assert line_end("x = 1", "utf-16") == 5
    with pytest.raises(AssertionError):
        character("\tx = nope", 9, "gcc-display", "utf-16")  # tabs: display columns differ


LINE = 's = "😀😀中é\u0301"; x: int = "a"'


def test_a_located_problem_counts_in_the_declared_encoding() -> None:
    # mypy --show-error-end: bytes, end inclusive (the matcher made it exclusive).
    problem = Problem("a.py", 2, 33, "m", end_line=2, end_column=36, unit="utf-8")
    text = {1: LINE}
    for encoding in ENCODINGS:
        entry = located_entry(
            problem, "file:///p/a.py", "/p", lambda u, n: text.get(n), True, encoding
        )
        start = units(LINE[: LINE.index('"a"')], encoding)
        assert entry.diagnostic.range == types.Range(
            start=types.Position(line=1, character=start),
            end=types.Position(line=1, character=start + 3),
        )


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_without_an_end_the_diagnostic_runs_to_the_lines_end_in_the_encoding(encoding: str) -> None:
    line = "greeting = nope2  # 😀😀"  # 2 emoji: code points would be a wrong, valid offset
    problem = Problem("a.py", 1, 1, "m", unit="utf-8")
    entry = located_entry(problem, "file:///p/a.py", "/p", lambda u, n: line, True, encoding)
    assert entry.diagnostic.range.end == types.Position(line=0, character=units(line, encoding))


def test_related_locations_are_converted_with_their_own_lines(tmp_path: Path) -> None:
    # A Rust test's failure: the test's line (backtrace, bytes) and the panic (display).
    lines = {
        ("file:///p/src/lib.rs", 1): '\tlet s = "中é\u0301"; panic!("boom");',
        ("file:///p/src/lib.rs", 2): '    let s = "é😀"; f();',
    }
    output = [
        "thread 'tests::adds' panicked at src/lib.rs:2:20:",
        "boom",
        "stack backtrace:",
        "   1: lib::tests::adds",
        "             at ./src/lib.rs:3:23",
        "done",
    ]
    (problem,) = collect_in(tmp_path, {"src/lib.rs": "x\n"}, output)
    entry = located_entry(problem, "file:///p/src/lib.rs", "/p", lambda u, n: lines.get((u, n)))
    start = units('    let s = "é😀"; ', "utf-16")
    assert entry.diagnostic.range.start == types.Position(line=2, character=start)
    (related,) = entry.diagnostic.related_information or []
    at = types.Position(line=1, character=units('\tlet s = "中é\u0301"; ', "utf-16"))
    assert related.location.range == types.Range(start=at, end=at)


def collect_in(folder: Path, files: dict[str, str], output: list[str]) -> list[Problem]:
    """The problems a run's `output` gives in `folder`, holding `files`."""
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    sink = make_sink(str(folder))
    for line in output:
        sink.feed(line)
    return sink.finish()


@pytest.mark.parametrize(
    ("rel", "output", "unit"),
    [
        ("a.c", "a.c:2:40: error: \u2018nope\u2019 undeclared", "gcc-display"),
        ("a.py", "a.py:2:33:2:35: error: Incompatible types  [assignment]", "utf-8"),
        ("a.py", "a.py:2:12: E702 Multiple statements on one line (semicolon)", None),
        ("x.go", "./x.go:6:17: fmt.Printf format %d has arg s of wrong type string", "utf-8"),
        ("a.js", "a.js:1:20: Unexpected 'debugger' statement. [Error/no-debugger]", "utf-16"),
        ("a.ts", "a.ts(1,26): error TS2322: Type 'string' is not assignable.", "utf-16"),
        ("a.py", "  a.py:2:23 - error: Type is not assignable", "utf-16"),
        ("r.rs", "error[E0425]: cannot find value", "utf-32"),
    ],
)
def test_each_family_says_what_its_columns_count(
    tmp_path: Path, rel: str, output: str, unit: str | None
) -> None:
    lines = [output, " --> r.rs:2:30", "", "done"] if rel == "r.rs" else [output, "done"]
    assert [p.unit for p in collect_in(tmp_path, {rel: "x\n"}, lines)] == [unit]


def _summary() -> Entry:
    zero = types.Position(line=0, character=0)
    return Entry(types.Diagnostic(range=types.Range(start=zero, end=zero), message="verify failed"))


def test_a_triggering_save_drops_the_old_verdict_without_a_publish() -> None:
    from lsp_verify.results.diagnostics import Diagnostics

    published: list[str] = []
    store = Diagnostics(published.append)
    mark = Entry(types.Diagnostic(range=SPAN, message="located"), anchor="line")
    store.replace_verify({"file:///p/a.py": [mark, _summary()]}, lambda uri: True, began=1.0)
    published.clear()
    before = store.result_id("file:///p/a.py")
    store.saved("file:///p/a.py")
    assert published == []  # an editor keeps what it shows until the run ends
    assert store.entries("file:///p/a.py", VERIFY) == [mark]
    assert store.result_id("file:///p/a.py") != before  # a pull reads the new set


def test_a_run_that_began_before_a_save_does_not_speak_for_that_document() -> None:
    from lsp_verify.results.diagnostics import Diagnostics

    published: list[str] = []
    store = Diagnostics(published.append)
    store.saved("file:///p/a.py")
    began = time.time() - 1  # the run began before the save
    store.replace_verify(
        {"file:///p/a.py": [_summary()], "file:///p/b.py": [_summary()]},
        lambda uri: True,
        began=began,
    )
    assert published == ["file:///p/b.py"]
    assert store.entries("file:///p/a.py", VERIFY) == []
    store.replace_verify({"file:///p/a.py": [_summary()]}, lambda uri: True, began=time.time())
    assert "file:///p/a.py" in published[1:]  # the run that saw it does

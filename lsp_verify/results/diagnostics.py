"""Diagnostics per document, in layers, and the diagnostics of one run record.

The server publishes, for a document, the union of its layers: the verify layer (what the
last finished run found) and the config layer (problems in `.lsp-verify.toml` itself), so
neither ever wipes the other. A located verify diagnostic remembers the text of its line; when
an edit changes that line it is withdrawn until the next run, because it no longer points at
what failed. The summary stays while the user types; but once an edit of a document is on
disk and has triggered a run, no verdict of a run that began before it is published for that
document again (see SPEC section 5, "Stale after edit"): the run that saw it speaks for it.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from lsprotocol import types

from lsp_verify.record import failure_header
from lsp_verify.results.positions import UTF16, UTF32, character, line_end
from lsp_verify.uris import path_to_uri

if TYPE_CHECKING:  # only types: the server imports this before it answers `initialize`
    from lsp_verify.problems.base import Problem
    from lsp_verify.record import Record

VERIFY = "verify"
CONFIG = "config"
SOURCE = "verify"
MAX_LINE_READ = 4 * 1024 * 1024

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass(frozen=True)
class Entry:
    """A diagnostic and, for located ones, the text of its line when it was published."""

    diagnostic: types.Diagnostic
    anchor: str | None = None

    @functools.cached_property
    def json(self) -> dict[str, Any]:
        """The diagnostic as LSP JSON, made once: publishing it is on the path of every save."""
        return diagnostic_json(self.diagnostic)

    @functools.cached_property
    def payload(self) -> bytes:
        """The diagnostic as JSON text in UTF-8, serialised once however often the document is
        published (a summary carries up to 40 000 characters of output)."""
        return json_bytes(self.json)


LineText = Callable[[str, int], "str | None"]


class DiagnosticStore:
    def __init__(self) -> None:
        self._layers: dict[str, dict[str, list[Entry]]] = {}

    def union(self, uri: str) -> list[types.Diagnostic]:
        layers = self._layers.get(uri, {})
        return [e.diagnostic for layer in (CONFIG, VERIFY) for e in layers.get(layer, [])]

    def union_json(self, uri: str) -> list[dict[str, Any]]:
        """`union` as LSP JSON."""
        layers = self._layers.get(uri, {})
        return [e.json for layer in (CONFIG, VERIFY) for e in layers.get(layer, [])]

    def union_payloads(self, uri: str) -> list[bytes]:
        """`union` as serialised JSON, one `Entry.payload` per diagnostic."""
        layers = self._layers.get(uri, {})
        return [e.payload for layer in (CONFIG, VERIFY) for e in layers.get(layer, [])]

    def uris(self, layer: str) -> set[str]:
        return {uri for uri, layers in self._layers.items() if layers.get(layer)}

    def entries(self, uri: str, layer: str) -> list[Entry]:
        return list(self._layers.get(uri, {}).get(layer, []))

    def set(self, uri: str, layer: str, entries: list[Entry]) -> bool:
        """Replace one layer of one document; True when anything changed."""
        layers = self._layers.setdefault(uri, {})
        old = layers.get(layer, [])
        if old == entries:
            if not layers:
                del self._layers[uri]
            return False
        if entries:
            layers[layer] = entries
        else:
            layers.pop(layer, None)
            if not layers:
                del self._layers[uri]
        return True

    def replace_layer(
        self, layer: str, new: dict[str, list[Entry]], scope: Callable[[str], bool]
    ) -> list[str]:
        """Set `layer` to `new` for every document `scope` accepts; returns changed URIs."""
        changed = []
        for uri in sorted(self.uris(layer) | set(new)):
            if (uri in new or scope(uri)) and self.set(uri, layer, new.get(uri, [])):
                changed.append(uri)
        return changed

    def withdraw_stale(
        self, uri: str, line_text: Callable[[int], str | None], verdict: bool = False
    ) -> bool:
        """Drop located verify diagnostics whose line no longer reads as it did, and with
        `verdict` the unlocated ones too (the summary, the approval warning)."""
        entries = self.entries(uri, VERIFY)
        kept = [
            e
            for e in entries
            if (e.anchor is None and not verdict)
            or (e.anchor is not None and line_text(e.diagnostic.range.start.line) == e.anchor)
        ]
        if len(kept) == len(entries):
            return False
        return self.set(uri, VERIFY, kept)


class Diagnostics(DiagnosticStore):
    """The store, as the client sees it: each change of a document's diagnostics gives it a
    new result id (for pulls) and is handed to `publish` (for pushes).

    A document with no diagnostics that is not open is forgotten, result id and all (a
    server sees thousands of documents come and go over days). That stays right for a
    client holding any id it was given: ids are unique over the store's life, so a forgotten
    document's old id never matches again, and "0" only ever names the empty report."""

    def __init__(
        self, publish: Callable[[str], None], is_open: Callable[[str], bool] = lambda _: False
    ) -> None:
        super().__init__()
        self._publish = publish
        self._is_open = is_open
        self._result_ids: dict[str, int] = {}
        # time.time() of each document's latest edit that triggered a run, and of the start
        # of the run whose verdict its layer holds.
        self._saved: dict[str, float] = {}
        self._verdict_began: dict[str, float] = {}
        self._ids = itertools.count(1)

    def documents(self) -> set[str]:
        """The documents the store holds anything for."""
        return self._layers.keys() | self._result_ids.keys()

    def changed(self, uri: str) -> None:
        self._result_ids[uri] = next(self._ids)
        self._publish(uri)
        self.release(uri)

    def release(self, uri: str) -> None:
        """Forget a document that has no diagnostics and is not open (it has just closed).
        When its latest triggering edit was is kept (a float a document saved this session):
        a run that began before it must still not speak for it."""
        if uri not in self._layers and uri in self._result_ids and not self._is_open(uri):
            del self._result_ids[uri]
            self._verdict_began.pop(uri, None)

    def result_id(self, uri: str) -> str:
        return str(self._result_ids.get(uri, 0))

    def set_config(self, uri: str, problems: list[tuple[str, int | None]]) -> None:
        """The problems of `.lsp-verify.toml` itself: its own layer of that document."""
        if self.set(uri, CONFIG, config_entries(problems)):
            self.changed(uri)

    def replace_verify(
        self,
        entries: dict[str, list[Entry]],
        scope: Callable[[str], bool],
        began: float | None = None,
    ) -> None:
        """A finished run's layer. Every document it names speaks, changed or not: a failing
        run that ends with the same verdict still tells the client it ended. A run that
        `began` before a document's latest triggering edit leaves that document alone: the
        run that saw the edit is queued and will speak for it."""
        if began is not None:
            entries = {uri: e for uri, e in entries.items() if self.saw(uri, began)}
            inner = scope

            def scope(uri: str) -> bool:
                return inner(uri) and self.saw(uri, began)

            for uri in entries:
                self._verdict_began[uri] = began
        for uri in sorted(set(self.replace_layer(VERIFY, entries, scope)) | set(entries)):
            self.changed(uri)

    def saved(self, uri: str) -> None:
        """An edit of `uri` is on disk and triggered a run: the verdict its layer holds is of a
        run that did not see it. It is dropped without a publish (an editor keeps showing
        what it has until the run ends), so nothing published for `uri` carries it again."""
        self._saved[uri] = time.time()
        entries = self.entries(uri, VERIFY)
        if self.set(uri, VERIFY, [e for e in entries if e.anchor is not None]):
            self._result_ids[uri] = next(self._ids)  # a pull reads it so

    def saw(self, uri: str, began: float) -> bool:
        """Whether a run that began at `began` (time.time()) saw the latest edit of `uri`."""
        return self._saved.get(uri, -math.inf) < began

    def verdict_began(self, uri: str) -> float:
        """When the run whose verdict `uri`'s layer holds began (infinity: no verdict)."""
        return self._verdict_began.get(uri, math.inf)


def _position_json(position: types.Position) -> dict[str, int]:
    return {"line": position.line, "character": position.character}


def _range_json(range_: types.Range) -> dict[str, dict[str, int]]:
    return {"start": _position_json(range_.start), "end": _position_json(range_.end)}


def diagnostic_json(diagnostic: types.Diagnostic) -> dict[str, Any]:
    """A diagnostic as LSP JSON, as lsprotocol's converter writes it: unset fields left out."""
    out: dict[str, Any] = {"range": _range_json(diagnostic.range), "message": diagnostic.message}
    if diagnostic.severity is not None:
        out["severity"] = int(diagnostic.severity)
    if diagnostic.code is not None:
        out["code"] = diagnostic.code
    if diagnostic.code_description is not None:
        out["codeDescription"] = {"href": diagnostic.code_description.href}
    if diagnostic.source is not None:
        out["source"] = diagnostic.source
    if diagnostic.tags is not None:
        out["tags"] = [int(tag) for tag in diagnostic.tags]
    if diagnostic.related_information is not None:
        out["relatedInformation"] = [
            {
                "location": {"uri": r.location.uri, "range": _range_json(r.location.range)},
                "message": r.message,
            }
            for r in diagnostic.related_information
        ]
    if diagnostic.data is not None:
        out["data"] = diagnostic.data
    return out


def json_bytes(value: Any) -> bytes:
    """`value` as compact JSON in UTF-8. Text outside ASCII is written as it is, not as
    escapes: an emoji costs 4 bytes instead of 12. A lone surrogate (a file name that is not
    UTF-8) cannot be encoded so; then the whole value is written with escapes."""
    try:
        return _as_utf8(value).encode()
    except UnicodeEncodeError:
        return _as_ascii(value).encode()


# Made once: json.dumps with options builds a new encoder on every call.
_as_utf8 = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_as_ascii = json.JSONEncoder(separators=(",", ":")).encode


def summary_message(record: Record) -> str:
    return failure_header(record) + ":\n" + "\n".join(record.tail)


def record_entries(
    record: Record,
    summary_uri: str | None,
    line_text: LineText,
    related: bool = True,
    encoding: str = UTF16,
) -> dict[str, list[Entry]]:
    """The verify layer a failed run leaves: located problems plus the summary."""
    out: dict[str, list[Entry]] = {}
    for problem in record.problems:
        uri = path_to_uri(os.path.join(record.folder, problem.path))
        entry = located_entry(problem, uri, record.folder, line_text, related, encoding)
        out.setdefault(uri, []).append(entry)
    if summary_uri is not None:
        zero = types.Position(line=0, character=0)
        summary = types.Diagnostic(
            range=types.Range(start=zero, end=zero),
            message=summary_message(record),
            severity=types.DiagnosticSeverity.Error,
            source=SOURCE,
            code=record.outcome,
        )
        out.setdefault(summary_uri, []).append(Entry(summary))
    return out


def located_entry(
    problem: Problem,
    uri: str,
    folder: str,
    line_text: LineText,
    related: bool = True,
    encoding: str = UTF16,
) -> Entry:
    """A located problem as a diagnostic. Its related locations become relatedInformation
    when the client declares support for it (`related`), else lines of the message.
    Positions count in `encoding` (the server's `positionEncoding`), converted from the
    tool's columns with the text of their lines (see SPEC section 5 and `positions`)."""
    line = max(problem.line - 1, 0)
    text = line_text(uri, line)
    unit = problem.unit or UTF32
    start_char = character(text, problem.column - 1, unit, encoding)
    if problem.end_line is not None and problem.end_column is not None:
        end_line = max(problem.end_line - 1, 0)
        end_text = text if end_line == line else line_text(uri, end_line)
        end_char = character(end_text, problem.end_column - 1, unit, encoding)
        if end_line == line and end_char < start_char:
            end_char = start_char
        end = types.Position(line=end_line, character=end_char)
    else:
        # No end given: mark the rest of the line, so the editor has something to underline.
        line_end_char = line_end(text, encoding) if text is not None else start_char
        end = types.Position(line=line, character=max(line_end_char, start_char))
    information = []
    if related:
        for r in problem.related:
            r_uri = path_to_uri(os.path.join(folder, r.path))
            r_line = max(r.line - 1, 0)
            # Column 1 is character 0 in every encoding: no need to read that file.
            r_text = line_text(r_uri, r_line) if r.column > 1 else None
            at = types.Position(
                line=r_line, character=character(r_text, r.column - 1, r.unit or unit, encoding)
            )
            information.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(uri=r_uri, range=types.Range(start=at, end=at)),
                    message=r.message,
                )
            )
    message = problem.message
    if not related and problem.related:
        message += "".join(f"\n{r.message}: {r.path}:{r.line}:{r.column}" for r in problem.related)
        information = []
    diagnostic = types.Diagnostic(
        range=types.Range(start=types.Position(line=line, character=start_char), end=end),
        message=message,
        severity=_SEVERITY.get(problem.severity, types.DiagnosticSeverity.Error),
        source=SOURCE,
        code=problem.code,
        related_information=information or None,
    )
    return Entry(diagnostic, anchor=text if text is not None else "")


def read_line(path: str, line: int) -> str | None:
    """Line `line` (0-based) of a file on disk, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_LINE_READ)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[line] if 0 <= line < len(lines) else None


def config_entries(messages: Iterable[tuple[str, int | None]]) -> list[Entry]:
    """Diagnostics for problems in `.lsp-verify.toml` (message, 1-based line or None)."""
    out = []
    for text, line in messages:
        pos = types.Position(line=max((line or 1) - 1, 0), character=0)
        out.append(
            Entry(
                types.Diagnostic(
                    range=types.Range(start=pos, end=pos),
                    message=text,
                    severity=types.DiagnosticSeverity.Warning,
                    source=SOURCE,
                )
            )
        )
    return out

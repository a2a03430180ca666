"""Is what the server sent conformant? LSP 3.17 and lsprotocol's types, over a recorded session.

`check(frames)` runs every rule of `RULES` over a transcript (`tests/support/recorder.py`
records one) and returns the violations, one readable line each: an empty list is a
conformant session.
A rule is a function of a `Transcript` yielding violations, so a test can add its own
(`check(frames, rules=[*RULES, mine])`).

The rules: framing; JSON-RPC 2.0 shape; each typed message (the server's requests and
notifications, its responses to the client's requests) read by lsprotocol's converter and
written back unchanged; nothing but messages and questions before the initialize response;
every position on a character boundary of its line, in the encoding the server declared; and
no capability the client did not declare is used (configuration, watcher registration,
refresh, showDocument, work-done progress, relatedInformation and other diagnostic fields,
CodeAction literals and options). Progress goes only on tokens whose create the client has
answered with success; a workspace pull names the version of each document the client has open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Callable, Union

import cattrs
from lsprotocol import types
from lsprotocol.converters import get_converter

from tests.support.stdio import Frame
from tests.support.transcript import Transcript, diagnostic_sets, key, read_text

Rule = Callable[[Transcript], Iterator[str]]
CUSTOM = ("verify/status", "verify/output")  # the server's own notifications: not LSP's
BEFORE_INITIALIZED = ("window/showMessage", "window/logMessage", "telemetry/event")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _converter() -> cattrs.Converter:
    converter = get_converter()

    # lsprotocol reads anything with a `command` key as a Command; a CodeAction's command
    # is an object. Read it as an editor does.
    def structure(value: Any, _: type) -> Any:
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)
    return converter


CONVERTER = _converter()


def check(frames: list[Frame], rules: list[Rule] | None = None) -> list[str]:
    transcript = Transcript(frames)
    return [v for rule in (RULES if rules is None else rules) for v in rule(transcript)]


# ----- framing, JSON-RPC, types -----


def framing(t: Transcript) -> Iterator[str]:
    for f in t.received():
        lines = f.header.split(b"\r\n")
        names = [line.partition(b":")[0].strip().lower() for line in lines]
        if names.count(b"content-length") != 1 or not set(names) <= {
            b"content-length",
            b"content-type",
        }:
            yield f"#{f.seq}: header {f.header!r}"
        for line in lines:
            name, colon, value = line.partition(b": ")
            if not colon or (name.lower() == b"content-length" and value != b"%d" % len(f.body)):
                yield f"#{f.seq}: header line {line!r} for a body of {len(f.body)} bytes"
        if f.message is None:
            yield f"#{f.seq}: body is not JSON in UTF-8: {f.body[:80]!r}"


def jsonrpc(t: Transcript) -> Iterator[str]:
    answered: set[Any] = set()
    for f in t.received():
        m = f.message
        if not isinstance(m, dict) or m.get("jsonrpc") != "2.0":
            yield f"#{f.seq}: not a JSON-RPC 2.0 message: {f.body[:120]!r}"
            continue
        if "method" in m:
            if not isinstance(m["method"], str) or "result" in m or "error" in m:
                yield f"#{f.seq}: a request or notification with {sorted(m)}"
            if "id" in m and not isinstance(m["id"], (int, str)):
                yield f"#{f.seq}: request id {m['id']!r}"
            if "params" in m and not isinstance(m["params"], (dict, list)):
                yield f"#{f.seq}: params {m['params']!r}"
            continue
        if ("result" in m) == ("error" in m) or "id" not in m:
            yield f"#{f.seq}: a response needs an id and one of result/error: {sorted(m)}"
        elif m["id"] not in t.client_requests:
            yield f"#{f.seq}: a response to no request of the client's: id {m['id']!r}"
        elif m["id"] in answered:
            yield f"#{f.seq}: request {m['id']!r} answered twice"
        answered.add(m.get("id"))
        error = m.get("error")
        if error is not None and (
            not isinstance(error, dict)
            or not isinstance(error.get("code"), int)
            or not isinstance(error.get("message"), str)
        ):
            yield f"#{f.seq}: error {error!r}"
    for rid, request in t.client_requests.items():
        if rid not in answered:
            yield f"request {rid} ({request['method']}) never answered"


def typed(t: Transcript) -> Iterator[str]:
    """Each message read by lsprotocol's converter as its type and written back unchanged:
    a wrong type, a missing field or one the type does not have all show."""
    for f in t.received():
        m = f.message
        if not isinstance(m, dict):
            continue
        method = m.get("method")
        if method is None:
            request = t.request_of(f)
            if request is None or "error" in m:
                kind: Any = types.ResponseErrorMessage if "error" in m else None
            else:
                kind = types.METHOD_TO_TYPES.get(request["method"], (None, None))[1]
            what = f"the response to {request['method'] if request else '?'}"
        elif method in CUSTOM:
            continue
        else:
            kind = types.METHOD_TO_TYPES.get(method, (None,))[0]
            what = method
        if kind is None:
            yield f"#{f.seq}: {what}: no LSP type"
            continue
        yield from _round_trip(f, m, kind, what)
        if method == "$/progress":
            value = m.get("params", {}).get("value")
            kinds = {
                "begin": types.WorkDoneProgressBegin,
                "report": types.WorkDoneProgressReport,
                "end": types.WorkDoneProgressEnd,
            }
            value_kind = kinds.get(str(value.get("kind"))) if isinstance(value, dict) else None
            if value_kind is None:
                yield f"#{f.seq}: $/progress value {value!r}"
            else:
                yield from _round_trip(f, value, value_kind, "$/progress value")


def _round_trip(f: Frame, value: Any, kind: Any, what: str) -> Iterator[str]:
    try:
        again = CONVERTER.unstructure(CONVERTER.structure(value, kind))
    except Exception as exc:  # the message does not fit its type
        yield f"#{f.seq}: {what} is not a {kind.__name__}: {exc!r}"
        return
    if again != value:
        yield f"#{f.seq}: {what} as a {kind.__name__} reads back as {json.dumps(again)[:300]}"


def initialize_first(t: Transcript) -> Iterator[str]:
    """LSP: until the initialize response, only messages, logs, telemetry and questions."""
    end = t.initialize_response
    for f in t.received():
        if end is None or f.seq >= end.seq:
            break
        method = f.message.get("method") if isinstance(f.message, dict) else None
        if method not in (*BEFORE_INITIALIZED, "window/showMessageRequest"):
            yield f"#{f.seq}: {method or 'a response'} before the initialize response"


# ----- capabilities the client declared -----

# A server request -> the client capability it needs.
_REQUESTS_NEED = {
    "workspace/configuration": "workspace.configuration",
    "workspace/diagnostic/refresh": "workspace.diagnostics.refreshSupport",
    "window/showDocument": "window.showDocument.support",
    "window/workDoneProgress/create": "window.workDoneProgress",
}
# A registration's method -> the dynamicRegistration flag it needs.
_REGISTRATIONS_NEED = {
    "workspace/didChangeWatchedFiles": "workspace.didChangeWatchedFiles.dynamicRegistration",
    "textDocument/diagnostic": "textDocument.diagnostic.dynamicRegistration",
}


def declared_requests(t: Transcript) -> Iterator[str]:
    for f in t.received():
        m = f.message
        method = m.get("method") if isinstance(m, dict) else None
        need = _REQUESTS_NEED.get(method or "")
        if need is not None and not t.declares(need):
            yield f"#{f.seq}: {method} to a client without {need}"
        if method == "client/registerCapability":
            for registration in m.get("params", {}).get("registrations", []):
                need = _REGISTRATIONS_NEED.get(registration.get("method"))
                if need is not None and not t.declares(need):
                    yield f"#{f.seq}: registration of {registration.get('method')} without {need}"


def progress(t: Transcript) -> Iterator[str]:
    """Work-done progress only to a client that declares it, only on a token the server
    created, once the client has answered that create with success (SPEC section 5), in the
    order begin, reports, end."""
    created: dict[Any, Any] = {}  # create request id -> token
    answers: dict[Any, str] = {}  # token -> "result" | "error", once the client answered
    seen: dict[Any, list[str]] = {}
    for f in t.frames:
        m = f.message
        if not isinstance(m, dict):
            continue
        if f.direction == "sent" and "method" not in m and m.get("id") in created:
            answers[created[m["id"]]] = "error" if "error" in m else "result"
            continue
        if f.direction != "received":
            continue
        if m.get("method") == "window/workDoneProgress/create":
            token = m.get("params", {}).get("token")
            if token in created.values():
                yield f"#{f.seq}: token {token!r} created twice"
            created[m.get("id")] = token
        elif m.get("method") == "$/progress":
            token = m.get("params", {}).get("token")
            value = m.get("params", {}).get("value")
            kind = value.get("kind") if isinstance(value, dict) else None
            if not t.declares("window.workDoneProgress"):
                yield f"#{f.seq}: $/progress to a client without window.workDoneProgress"
            if token not in created.values():
                yield f"#{f.seq}: $/progress {kind} on {token!r}, which the server never created"
            elif token not in answers:
                yield f"#{f.seq}: $/progress {kind} before the client answered the create"
            elif answers[token] == "error":
                yield f"#{f.seq}: $/progress {kind} after the client refused the token"
            kinds = seen.setdefault(token, [])
            if (kind == "begin") != (not kinds) or "end" in kinds:
                yield f"#{f.seq}: $/progress {kind} after {kinds}"
            kinds.append(str(kind))


def _diagnostic_fields(t: Transcript, where: str) -> dict[str, bool]:
    """Which optional Diagnostic fields the client reads in pushes or in pulls. A pull client
    of LSP 3.17 has no flags of its own for them: its push flags speak for it."""
    publish = t.declares("textDocument.publishDiagnostics") or {}
    pull = t.declares("textDocument.diagnostic") or {}
    fields = {
        "relatedInformation": bool(publish.get("relatedInformation")),
        "tags": bool(publish.get("tagSupport")),
        "codeDescription": bool(publish.get("codeDescriptionSupport")),
        "data": bool(publish.get("dataSupport")),
    }
    if where == "pull":
        fields["relatedInformation"] |= bool(pull.get("relatedInformation"))
        fields["tags"] |= bool(pull.get("tagSupport"))
        fields["codeDescription"] |= bool(pull.get("codeDescriptionSupport"))
        fields["data"] |= bool(pull.get("dataSupport"))
    return fields


def diagnostic_fields(t: Transcript) -> Iterator[str]:
    for f, uri, diagnostics, where in diagnostic_sets(t):
        allowed = _diagnostic_fields(t, where)
        for diagnostic in diagnostics:
            for name, ok in allowed.items():
                if name in diagnostic and not ok:
                    yield f"#{f.seq}: {name} in a {where} of {uri}, which the client never declared"


def code_actions(t: Transcript) -> Iterator[str]:
    """CodeActionOptions and CodeAction literals only for a client that declares
    codeActionLiteralSupport; any other gets `codeActionProvider: true` and Commands."""
    literal = bool(t.declares("textDocument.codeAction.codeActionLiteralSupport"))
    provider = t.server_capabilities.get("codeActionProvider")
    if isinstance(provider, dict) and not literal:
        yield f"codeActionProvider {provider} to a client without codeActionLiteralSupport"
    for f in t.received():
        request = t.request_of(f)
        if request is None or request["method"] != "textDocument/codeAction" or literal:
            continue
        for item in f.message.get("result") or []:
            if not isinstance(item.get("command"), str):
                title = item.get("title")
                yield f"#{f.seq}: CodeAction literal {title!r} without codeActionLiteralSupport"


def workspace_versions(t: Transcript) -> Iterator[str]:
    """A workspace pull names the version of each document the client has open (null only
    for one it has not open)."""
    for f in t.received():
        request = t.request_of(f)
        if (
            request is None
            or request["method"] != "workspace/diagnostic"
            or "result" not in f.message
        ):
            continue
        versions, _ = t.documents_at(f.seq)
        for item in (f.message["result"] or {}).get("items", []):
            expected = versions.get(key(item.get("uri", "")))
            if item.get("version") != expected:
                got = item.get("version")
                yield f"#{f.seq}: {item.get('uri')} at version {got!r}; the client has {expected!r}"


# ----- positions -----


def positions(t: Transcript) -> Iterator[str]:
    """Every position the server sends is on a character boundary of its line (SPEC section
    5), counted in the encoding it declared; and a range does not end before it starts."""
    encoding = t.encoding
    offered = t.declares("general.positionEncodings") or []
    if encoding != "utf-16" and encoding not in offered:
        yield f"positionEncoding {encoding!r}, which the client did not offer ({offered})"
    for f, uri, range_ in _ranges(t):
        _, texts = t.documents_at(f.seq)
        text = texts.get(key(uri))
        if text is None:
            text = read_text(uri)
        if text is None:
            continue  # a document nobody can read: no line to check against
        lines = _LINE_BREAK.split(text)
        ends = []
        for end in ("start", "end"):
            pos = range_.get(end) or {}
            line, character = pos.get("line"), pos.get("character")
            ends.append((line, character))
            if (
                not isinstance(line, int)
                or not isinstance(character, int)
                or line < 0
                or character < 0
            ):
                yield f"#{f.seq}: {uri}: {end} {pos}"
                continue
            if line >= len(lines):
                if character or line > len(lines):
                    yield f"#{f.seq}: {uri}: {end} {pos} past the end of the document"
                continue
            bounds = boundaries(lines[line], encoding)
            if character not in bounds:
                where = "past the end of" if character > max(bounds) else "inside a character of"
                yield f"#{f.seq}: {uri}: {end} {pos} is {where} line {lines[line]!r} ({encoding})"
        if all(isinstance(n, int) for pair in ends for n in pair) and ends[1] < ends[0]:
            yield f"#{f.seq}: {uri}: a range that ends before it starts: {range_}"


def boundaries(line: str, encoding: str) -> set[int]:
    """The offsets, in `encoding`, at which a character of `line` starts (or the line ends)."""
    out = {0}
    count = 0
    for char in line:
        if encoding == "utf-16":
            count += 2 if ord(char) > 0xFFFF else 1
        elif encoding == "utf-8":
            count += len(char.encode("utf-8", "surrogatepass"))
        else:
            count += 1
        out.add(count)
    return out


def _ranges(t: Transcript) -> Iterator[tuple[Frame, str, dict[str, Any]]]:
    for f, uri, diagnostics, _ in diagnostic_sets(t):
        for diagnostic in diagnostics:
            yield f, uri, diagnostic.get("range") or {}
            for related in diagnostic.get("relatedInformation") or []:
                location = related.get("location") or {}
                yield f, location.get("uri", ""), location.get("range") or {}
    for f in t.received():
        m = f.message
        if isinstance(m, dict) and m.get("method") == "window/showDocument":
            selection = m.get("params", {}).get("selection")
            if selection is not None:
                yield f, m["params"]["uri"], selection


RULES: list[Rule] = [
    framing,
    jsonrpc,
    typed,
    initialize_first,
    declared_requests,
    progress,
    diagnostic_fields,
    code_actions,
    workspace_versions,
    positions,
]

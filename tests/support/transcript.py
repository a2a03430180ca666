"""A recorded session (`tests/support/recorder.py`) as the conformance rules read it: who declared
what, which documents were open at which version, and the text a position refers to."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from tests.support.stdio import Frame


class Transcript:
    """A recorded session and what the checks need to know about it."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames = frames

    def received(self) -> Iterator[Frame]:
        return (f for f in self.frames if f.direction == "received")

    def sent(self) -> Iterator[Frame]:
        return (f for f in self.frames if f.direction == "sent")

    @cached_property
    def client_requests(self) -> dict[Any, dict[str, Any]]:
        return {
            f.message["id"]: f.message
            for f in self.sent()
            if "method" in f.message and "id" in f.message
        }

    @cached_property
    def server_requests(self) -> dict[Any, dict[str, Any]]:
        return {
            f.message["id"]: f.message
            for f in self.received()
            if isinstance(f.message, dict) and "method" in f.message and "id" in f.message
        }

    @cached_property
    def capabilities(self) -> dict[str, Any]:
        """The client's, as it sent them in initialize."""
        for message in self.client_requests.values():
            if message["method"] == "initialize":
                return dict(message["params"].get("capabilities") or {})
        return {}

    @cached_property
    def initialize_response(self) -> Frame | None:
        ids = [i for i, m in self.client_requests.items() if m["method"] == "initialize"]
        return next((f for f in self.received() if _response_to(f, ids)), None)

    @cached_property
    def server_capabilities(self) -> dict[str, Any]:
        frame = self.initialize_response
        result = frame.message.get("result") if frame is not None else None
        return dict(result.get("capabilities") or {}) if isinstance(result, dict) else {}

    @cached_property
    def encoding(self) -> str:
        return str(self.server_capabilities.get("positionEncoding") or "utf-16")

    def declares(self, path: str) -> Any:
        """A client capability by its dotted camelCase path (`window.workDoneProgress`)."""
        value: Any = self.capabilities
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def documents_at(self, seq: int) -> tuple[dict[str, int], dict[str, str]]:
        """The documents open before event `seq` (uri -> version) and the latest text the
        client knows of each document it opened, changed or wrote (uri -> text)."""
        versions: dict[str, int] = {}
        texts: dict[str, str] = {}
        for frame in self.frames[:seq]:
            if frame.direction == "wrote":
                texts[key(frame.uri)] = frame.text
                continue
            message = frame.message if frame.direction == "sent" else None
            if not isinstance(message, dict):
                continue
            method, params = message.get("method"), message.get("params") or {}
            if method == "textDocument/didOpen":
                item = params["textDocument"]
                versions[key(item["uri"])] = item["version"]
                texts[key(item["uri"])] = item["text"]
            elif method == "textDocument/didChange":
                uri = key(params["textDocument"]["uri"])
                versions[uri] = params["textDocument"]["version"]
                for change in params["contentChanges"]:
                    if "range" not in change:
                        texts[uri] = change["text"]
            elif method == "textDocument/didClose":
                versions.pop(key(params["textDocument"]["uri"]), None)
        return versions, texts

    def request_of(self, frame: Frame) -> dict[str, Any] | None:
        """The client's request a received response answers."""
        message = frame.message
        if not isinstance(message, dict) or "method" in message:
            return None
        return self.client_requests.get(message.get("id"))


def diagnostic_sets(t: Transcript) -> Iterator[tuple[Frame, str, list[dict[str, Any]], str]]:
    """(frame, uri, diagnostics, "push" | "pull") for every set of diagnostics sent."""
    for f in t.received():
        m = f.message
        if not isinstance(m, dict):
            continue
        if m.get("method") == "textDocument/publishDiagnostics":
            params = m.get("params") or {}
            yield f, params.get("uri", ""), params.get("diagnostics") or [], "push"
            continue
        request = t.request_of(f)
        result = m.get("result")
        if request is None or not isinstance(result, dict):
            continue
        if request["method"] == "textDocument/diagnostic":
            yield f, request["params"]["textDocument"]["uri"], result.get("items") or [], "pull"
            for uri, report in (result.get("relatedDocuments") or {}).items():
                yield f, uri, report.get("items") or [], "pull"
        elif request["method"] == "workspace/diagnostic":
            for report in result.get("items") or []:
                yield f, report.get("uri", ""), report.get("items") or [], "pull"


def key(uri: str) -> str:
    return unquote(uri)


def read_text(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    try:
        return Path(unquote(parsed.path)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _response_to(f: Frame, ids: list[Any]) -> bool:
    m = f.message
    return isinstance(m, dict) and "method" not in m and m.get("id") in ids

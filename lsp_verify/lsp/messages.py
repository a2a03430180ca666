"""Messages from the client, read without pygls: their shapes (an id, a save's document, a
watched-files notification, usable initialize params), what they are called in the log, the
order LSP puts them in (`Lifecycle`), and a publish written as bytes."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import unquote

from lsprotocol import types

from lsp_verify.results.diagnostics import json_bytes

log = logging.getLogger("lsp_verify")

# JSON-RPC and LSP error codes this module decides.
INVALID_REQUEST = -32600
SERVER_NOT_INITIALIZED = -32002


class Lifecycle:
    """LSP's order: nothing but `initialize` (and `exit`) before it, `initialize` and
    `initialized` once each, nothing after `shutdown` but `exit`."""

    def __init__(self) -> None:
        self.initialize_seen = False
        self.initialized_seen = False
        self.shutdown_requested = False

    def refusal(self, method: str, is_request: bool) -> tuple[int, str] | None:
        """None when the message may be handled; else the error a request gets (a
        notification is dropped), logged once here."""
        if method == types.INITIALIZE:
            if self.initialize_seen or not is_request:
                log.warning("initialize again, or as a notification: refused")
                return INVALID_REQUEST, "initialize was received already"
            self.initialize_seen = True
            return None
        if not self.initialize_seen:
            log.warning("%s before initialize: refused", method)
            return SERVER_NOT_INITIALIZED, f"{method}: not initialized yet"
        if method == types.INITIALIZED and not is_request:
            if self.initialized_seen:
                log.warning("initialized received again: ignored")
                return INVALID_REQUEST, "initialized was received already"
            self.initialized_seen = True
        return None


# Methods LSP defines as notifications: a request (with an id) of one is MethodNotFound.
NOTIFICATIONS = frozenset(
    method for method, kinds in types.METHOD_TO_TYPES.items() if kinds[1] is None
)


def valid_id(rid: object) -> bool:
    """A JSON-RPC id: a string, an integer (not a boolean) or null."""
    return (
        rid is None or isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
    )


def watched_changes(params: object) -> list[tuple[str, int]] | None:
    """(uri, type) of each change of didChangeWatchedFiles params, or None when they are not
    shaped as LSP says (pygls then refuses them)."""
    changes = params.get("changes") if isinstance(params, dict) else None
    if not isinstance(changes, list):
        return None
    found: list[tuple[str, int]] = []
    for change in changes:
        if not isinstance(change, dict):
            return None
        uri, kind = change.get("uri"), change.get("type")
        if type(uri) is not str or type(kind) is not int or not 1 <= kind <= 3:
            return None
        found.append((uri, kind))
    return found


def describe(message: dict[str, Any]) -> str:
    method = message.get("method")
    if method is None:
        return f"a response (id {message.get('id')!r})"
    return f"{method!r}" + (f" (id {message['id']!r})" if "id" in message else "")


def why(exc: Exception) -> str:
    """One line on why pygls could not read a message (cattrs says where, not a traceback)."""
    from cattrs import ClassValidationError, transform_error

    cause = exc.__cause__
    if isinstance(cause, ClassValidationError):
        return f"{exc}: " + "; ".join(transform_error(cause)[:3])
    return f"{type(exc).__name__}: {exc}"


def usable_initialize(params: object) -> None:
    """initialize params without the root and folder URIs that cannot be parsed (pygls
    fails the whole initialize on `file://[::1/x`) or that hold a NUL: each is one line in
    the log, and the server starts without it."""
    if not isinstance(params, dict):
        return
    for key in ("rootUri", "rootPath"):
        value = params.get(key)
        if isinstance(value, str) and not usable_uri(value):
            log.warning("initialize: %s %r cannot be used: ignored", key, value[:200])
            params[key] = None
    folders = params.get("workspaceFolders")
    if isinstance(folders, list):
        for folder in list(folders):
            uri = folder.get("uri") if isinstance(folder, dict) else None
            if isinstance(uri, str) and not usable_uri(uri):
                log.warning("initialize: workspace folder %r cannot be used: ignored", uri[:200])
                folders.remove(folder)


def usable_uri(uri: str) -> bool:
    from urllib.parse import urlparse

    try:
        urlparse(uri)
    except ValueError:
        return False
    return "\0" not in uri and "\0" not in unquote(uri)


def saved_uri(params: object) -> str | None:
    """The document URI of didSave params, or None when they are not shaped as LSP says."""
    if isinstance(params, dict):
        document = params.get("textDocument")
        if isinstance(document, dict):
            uri = document.get("uri")
            if isinstance(uri, str):
                return uri
    return None


_PUBLISH_START = b'{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":'


def publish_message(uri: str, payloads: list[bytes]) -> bytes:
    """A framed `textDocument/publishDiagnostics` notification (header and body) made of
    serialised diagnostics (`Entry.payload`), each copied once, straight into the message."""
    parts = [_PUBLISH_START, json_bytes(uri), b',"diagnostics":[']
    for i, payload in enumerate(payloads):
        if i:
            parts.append(b",")
        parts.append(payload)
    parts.append(b"]}}")
    length = sum(map(len, parts))
    return b"".join([b"Content-Length: %d\r\n\r\n" % length, *parts])

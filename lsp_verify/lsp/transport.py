"""The transport: where each message from the client goes, and every raw write to it.
With serving.py and stopping.py, the only code that touches pygls' protocol internals.

pygls' own `start_io` reads stdin through a worker thread; here stdin is framed by an
asyncio protocol on the event loop (serving.py), so a burst of saves arrives as it was sent
and coalesces. Each message is handed to `Transport.dispatch`, which takes the shortcuts that
measurably matter, refuses what LSP says to refuse, and gives everything else to pygls: a
save skips pygls' typed decoding (benchmarks/lsp.py, save -> diagnostics over the bare
command, three alternating runs: 0.91-1.40 ms with it, 1.26-1.44 ms without), and so does a
watched-files notification (100 000 changes: 0.2 s instead of 6 s).
The diagnostics published after a run, and `verify/status`, are written as JSON made here
rather than through pygls' converter: that write is on the path the user waits on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Callable, Protocol
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcMethodNotFound
from pygls.lsp.server import LanguageServer

from lsp_verify.logs import one_line
from lsp_verify.lsp import serving, stopping
from lsp_verify.lsp.framing import LARGE_MESSAGE, affordable
from lsp_verify.lsp.inflight import INVALID_REQUEST, METHOD_NOT_FOUND, Commands, Outgoing
from lsp_verify.lsp.messages import (
    NOTIFICATIONS,
    Lifecycle,
    describe,
    publish_message,
    saved_uri,
    usable_initialize,
    valid_id,
    watched_changes,
    why,
)

log = logging.getLogger("lsp_verify")


class Handlers(Protocol):
    """What the shortcuts hand over to, and what ends with the transport."""

    closing: bool

    def on_save(self, uri: str) -> None: ...
    def on_watched(self, changes: list[tuple[str, int]]) -> None: ...
    def on_progress_cancel(self, token: str) -> None: ...
    async def close_all(self) -> None: ...


class Transport:
    def __init__(self, server: LanguageServer, handlers: Handlers) -> None:
        self.server = server
        self.handlers = handlers
        self.lifecycle = Lifecycle()
        self.client_gone = False
        self.outgoing = Outgoing(self.send_raw, serving.unstructure(server))
        self.commands = Commands(self.send_raw, server.protocol.fm.commands.get)
        self.closed: asyncio.Future[int | None] | None = None  # set by the serve loop
        self.shutdown: asyncio.Task[None] | None = None  # shutdown being answered
        self.pygls_requests: set[Any] = set()  # ids of the client's requests pygls runs
        self._said_not_json = False
        self._unknown_documents: set[str] = set()  # changed but never opened: said once

    def dispatch(self, body: bytes | bytearray) -> bool:
        """One message from the client, as read from stdin; False when it is not JSON.

        Whatever the message, the read loop goes on: a message that fails here is one line in
        the log (and an error answer when it is a request), never the end of the loop."""
        try:
            return self._dispatch(body)
        except SystemExit:
            raise
        except Exception as exc:
            log.error("a message from the client could not be handled: %s", one_line(exc))
            return True

    def _dispatch(self, body: bytes | bytearray) -> bool:
        """A save is the message the user waits on, so it goes straight to `on_save`: pygls'
        typed decoding and dispatch of it cost about a tenth of a millisecond. A watched-files
        notification skips that decoding too (seconds for 100 000 changes). What LSP says the
        server must refuse is refused here: everything before `initialize` (ServerNotInitialized),
        requests after `shutdown` (InvalidRequest), and notifications sent as requests
        (MethodNotFound). Commands, shutdown, cancels and the answers to the server's own
        requests are handled here (`lsp_verify.lsp.inflight`); every other message is pygls' to
        handle, and one that does not fit its schema is one line in the log."""
        try:
            if len(body) > LARGE_MESSAGE:
                text = affordable(body)
                if text is None:
                    return True
                message = json.loads(text)
                del text
            else:
                message = json.loads(body)
        except (ValueError, RecursionError) as exc:
            log.error("a message from the client is not JSON: %s", exc)
            if not self._said_not_json:  # shown once: a broken client would pop up one a message
                self._said_not_json = True
                self.server.report_server_error(exc, JsonRpcException)
            return False
        method = message.get("method") if isinstance(message, dict) else None
        if (
            method == types.TEXT_DOCUMENT_DID_SAVE
            and "id" not in message
            and message.get("jsonrpc") == "2.0"
            and self.lifecycle.initialize_seen
        ):
            uri = saved_uri(message.get("params"))
            if uri is not None:
                if not self.lifecycle.shutdown_requested:
                    self._hand_over(self.handlers.on_save, uri)
                return True
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(method, (str, type(None)))
            or not valid_id(message.get("id"))
        ):
            log.error("a message from the client is not JSON-RPC 2.0: ignored")
            if isinstance(message, dict) and "method" in message and "id" in message:
                # JSON-RPC: an id that cannot be read is answered as null.
                rid = message["id"] if valid_id(message["id"]) else None
                self._answer_error(rid, INVALID_REQUEST, "not a JSON-RPC 2.0 request")
            return True
        if method is None:
            return self._response(message)
        return self._request_or_notification(method, message)

    def _request_or_notification(self, method: str, message: dict[str, Any]) -> bool:
        rid: Any = message.get("id")
        is_request = "id" in message
        if method == types.EXIT:
            # Ends the read loop; the transport then kills what runs, and the process
            # exits 0 after a shutdown request, else 1 (LSP). A client that sends exit
            # right behind shutdown, without waiting for its answer, still gets 0.
            self.handlers.closing = True
            raise SystemExit(0 if self.lifecycle.shutdown_requested else 1)
        if self.lifecycle.shutdown_requested:
            # LSP: after shutdown, requests fail with InvalidRequest and notifications
            # are dropped.
            if is_request:
                self._answer_error(rid, INVALID_REQUEST, f"{method}: the server is shut down")
            return True
        refusal = self.lifecycle.refusal(method, is_request)
        if refusal is not None:
            if is_request:
                self._answer_error(rid, *refusal)
            return True
        if method == types.INITIALIZE:
            usable_initialize(message.get("params"))
        if not self._handles(method):
            # Answered here, unread: pygls would turn the params of a method it has no
            # type for into namedtuples, a new class for each object in them (10 s
            # and 400 MB for 600 kB of them).
            if is_request:
                error = JsonRpcMethodNotFound.of(method)
                self._answer_error(rid, error.code, error.message)
            else:
                log.warning("notification %r from the client: no such method, ignored", method)
            return True
        params = message.get("params")
        if is_request:
            if method in NOTIFICATIONS:
                text = f"{method} is a notification, not a request"
                self._answer_error(rid, METHOD_NOT_FOUND, text)
                return True
            if method == types.SHUTDOWN:
                self.lifecycle.shutdown_requested = True
                loop = asyncio.get_running_loop()
                self.shutdown = loop.create_task(stopping.shut_down(self, rid))
                return True
            if method == types.WORKSPACE_EXECUTE_COMMAND:
                self.commands.start(rid, params)
                return True
        elif method == types.CANCEL_REQUEST:
            return self._cancel(params)
        elif method == types.WINDOW_WORK_DONE_PROGRESS_CANCEL:
            token = params.get("token") if isinstance(params, dict) else None
            if isinstance(token, (str, int)) and not isinstance(token, bool):
                self._hand_over(self.handlers.on_progress_cancel, str(token))
            else:
                log.warning("window/workDoneProgress/cancel without a token: ignored")
            return True
        elif method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
            changes = watched_changes(params)
            if changes is not None:
                self._hand_over(self.handlers.on_watched, changes)
                return True
        elif method == types.TEXT_DOCUMENT_DID_CHANGE and not self._is_open(message):
            return True
        return self._to_pygls(message, method)

    def _response(self, message: dict[str, Any]) -> bool:
        """An answer to one of the server's requests; one to no request is dropped unread."""
        if self.outgoing.answer(message):
            return True
        if message.get("id") in self.server.protocol._request_futures:
            return self._to_pygls(message, None)
        log.warning("%s from the client answers no request: ignored", describe(message))
        return True

    def _cancel(self, params: object) -> bool:
        rid = params.get("id") if isinstance(params, dict) else None
        if not isinstance(rid, (int, str)) or isinstance(rid, bool):
            log.warning("$/cancelRequest without an id that is a number or a string: ignored")
            return True
        if self.commands.cancel(rid):
            return True
        future = self.server.protocol._request_futures.get(rid)
        if future is not None and not future.done():
            future.cancel()  # pygls answers it as cancelled
        else:
            log.debug("$/cancelRequest for %r, which is not in flight", rid)
        return True

    def _to_pygls(self, message: dict[str, Any], method: str | None) -> bool:
        if method is not None and "id" in message:
            self._note_pygls_request(message["id"])
        try:
            self.server.protocol.handle_message(self.server.protocol.structure_message(message))
        except Exception as exc:
            log.error("%s from the client: %s", describe(message), why(exc))
            if method == types.INITIALIZE:
                self.lifecycle.initialize_seen = False  # not initialized: the client may try again
            if method is not None and "id" in message:
                # A request pygls could not even read: answer it, or the client waits forever.
                error = exc if isinstance(exc, JsonRpcException) else JsonRpcInternalError()
                self._answer_error(message["id"], error.code, error.message)
        return True

    def _hand_over(self, handler: Callable[[Any], None], value: Any) -> None:
        """A shortcut's handler: a failure is one line in the log, never the end of reading."""
        try:
            handler(value)
        except Exception as exc:
            log.error("handling a message from the client failed: %s", one_line(exc))

    def _note_pygls_request(self, rid: Any) -> None:
        requests = self.pygls_requests
        if len(requests) >= 256:  # forget those pygls has answered
            futures = self.server.protocol._request_futures
            requests.intersection_update(futures)
        requests.add(rid)

    def _handles(self, method: str) -> bool:
        features = self.server.protocol.fm
        return (
            method in features.features
            or method in features.builtin_features
            or method == types.CANCEL_REQUEST
        )

    def _answer_error(self, rid: Any, code: int, text: str) -> None:
        self.send_raw({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}})

    def _is_open(self, message: dict[str, Any]) -> bool:
        """Is the document of this didChange open? Not when its didOpen was refused (too
        big): pygls would fail on every change of it, so those are dropped, said once."""
        params = message.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str) or unquote(uri) in self.server.workspace.text_documents:
            return True  # or not shaped as LSP says: pygls' to refuse
        if uri not in self._unknown_documents and len(self._unknown_documents) < 100:
            self._unknown_documents.add(uri)
            log.warning("didChange of %s, which is not open: ignored", uri[:200])
        return False

    def send_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are JSON already, written without pygls' converter:
        the publish after a run is on the path the user waits on."""
        self.send_raw({"jsonrpc": "2.0", "method": method, "params": params})

    def send_raw(self, message: dict[str, Any]) -> None:
        """One JSON-RPC message, framed and written to the client."""
        body = json.dumps(message).encode()
        self.write_framed(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def write_framed(self, data: bytes) -> None:
        """Bytes that are a whole framed message already."""
        writer = self.server.protocol.writer
        if writer is not None:  # else not serving yet
            writer.write(data)

    def gone(self) -> None:
        """The client closed its end of stdout: nothing more can reach it; the server stops."""
        if not self.client_gone:
            self.client_gone = True
            log.info("the client closed the server's output: stopping")
        if self.closed is not None and not self.closed.done():
            self.closed.set_result(1)

    def serve(self) -> int:
        """Serve on stdio until `exit`, the end of input, a signal or the client gone."""
        return serving.serve(self)

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        """textDocument/publishDiagnostics of diagnostics serialised already."""
        self.write_framed(publish_message(uri, payloads))

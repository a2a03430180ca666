"""The stdio transport: LSP framing, the reader, the messages the server answers itself,
and every raw write. The only code that touches pygls' protocol internals.

pygls' own `start_io` reads stdin through a worker thread; here stdin is framed by an
asyncio protocol on the event loop, so a burst of saves arrives as it was sent and
coalesces. Each message is handed to `Transport.dispatch`, which takes the shortcuts that
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
import os
import signal
import sys
import threading
from typing import Any, Protocol
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    FeatureNotificationError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcMethodNotFound,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from lsp_verify.diagnostics import json_bytes
from lsp_verify.framing import LARGE_MESSAGE, Framing, affordable, pump

log = logging.getLogger("lsp_verify")


class Handlers(Protocol):
    """What the shortcuts hand over to, and what ends with the transport."""

    closing: bool

    def on_save(self, uri: str) -> None: ...
    def on_watched(self, changes: list[tuple[str, int]]) -> None: ...
    async def close_all(self) -> None: ...


class Transport:
    def __init__(self, server: LanguageServer, handlers: Handlers) -> None:
        self.server = server
        self.handlers = handlers
        self.shutdown_requested = False
        self._unknown_documents: set[str] = set()  # changed but never opened: said once

    def dispatch(self, body: bytes | bytearray) -> bool:
        """One message from the client, as read from stdin; False when it is not JSON.

        A save is the message the user waits on, so it goes straight to `on_save`: pygls'
        typed decoding and dispatch of it cost about a tenth of a millisecond. A watched-files
        notification skips that decoding too (seconds for 100 000 changes). What LSP says the
        server must refuse is refused here: requests after `shutdown` (InvalidRequest), and
        notifications sent as requests (MethodNotFound). Every other message is pygls' to
        handle; one that does not fit its schema is one line in the log."""
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
            self.server.report_server_error(exc, JsonRpcException)
            return False
        method = message.get("method") if isinstance(message, dict) else None
        if (
            method == types.TEXT_DOCUMENT_DID_SAVE
            and "id" not in message
            and message.get("jsonrpc") == "2.0"
        ):
            uri = _saved_uri(message.get("params"))
            if uri is not None:
                if not self.shutdown_requested:
                    try:
                        self.handlers.on_save(uri)
                    except Exception as exc:
                        log.exception("handling a save of %s failed", uri)
                        self.server.report_server_error(exc, FeatureNotificationError)
                return True
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(method, (str, type(None)))
            or not isinstance(message.get("id"), (str, int, type(None)))
        ):
            log.error("a message from the client is not JSON-RPC 2.0: ignored")
            if isinstance(message, dict) and "method" in message and "id" in message:
                self._answer_error(message["id"], -32600, "not a JSON-RPC 2.0 request")
            return True
        if method is not None:
            if method == types.EXIT:
                # Ends the read loop; the transport then kills what runs, and the process
                # exits 0 after a shutdown request, else 1 (LSP). A client that sends exit
                # right behind shutdown, without waiting for its answer, still gets 0.
                self.handlers.closing = True
                raise SystemExit(0 if self.shutdown_requested else 1)
            if self.shutdown_requested:
                # LSP: after shutdown, requests fail with InvalidRequest and notifications
                # are dropped.
                if "id" in message:
                    self._answer_error(message["id"], -32600, f"{method}: the server is shut down")
                return True
            if not self._handles(method):
                # Answered here, unread: pygls would turn the params of a method it has no
                # type for into namedtuples, a new class for each object in them (10 s
                # and 400 MB for 600 kB of them).
                if "id" in message:
                    error = JsonRpcMethodNotFound.of(method)
                    self._answer_error(message["id"], error.code, error.message)
                else:
                    log.warning("notification %r from the client: no such method, ignored", method)
                return True
            if "id" in message:
                if method in _NOTIFICATIONS:
                    self._answer_error(
                        message["id"], -32601, f"{method} is a notification, not a request"
                    )
                    return True
                if method == types.SHUTDOWN:
                    self.shutdown_requested = True
            elif method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES:
                changes = _watched_changes(message.get("params"))
                if changes is not None:
                    self.handlers.on_watched(changes)
                    return True
            elif method == types.TEXT_DOCUMENT_DID_CHANGE and not self._is_open(message):
                return True
        elif message.get("id") not in self.server.protocol._request_futures:
            # A response to no request of the server's: dropped unread (see above).
            log.warning("%s from the client answers no request: ignored", _describe(message))
            return True
        try:
            self.server.protocol.handle_message(self.server.protocol.structure_message(message))
        except Exception as exc:
            log.error("%s from the client: %s", _describe(message), _why(exc))
            self.server.report_server_error(exc, JsonRpcException)
            if method is not None and "id" in message:
                # A request pygls could not even read: answer it, or the client waits forever.
                error = exc if isinstance(exc, JsonRpcException) else JsonRpcInternalError()
                self._answer_error(message["id"], error.code, error.message)
        return True

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
            log.warning("didChange of %s, which is not open: ignored", uri)
        return False

    def send_json(self, method: str, params: dict[str, Any]) -> None:
        """A notification whose params are JSON already, written without pygls' converter:
        the publish after a run is on the path the user waits on."""
        self.send_raw({"jsonrpc": "2.0", "method": method, "params": params})

    def send_raw(self, message: dict[str, Any]) -> None:
        """One JSON-RPC message, framed and written to the client."""
        writer = self.server.protocol.writer
        if writer is None:  # not serving yet
            return
        body = json.dumps(message).encode()
        try:
            writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        except BrokenPipeError:
            raise
        except OSError as exc:
            log.error("sending %s failed: %s", message.get("method", "a response"), exc)

    def write_framed(self, data: bytes, what: str) -> None:
        """Bytes that are a whole framed message already (`what` names it for the log)."""
        writer = self.server.protocol.writer
        if writer is None:  # not serving yet
            return
        try:
            writer.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            log.error("sending %s failed: %s", what, exc)

    def serve(self) -> int:
        """Serve on stdin and stdout until `exit` or the end of input; the exit code."""
        try:
            asyncio.run(self._serve())
        except SystemExit as exc:
            return int(exc.code or 0)
        except (BrokenPipeError, KeyboardInterrupt):
            return 1
        return 0

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        if main is not None and sys.platform != "win32":
            for signum in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(signum, main.cancel)
        if sys.platform == "linux":
            from lsp_verify.reaper import watch_children

            watch_children(loop)
        self.server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        pygls_log = logging.getLogger("pygls.protocol.json_rpc")
        pygls_log.addFilter(_NoDeserializeTraceback())
        pygls_log.addFilter(_CancelRaceAtDebug())
        closed: asyncio.Future[int | None] = loop.create_future()
        framing = Framing(self, closed)
        stdin = sys.stdin.buffer
        code: int | None = None
        try:
            try:
                if os.path.sameopenfile(stdin.fileno(), sys.stdout.fileno()):
                    raise ValueError("stdin is stdout")
                if not _watchable(stdin.fileno()):
                    # The loop would accept it and fail later, in a callback, reading nothing.
                    raise ValueError("stdin cannot be watched (/dev/null, a regular file)")
                await loop.connect_read_pipe(lambda: framing, stdin)
            except (OSError, ValueError, NotImplementedError):
                threading.Thread(
                    target=pump, args=(stdin.fileno(), framing, loop), name="stdin", daemon=True
                ).start()
            code = await closed
        except asyncio.CancelledError:
            pass
        finally:
            # stdin EOF, exit, SIGTERM: nothing the server started may outlive it.
            self.handlers.closing = True
            loop.set_exception_handler(_quiet_when_cancelled)
            await self.handlers.close_all()
        if code is not None:
            raise SystemExit(code)

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        """textDocument/publishDiagnostics of diagnostics serialised already."""
        self.write_framed(publish_message(uri, payloads), "publishDiagnostics")


# Methods LSP defines as notifications: a request (with an id) of one is MethodNotFound.
_NOTIFICATIONS = frozenset(
    method for method, kinds in types.METHOD_TO_TYPES.items() if kinds[1] is None
)


def _watched_changes(params: object) -> list[tuple[str, int]] | None:
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


def _describe(message: dict[str, Any]) -> str:
    method = message.get("method")
    if method is None:
        return f"a response (id {message.get('id')!r})"
    return f"{method!r}" + (f" (id {message['id']!r})" if "id" in message else "")


def _why(exc: Exception) -> str:
    """One line on why pygls could not read a message (cattrs says where, not a traceback)."""
    from cattrs import ClassValidationError, transform_error

    cause = exc.__cause__
    if isinstance(cause, ClassValidationError):
        return f"{exc}: " + "; ".join(transform_error(cause)[:3])
    return f"{type(exc).__name__}: {exc}"


def _watchable(fd: int) -> bool:
    """Whether the event loop's selector can watch `fd`: epoll refuses /dev/null and regular
    files (EPERM), which asyncio's pipe transport takes for pipes and then never reads."""
    import selectors

    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def _quiet_when_cancelled(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """While the server closes, the handlers still awaiting the client (a watcher
    registration, a pull) are cancelled, and pygls' callback re-raises each CancelledError:
    that is the end of the server, not an error worth a traceback."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


class _NoDeserializeTraceback(logging.Filter):
    """pygls logs a message it cannot deserialize with the whole traceback; `dispatch` logs
    one line for it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


class _CancelRaceAtDebug(logging.Filter):
    """A client cancels a request the server has already answered: a race LSP expects, which
    pygls logs as a warning (editors show the server's stderr as errors). It is logged at
    debug level instead."""

    MESSAGE = 'Cancel notification for unknown message id "%s"'

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == self.MESSAGE and record.levelno == logging.WARNING:
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return True


def _saved_uri(params: object) -> str | None:
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

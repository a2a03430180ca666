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
import contextlib
import json
import logging
import os
import sys
import threading
from typing import Any, BinaryIO, Callable, Protocol
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcMethodNotFound,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from lsp_verify.logs import one_line
from lsp_verify.lsp import stopping
from lsp_verify.lsp.framing import LARGE_MESSAGE, Framing, affordable, pump
from lsp_verify.lsp.inflight import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_NOT_INITIALIZED,
    Commands,
    Outgoing,
    bounded,
)
from lsp_verify.results.diagnostics import json_bytes

log = logging.getLogger("lsp_verify")


class Handlers(Protocol):
    """What the shortcuts hand over to, and what ends with the transport."""

    closing: bool

    def on_save(self, uri: str) -> None: ...
    def on_watched(self, changes: list[tuple[str, int]]) -> None: ...
    def on_progress_cancel(self, token: str) -> None: ...
    async def close_all(self) -> None: ...


# How long a stop may take. The runs are killed within CLOSE_S; the process is gone within
# FORCE_EXIT_S whatever else is pending (SPEC 4: nothing the server started outlives it).
CLOSE_S = 1.0
FORCE_EXIT_S = 1.6
SHUTDOWN_GRACE_S = 0.2  # for commands about to answer when shutdown arrives


class Transport:
    def __init__(self, server: LanguageServer, handlers: Handlers) -> None:
        self.server = server
        self.handlers = handlers
        self.shutdown_requested = False
        self.initialize_seen = False
        self.initialized_seen = False
        self.client_gone = False
        self.outgoing = Outgoing(self.send_raw, _unstructure(server))
        self.commands = Commands(self.send_raw, server.protocol.fm.commands.get)
        self._closed: asyncio.Future[int | None] | None = None
        self._shutdown: asyncio.Task[None] | None = None
        self._said_not_json = False
        self._pygls_requests: set[Any] = set()  # ids of the client's requests pygls runs
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
            and self.initialize_seen
        ):
            uri = _saved_uri(message.get("params"))
            if uri is not None:
                if not self.shutdown_requested:
                    self._hand_over(self.handlers.on_save, uri)
                return True
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(method, (str, type(None)))
            or not _valid_id(message.get("id"))
        ):
            log.error("a message from the client is not JSON-RPC 2.0: ignored")
            if isinstance(message, dict) and "method" in message and "id" in message:
                # JSON-RPC: an id that cannot be read is answered as null.
                rid = message["id"] if _valid_id(message["id"]) else None
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
            raise SystemExit(0 if self.shutdown_requested else 1)
        if self.shutdown_requested:
            # LSP: after shutdown, requests fail with InvalidRequest and notifications
            # are dropped.
            if is_request:
                self._answer_error(rid, INVALID_REQUEST, f"{method}: the server is shut down")
            return True
        if not self._lifecycle_allows(method, rid, is_request):
            return True
        if method == types.INITIALIZE:
            _usable_initialize(message.get("params"))
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
            if method in _NOTIFICATIONS:
                text = f"{method} is a notification, not a request"
                self._answer_error(rid, METHOD_NOT_FOUND, text)
                return True
            if method == types.SHUTDOWN:
                self.shutdown_requested = True
                self._shutdown = asyncio.get_running_loop().create_task(self._shut_down(rid))
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
            changes = _watched_changes(params)
            if changes is not None:
                self._hand_over(self.handlers.on_watched, changes)
                return True
        elif method == types.TEXT_DOCUMENT_DID_CHANGE and not self._is_open(message):
            return True
        return self._to_pygls(message, method)

    def _lifecycle_allows(self, method: str, rid: Any, is_request: bool) -> bool:
        """LSP's order: nothing but `initialize` (and `exit`) before it, `initialize` and
        `initialized` once each."""
        if method == types.INITIALIZE:
            if self.initialize_seen or not is_request:
                log.warning("initialize again, or as a notification: refused")
                if is_request:
                    self._answer_error(rid, INVALID_REQUEST, "initialize was received already")
                return False
            self.initialize_seen = True
            return True
        if not self.initialize_seen:
            if is_request:
                self._answer_error(rid, SERVER_NOT_INITIALIZED, f"{method}: not initialized yet")
            else:
                log.warning("%s before initialize: ignored", method)
            return False
        if method == types.INITIALIZED and not is_request:
            if self.initialized_seen:
                log.warning("initialized received again: ignored")
                return False
            self.initialized_seen = True
        return True

    def _response(self, message: dict[str, Any]) -> bool:
        """An answer to one of the server's requests; one to no request is dropped unread."""
        if self.outgoing.answer(message):
            return True
        if message.get("id") in self.server.protocol._request_futures:
            return self._to_pygls(message, None)
        log.warning("%s from the client answers no request: ignored", _describe(message))
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
            log.error("%s from the client: %s", _describe(message), _why(exc))
            if method == types.INITIALIZE:
                self.initialize_seen = False  # not initialized: the client may try again
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

    async def _shut_down(self, rid: Any) -> None:
        """`shutdown`: stop every run, give up every wait on the client, answer every pending
        request (as cancelled, when it cannot finish at once), then answer shutdown."""
        self.handlers.closing = True
        await bounded(self.handlers.close_all(), CLOSE_S, "stopping the runs")
        self.outgoing.stop()
        await self.commands.finish(SHUTDOWN_GRACE_S)
        await self._cancel_pygls_requests()
        self.send_raw({"jsonrpc": "2.0", "id": rid, "result": None})

    def _note_pygls_request(self, rid: Any) -> None:
        requests = self._pygls_requests
        if len(requests) >= 256:  # forget those pygls has answered
            futures = self.server.protocol._request_futures
            requests.intersection_update(futures)
        requests.add(rid)

    async def _cancel_pygls_requests(self) -> None:
        """The client's requests pygls runs (pulls, code actions) that are still waiting; not
        its notification handlers (pygls would raise their CancelledError in a callback)."""
        futures = self.server.protocol._request_futures
        pending: list[Any] = [futures.get(rid) for rid in self._pygls_requests]
        tasks: list[asyncio.Future[Any]] = [
            f for f in pending if isinstance(f, asyncio.Future) and not f.done()
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(asyncio.TimeoutError):
                gathered = asyncio.gather(*tasks, return_exceptions=True)
                await asyncio.wait_for(gathered, SHUTDOWN_GRACE_S)
            await asyncio.sleep(0)  # pygls answers each in a done-callback

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
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(1)

    def serve(self) -> int:
        """Serve on stdin and stdout until `exit`, the end of input or a signal; the exit
        code. A second signal while the server stops is ignored (the stop is bounded), and
        none can cut the interpreter's own end short."""
        code = 0
        try:
            asyncio.run(self._serve())
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except KeyboardInterrupt:
            code = 130
        finally:
            stopping.ignore_stop_signals()
        return code

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        closed: asyncio.Future[int | None] = loop.create_future()
        self._closed = closed
        stopping.on_stop_signals(loop, closed)
        if sys.platform == "linux":
            from lsp_verify.running.reaper import watch_children

            watch_children(loop)
        self.server.protocol.set_writer(_Writer(sys.stdout.buffer, self.gone))
        pygls_log = logging.getLogger("pygls.protocol.json_rpc")
        pygls_log.addFilter(_NoDeserializeTraceback())
        pygls_log.addFilter(_CancelRaceAtDebug())
        pygls_log.addFilter(_OneLine())
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
        finally:
            # exit, stdin EOF, a signal, the client gone: nothing the server started may
            # outlive it, and nothing pending may keep it alive.
            self.handlers.closing = True
            stopping.ignore_stop_signals(loop)
            stopping.force_exit_after(FORCE_EXIT_S, code or 0)
            loop.set_exception_handler(_quiet_when_cancelled)
            if self._shutdown is not None:
                # A signal right behind shutdown (Claude Code's order): shutdown is answered.
                await bounded(self._shutdown, CLOSE_S, "answering shutdown")
            await bounded(self.handlers.close_all(), CLOSE_S, "stopping the runs")
            self.outgoing.stop()
            for task in list(self.commands._running.values()):
                task.cancel()
        if code is not None:
            raise SystemExit(code)

    def publish(self, uri: str, payloads: list[bytes]) -> None:
        """textDocument/publishDiagnostics of diagnostics serialised already."""
        self.write_framed(publish_message(uri, payloads))


class VerifyProtocol(LanguageServerProtocol):
    """pygls' protocol, except that an error answer never carries the server's traceback
    (its file paths) to the client: the log has the one line that says what failed."""

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None and getattr(error, "data", None) is not None:
            error = type(error)(code=error.code, message=error.message)
        super()._send_response(msg_id, result=result, error=error)


class _Writer:
    """stdout, as pygls and the transport write to it. A client that has gone (a broken
    pipe) ends the server once, rather than making every later write raise in whatever
    callback it happens (a publish after a run, a log line)."""

    def __init__(self, stdout: BinaryIO, gone: Callable[[], None]) -> None:
        self._stdout = stdout
        self._gone = gone
        self._broken = False

    def write(self, data: bytes) -> None:
        if self._broken:
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            # ValueError: stdout was closed under us.
            self._broken = True
            self._gone()
        except OSError as exc:
            log.error("writing to the client failed: %s", exc)

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stdout.close()


def _unstructure(server: LanguageServer) -> Callable[[Any], Any]:
    """lsprotocol values as JSON, with pygls' own converter (made once, at its start)."""
    converter = server.protocol._converter
    return converter.unstructure


# Methods LSP defines as notifications: a request (with an id) of one is MethodNotFound.
_NOTIFICATIONS = frozenset(
    method for method, kinds in types.METHOD_TO_TYPES.items() if kinds[1] is None
)


def _valid_id(rid: object) -> bool:
    """A JSON-RPC id: a string, an integer (not a boolean) or null."""
    return (
        rid is None or isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))
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


class _OneLine(logging.Filter):
    """pygls logs a handler that failed with its whole traceback; one line says it (editors
    show the server's stderr as errors)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.getMessage()}: {one_line(record.exc_info[1])}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def _usable_initialize(params: object) -> None:
    """initialize params without the root and folder URIs that cannot be parsed (pygls
    fails the whole initialize on `file://[::1/x`) or that hold a NUL: each is one line in
    the log, and the server starts without it."""
    if not isinstance(params, dict):
        return
    for key in ("rootUri", "rootPath"):
        value = params.get(key)
        if isinstance(value, str) and not _usable_uri(value):
            log.warning("initialize: %s %r cannot be used: ignored", key, value[:200])
            params[key] = None
    folders = params.get("workspaceFolders")
    if isinstance(folders, list):
        for folder in list(folders):
            uri = folder.get("uri") if isinstance(folder, dict) else None
            if isinstance(uri, str) and not _usable_uri(uri):
                log.warning("initialize: workspace folder %r cannot be used: ignored", uri[:200])
                folders.remove(folder)


def _usable_uri(uri: str) -> bool:
    from urllib.parse import urlparse

    try:
        urlparse(uri)
    except ValueError:
        return False
    return "\0" not in uri and "\0" not in unquote(uri)


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

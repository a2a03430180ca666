"""Serving stdio: the read loop on the event loop, the writer to stdout, and the pygls
plumbing around them (its protocol without tracebacks in answers, its log lines as one line).
`serve` runs until `exit`, the end of input, a signal or the client gone, then stops every
run within a bound (see stopping.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from concurrent.futures import Future
from functools import partial
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, BinaryIO, Callable

from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from lsp_verify.logs import one_line
from lsp_verify.lsp import stopping
from lsp_verify.lsp.framing import Framing, pump
from lsp_verify.lsp.inflight import bounded

if TYPE_CHECKING:
    from lsp_verify.lsp.transport import Transport

log = logging.getLogger("lsp_verify")


def serve(transport: Transport) -> int:
    """Serve on stdin and stdout until `exit`, the end of input or a signal; the exit
    code. A second signal while the server stops is ignored (the stop is bounded), and
    none can cut the interpreter's own end short."""
    code = 0
    try:
        asyncio.run(_serve(transport))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        code = 130
    finally:
        stopping.ignore_stop_signals()
    return code


async def _serve(transport: Transport) -> None:
    loop = asyncio.get_running_loop()
    closed: asyncio.Future[int | None] = loop.create_future()
    transport.closed = closed
    stopping.on_stop_signals(loop, closed)
    if sys.platform == "linux":
        from lsp_verify.running.reaper import watch_children

        watch_children(loop)
    transport.server.protocol.set_writer(Writer(sys.stdout.buffer, transport.gone))
    pygls_log = logging.getLogger("pygls.protocol.json_rpc")
    pygls_log.addFilter(NoDeserializeTraceback())
    pygls_log.addFilter(CancelRaceAtDebug())
    pygls_log.addFilter(OneLine())
    framing = Framing(transport, closed)
    stdin = sys.stdin.buffer
    code: int | None = None
    try:
        try:
            if os.path.sameopenfile(stdin.fileno(), sys.stdout.fileno()):
                raise ValueError("stdin is stdout")
            if not watchable(stdin.fileno()):
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
        transport.handlers.closing = True
        stopping.ignore_stop_signals(loop)
        stopping.force_exit_after(stopping.FORCE_EXIT_S, code or 0)
        loop.set_exception_handler(quiet_when_cancelled)
        if transport.shutdown is not None:
            # A signal right behind shutdown (Claude Code's order): shutdown is answered.
            await bounded(transport.shutdown, stopping.CLOSE_S, "answering shutdown")
        await bounded(transport.handlers.close_all(), stopping.CLOSE_S, "stopping the runs")
        transport.outgoing.stop()
        transport.commands.cancel_all()
    if code is not None:
        raise SystemExit(code)


def _minor(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split(".")[:2] if part.isdigit())


# pygls 2.1 keeps the future of every notification's handler, and of every step of a
# generator handler (its own didOpen, didChange, didClose, didChangeWorkspaceFolders,
# initialized, executeCommand), in `_request_futures` under a fresh uuid that nothing ever
# pops: about 1.8 kB for each keystroke (didChange), for the life of the server. Written for
# the 2.1 series the pin admits (`pygls>=2.1.1,<2.2`); drop `_forget_when_done` and this
# flag once pygls pops those entries itself (the unit test that counts them says when).
PYGLS_KEEPS_HANDLER_FUTURES = _minor(version("pygls")) == (2, 1)


class VerifyProtocol(LanguageServerProtocol):
    """pygls' protocol, except that an error answer never carries the server's traceback
    (its file paths) to the client: the log has the one line that says what failed; and
    that what pygls runs for a notification is forgotten once it is done."""

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if PYGLS_KEEPS_HANDLER_FUTURES and not self._answers_request(callback):
            self._forget_when_done(msg_id)

    def _answers_request(self, callback: Any) -> bool:
        """A client's request: pygls pops its future when it answers it."""
        return isinstance(callback, partial) and callback.func == self._send_handler_result

    def _forget_when_done(self, msg_id: Any) -> None:
        future = self._request_futures.get(msg_id)
        if future is None:
            return

        def forget(done: Future[Any] | asyncio.Future[Any]) -> None:
            if self._request_futures.get(msg_id) is done:
                del self._request_futures[msg_id]

        # A future that is done already (a synchronous step) calls `forget` at once.
        future.add_done_callback(forget)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is not None and getattr(error, "data", None) is not None:
            error = type(error)(code=error.code, message=error.message)
        super()._send_response(msg_id, result=result, error=error)


class Writer:
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


def unstructure(server: LanguageServer) -> Callable[[Any], Any]:
    """lsprotocol values as JSON, with pygls' own converter (made once, at its start)."""
    converter = server.protocol._converter
    return converter.unstructure


def watchable(fd: int) -> bool:
    """Whether the event loop's selector can watch `fd`: epoll refuses /dev/null and regular
    files (EPERM), which asyncio's pipe transport takes for pipes and then never reads."""
    import selectors

    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def quiet_when_cancelled(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """While the server closes, the handlers still awaiting the client (a watcher
    registration, a pull) are cancelled, and pygls' callback re-raises each CancelledError:
    that is the end of the server, not an error worth a traceback."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


class NoDeserializeTraceback(logging.Filter):
    """pygls logs a message it cannot deserialize with the whole traceback; `dispatch` logs
    one line for it instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Unable to deserialize message")


class CancelRaceAtDebug(logging.Filter):
    """A client cancels a request the server has already answered: a race LSP expects, which
    pygls logs as a warning (editors show the server's stderr as errors). It is logged at
    debug level instead."""

    MESSAGE = 'Cancel notification for unknown message id "%s"'

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == self.MESSAGE and record.levelno == logging.WARNING:
            record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return True


class OneLine(logging.Filter):
    """pygls logs a handler that failed with its whole traceback; one line says it (editors
    show the server's stderr as errors)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.getMessage()}: {one_line(record.exc_info[1])}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True

"""Requests in flight, both ways, and how each one ends. No pygls.

The server's requests to the client (the approval question, settings, progress, watchers,
documents to show) go through `Outgoing.request`: each has a bound, is withdrawn with
`$/cancelRequest` when its waiter gives up, and is settled as refused when the server stops.
An answer is handed over as the JSON the client sent, for the caller to check its shape: an
answer of the wrong shape is a refusal, never a waiter that waits forever.

The client's commands (`workspace/executeCommand`) run as tasks of their own (`Commands`):
each is answered exactly once, forgotten once answered, cancelled by `$/cancelRequest` and by
shutdown, and a failure is one log line and an error that carries no server paths.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Awaitable, Mapping
from typing import Any, Callable

from lsp_verify.logs import one_line

log = logging.getLogger("lsp_verify")
NO_HANDLER = -32601  # JSON-RPC's MethodNotFound: what vscode-jsonrpc answers an unhandled request

# JSON-RPC and LSP error codes.
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800

Send = Callable[[dict[str, Any]], None]
Handler = Callable[..., Any]


class Refused(Exception):
    """The client did not give an answer: it answered with an error, did not answer in time,
    or the server stopped waiting (it is shutting down, or the waiter was cancelled).
    `unhandled`: the client said it has no handler for the method (MethodNotFound) or never
    answered within the time given; it will not answer the next one either."""

    def __init__(self, why: str, unhandled: bool = False) -> None:
        super().__init__(why)
        self.unhandled = unhandled


class Outgoing:
    """The server's requests to the client that wait for an answer."""

    def __init__(self, send: Send, unstructure: Callable[[Any], Any]) -> None:
        self._send = send
        self._unstructure = unstructure
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self.stopped = False

    def __len__(self) -> int:
        return len(self._waiting)

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and wait at most `timeout` seconds for its answer: the `result` as
        JSON. Raises Refused for an error answer, no answer in time, or a stopping server."""
        return await self.sent(method, params, timeout)

    def sent(self, method: str, params: Any, timeout: float) -> asyncio.Future[Any]:
        """`request`, written now (a command's answer must not reach the client before the
        request it made), as a future of the answer. Cancelling the future withdraws the
        request; so does its timeout."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.stopped:
            future.set_exception(Refused(f"{method}: the server is shutting down"))
            return future
        rid = f"verify-{uuid.uuid4().hex}"
        self._waiting[rid] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = self._unstructure(params)
        self._send(message)
        timer = loop.call_later(
            timeout, _expire, future, f"{method}: no answer within {timeout:g} s"
        )
        future.add_done_callback(lambda done: self._settled(rid, done, timer))
        return future

    def _settled(self, rid: str, future: asyncio.Future[Any], timer: asyncio.TimerHandle) -> None:
        timer.cancel()
        if not future.cancelled():
            future.exception()  # seen here: nobody may be left to await a refusal
        if self._waiting.pop(rid, None) is not None and not self.stopped:
            # Given up on (a timeout, a cancelled waiter): the client may drop the request.
            self._send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})

    def answer(self, message: Mapping[str, Any]) -> bool:
        """A response from the client: True when it answers one of these requests."""
        rid = message.get("id")
        future = self._waiting.pop(rid, None) if isinstance(rid, str) else None
        if future is None:
            return False
        if future.done():
            return True
        error = message.get("error")
        if error is not None or "result" not in message:
            what = error.get("message") if isinstance(error, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            refused = Refused(f"the client answered with an error: {what!r}", code == NO_HANDLER)
            future.set_exception(refused)
        else:
            future.set_result(message["result"])
        return True

    def stop(self) -> None:
        """The server stops: every waiter is told at once that no answer will come."""
        self.stopped = True
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(Refused("the server is shutting down"))


async def _call(handler: Handler, arguments: list[Any] | None) -> Any:
    result = handler(*(arguments or []))
    return (await result) if inspect.isawaitable(result) else result


def _expire(future: asyncio.Future[Any], why: str) -> None:
    if not future.done():
        future.set_exception(Refused(why, unhandled=True))


class Commands:
    """The client's `workspace/executeCommand` requests, each run as a task of its own."""

    def __init__(self, send: Send, lookup: Callable[[str], Handler | None]) -> None:
        self._send = send
        self._lookup = lookup
        self._running: dict[int | str, asyncio.Task[None]] = {}

    def __len__(self) -> int:
        return len(self._running)

    def start(self, rid: int | str, params: object) -> None:
        name = params.get("command") if isinstance(params, dict) else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        if not isinstance(name, str) or not isinstance(arguments, (list, type(None))):
            log.warning("workspace/executeCommand (id %r): params of the wrong shape", rid)
            self._error(rid, INVALID_PARAMS, "params must be {command: string, arguments?: []}")
            return
        handler = self._lookup(name)
        if handler is None:
            log.warning("workspace/executeCommand (id %r): no command %r", rid, name[:200])
            self._error(rid, INVALID_PARAMS, f"no such command: {name[:200]!r}")
            return
        task = asyncio.get_running_loop().create_task(_call(handler, arguments))
        self._running[rid] = task
        # Answered from the task's end, however it ends: a task cancelled before its first
        # step never runs a line of its own.
        task.add_done_callback(lambda done: self._answer(rid, name, done))

    def cancel(self, rid: object) -> bool:
        """$/cancelRequest: True when `rid` names a command running here."""
        task = self._running.get(rid) if isinstance(rid, (int, str)) else None
        if task is None:
            return False
        task.cancel()
        return True

    def cancel_all(self) -> None:
        """The server ends: every command still running is cancelled (and so answered)."""
        for task in list(self._running.values()):
            task.cancel()

    async def finish(self, grace: float) -> None:
        """Shutdown: let what is about to answer answer, then cancel the rest (each is
        answered as cancelled)."""
        tasks = list(self._running.values())
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=grace)

    def _answer(self, rid: int | str, name: str, task: asyncio.Task[Any]) -> None:
        if self._running.get(rid) is task:
            del self._running[rid]
        if task.cancelled():
            self._error(rid, REQUEST_CANCELLED, f"{name} was cancelled")
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s failed: %s", name, one_line(exc))
            self._error(rid, INTERNAL_ERROR, f"{name} failed: {type(exc).__name__}")
            return
        try:
            self._send({"jsonrpc": "2.0", "id": rid, "result": task.result()})
        except (TypeError, ValueError) as error:  # a result that is not JSON: a bug of ours
            log.error("%s answered with what is not JSON: %s", name, one_line(error))
            self._error(rid, INTERNAL_ERROR, f"{name} failed: its result is not JSON")

    def _error(self, rid: int | str, code: int, message: str) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


async def bounded(work: Awaitable[Any], seconds: float, what: str) -> None:
    """Wait for `work` at most `seconds`; past that it goes on unwatched (logged). A
    cancellation of the waiter does not cancel `work`."""
    task = asyncio.ensure_future(work)
    try:
        await asyncio.wait_for(asyncio.shield(task), seconds)
    except asyncio.TimeoutError:
        log.warning("%s took over %g s: going on without it", what, seconds)
    except Exception as exc:
        log.error("%s failed: %s", what, one_line(exc))

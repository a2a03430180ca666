"""How the server process stops: the signals that ask it to, and the deadline it keeps.

SIGTERM and SIGHUP (an editor closing the server; the keeper gone, through the parent-death
signal) and SIGINT (Ctrl-C in a terminal) end the serve loop as the end of input does, with
status 0 (130 for SIGINT, as shells report an interrupted program). Once the stop has begun,
these signals are ignored: the stop is bounded, and a second signal must not cut it short
half way (a CancelledError traceback from the cleanup, or death by the signal: status 143).

`force_exit_after` is the bound that holds whatever is pending on the event loop: a daemon
thread that, if the process is still there after the deadline, kills the groups of the steps
still running and ends the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from lsp_verify.lsp.inflight import bounded

if TYPE_CHECKING:
    from lsp_verify.lsp.transport import Transport

# How long a stop may take. The runs are killed within CLOSE_S; the process is gone within
# FORCE_EXIT_S whatever else is pending (SPEC 4: nothing the server started outlives it).
CLOSE_S = 1.0
FORCE_EXIT_S = 1.6
SHUTDOWN_GRACE_S = 0.2  # for commands about to answer when shutdown arrives


def on_stop_signals(loop: asyncio.AbstractEventLoop, closed: asyncio.Future[int | None]) -> None:
    """Let SIGTERM, SIGHUP and SIGINT end the serve loop (`closed` gets the exit status)."""
    if sys.platform == "win32":
        return

    def stop(code: int) -> None:
        if not closed.done():
            closed.set_result(code)

    for signum, code in ((signal.SIGTERM, 0), (signal.SIGHUP, 0), (signal.SIGINT, 130)):
        loop.add_signal_handler(signum, stop, code)


def ignore_stop_signals(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """From now on SIGTERM, SIGHUP and SIGINT do nothing: the process is on its way out.
    With the loop that handled them, its handlers go first (closing the loop would put the
    default actions back)."""
    if sys.platform == "win32":
        return
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        if loop is not None:
            loop.remove_signal_handler(signum)
        signal.signal(signum, signal.SIG_IGN)


def force_exit_after(seconds: float, code: int) -> None:
    """If the process still runs `seconds` from now, kill what its runs left and end it with
    `code`. The normal stop ends well before; this holds when something it waits for never
    comes."""

    def force() -> None:
        from lsp_verify.running.reaper import kill_steps

        kill_steps()
        try:
            sys.stderr.write(f"lsp-verify: stopping took over {seconds:g} s; exiting now\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(code)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.name = "stop-deadline"
    timer.start()


async def shut_down(transport: Transport, rid: Any) -> None:
    """`shutdown`: stop every run, give up every wait on the client, answer every pending
    request (as cancelled, when it cannot finish at once), then answer shutdown."""
    transport.handlers.closing = True
    await bounded(transport.handlers.close_all(), CLOSE_S, "stopping the runs")
    transport.outgoing.stop()
    await transport.commands.finish(SHUTDOWN_GRACE_S)
    await _cancel_pygls_requests(transport)
    transport.send_raw({"jsonrpc": "2.0", "id": rid, "result": None})


async def _cancel_pygls_requests(transport: Transport) -> None:
    """The client's requests pygls runs (pulls, code actions) that are still waiting; not
    its notification handlers (pygls would raise their CancelledError in a callback)."""
    futures = transport.server.protocol._request_futures
    pending: list[Any] = [futures.get(rid) for rid in transport.pygls_requests]
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

"""A run's work-done progress (`$/progress`), as the server reports it to the client.

The server asks the client to create the token (`window/workDoneProgress/create`) and starts
the command at once: waiting for that answer would be part of every save's latency. LSP lets
the server use the token only once the client has answered, and not at all when it answered
with an error (SPEC section 5), so until the answer the run's progress is held: only its
latest output line is kept. On a success the begin goes out then, with that line in a report;
on an error, a cancelled request (shutdown) or no answer by the end of the run, nothing is
sent on the token, ever. A run that ends before the answer withdraws its request there
(`$/cancelRequest`; a late answer then answers nothing): the client's side of the token stays
unused, which LSP allows, and nothing is kept per run for a client that never answers.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types

from lsp_verify.lsp.inflight import Refused

if TYPE_CHECKING:
    from lsp_verify.lsp.server import VerifyServer

PROGRESS_INTERVAL = 0.2  # at most five progress reports a second
CREATE_S = 600.0  # the longest a create waits for its answer (the run's end ends it sooner)

# asked: create sent, unanswered; shown: begin sent; silent: nothing may be sent any more.
State = Literal["asked", "shown", "silent"]


class RunProgress:
    """A run's work-done progress: begin with the command, the latest output line at most
    every PROGRESS_INTERVAL, end with the outcome. Cancellable from the client."""

    def __init__(self, server: VerifyServer, command: str, cancel: asyncio.Event) -> None:
        self.server = server
        self.token = f"verify-{uuid.uuid4().hex}"
        self.command = command
        self.state: State = "asked"
        self.last = 0.0
        self.latest: str | None = None  # the newest line while the create is unanswered
        server.cancels[self.token] = cancel
        self._create = server.transport.outgoing.sent(
            types.WINDOW_WORK_DONE_PROGRESS_CREATE,
            types.WorkDoneProgressCreateParams(token=self.token),
            CREATE_S,
        )
        self._waiter = asyncio.ensure_future(self._answered(self._create))

    def line(self, text: str) -> None:
        if not text.strip() or self.state == "silent":
            return
        if self.state == "asked":
            self.latest = text
            return
        now = asyncio.get_running_loop().time()
        if now - self.last >= PROGRESS_INTERVAL and not self.server.state.closing:
            self.last = now
            self._send(types.WorkDoneProgressReport(message=text[:200], cancellable=True))

    def end(self, outcome: str) -> None:
        self.server.cancels.pop(self.token, None)
        state, self.state = self.state, "silent"
        self._create.cancel()  # an unanswered create is withdrawn
        self._waiter.cancel()
        if state == "shown" and not self.server.state.closing:
            self._send(types.WorkDoneProgressEnd(message=outcome))

    async def _answered(self, answer: asyncio.Future[Any]) -> None:
        """The client's answer to the create; a refusal (an error answer, the server
        stopping) leaves the token unused for good."""
        try:
            await answer
        except Refused:
            if self.state == "asked":
                self.state = "silent"
            return
        if self.state != "asked" or self.server.state.closing:
            return
        self.state = "shown"
        self._send(
            types.WorkDoneProgressBegin(title="verify", message=self.command, cancellable=True)
        )
        latest, self.latest = self.latest, None
        if latest is not None:
            self.last = asyncio.get_running_loop().time()
            self._send(types.WorkDoneProgressReport(message=latest[:200], cancellable=True))

    def _send(
        self,
        value: types.WorkDoneProgressBegin
        | types.WorkDoneProgressReport
        | types.WorkDoneProgressEnd,
    ) -> None:
        self.server.protocol.notify(
            types.PROGRESS, types.ProgressParams(token=self.token, value=value)
        )

"""A run's work-done progress (`$/progress`), as the server reports it to the client."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from lsp_verify.server import VerifyServer

PROGRESS_INTERVAL = 0.2  # at most five progress reports a second


class RunProgress:
    """A run's work-done progress: begin with the command, the latest output line at most
    every PROGRESS_INTERVAL, end with the outcome. Cancellable from the client."""

    def __init__(self, server: VerifyServer, command: str, cancel: asyncio.Event) -> None:
        self.server = server
        self.token = f"verify-{uuid.uuid4().hex}"
        self.last = 0.0
        server.cancels[self.token] = cancel
        progress = server.work_done_progress
        # Not awaited: the command starts at once; the client sees create before begin anyway.
        progress.create(self.token)
        progress.begin(
            self.token,
            types.WorkDoneProgressBegin(title="verify", message=command, cancellable=True),
        )

    def line(self, text: str) -> None:
        now = asyncio.get_running_loop().time()
        if text.strip() and now - self.last >= PROGRESS_INTERVAL and not self.server.verify.closing:
            self.last = now
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=text[:200], cancellable=True)
            )

    def end(self, outcome: str) -> None:
        self.server.cancels.pop(self.token, None)
        self.server.work_done_progress.tokens.pop(self.token, None)
        if not self.server.verify.closing:
            self.server.work_done_progress.end(
                self.token, types.WorkDoneProgressEnd(message=outcome)
            )

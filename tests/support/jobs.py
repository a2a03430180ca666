"""A stand-in for a folder's run job: runs that last until released (or a set time), recorded."""

from __future__ import annotations

import asyncio

from lsp_verify.record import Record
from lsp_verify.workspace.verifier import RunRequest


class FakeJob:
    """A job whose runs last until released (or `duration` seconds), recording each request."""

    def __init__(self, duration: float | None = None) -> None:
        self.duration = duration
        self.requests: list[RunRequest] = []
        self.release = asyncio.Event()
        self.active = 0
        self.max_active = 0

    async def __call__(self, request: RunRequest) -> Record:
        self.requests.append(request)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            waiters = [asyncio.ensure_future(request.cancel.wait())]
            if self.duration is None:
                waiters.append(asyncio.ensure_future(self.release.wait()))
            else:
                waiters.append(asyncio.ensure_future(asyncio.sleep(self.duration)))
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for w in waiters:
                w.cancel()
            outcome = "cancelled" if request.cancel.is_set() else "failed"
            number = len(self.requests)
            return Record.not_started(request.folder, request.trigger, outcome, f"run {number}")
        finally:
            self.active -= 1

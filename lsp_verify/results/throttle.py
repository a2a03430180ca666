"""Batching on the event loop: `flush` runs at most once every `interval` seconds."""

from __future__ import annotations

import asyncio
from typing import Callable


class Throttle:
    """`poke` asks for a flush. With `eager`, the first poke after a quiet interval flushes
    at once (the first news goes out without delay); otherwise each flush waits `interval`
    after the poke that asked for it, gathering what comes meanwhile."""

    def __init__(self, interval: float, flush: Callable[[], None], *, eager: bool) -> None:
        self._interval = interval
        self._flush = flush
        self._eager = eager
        self._timer: asyncio.TimerHandle | None = None
        self._last = -float("inf")

    def poke(self) -> None:
        if self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._last + self._interval - loop.time() if self._eager else self._interval
        if wait <= 0:
            self.now()
        else:
            self._timer = loop.call_later(wait, self.now)

    def now(self) -> None:
        """Flush at once (and drop the one that was scheduled)."""
        self.cancel()
        self._last = asyncio.get_running_loop().time()
        self._flush()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

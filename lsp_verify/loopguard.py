"""The loop guard: files a folder's own runs write can cause at most one more run.

A test run writes files (reports, coverage data, snapshots). Those that the ignore rules do
not cover come back as watched-file changes. A change is an *echo* when its file is not
open in the client and was last modified while one of the folder's runs was going: it may
be that run's own output. An echo still triggers (the agent may have written it during the
run, and a change during a run is never dropped), and the run it starts is marked as
started by echoes only. An echo of such a run is dropped: that is where a command that
rewrites its own inputs would loop. Evidence, not a clock: no time window after a run.

A dropped echo is remembered by URI; should the client open or change that document
after all (opencode reports a new file as `Created` before its `didOpen`), it was the
client's file, and it triggers.
"""

from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["trigger", "echo", "drop"]
MAX_DROPPED = 64


@dataclass
class RunSpan:
    """When one run's process was going (end None while it runs), and whether only echoes
    started it."""

    start: float
    end: float | None
    echo: bool


class LoopGuard:
    def __init__(self) -> None:
        self.spans: deque[RunSpan] = deque(maxlen=8)
        self._next: bool | None = None  # do only echoes ask for the next run so far?
        self._dropped: dict[str, None] = {}  # URIs of dropped echoes, oldest first

    def note(self, echo: bool) -> None:
        """A trigger for the folder's next run: an echo or not."""
        self._next = echo if self._next is None else (self._next and echo)

    def take(self) -> bool:
        """The run that starts now: was it asked for by echoes only?"""
        echo, self._next = self._next is True, None
        return echo

    def begin(self, echo: bool) -> RunSpan:
        span = RunSpan(time.time(), None, echo)
        self.spans.append(span)
        return span

    def verdict(self, path: str) -> Verdict:
        """What a change of `path` (not open in the client) is, by its modification time."""
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return "trigger"
        for span in reversed(self.spans):
            if span.start <= mtime and (span.end is None or mtime <= span.end):
                return "drop" if span.echo else "echo"
        return "trigger"

    def dropped(self, uri: str) -> None:
        self._dropped.pop(uri, None)
        self._dropped[uri] = None
        while len(self._dropped) > MAX_DROPPED:
            del self._dropped[next(iter(self._dropped))]

    def reclaim(self, uri: str) -> bool:
        """The client opened or changed `uri`: was it dropped as an echo? (Then it triggers.)"""
        if uri in self._dropped:
            del self._dropped[uri]
            return True
        return False

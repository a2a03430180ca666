"""Located failures shown while the run goes, not only when it ends.

A matcher hands a problem to the collector the moment its block is complete (a pytest
failure section, a traceback, a compiler line). `LiveProblems` adds each to the verify layer
of its document, beside what the previous run left there, and publishes: the first at once,
later ones batched at most every `INTERVAL` seconds, so a run that prints thousands of
located lines costs a handful of publishes, never one per line. At most `limit` problems a
run are streamed (the collector keeps no more either).

The run's end replaces the layer as before (`Workspace._on_record`): `close` must be called
first, so that no batch lands after the final layer. A run that ends without a verdict
(cancelled, skipped) takes back what it streamed: `withdraw`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Callable

from lsp_verify.diagnostics import VERIFY, Diagnostics, Entry, LineText, located_entry
from lsp_verify.problems.base import Problem
from lsp_verify.uris import path_to_uri

INTERVAL = 0.2  # seconds between two batches of streamed problems
LIMIT = 200  # problems streamed per run at most: the collector's own limit


class LiveProblems:
    """The problems one run has streamed so far, and the batch not yet published."""

    def __init__(
        self,
        folder: str,
        diagnostics: Diagnostics,
        line_text: LineText,
        *,
        on_batch: Callable[[], None] = lambda: None,
        interval: float = INTERVAL,
        limit: int = LIMIT,
    ) -> None:
        self._folder = folder
        self._diagnostics = diagnostics
        self._line_text = line_text
        self._on_batch = on_batch
        self._interval = interval
        self._limit = limit
        self._pending: list[Problem] = []
        self._shown: list[tuple[str, Entry]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._last = -float("inf")
        self._seen = 0
        self._closed = False

    def add(self, problem: Problem) -> None:
        """A located problem the run's output just completed."""
        if self._closed or self._seen >= self._limit:
            return
        self._seen += 1
        self._pending.append(problem)
        if self._timer is not None:
            return
        loop = asyncio.get_running_loop()
        wait = self._last + self._interval - loop.time()
        if wait <= 0:
            self._flush()
        else:
            self._timer = loop.call_later(wait, self._flush)

    def close(self) -> None:
        """The run ended: nothing more is published from here, pending problems included."""
        self._closed = True
        self._pending = []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def withdraw(self) -> None:
        """Take back what was streamed (a run that ends without a verdict)."""
        changed: set[str] = set()
        for uri, entry in self._shown:
            kept = [e for e in self._diagnostics.entries(uri, VERIFY) if e is not entry]
            if self._diagnostics.set(uri, VERIFY, kept):
                changed.add(uri)
        self._shown = []
        for uri in sorted(changed):
            self._diagnostics.changed(uri)

    @property
    def streamed(self) -> int:
        return len(self._shown)

    def _flush(self) -> None:
        self._timer = None
        if self._closed:
            return
        self._last = asyncio.get_running_loop().time()
        batch, self._pending = self._pending, []
        changed: set[str] = set()
        for problem in batch:
            uri = path_to_uri(os.path.join(self._folder, problem.path))
            entry = located_entry(problem, uri, self._folder, self._line_text)
            current = self._diagnostics.entries(uri, VERIFY)
            if any(e.diagnostic == entry.diagnostic for e in current):
                continue  # the previous run showed the same failure: it is still there
            if self._diagnostics.set(uri, VERIFY, [*current, entry]):
                self._shown.append((uri, entry))
                changed.add(uri)
        for uri in sorted(changed):
            self._diagnostics.changed(uri)
        if changed:
            self._on_batch()

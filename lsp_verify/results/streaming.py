"""Located failures shown while the run goes, not only when it ends.

A matcher hands a problem to the collector the moment its block is complete (a pytest
failure section, a traceback, a compiler line). `LiveProblems` adds each to the verify layer
of its document, beside what the previous run left there, and publishes: the first at once,
later ones batched at most every `INTERVAL` seconds, so a run that prints thousands of
located lines costs a handful of publishes, never one per line. At most `limit` problems a
run are streamed (the collector keeps no more either).

The run's end replaces the layer as before (`Workspace._on_record`): `close` must be called
first, so that no batch lands after the final layer. A run that ends without a verdict
(cancelled, skipped) takes back what it streamed: `withdraw`. Positions count in `encoding`,
the server's `positionEncoding`, as the final layer's do. A document that `fresh` says was
edited since the run began gets nothing from it.
"""

from __future__ import annotations

import os
from typing import Callable

from lsp_verify.problems.base import Problem
from lsp_verify.results.diagnostics import VERIFY, Diagnostics, Entry, LineText, located_entry
from lsp_verify.results.positions import UTF16
from lsp_verify.results.throttle import Throttle
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
        fresh: Callable[[str], bool] = lambda uri: True,
        interval: float = INTERVAL,
        limit: int = LIMIT,
        related: bool = True,
        encoding: str = UTF16,
    ) -> None:
        self._folder = folder
        self._related = related
        self._encoding = encoding
        self._diagnostics = diagnostics
        self._line_text = line_text
        self._on_batch = on_batch
        self._fresh = fresh
        self._limit = limit
        self._pending: list[Problem] = []
        self._shown: list[tuple[str, Entry]] = []
        self._throttle = Throttle(interval, self._flush, eager=True)
        self._seen = 0
        self._closed = False

    def add(self, problem: Problem) -> None:
        """A located problem the run's output just completed."""
        if self._closed or self._seen >= self._limit:
            return
        self._seen += 1
        self._pending.append(problem)
        self._throttle.poke()

    def close(self) -> None:
        """The run ended: nothing more is published from here, pending problems included."""
        self._closed = True
        self._pending = []
        self._throttle.cancel()

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
        if self._closed:
            return
        batch, self._pending = self._pending, []
        changed: set[str] = set()
        for problem in batch:
            uri = path_to_uri(os.path.join(self._folder, problem.path))
            if not self._fresh(uri):
                continue  # edited since the run began: the run that saw the edit speaks
            entry = located_entry(
                problem, uri, self._folder, self._line_text, self._related, self._encoding
            )
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

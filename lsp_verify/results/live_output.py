"""A run's output, streamed to a client that asked for it (`liveOutput` initialization option).

`verify/output` notifications, in order, per run:
- `{"run", "folder", "kind": "begin", "phase", "command", "trigger"}`, before each phase
  (`quick`, the saved test file alone, then `full`), with the command as it runs;
- `{"run", "folder", "kind": "lines", "lines": [...]}`, batched at most every `INTERVAL`;
- `{"run", "folder", "kind": "end", "outcome", "exitCode", "durationMs", "omitted"}`.

Bounded whatever the command prints: each line is cut at `MAX_LINE` characters, a batch
carries at most `MAX_BATCH` characters and a run at most `MAX_RUN`; what does not fit is
counted, said in the stream (`[... N lines not shown ...]`, within the run's budget, then one
last notice) and in `omitted` at the end, never held in memory. The run record keeps the
tail, as before.
"""

from __future__ import annotations

from typing import Any, Callable

from lsp_verify.record import Record
from lsp_verify.results.throttle import Throttle

METHOD = "verify/output"
INTERVAL = 0.1  # seconds between two batches
MAX_LINE = 2_000  # characters of one line sent
MAX_BATCH = 64_000  # characters a batch carries at most
MAX_RUN = 2_000_000  # characters a run sends at most

Send = Callable[[dict[str, Any]], None]


class OutputStream:
    """One run's output on its way to the client."""

    _runs = 0

    def __init__(
        self,
        send: Send,
        folder: str,
        trigger: str,
        *,
        interval: float = INTERVAL,
        max_batch: int = MAX_BATCH,
        max_run: int = MAX_RUN,
    ) -> None:
        OutputStream._runs += 1
        self.run = OutputStream._runs
        self._send = send
        self._folder = folder
        self._max_batch = max_batch
        self._left = max_run
        self._batch: list[str] = []
        self._batch_size = 0
        self._omitted = 0
        self._omitted_said = 0
        self._full = False  # the run's budget is spent: one notice, then only the count
        self._full_said = False
        self._throttle = Throttle(interval, self._flush, eager=False)
        self._trigger = trigger
        self._closed = False

    def begin(self, phase: str, command: str) -> None:
        """A phase starts (`full`, or `quick` before it): its command as it runs."""
        if self._closed:
            return
        self._throttle.now()  # what the phase before printed comes first
        payload = {"kind": "begin", "phase": phase, "command": command, "trigger": self._trigger}
        self._emit(payload)

    def line(self, text: str) -> None:
        if self._closed:
            return
        text = text[:MAX_LINE]
        cost = len(text) + 1
        if cost > self._left:
            self._omitted += 1
            self._full = True
        elif self._batch_size + cost > self._max_batch:
            self._omitted += 1
        else:
            self._batch.append(text)
            self._batch_size += cost
            self._left -= cost
        self._throttle.poke()

    def end(self, record: Record) -> None:
        """The run ended: what is batched goes out, then the end."""
        if self._closed:
            return
        self._throttle.now()
        self._closed = True
        self._emit(
            {
                "kind": "end",
                "outcome": record.outcome,
                "exitCode": record.exit_code,
                "durationMs": record.duration_ms,
                "omitted": self._omitted,
            }
        )

    def close(self) -> None:
        """Nothing more goes out (the server is closing)."""
        self._closed = True
        self._throttle.cancel()

    def _flush(self) -> None:
        lines, self._batch, self._batch_size = self._batch, [], 0
        unsaid = self._omitted - self._omitted_said
        self._omitted_said = self._omitted
        notice = f"[... {unsaid} lines not shown: too much output at once ...]"
        if unsaid and not self._full and len(notice) < self._left:
            self._left -= len(notice) + 1  # notices count against the run's budget too
            lines.append(notice)
        elif unsaid and not self._full_said:
            self._full_said = True
            lines.append("[... the rest of this run's output is not shown here ...]")
        if lines and not self._closed:
            self._emit({"kind": "lines", "lines": lines})

    def _emit(self, payload: dict[str, Any]) -> None:
        self._send({"run": self.run, "folder": self._folder, **payload})

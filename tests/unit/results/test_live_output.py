"""Live output in this process: a burst is cut to a batch, and the cut is said."""

from __future__ import annotations

import asyncio
from typing import Any

from lsp_verify.record import Record
from lsp_verify.results.live_output import OutputStream


def ended(stream: OutputStream) -> None:
    stream.end(Record(folder="/p", trigger="save", outcome="failed", reason="", started_at=""))


def said(sent: list[dict[str, Any]]) -> list[str]:
    return [line for x in sent if x["kind"] == "lines" for line in x["lines"]]


async def test_a_burst_is_cut_to_a_batch_and_the_cut_is_said() -> None:
    sent: list[dict[str, Any]] = []
    stream = OutputStream(sent.append, "file:///p", "save", max_batch=1000)
    for n in range(100_000):
        stream.line(f"{n:08d} " + "x" * 5000)  # each cut to 2000 characters
    await asyncio.sleep(0.2)
    stream.line("after the burst")
    ended(stream)
    lines = said(sent)
    assert lines[0] == "[... 100000 lines not shown: too much output at once ...]"
    assert lines[1:] == ["after the burst"]
    assert sent[-1]["omitted"] == 100_000

"""The stdio framing, fed bytes in this process: whole bodies in order, lies survived, resync in
linear time."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from lsp_verify.lsp.framing import Framing
from tests.support.cost import cpu_clock
from tests.support.wire import nested_frames


class _Recorder:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    def dispatch(self, body: bytes) -> None:
        self.bodies.append(body)


async def test_framing_hands_over_whole_bodies_in_order() -> None:
    recorder = _Recorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    stream = b"".join(
        f"Content-Length: {len(b)}\r\n\r\n".encode() + b for b in (b"{}", b"", b"x" * 70000)
    )
    stream += b"Content-Length: -3\r\n\r\nContent-Length: 1\r\n\r\n1"
    for i in range(0, len(stream), 4096):
        framing.data_received(stream[i : i + 4096])
    assert recorder.bodies == [b"{}", b"", b"x" * 70000, b"1"]
    framing.data_received(b"y" * (Framing.MAX_HEADER + 1))  # headers that never end
    framing.data_received(b"Content-Length: 2\r\n\r\nok")
    assert recorder.bodies[-1] == b"ok"
    framing.eof_received()
    assert closed.done() and closed.result() is None


class _JsonRecorder(_Recorder):
    """Says, as the server does, whether a body was JSON."""

    def dispatch(self, body: bytes) -> bool:  # type: ignore[override]
        self.bodies.append(bytes(body))
        try:
            json.loads(body)
        except ValueError:
            return False
        return True


@pytest.mark.parametrize("step", [1, 7, 4096])
async def test_framing_survives_lies_cut_anywhere(step: int) -> None:
    """Bad lengths, junk and an oversize body, handed over `step` bytes at a time: every
    good message after them comes through whole, and the oversize body is never held."""
    recorder = _JsonRecorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    good = [json.dumps({"n": i}).encode() for i in range(7)]

    def ok(i: int) -> bytes:
        return b"Content-Length: %d\r\n\r\n" % len(good[i]) + good[i]

    lies = (
        b"Content-Length: 3\r\n\r\n"
        + good[0]  # shorter than the body
        + ok(1)
        + b"Content-Length: %d\r\n\r\n" % (len(good[2]) + 10)
        + good[2]  # longer: eats
        + ok(3)  # the start of this header
        + b"Content-Length: -4\r\n\r\n{}junk"
        + ok(4)
        + b"Content-Length: 9\r\n\r\nnot json!"
        + ok(5)
        + b"Content-Length: %d\r\n\r\n" % (Framing.MAX_BODY + 1)
    )
    oversize = b"x" * (Framing.MAX_BODY + 1) + ok(6)
    held = 0
    for i in range(0, len(lies), step):
        framing.data_received(lies[i : i + step])
        held = max(held, len(framing._buffer))
    for i in range(0, len(oversize), 65536):
        framing.data_received(oversize[i : i + 65536])
        held = max(held, len(framing._buffer))
    assert [b for b in recorder.bodies if b in good] == [good[i] for i in (1, 3, 4, 5, 6)]
    assert held < 1024


@pytest.mark.parametrize("size", [800_000, 1_600_000])
async def test_framing_resyncs_in_linear_time(size: int, caplog: pytest.LogCaptureFixture) -> None:
    """Each level of nested bad frames was parsed and copied again, and logged: 0.8 MB cost
    3.5 s and 1.6 MB 43 s in the server. Each byte is now looked through once."""
    recorder = _JsonRecorder()
    closed: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
    framing = Framing(recorder, closed)  # type: ignore[arg-type]
    after = b'{"after": 1}'
    stream = nested_frames(size) + b"Content-Length: %d\r\n\r\n" % len(after) + after
    start = cpu_clock()
    for i in range(0, len(stream), 65536):
        framing.data_received(stream[i : i + 65536])
    spent = time.process_time() - start
    assert recorder.bodies[-1] == after
    assert len(recorder.bodies) <= 3  # the outer body, one inside it, and the good message
    assert spent < 0.25, f"{spent:.2f} s of CPU"
    assert len(caplog.records) <= 2  # one when it starts, one with the counts when it ends

"""The test client's framing (tests/support/wire.py): what the clients of the tests and the
benchmarks read the server's output with."""

from __future__ import annotations

import json

import pytest

from tests.support.wire import BadFrame, Frames, frame, sketch


def test_frames_cut_anywhere_come_out_whole_and_in_order() -> None:
    stream = b"".join(frame({"id": n, "result": "x" * n}) for n in range(40))
    for cut in (1, 2, 7, 64, len(stream)):
        frames = Frames()
        bodies = []
        for at in range(0, len(stream), cut):
            bodies += [body for _, body in frames.feed(stream[at : at + cut])]
        assert [json.loads(body)["id"] for body in bodies] == list(range(40))
        assert frames.pending == b""


def test_what_is_not_a_whole_frame_yet_stays_pending_with_its_header() -> None:
    whole = frame({"method": "m"})
    frames = Frames()
    assert frames.feed(whole[:-3]) == []
    assert frames.pending == whole[:-3]
    [(header, body)] = frames.feed(whole[-3:])
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body) == {"jsonrpc": "2.0", "method": "m"}


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: abc", b"Content-Length: -5", b"Content-Type: x", b"no colon here"],
)
def test_a_header_block_without_a_length_is_a_bad_frame(header: bytes) -> None:
    frames = Frames()
    with pytest.raises(BadFrame) as raised:
        frames.feed(header + b"\r\n\r\n{}")
    assert raised.value.data == header
    frames.reset()
    assert frames.pending == b""
    assert [body for _, body in frames.feed(frame({"id": 1}))] == [b'{"jsonrpc": "2.0", "id": 1}']


def test_the_length_header_is_read_whatever_its_case_and_beside_others() -> None:
    frames = Frames()
    [(_, body)] = frames.feed(b"content-length: 2\r\nContent-Type: x\r\n\r\n{}")
    assert body == b"{}"


def test_a_huge_message_is_sketched_from_its_ends() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "m", "params": ["x" * 10_000]})
    assert sketch(body.encode()) == {"size": len(body), "id": 7, "method": "m"}
    # A nested string cannot pass for the top-level id: its quotes are escaped.
    fake = json.dumps({"jsonrpc": "2.0", "method": "m", "params": '"id": 9'})
    assert "id" not in sketch(fake.encode())

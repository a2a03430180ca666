"""LSP's base protocol in bytes, for the clients of the tests and the benchmarks: a message
framed, the frames read out of a byte stream, and the messages a raw client sends most.

Standard library only: `benchmarks/` imports it as well.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

HEADER_END = b"\r\n\r\n"


def frame(message: dict[str, Any], header: str = "Content-Length") -> bytes:
    """`message` as JSON-RPC 2.0 in one frame; `header` names the length (to send it wrong)."""
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return f"{header}: {len(body)}\r\n\r\n".encode() + body


def initialize(
    root: Path, rid: int = 1, options: dict[str, Any] | None = None, capabilities: Any = None
) -> bytes:
    return frame(
        {
            "id": rid,
            "method": "initialize",
            "params": {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": capabilities or {},
                "initializationOptions": options
                or {"command": "touch ran.txt; exit 1", "confirm": "never"},
            },
        }
    )


def did_save(uri: str) -> bytes:
    return frame({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}})


def show_last_run(rid: int) -> bytes:
    """A cheap request every server state answers."""
    return frame(
        {
            "id": rid,
            "method": "workspace/executeCommand",
            "params": {"command": "verify.showLastRun", "arguments": []},
        }
    )


class BadFrame(ValueError):
    """A header block without one readable, non-negative Content-Length, or (read strictly) a
    body that is not JSON."""

    def __init__(self, what: str, data: bytes) -> None:
        super().__init__(f"{what}: {data[:120]!r}")
        self.data = data


def content_length(header: bytes) -> int:
    """The body's length a header block gives; BadFrame when it gives none or nonsense."""
    length = None
    for line in header.split(b"\r\n"):
        name, colon, value = line.partition(b":")
        if not colon:
            raise BadFrame("a header line without a colon", header)
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise BadFrame("a Content-Length that is not a number", header) from None
    if length is None or length < 0:
        raise BadFrame("no Content-Length of zero or more", header)
    return length


class Frames:
    """Whole frames out of a byte stream, however it is cut: `feed` bytes, get (header, body)
    pairs. A body being received is not searched again for a header (a 100 MB one costs one
    pass), and what is consumed is deleted from the front (no copy of the rest)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._header: bytes | None = None  # of the body being received
        self._length = 0

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """The frames `data` completes; BadFrame for a header block that gives no length (the
        bytes after it stay pending: `reset` drops them)."""
        self._buffer += data
        whole = []
        while True:
            if self._header is None:
                end = self._buffer.find(HEADER_END)
                if end < 0:
                    return whole
                header = bytes(self._buffer[:end])
                self._length = content_length(header)
                del self._buffer[: end + len(HEADER_END)]
                self._header = header
            if len(self._buffer) < self._length:
                return whole
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            whole.append((self._header, body))
            self._header = None

    @property
    def pending(self) -> bytes:
        """What was fed and is not yet a whole frame (the header of a partial body included)."""
        if self._header is None:
            return bytes(self._buffer)
        return self._header + HEADER_END + bytes(self._buffer)

    def reset(self) -> None:
        self._buffer.clear()
        self._header = None


_ID = re.compile(rb'"id"\s*:\s*(-?\d+)')
_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]+)"')


def sketch(body: bytes) -> dict[str, Any]:
    """The top-level id and method of a huge message, from its first and last bytes (a nested
    string cannot fake them: its quotes are escaped), and its size: parsing it whole costs
    seconds."""
    ends = body[:512] + b" " + body[-512:]
    message: dict[str, Any] = {"size": len(body)}
    found = _ID.search(ends)
    if found:
        message["id"] = int(found.group(1))
    method = _METHOD.search(ends)
    if method:
        message["method"] = method.group(1).decode()
    return message


def nested_frames(size: int) -> bytes:
    """A frame whose body is a frame whose body is a frame ..., `size` bytes in all: none of
    the bodies is JSON, each holds the next header (hostile framing)."""
    inner = b'{"inner": true}'
    headers: list[bytes] = []
    length = len(inner)
    while length < size:
        headers.append(b"Content-Length: %d\r\n\r\n" % length)
        length += len(headers[-1])
    headers.append(b"Content-Length: %d\r\n\r\n" % length)
    return b"".join(reversed(headers)) + inner

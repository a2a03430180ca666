"""LSP framing over a byte stream, and what reading a message may cost. No pygls.

Headers, a blank line, Content-Length bytes of body; each body is handed over as soon as
its last byte arrives, in the event loop's own callback. A client that lies is survived: a
body over MAX_BODY is dropped as it streams in, a bad Content-Length costs one message
(the reader finds the next header), and a large body is costed before it is parsed, since
JSON can take 25 times its size once parsed (README, Limits).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Protocol

log = logging.getLogger("lsp_verify")


class Reader(Protocol):
    def dispatch(self, body: bytes | bytearray) -> bool:
        """Handle one message body; False when it is not JSON (its length was wrong)."""
        ...


class Framing(asyncio.Protocol):
    """LSP framing over stdin: headers, a blank line, Content-Length bytes of body.

    Each message is handed to the server as soon as its last byte arrives, in the event
    loop's own callback: no reader task to wake, so a save reaches `dispatch` a loop turn
    sooner than through a stream reader.

    A client that lies is survived, at a cost linear in what it sends. A body over MAX_BODY
    is dropped as it streams in, never held. Headers without a valid Content-Length, and a
    body that is not JSON (its length was wrong), make the reader look for the next
    `Content-Length:` and go on from there: from just inside a bad body, since a length too
    long swallows the start of the next message; but only once for any byte, so a body made
    of headers holding headers costs two parses, not one per level. One resynchronisation
    is one line in the log when it starts and one, with its counts, when it ends."""

    MAX_HEADER = 64 * 1024
    MAX_BODY = 16 * 1024 * 1024  # README, Limits

    def __init__(self, reader: Reader, closed: asyncio.Future[int | None]) -> None:
        self.reader = reader
        self.closed = closed  # the exit code `exit` asked for, or None at the end of input
        self._buffer = bytearray()  # what came and is not yet read; front deletions are O(1)
        self._length: int | None = None  # of the body being read, once its headers are in
        self._discard = 0  # bytes of an oversize body still to drop
        self._resync = False  # after bad framing: looking for the next header
        self._seen = 0  # bytes at the front already read as part of a body that was not JSON
        self._handed = False  # the last body was the buffer itself
        self._bad = 0  # bad frames in this resynchronisation
        self._skipped = 0  # bytes dropped in it

    def data_received(self, data: bytes) -> None:
        if self._discard:  # the rest of an oversize body: dropped without a copy
            if len(data) <= self._discard:
                self._discard -= len(data)
                return
            data, self._discard = data[self._discard :], 0
        self._buffer += data
        while not self.closed.done():
            body = self._next_body()
            if body is None:
                return
            seen = self._seen  # the body starts among bytes already looked through
            try:
                parsed = self.reader.dispatch(body)
            except SystemExit as exc:  # `exit`: see transport.Transport.dispatch
                code = exc.code
                self.closed.set_result(code if isinstance(code, int) else 0 if code is None else 1)
                return
            if parsed is not False:
                if not self._handed:
                    self._consume(len(body))
                self._resynced()
                continue
            # Not JSON: the Content-Length was wrong. Too long, and the body swallowed the
            # start of the next message: look for its header from just inside the body, left
            # in the buffer for that. A body that starts among bytes already looked through
            # so is passed over whole: each byte is looked through once.
            self._problem("a body that is not JSON")
            if self._handed:
                self._buffer = body  # back in front of what came after it (nothing yet)
            if seen:
                self._consume(len(body))
                self._skipped += len(body)
            else:
                self._consume(1)
                self._skipped += 1
                self._seen = len(body) - 1
            self._resync = True

    def eof_received(self) -> bool | None:
        if not self.closed.done():
            self._resynced()
            self.closed.set_result(None)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof_received()

    def _consume(self, count: int) -> None:
        del self._buffer[:count]
        self._seen = max(0, self._seen - count)

    def _next_body(self) -> bytearray | None:
        """The next whole body, still at the front of the buffer (the caller consumes it),
        or the buffer itself when it holds that body and nothing else (`_handed`)."""
        buffer = self._buffer
        self._handed = False
        while self._length is None:
            if self._discard or self._resync:
                if not self._catch_up():
                    return None
                continue
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) <= self.MAX_HEADER:
                    return None
                self._problem(f"no end of headers in {len(buffer)} bytes")
                self._skip_to_next_header()
                continue
            length = _content_length(bytes(buffer[:end]))
            if length is None:
                self._problem(
                    f"headers without a valid Content-Length ({bytes(buffer[: min(end, 80)])!r})"
                )
                self._skip_to_next_header()
                continue
            self._consume(end + 4)
            if length > self.MAX_BODY:
                log.error(
                    "a message of %d bytes from the client is over the limit of %d MiB: "
                    "discarded unread",
                    length,
                    self.MAX_BODY >> 20,
                )
                self._discard = length
                continue
            self._length = length
        expected = self._length
        if len(buffer) < expected:
            return None
        self._length = None
        if len(buffer) == expected and not self._seen:
            # The usual case: hand the buffer over, no copy. A new one takes its place, so
            # consuming the body costs nothing; a body that is not JSON is passed over whole.
            self._buffer = bytearray()
            self._handed = True
            return buffer
        return buffer[:expected]

    def _catch_up(self) -> bool:
        """Drop what is left of an oversize body, then, after bad framing, what comes before
        the next header; False when the buffer runs out first."""
        buffer = self._buffer
        if self._discard:
            dropped = min(self._discard, len(buffer))
            self._consume(dropped)
            self._discard -= dropped
            if self._discard:
                return False
        if self._resync:
            found = _HEADER_START.search(buffer)
            if found is None:
                # Keep what could be the start of a header cut by the read.
                dropped = max(0, len(buffer) - _RESYNC_KEEP)
                self._consume(dropped)
                self._skipped += dropped
                return False
            self._consume(found.start())
            self._skipped += found.start()
            self._resync = False
        return True

    def _skip_to_next_header(self) -> None:
        self._consume(1)  # past the start of the bad header, then look for the next
        self._skipped += 1
        self._resync = True

    def _problem(self, what: str) -> None:
        """Bad framing: the first of a resynchronisation is logged, the rest counted."""
        self._bad += 1
        if self._bad == 1:
            log.error("bad framing from the client, %s: looking for the next header", what)

    def _resynced(self) -> None:
        if self._bad > 1 or self._skipped:
            log.error(
                "reading the client's messages again after %d bad frame(s), %d byte(s) skipped",
                self._bad,
                self._skipped,
            )
        self._bad = self._skipped = 0


# The start of a header; a bad frame is skipped up to the next one.
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_RESYNC_KEEP = 64


def _content_length(headers: bytes) -> int | None:
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
            return length if length >= 0 else None
    return None


# Message bodies over LARGE_MESSAGE are costed before they are parsed: JSON can take 25
# times its size once parsed (a list of `{}` is 3 bytes an item, 72 parsed), so a size limit
# alone does not bound memory. The estimate: the decoded text twice (it, and the strings
# parsed from it) and _ITEM_COST for each object, array, element and string (a distinct key
# with its value measured 165). Over _PARSE_BUDGET, the message is refused (README, Limits).
LARGE_MESSAGE = 1024 * 1024
_PARSE_BUDGET = 80 * 1024 * 1024
_ITEM_COST = 192
_MAX_STRINGS_SCANNED = 10_000


def affordable(body: bytes | bytearray) -> str | None:
    """The decoded text of a large body, or None when parsing it would cost more memory than
    _PARSE_BUDGET (logged). A document of 16 MiB passes: its brackets and commas are inside
    one string, where they cost nothing."""
    items: int | None = body.count(b"{") + body.count(b"[") + body.count(b",")
    text = body.decode("utf-8", "surrogatepass")  # ValueError: not JSON
    size = 2 * sys.getsizeof(text)
    if items is not None and size + _ITEM_COST * items > _PARSE_BUDGET:
        items = _items_outside_strings(text)
    if items is not None and size + _ITEM_COST * items <= _PARSE_BUDGET:
        return text
    log.error(
        "a message of %d bytes from the client would take over %d MiB to parse: refused",
        len(body),
        _PARSE_BUDGET >> 20,
    )
    return None


def _items_outside_strings(text: str) -> int | None:
    """Objects, arrays, elements and strings in a JSON text, not counting brackets and commas
    inside strings; None past _MAX_STRINGS_SCANNED strings (no document has that many)."""
    items = strings = position = 0
    while True:
        start = text.find('"', position)
        stop = len(text) if start < 0 else start
        items += (
            text.count("{", position, stop)
            + text.count("[", position, stop)
            + text.count(",", position, stop)
        )
        if start < 0:
            return items + strings
        strings += 1
        if strings > _MAX_STRINGS_SCANNED:
            return None
        position = scanstring(text, start + 1)[1]  # ValueError: not JSON


def pump(fd: int, framing: Framing, loop: asyncio.AbstractEventLoop) -> None:
    """Feed stdin to `framing` from a thread: for a stdin the event loop cannot watch (a
    regular file) or must not make non-blocking (a socket that is stdout as well). A daemon
    thread: one blocked in read() must not keep the process alive after `exit`."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        try:
            if chunk:
                loop.call_soon_threadsafe(framing.data_received, chunk)
            else:
                loop.call_soon_threadsafe(framing.eof_received)
        except RuntimeError:  # the loop is closed: the server is gone
            return
        if not chunk:
            return

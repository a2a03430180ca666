"""Command output as lines: cleaned, bounded, streamed.

`LineCleaner` turns bytes into lines (UTF-8 with replacement, no ANSI escapes,
carriage-return progress collapsed, each line capped at LINE_CAP characters). `Tail` keeps
the newest lines within tailLines lines and TAIL_CHARS characters. `OutputReader` reads a
pipe on the event loop as data arrives and hands each line to the tail, a problem sink and
a progress callback, so memory stays flat however much a command prints. Nothing here knows
what writes to the pipe.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import re
from collections import deque
from collections.abc import Callable, Sequence

from lsp_verify.problems.base import LineSink, Problem

__all__ = ["LINE_CAP", "TAIL_CHARS", "LineCleaner", "OutputReader", "Tail"]

log = logging.getLogger(__name__)

# A pending line longer than this is cut: a command that prints gigabytes without a newline
# must not cost gigabytes. 64 KiB still shows any real message whole.
LINE_CAP = 64 * 1024
# The tail never holds more than this many characters, whatever tailLines says: it ends up
# in the summary diagnostic and the record, and a repository may set tailLines to 100 000.
TAIL_CHARS = 40_000
_TAIL_NOTE = f"[earlier output cut: the tail keeps the last {TAIL_CHARS} characters]"
_READ_SIZE = 64 * 1024  # the default pipe capacity on Linux: one read empties a full pipe

_ANSI = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement, erase line
    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: window titles, hyperlinks
    r"|[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|[ -/]*[0-~]"  # two-byte escapes and character-set selection
    r")?"
)


class LineCleaner:
    """Bytes in, cleaned lines out, incrementally and in bounded memory.

    A line ends at LF; a CR before the LF is part of the line end. Within a line a CR
    followed by more text starts the line over, as a terminal would show it ("10%\\r20%"
    is "20%"). ANSI escape sequences are removed. A line longer than `cap` characters keeps
    its first `cap` characters and a note of how many were dropped. The result does not
    depend on how the bytes were split into chunks.
    """

    def __init__(self, cap: int = LINE_CAP) -> None:
        self._cap = cap
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._len = 0
        self._dropped = 0
        self._cr = False  # the line so far ends with CR: the next text overwrites it
        self._open = False  # the current line has received at least one character

    def feed(self, data: bytes) -> list[str]:
        """Take the next chunk; return the lines it completed."""
        return self._text(self._decoder.decode(data))

    def finish(self) -> list[str]:
        """End of stream: a last line without newline is still a line. Resets the cleaner."""
        out = self._text(self._decoder.decode(b"", True))
        if self._open:
            out.append(self._take())
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        return out

    def _text(self, text: str) -> list[str]:
        if not text:
            return []
        if "\n" not in text:
            self._add(text)
            return []
        segments = text.split("\n")
        self._add(segments[0])
        out = [self._take()]
        middle = segments[1:-1]
        if middle:
            # Most chunks need no cleaning at all; checking once per chunk keeps a flood cheap.
            if "\r" in text or "\x1b" in text or len(text) > self._cap:
                out.extend(self._clean(line) for line in middle)
            else:
                out.extend(middle)
        self._add(segments[-1])
        return out

    def _clean(self, line: str) -> str:
        """A complete line in one piece: the same result as _add then _take."""
        if "\r" in line:
            line = line.rstrip("\r")
            line = line[line.rfind("\r") + 1 :]
        if len(line) > self._cap:
            line = line[: self._cap] + _truncated(len(line) - self._cap)
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        return line

    def _add(self, segment: str) -> None:
        if not segment:
            return
        self._open = True
        text = segment.rstrip("\r")
        if not text:
            self._cr = True
            return
        if self._cr:
            self._restart()
        cut = text.rfind("\r")
        if cut >= 0:
            self._restart()
            text = text[cut + 1 :]
        self._cr = segment[-1] == "\r"
        if self._dropped:
            self._dropped += len(text)
            return
        room = self._cap - self._len
        if len(text) > room:
            self._dropped = len(text) - room
            text = text[:room]
        if text:
            self._parts.append(text)
            self._len += len(text)

    def _restart(self) -> None:
        self._parts.clear()
        self._len = 0
        self._dropped = 0

    def _take(self) -> str:
        line = "".join(self._parts)
        if self._dropped:
            line += _truncated(self._dropped)
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        self._restart()
        self._cr = False
        self._open = False
        return line


def _truncated(dropped: int) -> str:
    return f" [line truncated: {dropped} more characters dropped]"


def _tail_note(max_chars: int) -> str:
    """The first line of a tail that the character bound cut."""
    if max_chars == TAIL_CHARS:
        return _TAIL_NOTE
    return f"[earlier output cut: the tail keeps the last {max_chars} characters]"


class Tail:
    """The newest lines of the output: at most `max_lines` of them and at most `max_chars`
    characters in all, a newline counted after each line, whatever `max_lines` says.

    The end of the output is what matters, so the oldest text goes first. When the
    character bound (not the line bound) dropped text, `lines()` starts with a note saying
    so, and its first output line may be the end of a longer line, cut at its start. The
    note counts against the bound: "\\n".join(lines()) is always shorter than `max_chars`.
    It holds at most `max_chars` characters plus one line: the one cut when it is read.
    """

    def __init__(self, max_lines: int, max_chars: int = TAIL_CHARS) -> None:
        self._max_lines = max_lines if max_lines > 0 else 1
        self.note = _tail_note(max_chars)
        self._room = max(1, max_chars - len(self.note) - 1)  # for the lines, the note aside
        self._lines: deque[str] = deque()
        self._size = 0  # characters in _lines, a newline counted after each
        self._seen = 0  # lines ever given
        self._cut_end = 0  # one past the newest line the character bound dropped, of _seen

    def append(self, line: str) -> None:
        self.extend((line,))

    def extend(self, lines: Sequence[str]) -> None:
        kept = self._lines
        count = len(lines)
        if count + len(kept) <= self._max_lines:
            size = sum(map(len, lines)) + count
            if self._size + size <= self._room:  # all of it fits: the usual case
                kept.extend(lines)
                self._size += size
                self._seen += count
                return
        room = self._room
        # Only the newest lines of a batch can stay: find them from the end, so that a flood
        # costs a few lines' work per read, not one per line it printed.
        floor = max(0, len(lines) - self._max_lines)
        first = len(lines)
        size = 0
        while first > floor and size < room:
            first -= 1
            size += len(lines[first]) + 1
        if first > floor:  # lines the line bound would have kept, that do not fit
            self._cut_end = self._seen + first
        self._seen += len(lines)
        kept.extend(lines[first:] if first else lines)
        self._size += size
        for _ in range(len(kept) - self._max_lines):
            self._size -= len(kept.popleft()) + 1
        # Drop whole lines while the rest still fills the room; the first one left may be
        # longer than its share, and is cut when the tail is read.
        while len(kept) > 1 and self._size - len(kept[0]) - 1 >= room:
            self._size -= len(kept.popleft()) + 1
            self._cut_end = self._seen - len(kept)

    def lines(self) -> tuple[str, ...]:
        over = self._size - self._room
        # Text the character bound dropped counts only where the line bound would show it.
        if over <= 0 and (not self._cut_end or self._cut_end <= self._seen - self._max_lines):
            return tuple(self._lines)
        out = list(self._lines)
        if over > 0:
            end = out[0][over:]  # the end of the line: the part nearest what follows
            if end:
                out[0] = end
            else:
                del out[0]
        return (self.note, *out)


class OutputReader:
    """Reads a pipe on the event loop: its lines to the tail, the sink and on_line.

    The writers may take turns (the steps of a run): `end_lines` ends one writer's last line
    before the next one writes.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        fd: int,
        tail_lines: int,
        sink: LineSink,
        on_line: Callable[[str], None] | None,
    ) -> None:
        self._loop = loop
        self._fd = fd
        self._sink: LineSink | None = sink
        self._on_line = on_line
        self._cleaner = LineCleaner()
        self.tail = Tail(tail_lines)
        self.eof: asyncio.Future[None] = loop.create_future()
        self._reading = True  # until EOF or close
        self._watched = False

    def watch(self) -> None:
        """Read as output arrives. Called once the first writer has started: the pipe holds
        what it writes meanwhile, and starting it does not wait for the registration."""
        if self._reading and not self._watched:
            self._watched = True
            self._loop.add_reader(self._fd, self._readable)

    def _readable(self) -> None:
        self._read_once()

    def drain(self) -> None:
        """Read what is in the pipe now, without waiting for more."""
        while self._reading and self._read_once():
            pass

    def _read_once(self) -> bool:
        """One read of the pipe; False when it had nothing now or reached its end."""
        try:
            data = os.read(self._fd, _READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            self._stop_reading()
            return False
        self._emit(self._cleaner.feed(data))
        return True

    def end_lines(self) -> None:
        """A writer is done: its unterminated last line is a line of its own."""
        self._emit(self._cleaner.finish())

    def finish_sink(self) -> tuple[Problem, ...]:
        if self._sink is None:
            return ()
        try:
            return tuple(self._sink.finish())
        except Exception:
            log.exception("problem matcher failed; the run keeps its verdict without problems")
            return ()

    def close(self) -> None:
        self._stop_reading()
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def _stop_reading(self) -> None:
        if self._reading:
            self._reading = False
            if self._watched:
                self._loop.remove_reader(self._fd)
            if not self.eof.done():
                self.eof.set_result(None)

    def _emit(self, lines: list[str]) -> None:
        if not lines:
            return
        self.tail.extend(lines)
        # The sink and the progress callback are the caller's code: a bug there must not cost
        # the verdict or leave the reader half-way through a chunk, so it is logged and that
        # callback is dropped for the rest of the run.
        if self._sink is not None:
            try:
                for line in lines:
                    self._sink.feed(line)
            except Exception:
                log.exception("problem matcher failed; no more lines are fed to it")
                self._sink = None
        if self._on_line is not None:
            try:
                for line in lines:
                    self._on_line(line)
            except Exception:
                log.exception("on_line callback failed; progress lines stop")
                self._on_line = None

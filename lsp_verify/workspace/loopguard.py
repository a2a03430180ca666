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

One clock. A file's modification time is stamped by its file system's clock: the kernel's
for a local disk, the server's for NFS or SMB, the daemon's for a FUSE file system, each
possibly seconds or minutes off ours, and some (FAT, exFAT, HFS+, old ext3) keep whole or
even seconds only. So a run's span, kept in our clock (`time.time()`, as the run starts and
ends), is moved into the clock of the changed file's file system before the two are
compared: when a change is judged, a file is made in its directory, and the time that file
system stamps on it, against ours at that moment, gives the offset between the clocks. The
file has no name (Linux's O_TMPFILE): it makes no entry in the directory, so a watcher of
created, changed and deleted entries (node's fs.watch, which editors' watchers build on)
sees nothing, and nothing is left behind. Where there is no such file (another system, NFS,
a file system without it), the probe is a named file made and removed at once in the
folder's `.git` directory when that is on the same file system (tools leave it alone, and no
change there triggers a run), else the clocks are taken to agree. An offset changes slowly,
so one probe serves a device for a second: a notification of 100 000 changes costs one. Why
an offset, and not the span stamped by the file system at the run's start and end: the
changed file's own directory is the one place surely on its file system (a subfolder may be
another mount), and a probe is made only when a change is judged, never on the path of
every run.

Granularity. Both the probe and the changed file are stamped in whole units of the file
system (a tick of the kernel's coarse clock, 1 to 10 ms, on ext4; 1 s or 2 s on the coarse
ones), truncated: a stamp is never later than the write. So a change stamped up to one unit
before a run's start is that run's (a change stamped with the very second a run started may
have been written later in that second), and on a coarse file system a change within that
unit before a start cannot be told from the run's own first writes: it is taken as the
run's. A file system whose stamps (the probe's, else the file's) fall on whole seconds is
taken to be coarse (2 s, FAT's unit, unless the second is odd). A run's end needs no such
allowance when the probe finds the clocks in agreement (its stamp no later than ours, less
than one unit earlier: a local disk), so a change written just after a run stays a trigger;
with a skewed clock the offset is known to within one unit, and the end is widened by it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["trigger", "echo", "drop"]
MAX_DROPPED = 64

# The unit of a file system that stamps times finer than a second: the kernel's coarse clock
# ticks every 1 to 10 ms (HZ 1000 to 100).
_FINE_UNIT_S = 0.01
_PROBE_TTL_S = 1.0  # how long one probe's offset serves its device
_NS = 1_000_000_000


@dataclass
class RunSpan:
    """When one run's process was going (end None while it runs), in our clock, and
    whether only echoes started it."""

    start: float
    end: float | None
    echo: bool


@dataclass(frozen=True)
class _Offset:
    """A device's clock against ours: FS time = our time + seconds, to within `unit` (None:
    no probe, the clocks taken to agree, each file's stamp telling the unit). `skewed`: the
    clocks differ, and the offset is only known to within the unit."""

    seconds: float
    unit: float | None
    skewed: bool
    taken: float  # time.monotonic() of the probe


def _unit(mtime_ns: int) -> float:
    """The stamping unit a time stamped on a file system suggests."""
    if mtime_ns % _NS:
        return _FINE_UNIT_S
    return 1.0 if (mtime_ns // _NS) % 2 else 2.0


def _stamp_nameless(directory: str) -> int | None:
    """The time the file system of `directory` stamps on a new file there now (ns), by a file
    without a name: no entry in the directory to report. None where there is no such file."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return None
    try:
        fd = os.open(directory, flag | os.O_WRONLY, 0o600)
    except OSError:  # EOPNOTSUPP, EISDIR (an old kernel), EACCES, ...
        return None
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)


def _stamp_named(directory: str) -> int | None:
    """As `_stamp_nameless`, by a file made and removed at once in `directory`."""
    try:
        fd, name = tempfile.mkstemp(prefix=".lsp-verify-clock-", dir=directory)
    except OSError:
        return None
    try:
        return os.fstat(fd).st_mtime_ns
    finally:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name)


def _probe(directory: str, device: int, root: str | None) -> int | None:
    """A time stamped now by the file system holding `directory` (on `device`), or None."""
    stamp = _stamp_nameless(directory)
    if stamp is not None:
        return stamp
    if root is None:
        return None
    quiet = os.path.join(root, ".git")
    try:
        if not os.path.isdir(quiet) or os.stat(quiet).st_dev != device:
            return None
    except OSError:
        return None
    return _stamp_named(quiet)


class LoopGuard:
    def __init__(self) -> None:
        self.spans: deque[RunSpan] = deque(maxlen=8)
        self._next: bool | None = None  # do only echoes ask for the next run so far?
        self._dropped: dict[str, None] = {}  # URIs of dropped echoes, oldest first
        self._offsets: dict[int, _Offset] = {}  # by device

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

    def verdict(self, path: str, root: str | None = None) -> Verdict:
        """What a change of `path` (not open in the client) is, by its modification time.
        `root`: the workspace folder, whose `.git` may hold a clock probe."""
        try:
            st = os.stat(path)
        except OSError:
            return "trigger"
        if not self.spans:
            return "trigger"
        offset = self._offset(os.path.dirname(path) or ".", st.st_dev, root)
        # The change's time in our clock, stamped up to one unit before it was written.
        mtime = st.st_mtime_ns / _NS - offset.seconds
        unit = offset.unit if offset.unit is not None else _unit(st.st_mtime_ns)
        late = unit if offset.skewed else 0.0
        for span in reversed(self.spans):
            if span.start - unit <= mtime and (span.end is None or mtime <= span.end + late):
                return "drop" if span.echo else "echo"
        return "trigger"

    def _offset(self, directory: str, device: int, root: str | None) -> _Offset:
        now = time.monotonic()
        known = self._offsets.get(device)
        if known is not None and now - known.taken < _PROBE_TTL_S:
            return known
        before = time.time()
        stamp = _probe(directory, device, root) if sys.platform != "win32" else None
        after = time.time()
        if stamp is None:
            offset = _Offset(0.0, None, False, now)
        else:
            unit = _unit(stamp)
            seconds = stamp / _NS
            if before - unit <= seconds <= after:  # one clock: a local disk
                offset = _Offset(0.0, unit, False, now)
            else:
                # Stamped between `before` and `after`, truncated to the unit: the offset is
                # known to within the unit and the probe's own duration.
                offset = _Offset(seconds - before, unit + (after - before), True, now)
        self._offsets[device] = offset
        return offset

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

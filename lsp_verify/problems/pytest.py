"""pytest's terminal report: failures, errors and collection errors, with the test id.

Understands the FAILURES / ERRORS sections in every `--tb` style (auto, long, short, line,
native), `-q` or not, the short test summary (`FAILED id - message`, `ERROR id`), and the
"ImportError while loading conftest" report pytest gives before a session can start.

Where a failure lands: on the deepest traceback frame that is project code (inside the
folder, not in site-packages or a virtual environment). For a plain assertion in a test that
is the assertion line; for an error raised by project code the test called, it is the raising
line, with related information on the test's own line (its shallowest project frame); for a
collection error it is the import (or syntax error) line. When a style prints no usable frame
(`--tb=no`, `--tb=line` for a setup error) the short summary's test id is used and the problem
lands on the test's `def` line.

Every line inside pytest's own sections is claimed, so that the generic matchers never see
`tests/test_a.py:8: AssertionError` or a native traceback and report the same failure again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import Problem, Related
from .matcher import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_LINES,
    FramePick,
    Locator,
    Matcher,
    clip_message,
    dedent,
)

# Records (one per failing test) wait for the short summary, which names their test ids;
# each holds a few frames and at most a message's worth of text.
MAX_RECORDS = 300
MAX_SUMMARY = 500
_MAX_SUMMARY_TEXT = 500

_NONE, _FAILURES, _SUMMARY, _OTHER, _CONFTEST = range(5)

# `path:line` or `path:line: text` at column 0: pytest's location line for a frame.
_LOCATION = re.compile(r"([^\s:][^:]*):(\d{1,9})(?::(?: (.*))?)?$")
_FILE_LINE = re.compile(r"file (.+), line (\d{1,9})$")
_CONFTEST_ERROR = re.compile(r"ImportError while loading conftest '(.+)'\.$")
_E_FILE = re.compile(r'\s*File "([^"]+)", line (\d{1,9})')
_NATIVE_FRAME = re.compile(r'\s+File "([^"]+)", line (\d{1,9})')
_STATS = re.compile(
    r"(?:no tests ran|\d{1,9} [a-z]+(?:, \d{1,9} [a-z]+)*) in \d+(?:\.\d+)?s(?: \(.*\))?$"
)
_SUMMARY_KINDS = ("FAILED", "ERROR", "PASSED", "SKIPPED", "XFAIL", "XPASS", "DESELECTED")
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_FAILURE_TITLES = ("FAILURES", "ERRORS")
_SUMMARY_TITLE = "short test summary info"
_OTHER_TITLES = ("warnings summary", "PASSES", "XFAILURES", "XPASSES", "tests coverage")
_OTHER_PREFIXES = ("slowest ", "Captured ", "Hypothesis Statistics", "rerun test summary")


def _is_other(title: str) -> bool:
    return title in _OTHER_TITLES or title.startswith(_OTHER_PREFIXES)


def banner(line: str, char: str) -> str | None:
    """The title of a `=== title ===` style line, else None. No regex: titles are free text."""
    if len(line) < 3 or line[0] != char or line[-1] != char:
        return None
    lead = len(line) - len(line.lstrip(char))
    trail = len(line) - len(line.rstrip(char))
    if lead >= len(line) or line[lead] != " " or line[-trail - 1] != " ":
        return None
    title = line[lead + 1 : len(line) - trail - 1]
    return title if title.strip(char + " ") else None


@dataclass
class _Record:
    start: int
    kind: str  # failed | error | collect | line
    title: str
    frames: FramePick
    e_lines: list[str] = field(default_factory=list)
    e_last: str = ""
    e_file: bool = False
    exc: str = ""
    native: bool = False
    native_msg: list[str] = field(default_factory=list)
    native_after: bool = False
    captured: bool = False


def _keep_line(lines: list[str], line: str) -> None:
    """Keep no more of a message than `clip_message` could show."""
    if len(lines) < MAX_MESSAGE_LINES and sum(map(len, lines)) < MAX_MESSAGE_CHARS:
        lines.append(line[:MAX_MESSAGE_CHARS])


@dataclass
class _Summary:
    kind: str
    nodeid: str
    message: str
    used: bool = False


class PytestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._region = _NONE
        self._record: _Record | None = None
        self._records: list[_Record] = []
        self._summary: list[_Summary] = []
        self.unlocated = 0

    # -- reading ---------------------------------------------------------------------------

    def take(self, line: str) -> bool:
        title = banner(line, "=") if line.startswith("=") else None
        if title is not None:
            return self._on_banner(title.strip())
        if self._region == _CONFTEST:
            # Before the session starts: a short traceback, then pytest exits.
            if line.startswith((" ", "E ")) or _LOCATION.match(line) is not None:
                return self._on_failure_line(line)
            self._close_record()
            self._region = _NONE
        if self._region == _NONE:
            if line.startswith("ImportError while loading conftest "):
                found = _CONFTEST_ERROR.match(line)
                if found is not None:
                    self._close_record()
                    self._region = _CONFTEST
                    self._record = self._new_record("collect", found.group(1))
                    return True
            return False
        if self._region == _OTHER:
            if _STATS.match(line):
                self._region = _NONE
            return True
        if self._region == _SUMMARY:
            return self._on_summary(line)
        return self._on_failure_line(line)

    def _on_banner(self, title: str) -> bool:
        known = title in _FAILURE_TITLES or title == _SUMMARY_TITLE or _is_other(title)
        stats = _STATS.match(title) is not None
        record = self._record
        if record is not None and record.captured and not known and not stats:
            return True  # a test printed a banner-like line into its captured output
        self._close_record()
        if title in _FAILURE_TITLES:
            self._region = _FAILURES
        elif title == _SUMMARY_TITLE:
            self._region = _SUMMARY
        elif known:
            # warnings summary, PASSES, durations: pytest's own sections, not failures.
            self._region = _OTHER
        else:
            # The session header, the totals, or some other tool's banner: not ours to hold.
            self._region = _NONE
        return True

    def _on_summary(self, line: str) -> bool:
        kind, _, rest = line.partition(" ")
        if kind in _SUMMARY_KINDS and rest:
            if kind in ("FAILED", "ERROR") and len(self._summary) < MAX_SUMMARY:
                nodeid, _, message = rest.partition(" - ")
                nodeid, message = nodeid.strip(), message.strip()[:_MAX_SUMMARY_TEXT]
                if len(nodeid) <= _MAX_SUMMARY_TEXT:
                    self._summary.append(_Summary(kind, nodeid, message))
            return True
        if _STATS.match(line):
            # -q prints the totals without a banner: the end of pytest's report.
            self._region = _NONE
        # Otherwise a message's further lines: pytest does not cut them when $CI is set.
        return True

    def _on_failure_line(self, line: str) -> bool:
        if _STATS.match(line):
            self._close_record()
            self._region = _NONE
            return True
        if line.startswith("_"):
            headline = banner(line, "_")
            if headline is not None and headline.strip("_ "):
                self._open_record(headline.strip())
                return True
            if line.startswith("_ _") or headline is not None:
                return True  # separator between the frames of one traceback
        record = self._record
        if record is not None and record.captured:
            return True
        if line.startswith("-") and banner(line, "-") is not None:
            if record is not None:
                record.captured = True  # "Captured stdout call" and friends: the test's prints
            return True
        if line in _CHAIN:
            if record is not None:
                # Chained exceptions: the last traceback is the one that failed the test.
                record.frames.clear()
                record.e_lines.clear()
                record.e_last = ""
                record.e_file = False
                record.exc = ""
                record.native_msg.clear()
                record.native_after = False
            return True
        if line == "E" or line.startswith("E "):
            if record is not None:
                self._on_e_line(record, line[1:])
            return True
        if record is not None and (record.native or line == "Traceback (most recent call last):"):
            self._on_native(record, line)
            return True
        location = _LOCATION.match(line)
        if location is not None:
            path, number, rest = location.group(1), int(location.group(2)), location.group(3)
            if record is None:
                # --tb=line: one self-contained `path:line: message` per failure.
                lone = self._new_record("line", "")
                lone.exc = (rest or "").strip()[:MAX_MESSAGE_CHARS]
                lone.frames.add(path, number)
                self._keep(lone)
            else:
                record.frames.add(path, number)
                if rest and not rest.startswith("in "):
                    record.exc = rest.strip()[:MAX_MESSAGE_CHARS]
            return True
        where = _FILE_LINE.match(line)
        if where is not None and record is not None:
            record.frames.add(where.group(1), int(where.group(2)))
        return True

    def _on_e_line(self, record: _Record, text: str) -> None:
        found = _E_FILE.match(text)
        if found is not None:
            # A SyntaxError while importing: its own location is the deepest frame.
            record.frames.add(found.group(1), int(found.group(2)))
            record.e_file = True
            record.e_lines.clear()
            return
        if text.strip():
            record.e_last = text[:MAX_MESSAGE_CHARS]
        _keep_line(record.e_lines, text)

    def _on_native(self, record: _Record, line: str) -> None:
        if line == "Traceback (most recent call last):":
            record.native = True
            record.native_after = False
            return
        frame = _NATIVE_FRAME.match(line)
        if frame is not None and not record.native_after:
            record.frames.add(frame.group(1), int(frame.group(2)))
            return
        if not record.native_after and (not line or line[0] == " "):
            return  # source and caret lines of a frame
        record.native_after = True
        _keep_line(record.native_msg, line)

    def _open_record(self, headline: str) -> None:
        self._close_record()
        if headline.startswith("ERROR collecting "):
            kind, title = "collect", headline[len("ERROR collecting ") :]
        elif headline.startswith(("ERROR at setup of ", "ERROR at teardown of ")):
            kind, title = "error", headline.split(" of ", 1)[1]
        else:
            kind, title = "failed", headline
        self._record = self._new_record(kind, title.strip())

    def _new_record(self, kind: str, title: str) -> _Record:
        return _Record(self.index, kind, title[:_MAX_SUMMARY_TEXT], FramePick(self.locator))

    def _close_record(self) -> None:
        if self._record is not None:
            self._keep(self._record)
            self._record = None

    def _keep(self, record: _Record) -> None:
        if len(self._records) < MAX_RECORDS:
            self._records.append(record)
        else:
            self.overflow += 1

    # -- at the end: ids, locations, messages ----------------------------------------------

    def flush(self) -> None:
        self._close_record()
        self._region = _NONE
        for record in self._records:
            entry = self._summary_for(record)
            problem = self._problem(record, entry)
            if problem is None:
                self.unlocated += 1
            else:
                self.emit(record.start, problem)
        for entry in self._summary:
            if not entry.used:
                # --tb=no or a style without frames: only the summary names the failure.
                problem = self._from_summary(entry)
                if problem is not None:
                    self.emit(self.index, problem)
        self._records = []
        self._summary = []

    def _summary_for(self, record: _Record) -> _Summary | None:
        if record.kind == "collect":
            for entry in self._summary:
                if not entry.used and entry.kind == "ERROR" and entry.nodeid == record.title:
                    entry.used = True
                    return entry
            return None
        if record.kind == "line":
            for entry in self._summary:
                if not entry.used and entry.kind == "FAILED" and _same_message(entry, record.exc):
                    entry.used = True
                    return entry
            return None
        wanted_kind = "FAILED" if record.kind == "failed" else "ERROR"
        suffix = _title_to_nodeid(record.title)
        candidates = [
            entry
            for entry in self._summary
            if not entry.used
            and entry.kind == wanted_kind
            and (entry.nodeid == suffix or entry.nodeid.endswith("::" + suffix))
        ]
        if not candidates:
            return None
        chosen = candidates[0]
        if len(candidates) > 1:
            frame_files = {
                self.locator.relative(frame[0])
                for frame in (record.frames.first, record.frames.last)
                if frame is not None
            }
            for entry in candidates:
                if self.locator.relative(entry.nodeid.split("::", 1)[0]) in frame_files:
                    chosen = entry
                    break
        chosen.used = True
        return chosen

    def _problem(self, record: _Record, entry: _Summary | None) -> Problem | None:
        test_id = self._test_id(record, entry)
        message = _record_message(record) or (entry.message if entry else "") or "failed"
        if test_id:
            message = f"{test_id}: {message}"
        first, last = record.frames.first, record.frames.last
        related: tuple[Related, ...] = ()
        if first is not None and last is not None:
            path, line = last
            if first != last:
                related = (self._related(record, test_id, first),)
            elif test_id:
                related = self._def_related(record, test_id, path, line)
        elif test_id and self.locator.relative(_id_file(test_id)) is not None:
            path = _id_file(test_id)
            line = self._def_line(test_id) if record.kind != "collect" else 1
        elif record.frames.deepest is not None:
            # Only frames outside the folder: report the deepest, the collector counts the drop.
            path, line = record.frames.deepest
        else:
            return None
        return Problem(
            path=path, line=line, column=1, message=message, code=test_id or None, related=related
        )

    def _from_summary(self, entry: _Summary) -> Problem | None:
        path = _id_file(entry.nodeid)
        line = self._def_line(entry.nodeid) if "::" in entry.nodeid else 1
        message = f"{entry.nodeid}: {entry.message or entry.kind.lower()}"
        return Problem(path=path, line=line, column=1, message=message, code=entry.nodeid)

    def _test_id(self, record: _Record, entry: _Summary | None) -> str:
        if entry is not None:
            return entry.nodeid
        if record.kind == "collect":
            return self.locator.relative(record.title) or record.title
        if record.kind == "line":
            return record.title
        # No summary (-rN, or it scrolled away): build the id from the test's own frame.
        if record.frames.first is not None:
            path = record.frames.first[0]
            rel = self.locator.relative(path) or path
            return f"{rel}::{_title_to_nodeid(record.title)}"
        return _title_to_nodeid(record.title)

    def _related(self, record: _Record, test_id: str, frame: tuple[str, int]) -> Related:
        verb = "imported by" if record.kind == "collect" else "called from test"
        return Related(path=frame[0], line=frame[1], column=1, message=f"{verb} {test_id}")

    def _def_related(
        self, record: _Record, test_id: str, path: str, line: int
    ) -> tuple[Related, ...]:
        """The test's `def` line, when the failure is elsewhere and no frame points at it:
        a fixture that broke, or --tb=line's single location in project code."""
        if record.kind == "collect" or "::" not in test_id:
            return ()
        test_file = _id_file(test_id)
        where = self.locator.relative(test_file)
        if where is None:
            return ()
        if where == self.locator.relative(path) and record.kind != "error":
            return ()
        def_line = self._def_line(test_id)
        if where == self.locator.relative(path) and def_line == line:
            return ()
        return (Related(path=test_file, line=def_line, column=1, message=f"test {test_id}"),)

    def _def_line(self, test_id: str) -> int:
        name = test_id.rsplit("::", 1)[-1].split("[", 1)[0]
        if not name.isidentifier():
            return 1
        starts = (f"def {name}(", f"async def {name}(")
        return self.locator.find_line(_id_file(test_id), starts) or 1


def _id_file(test_id: str) -> str:
    return test_id.split("::", 1)[0]


def _title_to_nodeid(title: str) -> str:
    """`TestGroup.test_method[a.b]` -> `TestGroup::test_method[a.b]` (dots in params stay)."""
    head, bracket, params = title.partition("[")
    return head.replace(".", "::") + bracket + params


def _same_message(entry: _Summary, text: str) -> bool:
    if not entry.message or not text:
        return False
    if entry.message == text:
        return True
    # The summary cuts long messages to the terminal width and ends them with "...".
    if entry.message.endswith("..."):
        return text.startswith(entry.message[:-3])
    return False


def _record_message(record: _Record) -> str:
    if record.native and record.native_msg:
        lines = list(record.native_msg)
        first = lines[0]
        if first.startswith("AssertionError: assert "):
            lines[0] = first[len("AssertionError: ") :]
        return clip_message(dedent(lines))
    if record.e_lines:
        lines = dedent(record.e_lines)
        if record.e_file:
            # The source and caret lines of a SyntaxError are noise once we point at it.
            return clip_message([record.e_last.strip()])
        return clip_message(lines)
    return record.exc

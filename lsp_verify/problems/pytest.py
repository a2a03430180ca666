"""pytest's terminal report: failures, errors and collection errors, with the test id.

Understands the FAILURES / ERRORS sections in every `--tb` style (auto, long, short, line,
native), `-q` or not, the short test summary (`FAILED id - message`, `ERROR id`), and the
"ImportError while loading conftest" report pytest gives before a session can start.

Where a failure lands: on the failing test. Its frame is the shallowest traceback frame that
is project code (inside the folder, not in site-packages or a virtual environment); where
the deepest project frame is elsewhere (an error raised by project code the test called, a
fixture that broke, a module the test module imports), that raising line is related. For a
plain assertion in a test the two are the same line. When a style prints only the crash
location (`--tb=line`) or no usable frame (`--tb=no`), the short summary's test id is used and
the problem lands on the test's `def` line.

Every line inside pytest's own sections is claimed, so that the generic matchers never see
`tests/test_a.py:8: AssertionError` or a native traceback and report the same failure again.
"""

from __future__ import annotations

import re

from .matcher import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_LINES,
    FramePick,
    Locator,
    Matcher,
)
from .pytest_outcomes import FailureRecord, Outcomes, SummaryEntry

MAX_RECORDS = 300
MAX_SUMMARY = 500
_MAX_SUMMARY_TEXT = 500

_NONE, _FAILURES, _SUMMARY, _OTHER, _CONFTEST = range(5)

# `path:line` or `path:line: text` at column 0: pytest's location line for a frame.
_LOCATION = re.compile(r"([^\s:][^:]*):(\d{1,9})(?::(?: (.*))?)?$")
_DOC_SOURCE = re.compile(r"\d{3,9} (.*)$")
_DOCTEST_ENDS = ("DocTestFailure", "UnexpectedException")
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


def _keep_line(lines: list[str], line: str) -> None:
    """Keep no more of a message than `clip_message` could show."""
    if len(lines) < MAX_MESSAGE_LINES and sum(map(len, lines)) < MAX_MESSAGE_CHARS:
        lines.append(line[:MAX_MESSAGE_CHARS])


class PytestMatcher(Matcher):
    def __init__(self, locator: Locator | None = None) -> None:
        super().__init__(locator)
        self._region = _NONE
        self._record: FailureRecord | None = None
        self._records: list[FailureRecord] = []
        self._summary: list[SummaryEntry] = []
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
                    self._summary.append(SummaryEntry(kind, nodeid, message))
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
        if record is not None and record.kind == "doctest":
            self._on_doctest(record, line)
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

    def _on_e_line(self, record: FailureRecord, text: str) -> None:
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

    def _on_native(self, record: FailureRecord, line: str) -> None:
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

    def _on_doctest(self, record: FailureRecord, line: str) -> None:
        """`--doctest-modules`: numbered source lines (the failing example last), then
        Expected/Got or the exception's traceback, then `path:N: DocTestFailure` where N is
        the example's line."""
        location = _LOCATION.match(line)
        if location is not None and location.group(3) in _DOCTEST_ENDS:
            record.doc_at = (location.group(1), int(location.group(2)))
        elif record.native or line == "Traceback (most recent call last):":
            self._on_native(record, line)
        elif not line.startswith("UNEXPECTED EXCEPTION: "):
            source = _DOC_SOURCE.match(line)
            if source is not None:
                record.doc_example = source.group(1).strip().removeprefix(">>> ")[:500]
            elif line.strip():
                _keep_line(record.e_lines, line)  # Expected: / Got: and their lines

    def _open_record(self, headline: str) -> None:
        self._close_record()
        if headline.startswith("[doctest] "):
            kind, title = "doctest", headline[len("[doctest] ") :]
        elif headline.startswith("ERROR collecting "):
            kind, title = "collect", headline[len("ERROR collecting ") :]
        elif headline.startswith(("ERROR at setup of ", "ERROR at teardown of ")):
            kind, title = "error", headline.split(" of ", 1)[1]
        else:
            kind, title = "failed", headline
        self._record = self._new_record(kind, title.strip())

    def _new_record(self, kind: str, title: str) -> FailureRecord:
        return FailureRecord(self.index, kind, title[:_MAX_SUMMARY_TEXT], FramePick(self.locator))

    def _close_record(self) -> None:
        if self._record is not None:
            self._keep(self._record)
            self._record = None

    def _keep(self, record: FailureRecord) -> None:
        if len(self._records) < MAX_RECORDS:
            self._records.append(record)
        else:
            self.overflow += 1

    # -- at the end: ids, locations, messages ----------------------------------------------

    def flush(self) -> None:
        self._close_record()
        self._region = _NONE
        outcomes = Outcomes(self.locator)
        for record in self._records:
            entry = outcomes.summary_for(record, self._summary)
            problem = outcomes.problem(record, entry)
            if problem is None:
                self.unlocated += 1
            else:
                self.emit(record.start, problem)
        for entry in self._summary:
            if not entry.used:
                # --tb=no or a style without frames: only the summary names the failure.
                problem = outcomes.from_summary(entry)
                if problem is not None:
                    self.emit(self.index, problem)
        self._records = []
        self._summary = []

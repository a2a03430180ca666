"""pytest's report, once read: which summary entry names which failure, the test id, and
where the problem lands (see `pytest.py` for the rules)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import Problem, Related
from .matcher import FramePick, Locator, clip_message, dedent

# Records (one per failing test) wait for the short summary, which names their test ids;
# each holds a few frames and at most a message's worth of text.


@dataclass
class FailureRecord:
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
    doc_at: tuple[str, int] | None = None  # --doctest-modules: the failing example's line
    doc_example: str = ""


@dataclass
class SummaryEntry:
    kind: str
    nodeid: str
    message: str
    used: bool = False


class Outcomes:
    """Turns records and summary entries into problems, asking the locator about paths."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator

    def summary_for(
        self, record: FailureRecord, summaries: list[SummaryEntry]
    ) -> SummaryEntry | None:
        """The short-summary entry that names this record's test, marked used."""
        if record.kind == "collect":
            for entry in summaries:
                if not entry.used and entry.kind == "ERROR" and entry.nodeid == record.title:
                    entry.used = True
                    return entry
            return None
        if record.kind == "line":
            for entry in summaries:
                if not entry.used and entry.kind == "FAILED" and _same_message(entry, record.exc):
                    entry.used = True
                    return entry
            return None
        wanted_kind = "ERROR" if record.kind == "error" else "FAILED"
        suffix = record.title if record.kind == "doctest" else title_to_nodeid(record.title)
        candidates = [
            entry
            for entry in summaries
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

    def problem(self, record: FailureRecord, entry: SummaryEntry | None) -> Problem | None:
        test_id = self._test_id(record, entry)
        message = _record_message(record) or (entry.message if entry else "") or "failed"
        if record.doc_example:
            message = f"{record.doc_example}\n{message}"
        if test_id:
            message = f"{test_id}: {message}"
        if record.doc_at is not None:
            return self._doctest(record, test_id, message, record.doc_at)
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
        if related:
            # The failing test is the diagnostic; where it raised is related (see chain.py).
            raised = Related(path=path, line=line, column=1, message="raised here")
            path, line, related = related[0].path, related[0].line, (raised,)
        return Problem(
            path=path, line=line, column=1, message=message, code=test_id or None, related=related
        )

    def _doctest(
        self, record: FailureRecord, test_id: str, message: str, where: tuple[str, int]
    ) -> Problem:
        """On the failing example's line; where it raised, if elsewhere, related."""
        related: tuple[Related, ...] = ()
        raised = record.frames.last
        if raised is not None and raised != where:
            related = (Related(path=raised[0], line=raised[1], column=1, message="raised here"),)
        path, line = where
        return Problem(path, line, 1, message, code=test_id or None, related=related)

    def from_summary(self, entry: SummaryEntry) -> Problem | None:
        path = _id_file(entry.nodeid)
        line = self._def_line(entry.nodeid) if "::" in entry.nodeid else 1
        message = f"{entry.nodeid}: {entry.message or entry.kind.lower()}"
        return Problem(path=path, line=line, column=1, message=message, code=entry.nodeid)

    def _test_id(self, record: FailureRecord, entry: SummaryEntry | None) -> str:
        if entry is not None:
            return entry.nodeid
        if record.kind == "collect":
            return self.locator.relative(record.title) or record.title
        if record.kind in ("line", "doctest"):
            return record.title
        # No summary (-rN, or it scrolled away): build the id from the test's own frame.
        if record.frames.first is not None:
            path = record.frames.first[0]
            rel = self.locator.relative(path) or path
            return f"{rel}::{title_to_nodeid(record.title)}"
        return title_to_nodeid(record.title)

    def _related(self, record: FailureRecord, test_id: str, frame: tuple[str, int]) -> Related:
        """The test's own frame (its call, or the test module's import): where the problem
        is moved to in `problem`."""
        return Related(path=frame[0], line=frame[1], column=1, message=f"test {test_id}")

    def _def_related(
        self, record: FailureRecord, test_id: str, path: str, line: int
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


def title_to_nodeid(title: str) -> str:
    """`TestGroup.test_method[a.b]` -> `TestGroup::test_method[a.b]` (dots in params stay)."""
    head, bracket, params = title.partition("[")
    return head.replace(".", "::") + bracket + params


def _same_message(entry: SummaryEntry, text: str) -> bool:
    if not entry.message or not text:
        return False
    if entry.message == text:
        return True
    # The summary cuts long messages to the terminal width and ends them with "...".
    if entry.message.endswith("..."):
        return text.startswith(entry.message[:-3])
    return False


def _record_message(record: FailureRecord) -> str:
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

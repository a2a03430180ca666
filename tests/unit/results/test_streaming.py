"""Streaming in this process: a burst of problems costs a few publishes, nothing lands after close,
and the collector reports each problem once as it keeps it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_verify.problems import ProblemCollector
from lsp_verify.problems.base import Problem
from lsp_verify.results.diagnostics import VERIFY, Diagnostics, Entry
from lsp_verify.results.streaming import LiveProblems


@pytest.fixture
def project(project: Path) -> Path:
    (project / "src").mkdir()
    (project / "src" / "calc.c").write_text("int a;\nint b = x;\nint c;\n")
    return project


# --- LiveProblems on its own: batching, the limit, close and withdraw ---


def problem(line: int, message: str = "boom") -> Problem:
    return Problem(path="src/calc.c", line=line, column=1, message=message)


class Recorder:
    def __init__(self) -> None:
        self.published: list[str] = []
        self.store = Diagnostics(self.published.append)


def live(folder: Path, recorder: Recorder, interval: float) -> LiveProblems:
    return LiveProblems(str(folder), recorder.store, lambda uri, line: None, interval=interval)


async def test_a_burst_of_problems_costs_a_few_publishes(project: Path) -> None:
    recorder = Recorder()
    stream = live(project, recorder, interval=0.05)
    for line in range(1, 1001):
        stream.add(problem(line))
    # The first goes out at once; the rest wait for one batch.
    assert len(recorder.published) == 1
    await asyncio.sleep(0.15)
    assert len(recorder.published) == 2
    uri = (project / "src" / "calc.c").as_uri()
    # No more than the collector's limit is ever streamed.
    assert len(recorder.store.entries(uri, VERIFY)) == 200 == stream.streamed
    stream.close()


async def test_a_document_edited_since_the_run_began_gets_nothing_streamed(
    project: Path,
) -> None:
    recorder = Recorder()
    (project / "src" / "other.c").write_text("int d;\n")
    edited = (project / "src" / "calc.c").as_uri()
    stream = LiveProblems(
        str(project),
        recorder.store,
        lambda uri, line: None,
        interval=0.01,
        fresh=lambda uri: uri != edited,
    )
    stream.add(problem(2))
    stream.add(Problem(path="src/other.c", line=1, column=1, message="boom"))
    await asyncio.sleep(0.05)
    assert recorder.published == [(project / "src" / "other.c").as_uri()]
    assert recorder.store.entries(edited, VERIFY) == []
    stream.close()


async def test_nothing_lands_after_close_and_withdraw_takes_it_back(project: Path) -> None:
    recorder = Recorder()
    uri = (project / "src" / "calc.c").as_uri()
    kept = Entry(
        types.Diagnostic(
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            message="from the run before",
            source="verify",
        )
    )
    recorder.store.set(uri, VERIFY, [kept])
    stream = live(project, recorder, interval=0.05)
    stream.add(problem(2))
    stream.add(problem(3))  # batched behind the first
    stream.close()
    await asyncio.sleep(0.1)
    assert len(recorder.store.entries(uri, VERIFY)) == 2  # the batch was dropped at close
    stream.withdraw()
    assert recorder.store.entries(uri, VERIFY) == [kept]
    assert recorder.published == [uri, uri]


def test_the_collector_reports_each_problem_once_as_it_is_kept(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("x\n")
    heard: list[tuple[int, str]] = []
    collector = ProblemCollector(
        str(tmp_path), limit=2, on_problem=lambda p: heard.append((p.line, p.message))
    )
    for text in ("a.c:1:1: error: one", "a.c:1:1: error: one", "a.c:2:1: error: two"):
        collector.feed(text)
        assert len(heard) == min(2, 1 + (text.endswith("two")))
    collector.feed("a.c:3:1: error: three")  # past the limit: not streamed
    collector.finish()
    assert heard == [(1, "one"), (2, "two")]

"""Located failures are published while the run goes, and the run's end agrees with them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_verify.problems import ProblemCollector
from lsp_verify.problems.base import Problem
from lsp_verify.results.diagnostics import VERIFY, Diagnostics, Entry
from lsp_verify.results.streaming import LiveProblems
from tests.support.lsp_session import session

# The first failure at once, then a long rest of the run (a `make check` with lint first).
SLOW = "echo 'src/calc.c:2:5: error: boom'; sleep 4; echo 'src/calc.c:3:1: error: late'; exit 1"


@pytest.fixture
def project(project: Path) -> Path:
    (project / "src").mkdir()
    (project / "src" / "calc.c").write_text("int a;\nint b = x;\nint c;\n")
    return project


def located(diagnostics: list[types.Diagnostic]) -> list[tuple[int, int, str]]:
    return sorted(
        (d.range.start.line, d.range.start.character, d.message)
        for d in diagnostics
        if d.source == "verify" and d.code != "failed"
    )


async def test_a_located_failure_is_published_before_the_run_ends(
    project: Path, state: Path
) -> None:
    async with session(project, state=state, init_options={"command": SLOW}) as s:
        calc = s.uri("src/calc.c")
        started = time.monotonic()
        s.save("src/calc.c")
        await s.wait_for(lambda: located(s.diagnostics(calc)), timeout=10, what="a live failure")
        seen_after = time.monotonic() - started
        # Published while the command still sleeps: well before its 4 s, no verdict yet.
        assert seen_after < 3, seen_after
        assert s.finished() == []
        assert located(s.diagnostics(calc)) == [(1, 4, "boom")]
        await s.wait_for(lambda: s.finished("failed"), timeout=20, what="the verdict")
        # The run's end replaces the layer: the live failure stays, the later one joins it,
        # and the summary of the failed run comes with them.
        final = s.diagnostics(calc)
        assert located(final) == [(1, 4, "boom"), (2, 0, "late")]
        assert [d.code for d in final if d.code == "failed"] == ["failed"]


async def test_a_failure_still_there_is_not_shown_twice(project: Path, state: Path) -> None:
    fast = "echo 'src/calc.c:2:5: error: boom'; exit 1"
    async with session(project, state=state, init_options={"command": fast}) as s:
        calc = s.uri("src/calc.c")
        first = await s.command("verify.runNow")
        assert first["outcome"] == "failed"
        before = len(s.publishes)
        second = await s.command("verify.runNow")
        assert second["outcome"] == "failed"
        # The second run saw the same failure: no streamed duplicate, one final publish.
        ours = [d for uri, d in s.publishes[before:] if uri == calc]
        assert all(located(d) == [(1, 4, "boom")] for d in ours), ours


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

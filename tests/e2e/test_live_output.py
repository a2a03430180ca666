"""A run's output streams to a client that opted in, in order and bounded; others get none.
Floods, through the server and straight into the stream (half a million lines, a gigabyte):
they stop at the run's budget and reach the client as a bounded trickle."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.record import Record
from lsp_verify.results.live_output import MAX_RUN, OutputStream
from tests.support.lsp_session import session

COUNTED = "for i in 1 2 3 4 5; do echo line $i; sleep 0.05; done; echo oops >&2; exit 2"


async def run_with(project: Path, state: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    async with session(project, state=state, init_options=options) as s:
        record = await s.command("verify.runNow")
        assert record["outcome"] == "failed"
        if options.get("liveOutput") is True:
            await s.wait_for(lambda: any(x["kind"] == "end" for x in s.outputs), what="end")
        await asyncio.sleep(0.2)  # nothing more may follow
        return list(s.outputs)


async def test_an_opted_in_client_gets_the_output_in_order(project: Path, state: Path) -> None:
    seen = await run_with(project, state, {"command": COUNTED, "liveOutput": True})
    kinds = [x["kind"] for x in seen]
    assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds[1:-1]) == {"lines"}
    assert (seen[0]["phase"], seen[0]["command"], seen[0]["trigger"]) == ("full", COUNTED, "runNow")
    assert seen[0]["folder"] == project.as_uri()
    assert len({x["run"] for x in seen}) == 1
    lines = [line for x in seen if x["kind"] == "lines" for line in x["lines"]]
    assert lines == ["line 1", "line 2", "line 3", "line 4", "line 5", "oops"]
    end = seen[-1]
    assert (end["outcome"], end["exitCode"], end["omitted"]) == ("failed", 2, 0)


@pytest.mark.parametrize("options", [{}, {"liveOutput": False}, {"liveOutput": "yes"}])
async def test_a_client_that_did_not_opt_in_gets_nothing_new(
    project: Path, state: Path, options: dict[str, Any]
) -> None:
    assert await run_with(project, state, {"command": COUNTED, **options}) == []


def ended(stream: OutputStream) -> None:
    stream.end(Record(folder="/p", trigger="save", outcome="failed", reason="", started_at=""))


def said(sent: list[dict[str, Any]]) -> list[str]:
    return [line for x in sent if x["kind"] == "lines" for line in x["lines"]]


async def test_a_flood_stops_at_the_runs_budget_and_says_so_once() -> None:
    sent: list[dict[str, Any]] = []
    stream = OutputStream(sent.append, "file:///p", "save", max_run=5000)
    for _ in range(5):
        for n in range(100_000):
            stream.line(f"{n:08d} " + "x" * 100)
        await asyncio.sleep(0.15)
    ended(stream)
    lines = said(sent)
    assert sum(len(line) + 1 for line in lines if not line.startswith("[...")) <= 5000
    assert [line for line in lines if line.startswith("[...")] == [
        "[... the rest of this run's output is not shown here ...]"
    ]
    assert sent[-1]["kind"] == "end" and sent[-1]["omitted"] > 499_000
    assert len(sent) < 10  # batched: a handful of notifications, not one per line


async def test_a_gigabyte_flood_reaches_the_client_as_a_bounded_trickle() -> None:
    """1 GB of output (100 000 lines of 10 000 characters, every 10 ms a batch's worth),
    with the defaults: the client gets at most the run's budget, in a few notifications."""
    sent: list[dict[str, Any]] = []
    stream = OutputStream(sent.append, "file:///p", "save")
    line = "x" * 10_000
    for _ in range(100):
        for _ in range(1_000):
            stream.line(line)
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.15)
    ended(stream)
    lines = said(sent)
    characters = sum(len(text) + 1 for text in lines)
    assert characters <= MAX_RUN, characters
    shown = [text for text in lines if not text.startswith("[...")]
    assert shown and all(text == "x" * 2_000 for text in shown)  # each line cut
    # Every line is either shown or counted, and the count is said in the stream.
    assert sent[-1]["kind"] == "end" and sent[-1]["omitted"] == 100_000 - len(shown)
    notices = [text for text in lines if text.startswith("[...")]
    assert sum(int(text.split()[1]) for text in notices) == sent[-1]["omitted"]
    assert len(sent) < 40, len(sent)  # one batch per interval, not one per line


async def test_a_flood_through_the_server_reaches_the_client_bounded(
    project: Path, state: Path
) -> None:
    # 60 MB of output in 100-character lines; the server answers while it pours out.
    flood = "head -c 60000000 /dev/zero | tr '\\0' x | fold -w 100; exit 1"
    options = {"command": flood, "liveOutput": True, "timeoutMs": 120000}
    async with session(project, state=state, init_options=options) as s:
        run = asyncio.ensure_future(s.command("verify.runNow", timeout=150))
        await s.wait_for(lambda: len(s.outputs) > 1, what="the first output")
        started = asyncio.get_running_loop().time()
        assert await s.command("verify.explain") is not None
        assert asyncio.get_running_loop().time() - started < 5
        record = await run
        assert record["outcome"] == "failed"
        await s.wait_for(lambda: any(x["kind"] == "end" for x in s.outputs), what="end")
        lines = said(s.outputs)
        last = "[... the rest of this run's output is not shown here ...]"
        assert sum(len(line) + 1 for line in lines if line != last) <= MAX_RUN
        assert s.outputs[-1]["omitted"] > 0


async def test_each_phase_begins_with_the_command_as_it_runs(tmp_path: Path, state: Path) -> None:
    # A saved test file runs alone first (the quick phase), then the whole suite with --ff.
    project = tmp_path / "py"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "test_a.py").write_text("def test_a():\n    assert True\n")
    (project / "test_b.py").write_text("def test_b():\n    assert False\n")
    command = "python -m pytest -q"
    options = {"command": command, "liveOutput": True}
    async with session(project, state=state, init_options=options) as s:
        s.save("test_a.py")
        await s.wait_for(lambda: any(x["kind"] == "end" for x in s.outputs), what="end")
        begins = [(x["phase"], x["command"]) for x in s.outputs if x["kind"] == "begin"]
        assert begins == [
            ("quick", "python -m pytest test_a.py -q --ff"),
            ("full", "python -m pytest -q --ff"),
        ]
        assert len({x["run"] for x in s.outputs}) == 1
        assert s.outputs[-1]["outcome"] == "failed"

"""The per-folder scheduler, driven by fake jobs (no processes)."""

from __future__ import annotations

import asyncio

from lsp_verify.record import Record
from lsp_verify.workspace.verifier import FolderVerifier, RunRequest
from tests.support.jobs import FakeJob


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_fifty_triggers_during_a_run_give_one_trailing_run() -> None:
    job = FakeJob()
    records: list[Record] = []
    v = FolderVerifier("/f", job, on_record=records.append)
    first = v.trigger("save", "a.py")
    await settle()
    futures = [v.trigger("save", f"doc{i}.py") for i in range(50)]
    assert len({id(f) for f in futures}) == 1
    assert v.state == "queued"
    job.release.set()
    await first
    # The trailing run starts at once and is released already: let it end.
    await futures[0]
    await settle()
    assert len(job.requests) == 2
    assert job.max_active == 1
    assert [r.reason for r in records] == ["run 1", "run 2"]
    # The trailing run runs for the newest document.
    assert job.requests[1].document == "doc49.py"
    assert v.state == "idle"


async def test_triggers_after_the_trailing_run_starts_queue_one_more() -> None:
    job = FakeJob()
    v = FolderVerifier("/f", job)
    v.trigger("save")
    await settle()
    second = v.trigger("save")
    job.release.set()
    await settle()
    job.release.clear()  # the trailing run is in flight now and holds
    assert len(job.requests) == 2
    third = v.trigger("save")
    assert third is not second
    assert v.state == "queued"
    job.release.set()
    await third
    assert len(job.requests) == 3
    assert job.max_active == 1


async def test_run_now_during_a_run_returns_the_trailing_runs_record() -> None:
    job = FakeJob()
    v = FolderVerifier("/f", job)
    first = v.trigger("save", "a.py")
    await settle()
    now = asyncio.ensure_future(v.run_now())
    await settle()
    job.release.set()
    first_record = await first
    record = await now
    assert first_record.reason == "run 1"
    assert record.reason == "run 2"
    assert record.trigger == "runNow"
    assert job.requests[1].document == "a.py"


async def test_run_now_when_idle_starts_a_run() -> None:
    job = FakeJob(duration=0.01)
    v = FolderVerifier("/f", job)
    record = await v.run_now("x.py")
    assert record.reason == "run 1"
    assert job.requests[0].trigger == "runNow"


async def test_cancel_kills_the_run_and_drops_the_follower() -> None:
    job = FakeJob()
    records: list[Record] = []
    v = FolderVerifier("/f", job, on_record=records.append)
    running = v.trigger("save")
    await settle()
    queued = v.trigger("save")
    cancelled = await v.cancel()
    assert sorted(r.outcome for r in cancelled) == ["cancelled", "cancelled"]
    assert (await running).outcome == "cancelled"
    assert (await queued).outcome == "cancelled"
    await settle()
    assert len(job.requests) == 1  # the follower never started
    assert v.state == "idle"
    assert [r.outcome for r in records] == ["cancelled"]


async def test_a_job_that_raises_does_not_wedge_the_folder() -> None:
    calls = 0

    async def broken(request: RunRequest) -> Record:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("boom")
        return Record.not_started(request.folder, request.trigger, "passed", "ok")

    v = FolderVerifier("/f", broken)
    first = await v.run_now()
    assert first.outcome == "failed"
    assert "boom" in first.reason
    second = await v.run_now()
    assert second.outcome == "passed"


async def test_state_changes_are_reported() -> None:
    job = FakeJob()
    states: list[str] = []
    v = FolderVerifier("/f", job, on_state=states.append)
    v.trigger("save")
    await settle()
    v.trigger("save")
    job.release.set()
    pending = v.pending()
    assert pending is not None
    await pending
    await settle()
    assert states[0] == "running"
    assert states[1] == "queued"
    assert states[-1] == "idle"


async def test_close_waits_for_the_run_to_end() -> None:
    job = FakeJob()
    v = FolderVerifier("/f", job)
    v.trigger("save")
    await settle()
    await v.close()
    assert job.active == 0
    assert v.state == "idle"


async def test_absorb_folds_the_queued_run_into_the_running_one() -> None:
    release = asyncio.Event()
    requests: list[RunRequest] = []

    async def job(request: RunRequest) -> Record:
        requests.append(request)
        await release.wait()  # e.g. waiting for the user's answer to a question
        request.absorb()
        return Record.not_started(request.folder, request.trigger, "passed", "answered")

    v = FolderVerifier("/f", job)
    first = v.trigger("save")
    await settle()
    later = [v.trigger("save") for _ in range(10)]
    assert v.state == "queued"
    release.set()
    assert (await first).reason == "answered"
    assert [(await f).reason for f in later] == ["answered"] * 10
    await settle()
    assert len(requests) == 1
    assert v.state == "idle"

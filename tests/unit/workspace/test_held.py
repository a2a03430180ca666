"""Triggers held back and what a pull waits for (lsp_verify/workspace/held.py): a count with an
event set while nothing is held, and `settle`, which waits for every held trigger to be let
through and then for the newest run asked for, whose verdict saw the change."""

from __future__ import annotations

import asyncio

from lsp_verify.record import Record
from lsp_verify.workspace.held import Holds, settle
from lsp_verify.workspace.verifier import FolderVerifier
from tests.support.jobs import FakeJob


async def turns(count: int = 5) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_nothing_held_waits_for_nothing() -> None:
    holds = Holds()
    assert holds.count == 0
    await asyncio.wait_for(holds.none_held(), 1)


async def test_none_held_waits_until_every_hold_is_released() -> None:
    holds = Holds()
    first, second = holds.hold(), holds.hold()
    assert holds.count == 2
    waiting = asyncio.ensure_future(holds.none_held())
    first()
    await turns()
    assert not waiting.done() and holds.count == 1
    second()
    await asyncio.wait_for(waiting, 1)
    assert holds.count == 0


async def test_a_release_counts_once_however_often_it_is_called() -> None:
    holds = Holds()
    release = holds.hold()
    other = holds.hold()
    release()
    release()
    assert holds.count == 1
    other()
    assert holds.count == 0
    holds.hold()  # held again after all were released
    waiting = asyncio.ensure_future(holds.none_held())
    await turns()
    assert not waiting.done()
    waiting.cancel()


async def test_settle_with_nothing_held_and_no_run_returns_at_once() -> None:
    verifier = FolderVerifier("/f", FakeJob())
    await asyncio.wait_for(settle(Holds(), verifier), 1)


async def test_settle_waits_for_the_held_trigger_then_for_the_run_it_asked_for() -> None:
    job = FakeJob()
    records: list[Record] = []
    verifier = FolderVerifier("/f", job, on_record=records.append)
    holds = Holds()
    release = holds.hold()
    settled = asyncio.ensure_future(settle(holds, verifier))
    await turns()
    assert not settled.done()
    # The held trigger goes through: a run starts, and settle waits for its end.
    verifier.trigger("save", "a.py")
    release()
    await turns()
    assert not settled.done() and verifier.state == "running"
    job.release.set()
    await asyncio.wait_for(settled, 1)
    assert len(records) == 1


async def test_a_trigger_held_while_a_run_ends_is_waited_for_too() -> None:
    job = FakeJob()
    verifier = FolderVerifier("/f", job)
    holds = Holds()
    verifier.trigger("save", "a.py")
    settled = asyncio.ensure_future(settle(holds, verifier))
    await turns()
    release = holds.hold()  # held while settle waits for the run
    job.release.set()
    await turns(20)
    assert not settled.done()
    release()
    await asyncio.wait_for(settled, 1)


async def test_a_settle_given_up_leaves_the_run_going() -> None:
    job = FakeJob()
    verifier = FolderVerifier("/f", job)
    run = verifier.trigger("save", "a.py")
    settled = asyncio.ensure_future(settle(Holds(), verifier))
    await turns()
    settled.cancel()
    await turns()
    assert settled.cancelled() and not run.done()  # the run is shielded from the pull
    job.release.set()
    assert (await asyncio.wait_for(run, 1)).outcome == "failed"

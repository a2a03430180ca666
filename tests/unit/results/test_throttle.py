"""Batching on the event loop (lsp_verify/results/throttle.py): a flush at most once every
`interval`; eager, the first news after a quiet interval goes out at once."""

from __future__ import annotations

import asyncio

from lsp_verify.results.throttle import Throttle

INTERVAL = 0.05


class Flushes:
    def __init__(self) -> None:
        self.at: list[float] = []

    def __call__(self) -> None:
        self.at.append(asyncio.get_running_loop().time())


async def test_pokes_within_an_interval_gather_into_one_flush_an_interval_later() -> None:
    flushes = Flushes()
    throttle = Throttle(INTERVAL, flushes, eager=False)
    loop = asyncio.get_running_loop()
    poked = loop.time()
    for _ in range(100):
        throttle.poke()
    assert flushes.at == []  # never at once: it waits to gather
    await asyncio.sleep(INTERVAL * 3)
    assert len(flushes.at) == 1
    assert flushes.at[0] - poked >= INTERVAL * 0.9


async def test_eager_the_first_poke_after_a_quiet_interval_flushes_at_once() -> None:
    flushes = Flushes()
    throttle = Throttle(INTERVAL, flushes, eager=True)
    throttle.poke()
    assert len(flushes.at) == 1  # the first news without delay
    throttle.poke()
    throttle.poke()
    assert len(flushes.at) == 1  # then at most one flush an interval
    await asyncio.sleep(INTERVAL * 3)
    assert len(flushes.at) == 2
    assert flushes.at[1] - flushes.at[0] >= INTERVAL * 0.9
    await asyncio.sleep(INTERVAL * 2)  # quiet for an interval: at once again
    throttle.poke()
    assert len(flushes.at) == 3


async def test_now_flushes_at_once_and_drops_the_flush_that_was_due() -> None:
    flushes = Flushes()
    throttle = Throttle(INTERVAL, flushes, eager=False)
    throttle.poke()
    throttle.now()
    assert len(flushes.at) == 1
    await asyncio.sleep(INTERVAL * 3)
    assert len(flushes.at) == 1
    throttle.poke()  # a poke after `now` schedules again
    await asyncio.sleep(INTERVAL * 3)
    assert len(flushes.at) == 2


async def test_cancel_drops_the_flush_that_was_due() -> None:
    flushes = Flushes()
    throttle = Throttle(INTERVAL, flushes, eager=False)
    throttle.poke()
    throttle.cancel()
    await asyncio.sleep(INTERVAL * 3)
    assert flushes.at == []
    throttle.cancel()  # nothing due: nothing to do

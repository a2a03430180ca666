"""What a full run_plan run costs over a bare subprocess.run of the same `sh -c`.

    python benchmarks/overhead.py [--runs 200] [--command true]

The two are measured in pairs, alternating which goes first, in one process and one event
loop: this machine's speed drifts within seconds, so the median of the paired differences
is the figure to trust, more than the difference of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time

from lsp_verify.planning.plan import command_plan
from lsp_verify.running.execute import run_plan


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def measure(command: str, runs: int, folder: str) -> None:
    plan = command_plan(folder, command, "benchmark")

    def bare() -> float:
        start = time.perf_counter()
        subprocess.run(["sh", "-c", command], cwd=folder, check=False)
        return time.perf_counter() - start

    async def ours() -> float:
        start = time.perf_counter()
        result = await run_plan(plan, timeout_ms=60_000, tail_lines=40)
        elapsed = time.perf_counter() - start
        if result.outcome not in ("passed", "failed"):
            raise SystemExit(f"unexpected outcome: {result}")
        return elapsed

    for _ in range(10):  # warm up imports, caches and the allocator
        bare()
        await ours()
    bare_times: list[float] = []
    our_times: list[float] = []
    for i in range(runs):
        if i % 2:
            b = bare()
            o = await ours()
        else:
            o = await ours()
            b = bare()
        bare_times.append(b)
        our_times.append(o)
    diffs = [o - b for o, b in zip(our_times, bare_times)]

    def ms(seconds: float) -> str:
        return f"{seconds * 1000:7.3f} ms"

    print(f"command: sh -c {command!r}, {runs} paired runs")
    print(
        f"bare subprocess.run  median {ms(statistics.median(bare_times))}"
        f"  p90 {ms(percentile(bare_times, 0.9))}"
    )
    print(
        f"run_plan             median {ms(statistics.median(our_times))}"
        f"  p90 {ms(percentile(our_times, 0.9))}"
    )
    print(
        f"difference (paired)  median {ms(statistics.median(diffs))}"
        f"  p90 {ms(percentile(diffs, 0.9))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(measure(args.command, args.runs, folder))


if __name__ == "__main__":
    main()

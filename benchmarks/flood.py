"""Memory and speed of run_plan for a command that prints a flood of output.

    python benchmarks/flood.py [--mb 1024] [--line-length 100 | 0 for one endless line]

Prints how much the process's peak RSS grew during the run (VmHWM after the run minus
VmRSS before it, with the high-water mark reset first), the throughput and the line count.
The output is never held whole, so the growth must not depend on --mb.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time

from lsp_verify.execute import run_plan
from lsp_verify.plan import command_plan
from lsp_verify.problems.base import Problem


def status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


class CountingSink:
    def __init__(self) -> None:
        self.lines = 0

    def feed(self, line: str) -> None:
        self.lines += 1

    def finish(self) -> list[Problem]:
        return []


async def flood(megabytes: int, line_length: int, folder: str) -> None:
    size = megabytes * 1024 * 1024
    if line_length > 0:
        command = f"yes {'x' * (line_length - 1)} | head -c {size}"
    else:  # one enormous line without a newline
        command = f"head -c {size} /dev/zero | tr '\\0' x"
    plan = command_plan(folder, command, "benchmark")
    sink = CountingSink()
    before = status_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset the high-water mark to the current RSS
    except OSError as e:
        raise SystemExit(f"cannot reset VmHWM here ({e}); peak growth would mean nothing") from e
    start = time.perf_counter()
    result = await run_plan(plan, timeout_ms=3_600_000, tail_lines=40, sink=sink)
    elapsed = time.perf_counter() - start
    peak = status_kib("VmHWM")
    shape = f"lines of {line_length} bytes" if line_length > 0 else "line(s), no newline"
    print(f"output: {megabytes} MiB in {sink.lines} {shape}")
    print(f"outcome: {result.outcome}, exit {result.exit_code}, tail {len(result.tail)} lines")
    print(f"time: {elapsed:.2f} s ({megabytes / elapsed:.0f} MiB/s)")
    print(f"RSS before: {before / 1024:.1f} MiB, peak growth: {(peak - before) / 1024:.2f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024, help="MiB of output (default 1024)")
    parser.add_argument(
        "--line-length", type=int, default=100, help="bytes per line; 0: no newline at all"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(flood(args.mb, args.line_length, folder))


if __name__ == "__main__":
    main()

"""Memory and speed of run_plan for a command that prints a flood of output.

    python benchmarks/flood.py [--mb 1024] [--line-length 100 | 0 for one endless line]
                               [--near-misses]

Prints how much the process's peak RSS grew during the run (VmHWM after the run minus
VmRSS before it, with the high-water mark reset first), the throughput and the line count.
The output is never held whole, so the growth must not depend on --mb.

--near-misses prints, instead of lines of `x`, lines that look like every family's failures
(a pytest section, a traceback frame, `path:line:col:`, jest, mocha, TAP, ESLint, Biome, Node
frames, unittest, doctest, pyright, go test and its panics, make, C assert, URLs and times)
naming files that do not exist, and feeds them to the real problem matchers instead of a
line counter: what matching costs, in time and memory.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import tempfile
import time

from lsp_verify.planning.plan import command_plan
from lsp_verify.problems import make_sink
from lsp_verify.problems.base import Problem
from lsp_verify.running.execute import run_plan

NEAR_MISSES = (
    "=================================== FAILURES ===================================",
    "____________________________________ test_x ____________________________________",
    "tests/test_x.py:8: AssertionError",
    "Traceback (most recent call last):",
    '  File "pkg/x.py", line 3, in f',
    "ValueError: bad",
    # pytest's totals end its report, so that the lines below reach the other matchers
    # rather than being claimed as part of a pytest failure section.
    "============================== 1 failed in 0.01s ===============================",
    "src/x.c:1:2: error: boom [-Wx]",
    "src/x.ts(3,4): error TS2322: nope",
    "error[E0308]: mismatched types",
    "  --> src/x.rs:2:3",
    "  \u25cf sum \u203a adds",
    "    at Object.<anonymous> (src/x.test.js:5:23)",
    "  1 failing",
    "  1) suite",
    "       test:",
    "     TypeError: boom",
    "      at Context.<anonymous> (test/x.test.js:7:12)",
    "      at process.processImmediate (node:internal/timers:483:21)",
    "not ok 1 - test",
    "  ---",
    "  location: 'test/x.test.js:1:1'",
    "  stack: |-",
    "    check (node_modules/dep/index.js:3:11)",
    "  ...",
    "\u2716 test (1.5ms)",
    "  \u2500",
    "src/x.js",
    "  1:7  error  Unexpected var  no-var",
    "src/x.js: line 1, col 7, Error - Unexpected var (no-var)",
    "src/x.js:1:7 lint/style/noVar  \u2501\u2501\u2501\u2501",
    "  \u00d7 Use let or const instead of var.",
    "fetch failed at http://host:8080/a.js:3:4 on 2026-12-01 12:30:45",
    "=" * 70,
    "FAIL: test_x (tests.test_x.T.test_x)",
    "-" * 70,
    "*" * 70,
    'File "pkg/temps.py", line 6, in temps.f',
    "Failed example:",
    "  /pkg/typed.py:10:11 - error: Argument of type",
    "--- FAIL: TestX (0.00s)",
    "    x_test.go:7: got 4, want 5",
    "panic: boom",
    "\t/pkg/x.go:8 +0x1d",
    "make: *** [pkg/Makefile:6: test] Error 1",
    "make[1]: Entering directory '/pkg/sub'",
    "tests: pkg/x.c:9: main: Assertion `x == 1' failed.",
    "pkg/a.py:10: note: see http://host:8080/a.py:3:4",
    "thread 'tests::x' panicked at src/x.rs:8:9:",
)


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


class MatchingSink:
    """The problem matchers a run feeds, counting the lines too."""

    def __init__(self, folder: str) -> None:
        self.lines = 0
        self.sink = make_sink(folder)

    def feed(self, line: str) -> None:
        self.lines += 1
        self.sink.feed(line)

    def finish(self) -> list[Problem]:
        return self.sink.finish()


async def flood(megabytes: int, line_length: int, folder: str, near_misses: bool = False) -> None:
    size = megabytes * 1024 * 1024
    sink: CountingSink | MatchingSink
    if near_misses:
        command = f"yes {shlex.quote(chr(10).join(NEAR_MISSES))} | head -c {size}"
        sink = MatchingSink(folder)
    elif line_length > 0:
        command = f"yes {'x' * (line_length - 1)} | head -c {size}"
        sink = CountingSink()
    else:  # one enormous line without a newline
        command = f"head -c {size} /dev/zero | tr '\\0' x"
        sink = CountingSink()
    plan = command_plan(folder, command, "benchmark")
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
    if near_misses:
        shape = "near-miss lines, through the problem matchers"
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
    parser.add_argument(
        "--near-misses",
        action="store_true",
        help="lines like every family's failures, fed to the real problem matchers",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(flood(args.mb, args.line_length, folder, args.near_misses))


if __name__ == "__main__":
    main()

"""Output that is too much: a command whose output would cost the server gigabytes.

A repository may set `tailLines` up to 100 000, and an output line may be 65 536 characters
long: without a bound on the tail's total size, 1000 lines of emoji made the server peak at
2.2 GB and publish a 750 MB summary, deaf for seconds. SPEC 4: the tail never holds more
than 40 000 characters in all, whatever tailLines says.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from tests.support.lsp_session import session
from tests.support.procs import cpu_seconds

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

EMOJI = "\U0001f600"
LINES, WIDTH = 1000, 60_000  # 240 MB of output in UTF-8; each line under output.LINE_CAP
HEADER = "verify failed (exit 1):\n"
TAIL_CHARS = 40_000  # SPEC 4
PEAK_LIMIT_MB = 150
ANSWER_LIMIT_S = 2.0  # CPU seconds

FLOOD = f"""\
import sys
line = ({EMOJI!r} * {WIDTH} + "\\n").encode("utf-8")
for _ in range({LINES}):
    sys.stdout.buffer.write(line)
sys.stdout.buffer.flush()
sys.exit(1)
"""


def _lsp_verify_children(parent: int) -> list[int]:
    """Children of `parent` started as `python -m lsp_verify` (a fork keeps the command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                ppid = int(handle.read().rsplit(")", 1)[-1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"lsp_verify" in argv:
            found.append(int(entry))
    return found


def server_pids() -> list[int]:
    """The process this test started and, where it stays behind as a keeper of the serving
    process, that one too: whichever of them serves, its peak is among theirs."""
    started = _lsp_verify_children(os.getpid())
    return started + [pid for parent in started for pid in _lsp_verify_children(parent)]


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


async def test_a_tail_flood_costs_no_more_than_a_page(project: Path, state: Path) -> None:
    (project / "flood.py").write_text(FLOOD)
    command = f"{shlex.quote(sys.executable)} flood.py"
    # From the repository, as an attacker would set it: the largest tailLines allowed.
    (project / ".lsp-verify.toml").write_text(
        f"command = {json.dumps(command)}\ntailLines = 100000\n"
    )
    async with session(project, state=state, init_options={"confirm": "never"}) as s:
        pids = server_pids()
        assert pids, "the server's process not found"
        uri = s.save("a.txt", "x\n")
        await s.wait_for(lambda: s.finished(), timeout=120, what="the flood's run to end")

        # What the server spends on the request, in CPU time (a loaded machine does not
        # lengthen that): a server still busy with the flood's summary spends seconds.
        before = cpu_seconds(pids)
        record = await s.command("verify.showLastRun", timeout=60)
        answered = cpu_seconds(pids) - before
        peak = max(peak_rss_mb(pid) for pid in pids)

        assert record["outcome"] == "failed"
        summaries = [d for u, ds in s.publishes if u == uri for d in ds]
        assert summaries, "no summary published"
        message = summaries[-1].message
        assert message.startswith(HEADER)
        assert len(message) <= len(HEADER) + TAIL_CHARS
        tail = record["tail"]
        assert message == HEADER + "\n".join(tail)
        # The newest text is kept, and the tail says that text was cut before it.
        assert tail[0].startswith("[earlier output cut")
        assert tail[-1] == EMOJI * len(tail[-1])
        assert len(tail[-1]) > TAIL_CHARS // 2
        assert peak < PEAK_LIMIT_MB, f"the server peaked at {peak:.0f} MB"
        assert answered < ANSWER_LIMIT_S, f"showLastRun cost {answered:.2f} s of CPU"

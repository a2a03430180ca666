"""Runs of a plan, end to end (steps, runner, reaper, output): kills, results, the tail,
npm steps, manifest snapshots."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_verify.planning.plan import Plan
from lsp_verify.problems.base import Problem
from lsp_verify.running.execute import run_plan
from lsp_verify.running.output import LINE_CAP, TAIL_CHARS, Tail
from lsp_verify.running.reaper import MARKER_VAR, escapees, set_subreaper
from lsp_verify.running.reaper.escapees import reap_escaped
from lsp_verify.running.runner import timeout_marker
from tests.support.procs import alive
from tests.support.runs import plan_for, run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


# ----------------------------------------------------------------------------- helpers


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture
def token() -> Iterator[str]:
    """A `sleep` argument no other process carries; whatever still has it is killed after."""
    value = f"300.{random.randrange(10**9, 10**10)}"
    yield value
    for pid in alive(value):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(params=[False, True], ids=["plain", "subreaper"])
def subreaper(request: pytest.FixtureRequest) -> Iterator[bool]:
    if request.param:
        assert set_subreaper(True)
    yield bool(request.param)
    if request.param:
        set_subreaper(False)


async def until(predicate: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


# Every way a command can leave something behind: a background job, a subshell, nohup, a
# setsid daemon holding the pipe, and a setsid double fork whose middle process exits.
def spawner(tok: str) -> str:
    return (
        f"sleep {tok} &\n"
        f"( sleep {tok}; true ) &\n"
        f"nohup sleep {tok} >/dev/null 2>&1 &\n"
        f"setsid sleep {tok} &\n"
        f"setsid sh -c 'sleep {tok} & exit 0' &\n"
        "echo ready\n"
    )


SPAWNED = 5


# ------------------------------------------------------------------ timeout, cancel, kill


async def test_timeout_kills_group_and_escaped(tmp_path: Path, token: str, subreaper: bool) -> None:
    ready = asyncio.Event()
    timeout_ms = 1000
    started = time.monotonic()
    task = asyncio.ensure_future(
        run(
            tmp_path,
            spawner(token) + f"sleep {token}\n",
            timeout_ms=timeout_ms,
            on_line=lambda line: line == "ready" and ready.set(),
        )
    )
    await asyncio.wait_for(ready.wait(), 5)
    await until(lambda: len(alive(token)) >= SPAWNED + 1)
    result = await task
    elapsed_ms = (time.monotonic() - started) * 1000

    assert alive(token) == []
    assert result.outcome == "timed-out"
    assert result.exit_code is None
    assert result.tail[-1] == timeout_marker(timeout_ms)
    assert result.tail[-1] == f"[verify command timed out after {timeout_ms}ms and was killed]"
    assert result.tail[0] == "ready"
    assert timeout_ms <= elapsed_ms < timeout_ms + 500
    assert timeout_ms <= result.duration_ms < timeout_ms + 500


async def test_normal_exit_leaves_no_daemon(tmp_path: Path, token: str, subreaper: bool) -> None:
    script = (
        # A double-forked daemon, a plain background job, one without our environment
        # marker (only the group kill reaches it), and a short-lived grandchild whose parent
        # is gone (under a subreaper it becomes our zombie).
        f"setsid sh -c 'sleep {token} & echo $! > daemon.pid; exit 0' &\n"
        f"sleep {token} &\n"
        f"env -i sleep {token} &\n"
        "( sleep 0.01 & echo $! > quick.pid )\n"
        "while [ ! -s daemon.pid ]; do sleep 0.01; done\n"
        "echo ready\n"
        "while [ ! -e go ]; do sleep 0.01; done\n"
        "echo done\n"
    )
    ready = asyncio.Event()
    task = asyncio.ensure_future(
        run(tmp_path, script, on_line=lambda line: line == "ready" and ready.set())
    )
    await asyncio.wait_for(ready.wait(), 5)
    await until(lambda: len(alive(token)) == 3)
    daemon = int((tmp_path / "daemon.pid").read_text())
    quick = int((tmp_path / "quick.pid").read_text())
    if subreaper:
        await until(lambda: state_of(quick) == "Z")
    (tmp_path / "go").touch()
    result = await asyncio.wait_for(task, 5)

    assert (result.outcome, result.exit_code) == ("passed", 0)
    assert result.tail == ("ready", "done")
    assert alive(token) == []
    if subreaper:
        # Re-parented to us: killed and reaped, or reaped; not even a zombie remains.
        assert state_of(daemon) is None
        assert state_of(quick) is None


def state_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0].decode()
    except OSError:
        return None


async def test_cancel_event_kills_everything(tmp_path: Path, token: str) -> None:
    cancel = asyncio.Event()
    ready = asyncio.Event()
    task = asyncio.ensure_future(
        run(
            tmp_path,
            spawner(token) + f"sleep {token}\n",
            cancel=cancel,
            on_line=lambda line: line == "ready" and ready.set(),
        )
    )
    await asyncio.wait_for(ready.wait(), 5)
    await until(lambda: len(alive(token)) >= SPAWNED + 1)
    cancel.set()
    result = await asyncio.wait_for(task, 2)
    assert (result.outcome, result.exit_code) == ("cancelled", None)
    assert alive(token) == []


async def test_task_cancellation_kills_the_group(tmp_path: Path, token: str) -> None:
    ready = asyncio.Event()
    task = asyncio.ensure_future(
        run(
            tmp_path,
            spawner(token) + f"sleep {token}\n",
            on_line=lambda line: line == "ready" and ready.set(),
        )
    )
    await asyncio.wait_for(ready.wait(), 5)
    await until(lambda: len(alive(token)) >= SPAWNED + 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert alive(token) == []


async def test_timeout_spans_all_npm_steps(tmp_path: Path) -> None:
    steps = ("sleep 0.3", "sleep 0.3", "touch third")
    plan = plan_for(tmp_path, "npm test", runner="npm", steps=steps)
    result = await run_plan(plan, timeout_ms=450, tail_lines=5)
    assert (result.outcome, result.exit_code) == ("timed-out", None)
    assert result.tail == (timeout_marker(450),)
    assert not (tmp_path / "third").exists()


async def test_on_spawn_gets_the_session_leader(tmp_path: Path) -> None:
    pids: list[int] = []
    result = await run(tmp_path, "echo $$", on_spawn=pids.append)
    assert result.tail == (str(pids[0]),)


async def test_reap_escaped_kills_only_its_own_run(token: str) -> None:
    mine, other = uuid.uuid4().hex, uuid.uuid4().hex
    procs = [
        subprocess.Popen(
            ["sleep", token],
            env={**os.environ, MARKER_VAR: f"outer:{run_id}"},
            start_new_session=True,
        )
        for run_id in (mine, other)
    ]
    try:
        await until(lambda: len(alive(token)) == 2)
        assert reap_escaped(mine) == 1
        # Our own child: reaped by reap_escaped itself, so no zombie is left.
        assert not os.path.exists(f"/proc/{procs[0].pid}")
        assert alive(token) == [procs[1].pid]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


async def test_marker_keeps_an_outer_runs_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, "outer0")
    result = await run(tmp_path, f"echo ${MARKER_VAR}")
    assert re.fullmatch(r"outer0:[0-9a-f]{32}", result.tail[0])


@pytest.mark.parametrize(("alone", "scans"), [(True, 0), (False, 1)])
async def test_the_scan_for_escapees_is_skipped_only_when_nothing_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool, scans: int
) -> None:
    calls: list[bytes] = []
    real = escapees.kill_escaped

    async def counting(token: bytes, window: object, blocking: bool) -> int:
        calls.append(token)
        return await real(token, window, blocking)  # type: ignore[arg-type]

    monkeypatch.setattr(escapees, "kill_escaped", counting)
    monkeypatch.setattr(escapees, "nothing_else_forked", lambda window: alone)
    result = await run(tmp_path, "exit 4")
    assert (result.outcome, result.exit_code) == ("failed", 4)
    assert len(calls) == scans


async def test_a_forking_command_is_scanned_and_its_escapee_killed(
    tmp_path: Path, token: str
) -> None:
    """The real counter, no stubs: a command that leaves a setsid daemon is not `alone`."""
    result = await run(tmp_path, f"setsid sleep {token} & exit 0")
    assert result.outcome == "passed"
    assert alive(token) == []


async def test_the_environment_is_read_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LSP_VERIFY_TEST_VALUE", "one")
    first = await run(tmp_path, "echo $LSP_VERIFY_TEST_VALUE")
    monkeypatch.setenv("LSP_VERIFY_TEST_VALUE", "two")
    second = await run(tmp_path, "echo $LSP_VERIFY_TEST_VALUE")
    monkeypatch.delenv("LSP_VERIFY_TEST_VALUE")
    third = await run(tmp_path, "echo ${LSP_VERIFY_TEST_VALUE-unset}")
    assert (first.tail, second.tail, third.tail) == (("one",), ("two",), ("unset",))


# ------------------------------------------------------------------- results and errors


async def test_missing_command_is_exit_127(tmp_path: Path) -> None:
    result = await run(tmp_path, "nosuch_cmd_xyz")
    assert (result.outcome, result.exit_code, result.reason) == ("failed", 127, None)
    assert "nosuch_cmd_xyz" in result.tail[-1] and "not found" in result.tail[-1]


async def test_nul_byte_in_command_is_a_failed_result(tmp_path: Path) -> None:
    result = await run(tmp_path, "echo a\0b")
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert result.reason is not None and "null" in result.reason


async def test_passed_failed_and_signal_exit(tmp_path: Path) -> None:
    passed = await run(tmp_path, "true")
    assert (passed.outcome, passed.exit_code, passed.tail) == ("passed", 0, ())
    failed = await run(tmp_path, "exit 3")
    assert (failed.outcome, failed.exit_code) == ("failed", 3)
    killed = await run(tmp_path, "kill -9 $$")
    assert (killed.outcome, killed.exit_code) == ("failed", 137)


async def test_runs_in_the_folder_with_stdin_closed(tmp_path: Path) -> None:
    result = await run(tmp_path, "pwd; cat; echo end; echo err >&2")
    assert result.tail == (str(tmp_path), "end", "err")


async def test_started_at_and_duration(tmp_path: Path) -> None:
    result = await run(tmp_path, "sleep 0.05")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", result.started_at)
    assert 50 <= result.duration_ms < 2000


class Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def feed(self, line: str) -> None:
        self.lines.append(line)

    def finish(self) -> list[Problem]:
        return [Problem(path="a.py", line=len(self.lines), column=1, message="seen")]


async def test_sink_and_on_line_see_every_cleaned_line(tmp_path: Path) -> None:
    sink = Recorder()
    progress: list[str] = []
    result = await run(
        tmp_path, "seq 1 100; printf '\\033[1mbold\\033[0m'", sink=sink, on_line=progress.append
    )
    expected = [str(i) for i in range(1, 101)] + ["bold"]
    assert sink.lines == expected
    assert progress == expected
    assert result.tail == tuple(expected[-40:])
    assert result.problems == (Problem(path="a.py", line=101, column=1, message="seen"),)


async def test_a_failing_sink_does_not_lose_the_verdict(tmp_path: Path) -> None:
    class Broken:
        def feed(self, line: str) -> None:
            raise ValueError("matcher bug")

        def finish(self) -> list[Problem]:
            raise ValueError("matcher bug")

    result = await run(tmp_path, "echo a; echo b; exit 2", sink=Broken())
    assert (result.outcome, result.exit_code, result.tail) == ("failed", 2, ("a", "b"))
    assert result.problems == ()


# ------------------------------------------------------------------------------- tail


@pytest.mark.parametrize(
    ("command", "tail_lines", "expected"),
    [
        ("seq 1 100", 5, ("96", "97", "98", "99", "100")),
        ("seq 1 3", 40, ("1", "2", "3")),
        ("printf 'a\\r\\nb\\r\\n'", 40, ("a", "b")),
        ("printf 'x\\ny'", 40, ("x", "y")),
        ("printf '10%%\\r20%%\\r30%%\\n'", 40, ("30%",)),
        ("printf '10%%\\r20%%\\r'", 40, ("20%",)),
        ("printf 'a\\377b\\n'", 40, ("a\ufffdb",)),
        ("printf 'cut \\303'", 40, ("cut \ufffd",)),
        ("printf '\\033[31mred\\033[0m \\033]0;title\\007ok\\n'", 40, ("red ok",)),
        ("printf '\\033[1;32mPASS\\033[0m\\n\\n'", 40, ("PASS", "")),
    ],
    ids=[
        "last-n",
        "fewer",
        "crlf",
        "no-final-newline",
        "cr-progress",
        "cr-at-eof",
        "invalid-utf8",
        "truncated-utf8",
        "ansi",
        "ansi-empty-line",
    ],
)
async def test_tail(
    tmp_path: Path, command: str, tail_lines: int, expected: tuple[str, ...]
) -> None:
    result = await run(tmp_path, command, tail_lines=tail_lines)
    assert result.tail == expected


async def test_multibyte_split_across_reads(tmp_path: Path) -> None:
    result = await run(tmp_path, "printf 'caf\\303'; sleep 0.05; printf '\\251\\n'")
    assert result.tail == ("café",)


async def test_timeout_marker_is_last_within_tail_lines(tmp_path: Path) -> None:
    result = await run(tmp_path, "seq 1 10; sleep 5", timeout_ms=300, tail_lines=3)
    assert result.tail == ("9", "10", timeout_marker(300))


async def test_huge_line_is_capped_and_still_a_line(tmp_path: Path) -> None:
    size = 3_000_000
    lines: list[str] = []
    result = await run(
        tmp_path, f"head -c {size} /dev/zero | tr '\\0' y; echo; echo after", on_line=lines.append
    )
    # The matchers and progress see the line's start, capped...
    note = f" [line truncated: {size - LINE_CAP} more characters dropped]"
    assert lines == ["y" * LINE_CAP + note, "after"]
    # ...and the tail, bounded in characters, its end.
    assert result.tail[-1] == "after"
    assert result.tail[-2].endswith("y" + note)
    assert result.tail[0] == Tail(40).note
    assert len("\n".join(result.tail)) == TAIL_CHARS - 1


async def test_tail_flood_is_bounded_in_characters_whatever_tail_lines_says(
    tmp_path: Path,
) -> None:
    # 1000 lines of 60 000 emoji (each under LINE_CAP): 60 million characters of tail,
    # gigabytes once published, without a bound on the tail's total size.
    emoji = "\U0001f600"
    script = tmp_path / "flood.py"
    script.write_text(
        "import sys\n"
        f"line = ({emoji!r} * 60000 + '\\n').encode()\n"
        "for _ in range(1000):\n"
        "    sys.stdout.buffer.write(line)\n"
    )
    before = rss_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        hwm = True
    except OSError:
        hwm = False
    result = await run(
        tmp_path, f"{sys.executable} flood.py; exit 1", tail_lines=100_000, timeout_ms=60_000
    )
    assert result.outcome == "failed"
    assert len("\n".join(result.tail)) < TAIL_CHARS
    # The newest text: the end of the last line, and a note that text was cut before it.
    assert result.tail[0] == Tail(1).note
    assert len(result.tail) == 2
    assert result.tail[-1] == emoji * (TAIL_CHARS - len(result.tail[0]) - 2)
    if hwm:
        grown_kib = rss_kib("VmHWM") - before
        assert grown_kib < 20 * 1024, f"runner grew RSS by {grown_kib} KiB"


def rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(field)


async def test_memory_stays_flat_for_a_flood(tmp_path: Path) -> None:
    megabytes = 50
    line = "x" * 999
    before = rss_kib("VmRSS")
    peak = [before]

    def sample(text: str) -> None:
        # Sampled too, in case the high-water mark cannot be reset on this kernel.
        if random.random() < 0.001:
            peak[0] = max(peak[0], rss_kib("VmRSS"))

    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current RSS
        hwm = True
    except OSError:
        hwm = False
    result = await run(
        tmp_path, f"yes {line} | head -c {megabytes * 1024 * 1024}", on_line=sample, tail_lines=40
    )
    grown_kib = (rss_kib("VmHWM") if hwm else peak[0]) - before
    assert result.outcome == "passed"
    assert result.tail[-1].startswith("x")  # the last, partial line still counts
    assert grown_kib < 20 * 1024, f"runner grew RSS by {grown_kib} KiB for {megabytes} MB"


# --------------------------------------------------------------------------------- npm


def npm_plan(folder: Path, scripts: dict[str, str], **fields: object) -> Plan:
    names = [n for n in ("pretest", "test", "posttest") if n in scripts]
    snapshot = json.dumps({"name": "demo", "version": "1.2.3", "scripts": scripts}).encode()
    (folder / "package.json").write_bytes(snapshot)
    values: dict[str, object] = {
        "source": "detected",
        "runner": "npm",
        "manifest": "package.json",
        "manifest_sha256": sha(snapshot),
        "steps": tuple(scripts[n] for n in names),
        "snapshot": snapshot,
        "env": (("npm_package_name", "demo"), ("npm_package_version", "1.2.3")),
    }
    values.update(fields)
    return plan_for(folder, "npm test", **values)


async def test_npm_steps_in_order_with_npm_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    decoy_dir = tmp_path / "decoy"
    decoy_dir.mkdir()
    for folder, says in ((bin_dir, "from node_modules"), (decoy_dir, "decoy")):
        tool = folder / "sometool"
        tool.write_text(f"#!/bin/sh\necho {says} $npm_lifecycle_event\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{decoy_dir}{os.pathsep}{os.environ['PATH']}")
    plan = npm_plan(
        tmp_path,
        {
            "pretest": "mkdir -p sub && cd sub && export LEAK=1 && echo pre $npm_lifecycle_event",
            "test": "echo test $npm_lifecycle_event $npm_package_name $npm_package_version"
            ' "$INIT_CWD" "$PWD" leak=${LEAK:-no} && sometool',
            "posttest": "echo post $npm_lifecycle_event",
        },
    )
    # Edited after planning: the run still executes the approved script strings.
    (tmp_path / "package.json").write_text('{"scripts": {"test": "touch edited"}}')
    result = await run_plan(plan, timeout_ms=5000, tail_lines=40)
    assert (result.outcome, result.exit_code) == ("passed", 0)
    assert result.tail == (
        "pre pretest",
        f"test test demo 1.2.3 {tmp_path} {tmp_path} leak=no",
        "from node_modules test",
        "post posttest",
    )
    assert not (tmp_path / "edited").exists()


async def test_npm_stops_at_the_first_failing_step(tmp_path: Path) -> None:
    plan = npm_plan(
        tmp_path, {"pretest": "echo one", "test": "echo two; exit 4", "posttest": "echo three"}
    )
    result = await run_plan(plan, timeout_ms=5000, tail_lines=40)
    assert (result.outcome, result.exit_code, result.tail) == ("failed", 4, ("one", "two"))


async def test_npm_two_steps_are_named_from_the_snapshot(tmp_path: Path) -> None:
    plan = npm_plan(
        tmp_path, {"test": "echo $npm_lifecycle_event", "posttest": "echo $npm_lifecycle_event"}
    )
    result = await run_plan(plan, timeout_ms=5000, tail_lines=40)
    assert result.tail == ("test", "posttest")


async def test_npm_step_output_without_newline_stays_its_own_line(tmp_path: Path) -> None:
    plan = npm_plan(tmp_path, {"pretest": "printf one", "test": "printf two"})
    result = await run_plan(plan, timeout_ms=5000, tail_lines=40)
    assert result.tail == ("one", "two")


# --------------------------------------------------------------- snapshots, fingerprints


async def test_makefile_runs_in_place_as_typed(tmp_path: Path) -> None:
    """`$(MAKEFILE_LIST)` names the real Makefile, as with `make test` typed in the folder;
    an edit after planning skips the run rather than running what was not approved."""
    folder = tmp_path / "a dir"
    folder.mkdir()
    planned = b"test:\n\t@echo planned from $(firstword $(MAKEFILE_LIST)) in $(CURDIR)\n"
    (folder / "Makefile").write_bytes(planned)
    plan = plan_for(
        folder,
        "make test",
        source="detected",
        runner="make",
        manifest="Makefile",
        manifest_sha256=sha(planned),
    )
    bare = subprocess.run(["make", "test"], cwd=folder, capture_output=True, text=True)
    result = await run_plan(plan, timeout_ms=10_000, tail_lines=40)
    assert (result.outcome, result.exit_code) == ("passed", bare.returncode)
    assert (
        result.tail == (f"planned from Makefile in {folder}",) == tuple(bare.stdout.split("\n")[:1])
    )

    (folder / "Makefile").write_bytes(b"test:\n\t@touch edited\n")
    changed = await run_plan(plan, timeout_ms=10_000, tail_lines=40)
    assert (changed.outcome, changed.reason) == ("skipped", "manifest changed: Makefile")
    assert not (folder / "edited").exists()


async def test_pytest_ini_runs_in_place_as_typed(tmp_path: Path) -> None:
    """No `-c <copy>`: pytest reads the real pytest.ini, so `pythonpath` and `testpaths`
    resolve against the folder."""
    folder = tmp_path / "it's a b"
    folder.mkdir()
    planned = b"[pytest]\naddopts = -planned\n"
    (folder / "pytest.ini").write_bytes(planned)
    # A stand-in for pytest that shows what it was given.
    plan = plan_for(
        folder,
        'echo args: "$*"',
        source="detected",
        runner="pytest",
        manifest="pytest.ini",
        manifest_sha256=sha(planned),
    )
    result = await run_plan(plan, timeout_ms=10_000, tail_lines=40)
    assert result.tail == ("args: ",)


@pytest.mark.parametrize(
    ("manifest", "runner_name"),
    [
        ("pyproject.toml", "pytest"),
        ("setup.cfg", "pytest"),
        ("tox.ini", "tox"),
        ("Cargo.toml", "cargo"),
        (".lsp-verify.toml", None),
    ],
)
async def test_changed_manifest_is_skipped(
    tmp_path: Path, manifest: str, runner_name: str | None
) -> None:
    original = b"[tool.pytest.ini_options]\n"
    (tmp_path / manifest).write_bytes(original)
    plan = plan_for(
        tmp_path,
        "touch ran",
        source="detected" if runner_name else "project-file",
        runner=runner_name,
        manifest=manifest,
        manifest_sha256=sha(original),
    )
    unchanged = await run_plan(plan, timeout_ms=5000, tail_lines=5)
    assert (unchanged.outcome, unchanged.exit_code) == ("passed", 0)
    assert (tmp_path / "ran").exists()
    (tmp_path / "ran").unlink()

    (tmp_path / manifest).write_bytes(original + b"# edited\n")
    changed = await run_plan(plan, timeout_ms=5000, tail_lines=5)
    assert (changed.outcome, changed.exit_code) == ("skipped", None)
    assert changed.reason == f"manifest changed: {manifest}"
    assert not (tmp_path / "ran").exists()

    (tmp_path / manifest).unlink()
    gone = await run_plan(plan, timeout_ms=5000, tail_lines=5)
    assert (gone.outcome, gone.reason) == ("skipped", f"manifest changed: {manifest}")


async def test_changed_script_is_skipped(tmp_path: Path) -> None:
    script = tmp_path / ".gptme" / "verify-completion.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho planned\n")
    script.chmod(0o755)
    plan = plan_for(
        tmp_path,
        ".gptme/verify-completion.sh",
        source="script",
        manifest=".gptme/verify-completion.sh",
        manifest_sha256=sha(script.read_bytes()),
    )
    assert (await run_plan(plan, timeout_ms=5000, tail_lines=5)).tail == ("planned",)
    script.write_text("#!/bin/sh\necho edited\n")
    result = await run_plan(plan, timeout_ms=5000, tail_lines=5)
    assert (result.outcome, result.tail) == ("skipped", ())
    assert result.reason == "manifest changed: .gptme/verify-completion.sh"


async def test_npm_background_jobs_of_pretest_live_until_the_run_ends(
    tmp_path: Path, token: str
) -> None:
    """`"pretest": "node server.js &"`: under npm the server is still there for `test`; so
    it is here, and it dies with the run at its end, as every process of a run does."""
    server = f"sh -c 'while :; do date +%s%N > beat; sleep 0.02; done' {token} &"
    # The first beat may come after `test` starts (so it would under npm): wait for it. Then
    # a new beat within 5 s says the job is alive (a loaded machine may be slow to beat).
    beating = (
        "until [ -s beat ]; do sleep 0.01; done; a=$(cat beat); n=0;"
        ' while [ "$(cat beat)" = "$a" ] && [ $n -lt 250 ]; do sleep 0.02; n=$((n+1)); done;'
        ' [ "$(cat beat)" != "$a" ] && echo'
    )
    plan = npm_plan(
        tmp_path,
        {"pretest": server, "test": f"{beating} server up", "posttest": f"{beating} still up"},
    )
    result = await run_plan(plan, timeout_ms=10_000, tail_lines=40)
    assert (result.outcome, result.exit_code) == ("passed", 0), result.tail
    assert result.tail == ("server up", "still up")
    await until(lambda: alive(token) == [])


async def test_npm_background_jobs_die_when_a_later_step_fails(tmp_path: Path, token: str) -> None:
    plan = npm_plan(tmp_path, {"pretest": f"sleep {token} &", "test": "exit 3"})
    result = await run_plan(plan, timeout_ms=10_000, tail_lines=40)
    assert (result.outcome, result.exit_code) == ("failed", 3)
    await until(lambda: alive(token) == [], timeout=2)

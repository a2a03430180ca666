"""Files a hostile repository ships, made to be expensive to read (SPEC section 7: the
repository is not the user): each is read at a bounded cost, never a frozen server.

Each test puts the file in the folder, lets the server settle, then sends the event that
makes the server read it (a watched change for the ignore rules, a save for
`.lsp-verify.toml` and the manifests the planner reads), with a cheap request right behind.
What the event costs is the server's CPU time (its keeper's included), which a loaded machine
does not lengthen; the request must still be answered within a second. The settings keep
the run cheap: the command is `true` (or a `pytest` that does nothing), confirm is never.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.stdio import StdioClient
from tests.support.wire import did_save, frame, nested_frames, show_last_run

CPU_BUDGET = 0.2  # seconds of server CPU for one event and the request behind it
ANSWER_WITHIN = 1.0  # seconds, wall clock, for that request


@pytest.fixture
def serve(state: Path, tmp_path: Path) -> Iterator[Callable[..., StdioClient]]:
    """Start the server on a folder, its stderr kept; every server started is killed after."""
    servers: list[StdioClient] = []

    def start(project: Path, **options: Any) -> StdioClient:
        server = StdioClient(state, stderr=tmp_path / f"stderr-{len(servers)}.log")
        servers.append(server)
        settings = {"command": "true", "confirm": "never", **options}
        server.started(project, options=settings)
        server.send(show_last_run(2))
        server.response(2)  # what `initialized` started is done
        return server

    yield start
    for server in servers:
        server.kill()


def last_run(server: StdioClient, rid: int) -> object:
    server.send(show_last_run(rid))
    record = server.response(rid)["result"]
    return record["startedAt"] if isinstance(record, dict) else None


def event_cost(server: StdioClient, event: bytes, runs: bool = True) -> float:
    """Send `event` and a request right behind it; the server CPU both cost, once the request
    was answered within ANSWER_WITHIN and the run the event starts (`runs`) has ended."""
    before_run = last_run(server, 80)
    before = server.cpu_seconds()
    start = time.monotonic()
    server.send(event + show_last_run(90))
    server.response(90, timeout=ANSWER_WITHIN + 5)  # past the bound: a hang guard only
    answered = time.monotonic() - start
    assert answered < ANSWER_WITHIN, f"answered after {answered:.2f} s"
    deadline = time.monotonic() + (60 if runs else 0.5)
    rid = 100
    while time.monotonic() < deadline:
        time.sleep(0.1)
        rid += 1
        if runs and last_run(server, rid) != before_run:
            break
    else:
        assert not runs, "the event started no run"
    return server.cpu_seconds() - before


def assert_cheap(server: StdioClient, event: bytes, runs: bool = True) -> None:
    spent = event_cost(server, event, runs)
    assert spent < CPU_BUDGET, f"{spent:.2f} s of server CPU for one event"
    assert "Traceback" not in server.stderr_text(), server.stderr_text()[-3000:]


def watched(*uris: str) -> bytes:
    changes = [{"uri": uri, "type": 2} for uri in uris]
    return frame({"method": "workspace/didChangeWatchedFiles", "params": {"changes": changes}})


# --- .gitignore: read on a watched change ---------------------------------------------------


@pytest.mark.parametrize("length", [36, 200])
def test_a_backtracking_gitignore_pattern(
    serve: Callable[..., StdioClient], project: Path, length: int
) -> None:
    """pathspec's regular expression took 1.5 s of CPU for 36 a's and never ended for 200."""
    (project / ".gitignore").write_text("a*a*a*a*a*a*a*a*a*a*b\n")
    server = serve(project)
    assert_cheap(server, watched((project / ("a" * length)).as_uri()))


def _many_patterns(count: int) -> str:
    shapes = ("*{0}*.tmp", "/build{0}/**", "**/gen{0}/*.py", "out{0}/", "x{0}?[ab]", "!k{0}")
    return "".join(shapes[i % len(shapes)].format(i) + "\n" for i in range(count))


def test_many_gitignore_patterns_and_a_deep_path(
    serve: Callable[..., StdioClient], project: Path
) -> None:
    """20 000 patterns and a change 200 directories down: 7.4 s when every level of every
    path was matched against every pattern again."""
    (project / ".gitignore").write_text(_many_patterns(20_000))
    server = serve(project)
    deep = project.joinpath(*(f"d{i}" for i in range(200)))
    assert_cheap(server, watched((deep / "a.py").as_uri()))


def test_a_gitignore_seen_again_through_a_symlink_loop(
    serve: Callable[..., StdioClient], project: Path
) -> None:
    """`loop -> .` shows the same .gitignore at every level: compiled again at each one,
    4 000 patterns 40 levels down cost 7 s."""
    (project / ".gitignore").write_text(_many_patterns(4_000))
    (project / "loop").symlink_to(".")
    server = serve(project)
    deep = project.joinpath(*(["loop"] * 40))
    assert_cheap(server, watched((deep / "a.py").as_uri()))


def test_a_fifo_gitignore(serve: Callable[..., StdioClient], project: Path) -> None:
    """A FIFO where the .gitignore should be: opening it waited for a writer forever."""
    os.mkfifo(project / ".gitignore")
    server = serve(project)
    assert_cheap(server, watched((project / "a.py").as_uri()))


# --- framing: a client's bytes, read at a cost linear in them -----------------------------


@pytest.mark.parametrize("size", [800_000, 1_600_000])
def test_nested_bad_framing(serve: Callable[..., StdioClient], project: Path, size: int) -> None:
    """Each level was parsed, copied and logged again: 0.8 MB cost 3.5 s, 1.6 MB 43 s, and
    a line in the log per level."""
    server = serve(project)
    lines_before = server.stderr_text().count("\n")
    assert_cheap(server, nested_frames(size), runs=False)
    assert server.stderr_text().count("\n") - lines_before < 10


# --- .lsp-verify.toml and the manifests: read on a save ------------------------------------


def save(project: Path, name: str = "a.py") -> bytes:
    (project / name).write_text("x = 1\n")
    return did_save((project / name).as_uri())


def test_a_project_file_of_many_unknown_keys(
    serve: Callable[..., StdioClient], project: Path
) -> None:
    """Each message scanned every line for its key: 12 000 keys cost 13.2 s, at
    `initialized` and again on every change, and made a diagnostic each."""
    server = serve(project)
    keys = "".join(f"unknown{i} = {i}\n" for i in range(12_000))
    (project / ".lsp-verify.toml").write_text(keys)
    assert_cheap(server, save(project))


def _distinct(line: str, size: int) -> str:
    """Lines from a template with a counter (no key, table or section twice), `size` bytes."""
    lines: list[str] = []
    length = 0
    while length < size:
        lines.append(line.format(len(lines)))
        length += len(lines[-1])
    return "".join(lines)


# (file, content, today's cost): a save makes the planner read them all (autoDetect).
MANIFESTS = [
    ("setup.cfg", "[x]\nfirst bad line\n" + f"{'bad ' * 12}\n" * 19_000, "1.8 s"),
    ("tox.ini", _distinct("[s{}]\n", 1_000_000), "1.4 s"),
    ("pytest.ini", "[pytest]\na" + " " * 30_000 + "b\n", "6 s"),
    ("pyproject.toml", _distinct("[t{}]\n", 1_000_000), "0.6 s"),
    ("pyproject.toml", "a" + ".a" * 20_000 + " = 1\n", "3.6 s"),
    ("Cargo.toml", "[[bin]]\n" * 120_000, "0.35 s"),
    ("package.json", json.dumps({"scripts": {f"test{i}": "x" for i in range(40_000)}}), "-"),
    ("Makefile", "a:\n" * 340_000, "0.45 s"),
    # The rules after the seed's five: the lines each reads one by one are bounded.
    ("Rakefile", "task :a\n" * 120_000, "-"),
    ("justfile", "test a b c d e f g h:\n" * 45_000, "-"),
    ("deno.json", "/*" * 500_000, "-"),
]


@pytest.mark.parametrize(
    ("name", "content", "today"), MANIFESTS, ids=[f"{m[0]}-{m[1][:8]!r}" for m in MANIFESTS]
)
def test_a_hostile_manifest_read_on_a_save(
    serve: Callable[..., StdioClient], project: Path, name: str, content: str, today: str
) -> None:
    server = serve(project)
    (project / name).write_text(content)
    assert_cheap(server, save(project))


def test_a_hostile_setup_cfg_read_as_pytest_reads_it(
    serve: Callable[..., StdioClient], project: Path
) -> None:
    """A pytest command makes the run read pytest's own configuration (failed first, the
    quick phase) as well as the planner: both read setup.cfg."""
    (project / "pytest").write_text("#!/bin/sh\nexit 0\n")
    (project / "pytest").chmod(0o755)
    server = serve(project, command="./pytest")
    (project / "setup.cfg").write_text(
        "[tool:pytest]\naddopts = -q\n" + f"{'bad ' * 12}\n" * 19_000
    )
    assert_cheap(server, save(project, "test_a.py"))

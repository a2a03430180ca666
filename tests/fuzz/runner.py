"""Carry out one session against a fresh server, in a fresh workspace folder, and note what
the oracle needs: each request and its answers, what else the server wrote, its stderr, its
memory and CPU, and how the chosen stop went. Everything started is killed at the end.

The bounds are generous for a loaded two-core machine: the server answers a request that
does not wait for a run in milliseconds, and the commands a session runs end in well under
a second (see `SCRIPTS`).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz.process import Received, Server
from tests.fuzz.session import Session, Step, apply_file, part_bytes, step_requests


@dataclass(frozen=True)
class Bounds:
    quick: float = 5.0  # a request that waits for nothing
    init: float = 20.0  # initialize: the server imports lsprotocol first
    wait: float = 20.0  # a request that may wait for the settings, a question and a run
    shutdown: float = 10.0  # shutdown kills what runs first
    stop: float = 10.0  # from the stop to the end of the process the client started
    leftover: float = 5.0  # from then to the end of everything the server started
    settle: float = 5.0  # how long a repository event may keep the server busy


BOUNDS = Bounds()
# While a finding whose class does not depend on time is shrunk: a stalled server costs each
# try a second or two, not twenty.
FAST = Bounds(quick=1.0, init=5.0, wait=3.0, shutdown=2.0, stop=3.0, leftover=2.0, settle=1.0)
# ... and one that does: bounds still far above what a server without the defect needs.
MEDIUM = Bounds(quick=2.0, init=8.0, wait=8.0, shutdown=4.0, stop=4.0, leftover=3.0, settle=3.0)
SESSION_LIMIT = 120.0  # a session's steps never take longer than this

# Requests that may wait for the folder's settings, the approval question and runs.
WAITING_METHODS = frozenset({"textDocument/diagnostic", "workspace/diagnostic"})
WAITING_COMMANDS = frozenset(
    {"verify.runNow", "verify.explain", "verify.approve", "verify.showPlan"}
)

# The workspace every session starts with, and programs on the server's PATH.
SCRIPTS = {
    "pytest": "#!/bin/sh\necho 'test_a.py::test_x FAILED'\necho 'test_a.py:2: AssertionError'\n"
    "exit 1\n",
}
FILES = {
    "a.py": "x = 1\n",
    "test_a.py": "def test_x():\n    assert 0\n",
    "sub/b.txt": "b\n",
}


@dataclass
class Request:
    rid: int | str
    key: str  # the method, and for executeCommand the command
    step: int
    sent_at: float
    writes: int
    bound: float
    waits: bool  # may legitimately wait for runs, settings or a question
    before_initialize: bool


@dataclass
class Outcome:
    session: Session
    requests: list[Request] = field(default_factory=list)
    messages: list[Received] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    held_by_policy: set[str] = field(default_factory=set)
    stderr: str = ""
    died_at: int | None = None  # the step before which the server was found gone
    exit_sent: bool = False
    events: list[tuple[int, str, float]] = field(default_factory=list)  # step, file, CPU s
    peak_rss_mb: float = 0.0
    stop: str = ""
    shutdown_answer: dict[str, Any] | None = None
    exit_code: int | None = None
    left_behind: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    def answers(self, rid: int | str) -> list[Received]:
        return [
            r
            for r in self.messages
            if "method" not in r.message
            and r.message.get("id") == rid
            and type(rid) is type(r.message.get("id"))
        ]


def request_key(message: dict[str, Any]) -> str:
    method = str(message["method"])
    if method == "workspace/executeCommand":
        params = message.get("params")
        command = params.get("command") if isinstance(params, dict) else None
        return f"{method}:{command if isinstance(command, str) and len(command) < 40 else '?'}"
    return method


def _waits(key: str) -> bool:
    return key in WAITING_METHODS or key.partition(":")[2] in WAITING_COMMANDS


class Run:
    def __init__(self, session: Session, workdir: Path, bounds: Bounds) -> None:
        self.session = session
        self.bounds = bounds
        self.root = workdir / "ws"
        self.root.mkdir(parents=True)
        for rel, text in FILES.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text)
        bin_dir = workdir / "bin"
        bin_dir.mkdir()
        for name, text in SCRIPTS.items():
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        self.root_uri = self.root.as_uri()
        self.outcome = Outcome(session, stop=str(session["stop"]))
        self.server = Server(workdir, dict(session.get("policy", {})))
        self.initialize_sent = False
        self.shutdown_sent = False

    def run(self) -> Outcome:
        start = time.monotonic()
        try:
            for index, step in enumerate(self.session["steps"]):
                if not self.server.alive():
                    self.outcome.died_at = index
                    break
                if time.monotonic() - start > SESSION_LIMIT:
                    break
                self._step(index, step)
            self._await_pending()
            self.outcome.peak_rss_mb = self.server.peak_rss_mb()
            if self.server.alive():
                self._stop()
            elif self.outcome.died_at is None:
                self.outcome.died_at = len(self.session["steps"])
        finally:
            self.server.kill_everything()
            self._collect()
            self.outcome.elapsed = time.monotonic() - start
        return self.outcome

    # ----- steps -----

    def _step(self, index: int, step: Step) -> None:
        if "sleep" in step:
            time.sleep(min(float(step["sleep"]), 5.0))
        elif "file" in step:
            apply_file(self.root, step)
        elif "send" in step:
            self._send(index, step)

    def _send(self, index: int, step: Step) -> None:
        with self.server.output.lock:
            token = self.server.output.token
        data = b"".join(part_bytes(p, self.root_uri, token) for p in step["send"])
        requests = step_requests(step)
        now = time.monotonic()
        made = []
        for message in self._stream_order(step):
            method = message.get("method")
            if method == "exit":
                self.outcome.exit_sent = True
            if message in requests:
                key = request_key(message)
                bound = self.bounds.init if key == "initialize" else self.bounds.quick
                if key == "shutdown":
                    bound = self.bounds.shutdown
                waits = _waits(key) and not self.shutdown_sent and self.initialize_sent
                request = Request(
                    message["id"],
                    key,
                    index,
                    now,
                    0,  # the write's number, once written
                    self.bounds.wait if waits else bound,
                    waits,
                    not self.initialize_sent,
                )
                made.append(request)
                self.outcome.requests.append(request)
                if method == "initialize":
                    self.initialize_sent = True
                if method == "shutdown":
                    self.shutdown_sent = True
        cpu = self.server.cpu() if step.get("event") else 0.0
        partial = any(p.get("slice") and p["slice"][1] is not None for p in step["send"][-1:])
        number = self.server.write(data, partial=partial)
        if number is None:
            return
        for request in made:
            request.writes = number
        for request in made:
            if not request.waits:
                self._wait_for(request)
        if step.get("event"):
            self._settle(index, cpu)

    def _stream_order(self, step: Step) -> list[dict[str, Any]]:
        """The JSON messages of a step, in the order they are written (a sliced part counts
        where its end is written)."""
        values = []
        for part in step["send"]:
            value = part.get("json")
            cut = part.get("slice")
            if isinstance(value, dict) and (cut is None or cut[1] is None):
                values.append(value)
        return values

    def _wait_for(self, request: Request) -> bool:
        deadline = request.sent_at + request.bound
        while time.monotonic() < deadline:
            if self._answered(request):
                return True
            if not self.server.alive():
                return False
            time.sleep(0.005)
        return False

    def _answered(self, request: Request) -> bool:
        with self.server.output.lock:
            for received in reversed(self.server.output.messages):
                message = received.message
                if "method" not in message and message.get("id") == request.rid:
                    return True
        return False

    def _settle(self, index: int, before: float) -> None:
        """A repository event's CPU: until the server has been idle for 0.3 s, or a bound."""
        deadline = time.monotonic() + self.bounds.settle
        last, idle_since = self.server.cpu(), time.monotonic()
        while time.monotonic() < deadline and self.server.alive():
            time.sleep(0.1)
            now = self.server.cpu()
            if now != last:
                last, idle_since = now, time.monotonic()
            elif time.monotonic() - idle_since >= 0.3:
                break
        files = [s["file"] for s in self.session["steps"][:index] if "file" in s]
        self.outcome.events.append((index, files[-1] if files else "?", last - before))

    def _await_pending(self) -> None:
        """Before the stop: every request that may wait gets its bound, unless the fuzzer's
        own policy holds it (a question or configuration it never answers)."""
        for request in self.outcome.requests:
            if request.waits:
                with self.server.output.lock:
                    held = bool(self.server.output.unanswered)
                if not held:
                    self._wait_for(request)

    # ----- the stop -----

    def _stop(self) -> None:
        how = self.outcome.stop
        server = self.server
        if how == "shutdown-exit":
            request = Request(
                "fuzz-shutdown",
                "shutdown",
                len(self.session["steps"]),
                time.monotonic(),
                0,
                self.bounds.shutdown,
                False,
                not self.initialize_sent,
            )
            self.outcome.requests.append(request)
            request.writes = (
                server.send({"jsonrpc": "2.0", "id": "fuzz-shutdown", "method": "shutdown"}) or 0
            )
            if self._wait_for(request):
                self.outcome.shutdown_answer = self._answer_of(request.rid)
            server.send({"jsonrpc": "2.0", "method": "exit"})
        elif how == "exit":
            server.send({"jsonrpc": "2.0", "method": "exit"})
        elif how == "sigterm":
            server.signal(signal.SIGTERM)
        elif how == "close-stdin":
            server.close_stdin()
        elif how == "kill-keeper":
            server.signal(signal.SIGKILL)
        self.outcome.exit_code = server.wait(self.bounds.stop)
        if self.outcome.exit_code is None:
            return  # the stop failed: what is left is the server itself
        deadline = time.monotonic() + self.bounds.leftover
        left = server.left_behind()
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = server.left_behind()
        self.outcome.left_behind = [_describe(pid) for pid in left]

    def _answer_of(self, rid: int | str) -> dict[str, Any] | None:
        with self.server.output.lock:
            for received in self.server.output.messages:
                if "method" not in received.message and received.message.get("id") == rid:
                    return received.message
        return None

    def _collect(self) -> None:
        output = self.server.output
        with output.lock:
            self.outcome.messages = list(output.messages)
            self.outcome.problems = list(output.problems)
            self.outcome.held_by_policy = set(output.unanswered)
        self.outcome.stderr = self.server.stderr_text()


def _describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        words = "?"
    return f"{pid} {words[:100]}"


def run_session(session: Session, workdir: Path, bounds: Bounds = BOUNDS) -> Outcome:
    return Run(session, workdir, bounds).run()

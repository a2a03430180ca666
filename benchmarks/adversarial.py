"""Hostile input against the real server: its peak memory, and whether it still answers.

    python benchmarks/adversarial.py [--quick] [--only NAME[,NAME...]] [--timeout 20] [--check]

Each attack runs against a fresh `python -m lsp_verify` over stdio (raw LSP framing, this
checkout's code, temporary XDG folders, no network). For each it prints the server's peak
RSS (VmHWM of the server process: of the process started, or of its lsp_verify child where
the started one stays behind as a keeper) and how long the server took, from the attack, to
answer the next request (`workspace/executeCommand` `verify.showLastRun`), against the
targets of issue 13: peak < 150 MB, next answer < 1000 ms.

  a  big-message      one 100 MB message (params: a 100 MB string)
  a  object-flood     one 10 MB message whose params are a list of 3.5 million `{}`
  b  length-short     Content-Length shorter than the body, then a request
  b  length-negative  Content-Length: -5, then a request
  b  length-nan       Content-Length: abc, then a request
  c  after-shutdown   a request after `shutdown` (it must be answered, with an error)
  d  watched-files    one workspace/didChangeWatchedFiles with 100 000 changes
  e  tail-flood       a run printing 1000 lines of 60 000 emoji, tailLines 100000
  f  long-line        a run printing one 200 MB line without a newline
  g  nested-json      a message of 100 000 `[` (and as many `]`)
  h  fifo-store       the approval store is a FIFO; then a save that needs approval

For e and f the run's own duration is not the server's: the clock starts when the run has
ended (its `verify/status`), and a request sent 100 ms into the run must be answered within
the target too; the slower of the two is shown. For h the clock starts at the save: the
verdict (declined: the client cannot be asked) and then the answer must come in time. Each
wait is bounded by --timeout (20 s); past it the attack shows 'no answer'. Nothing is left
running: each server gets `shutdown`/`exit`, then SIGKILL, and every process that carries this
benchmark's marker in its environment is killed.

--quick uses smaller sizes (10 MB message, 1 MB of `{}`, 10 000 changes, 100 flood lines,
20 MB line).
The figures are information: the exit status is 0 unless --check is given and a target is
missed (or an attack got no answer).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# tests/support holds the one LSP client of the tests and the benchmarks.
sys.path.append(str(REPO))

from tests.support.stdio import (  # noqa: E402
    Message,
    NoAnswer,
    Reply,
    StdioClient,
    initialize_session,
    stop,
)

PEAK_TARGET_MB = 150.0
ANSWER_TARGET_MS = 1000.0
MARKER_VAR = "LSP_VERIFY_ADVERSARIAL_BENCH"
STORE_NAME = "approvals.json"  # lsp_verify/trust.py STORE_NAME
BIG_BODY = 4 * 1024 * 1024  # messages from the server larger than this are not parsed whole
CAPABILITIES = {"textDocument": {"synchronization": {"didSave": True}}}


def _server(env: dict[str, str]) -> StdioClient:
    """`python -m lsp_verify` over pipes, this checkout's code (`-m` puts the working folder
    first), in a session of its own. Every read and write has a deadline; while it writes,
    the client reads (a huge message never waits on a server that writes meanwhile); the
    server's requests are answered with null; huge messages are only sketched."""
    return StdioClient(
        env=env,
        cwd=REPO,
        new_session=True,
        answers=lambda request: Reply(None),
        read_while_writing=True,
        quiet_broken_pipe=True,
        sketch_over=BIG_BODY,
        track_peak=True,
    )


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _kill_marked(token: str) -> int:
    """SIGKILL every process whose environment carries this run's marker."""
    needle = f"{MARKER_VAR}={token}".encode()
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
        except OSError:
            continue
        if needle in environ:
            try:
                os.kill(int(entry), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


# --------------------------------------------------------------------------- attacks


@dataclass
class Context:
    server: StdioClient
    root: Path  # the workspace folder
    quick: bool
    timeout: float
    notes: list[str]


@dataclass
class Attack:
    letter: str
    name: str
    what: str
    # Prepares the folder and the XDG state (before the server starts); returns the
    # initializationOptions.
    setup: Callable[[Path, Path, bool], Any]
    # Carries out the attack; returns when the clock for the next answer starts (and, for
    # e and f, a latency already measured during the run), or raises NoAnswer.
    run: Callable[[Context], tuple[float, float | None]]


def _plain_setup(root: Path, state: Path, quick: bool) -> Any:
    return {"command": "true", "confirm": "never"}


def _deadline(ctx: Context) -> float:
    return time.monotonic() + ctx.timeout


def _send_message_of(ctx: Context, size: int, fill: bytes) -> None:
    """A notification of exactly `size` bytes: params.x is `fill` repeated."""
    head = b'{"jsonrpc":"2.0","method":"$/adversarial","params":{"x":'
    tail = b"}}"
    if fill == b"{},":  # a list of empty objects
        count = (size - len(head) - len(tail) - 4) // len(fill)
        value = b"[" + fill * count + b"{}]"
    else:  # a string
        count = (size - len(head) - len(tail) - 2) // len(fill)
        value = b'"' + fill * count + b'"'
    body = head + value + tail
    body = head + b" " * (size - len(body)) + value + tail  # whitespace: still valid JSON
    ctx.notes.append(f"{len(body) / 1024 / 1024:g} MB body")
    ctx.server.send(b"Content-Length: %d\r\n\r\n" % len(body), ctx.timeout)
    ctx.server.send(body, ctx.timeout)


def _big_message(ctx: Context) -> tuple[float, float | None]:
    _send_message_of(ctx, (10 if ctx.quick else 100) * 1024 * 1024, b"x")
    return time.monotonic(), None


def _object_flood(ctx: Context) -> tuple[float, float | None]:
    _send_message_of(ctx, (1 if ctx.quick else 10) * 1024 * 1024, b"{},")
    return time.monotonic(), None


def _bad_length(
    header_value: bytes, short: bool = False
) -> Callable[[Context], tuple[float, float | None]]:
    def attack(ctx: Context) -> tuple[float, float | None]:
        body = json.dumps({"jsonrpc": "2.0", "method": "$/adversarial", "params": {}}).encode()
        value = b"%d" % (len(body) // 2) if short else header_value
        ctx.server.send(b"Content-Length: " + value + b"\r\n\r\n" + body, ctx.timeout)
        return time.monotonic(), None

    return attack


def _after_shutdown(ctx: Context) -> tuple[float, float | None]:
    deadline = _deadline(ctx)
    rid = ctx.server.request("shutdown", None, ctx.timeout)
    ctx.server.answer_to(rid, _left(deadline))
    return time.monotonic(), None


def _watched_files(ctx: Context) -> tuple[float, float | None]:
    count = 10_000 if ctx.quick else 100_000
    base = ctx.root.as_uri()
    changes = [{"uri": f"{base}/src/f{i}.py", "type": 2} for i in range(count)]
    ctx.notes.append(f"{count} changes")
    ctx.server.notify("workspace/didChangeWatchedFiles", {"changes": changes}, ctx.timeout)
    return time.monotonic(), None


def _flood_setup(script: str) -> Callable[[Path, Path, bool], Any]:
    def setup(root: Path, state: Path, quick: bool) -> Any:
        lines, width, megabytes = (100, 60_000, 20) if quick else (1000, 60_000, 200)
        (root / "flood.py").write_text(
            script.format(lines=lines, width=width, size=megabytes * 1_000_000)
        )
        command = f"{shlex.quote(sys.executable)} flood.py"
        (root / ".lsp-verify.toml").write_text(
            f"command = {json.dumps(command)}\ntailLines = 100000\n"
        )
        (root / "a.txt").write_text("x\n")
        return {"confirm": "never"}

    return setup


TAIL_FLOOD = """\
import sys
line = ("\\U0001f600" * {width} + "\\n").encode()
for _ in range({lines}):
    sys.stdout.buffer.write(line)
sys.stdout.buffer.flush()
sys.exit(1)
"""

LONG_LINE = """\
import sys
block = b"x" * (1024 * 1024)
left = {size}
while left > 0:
    sys.stdout.buffer.write(block[:left])
    left -= len(block)
sys.stdout.buffer.flush()
sys.exit(1)
"""


def _finished(folder_uri: str) -> Callable[[Message], bool]:
    def match(message: Message) -> bool:
        params = message.get("params")
        return (
            message.get("method") == "verify/status"
            and isinstance(params, dict)
            and params.get("folder") == folder_uri
            and params.get("state") == "idle"
            and params.get("lastOutcome") is not None
        )

    return match


def _save(ctx: Context, rel: str) -> float:
    uri = (ctx.root / rel).as_uri()
    ctx.server.notify("textDocument/didSave", {"textDocument": {"uri": uri}}, ctx.timeout)
    return time.monotonic()


def _run_flood(ctx: Context) -> tuple[float, float | None]:
    saved = _save(ctx, "a.txt")
    deadline = saved + ctx.timeout
    server = ctx.server
    # A request in the middle of the run: the server reads the flood on its event loop.
    server.pump_for(_left(saved + 0.1))
    probe = server.request("workspace/executeCommand", _SHOW_LAST_RUN, _left(deadline))
    probe_sent = time.monotonic()
    server.wait(_finished(ctx.root.as_uri()), _left(deadline))
    ended = time.monotonic()
    ctx.notes.append(f"run {1000 * (ended - saved):.0f} ms")
    server.answer_to(probe, _left(deadline))
    during = 1000 * (server.answered_at[probe] - probe_sent)
    ctx.notes.append(f"answer during the run {during:.0f} ms")
    return ended, during


def _nested_json(ctx: Context) -> tuple[float, float | None]:
    depth = 100_000
    body = b"[" * depth + b"]" * depth
    ctx.server.send(b"Content-Length: %d\r\n\r\n%b" % (len(body), body), ctx.timeout)
    return time.monotonic(), None


def _fifo_setup(root: Path, state: Path, quick: bool) -> Any:
    store = state / "xdg_state_home" / "lsp-verify" / STORE_NAME
    store.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(store)
    # A detected plan from the repository: running it needs the user's approval.
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "test_a.py").write_text("def test_a():\n    assert True\n")
    return None


def _fifo_store(ctx: Context) -> tuple[float, float | None]:
    saved = _save(ctx, "test_a.py")
    try:
        message = ctx.server.wait(_finished(ctx.root.as_uri()), _left(saved + ctx.timeout))
        ctx.notes.append(f"verdict {message['params']['lastOutcome']}")
    except NoAnswer:
        ctx.notes.append(f"no verdict in {ctx.timeout:g} s")
    return saved, None


_SHOW_LAST_RUN = {"command": "verify.showLastRun", "arguments": []}

ATTACKS = [
    Attack("a", "big-message", "100 MB message", _plain_setup, _big_message),
    Attack("a", "object-flood", "10 MB of {}", _plain_setup, _object_flood),
    Attack("b", "length-short", "Content-Length < body", _plain_setup, _bad_length(b"", True)),
    Attack("b", "length-negative", "Content-Length: -5", _plain_setup, _bad_length(b"-5")),
    Attack("b", "length-nan", "Content-Length: abc", _plain_setup, _bad_length(b"abc")),
    Attack("c", "after-shutdown", "request after shutdown", _plain_setup, _after_shutdown),
    Attack("d", "watched-files", "100 000 watched changes", _plain_setup, _watched_files),
    Attack("e", "tail-flood", "1000 x 60 000 emoji", _flood_setup(TAIL_FLOOD), _run_flood),
    Attack("f", "long-line", "200 MB line, no newline", _flood_setup(LONG_LINE), _run_flood),
    Attack("g", "nested-json", "100 000 nested [", _plain_setup, _nested_json),
    Attack("h", "fifo-store", "approval store is a FIFO", _fifo_setup, _fifo_store),
]


@dataclass
class Row:
    attack: Attack
    peak_mb: float | None
    answer_ms: float | None  # None: no answer
    notes: list[str]

    @property
    def passed(self) -> bool:
        return (
            self.peak_mb is not None
            and self.peak_mb < PEAK_TARGET_MB
            and self.answer_ms is not None
            and self.answer_ms < ANSWER_TARGET_MS
        )


def run_attack(attack: Attack, quick: bool, timeout: float) -> Row:
    token = uuid.uuid4().hex
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lsp-verify-adversarial-") as tmp:
        base = Path(tmp)
        root, state = base / "project", base / "state"
        root.mkdir()
        env = dict(os.environ)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            folder = state / name.lower()
            folder.mkdir(parents=True, exist_ok=True)
            env[name] = str(folder)
        env["HOME"] = str(base / "home")
        env[MARKER_VAR] = token
        options = attack.setup(root, state, quick)
        server = _server(env)
        answer_ms: float | None = None
        try:
            initialize_session(server, [root], options, CAPABILITIES, timeout=30)
            ctx = Context(server, root, quick, timeout, notes)
            started, during = attack.run(ctx)
            deadline = time.monotonic() + timeout
            rid = server.request("workspace/executeCommand", _SHOW_LAST_RUN, timeout)
            reply = server.answer_to(rid, _left(deadline))
            answer_ms = 1000 * (server.answered_at[rid] - started)
            if "error" in reply:
                notes.append(f"answered with error {reply['error'].get('code')}")
            if during is not None:
                answer_ms = max(answer_ms, during)
        except NoAnswer as exc:
            notes.append(f"no answer: {exc}")
        except (OSError, ValueError) as exc:
            notes.append(f"client error: {exc!r}")
        finally:
            server.sample_peak()
            code = server.proc.poll()
            if code is not None:
                notes.append(f"server exited {code}")
            stop(server, shutdown=attack.name != "after-shutdown", timeout=3)
            leftovers = _kill_marked(token)
            if leftovers:
                notes.append(f"killed {leftovers} leftover processes")
        peak = server.peak_kib / 1024 if server.peak_kib else None
        return Row(attack, peak, answer_ms, notes)


def _selected(only: list[str]) -> list[Attack]:
    if not only:
        return ATTACKS
    wanted = {w.strip() for item in only for w in item.split(",") if w.strip()}
    known = {a.name for a in ATTACKS} | {a.letter for a in ATTACKS}
    unknown = wanted - known
    if unknown:
        raise SystemExit(f"unknown attack(s): {', '.join(sorted(unknown))}; known: {sorted(known)}")
    return [a for a in ATTACKS if a.name in wanted or a.letter in wanted]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for CI")
    parser.add_argument(
        "--only", action="append", default=[], help="attack name or letter (repeatable, or a,b)"
    )
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per wait")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    attacks = _selected(args.only)
    print(
        f"targets: peak RSS < {PEAK_TARGET_MB:.0f} MB, next answer < {ANSWER_TARGET_MS:.0f} ms"
        f"{' (quick sizes)' if args.quick else ''}"
    )
    header = f"{'attack':<20} {'peak RSS MB':>11} {'next answer ms':>14}  {'result':<6}  notes"
    print(header)
    print("-" * len(header))
    rows = []
    for attack in attacks:
        row = run_attack(attack, args.quick, args.timeout)
        rows.append(row)
        peak = f"{row.peak_mb:.1f}" if row.peak_mb is not None else "?"
        answer = f"{row.answer_ms:.0f}" if row.answer_ms is not None else "no answer"
        print(
            f"{attack.letter} {attack.name:<18} {peak:>11} {answer:>14}  "
            f"{'PASS' if row.passed else 'FAIL':<6}  {'; '.join(row.notes)}",
            flush=True,
        )
    failed = [r.attack.name for r in rows if not r.passed]
    print(f"{len(rows) - len(failed)} of {len(rows)} within the targets")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""What counts as a finding in a session's outcome. Each finding has a key (its class: what
the minimiser keeps while it shrinks a session) and a detail for the report.

A finding is any of:
- a request (a JSON-RPC request with a string or integer id) not answered within its bound
  (`no-response`), answered only later (`late`: after a later write it is a stalled read),
  or answered more than once (`duplicate-response`);
- a request answered with an internal error, or with an error whose data carries a
  traceback or the server's file paths;
- a request before `initialize` not refused with -32002, or one after `shutdown` answered
  with a result;
- requests still unanswered when the server exits after shutdown and exit;
- output that is not JSON-RPC 2.0 (framing, JSON, envelope, ids);
- a Python traceback on the server's stderr (the key names the exception and the innermost
  frame of lsp_verify, else of pygls);
- the server gone before the session stopped it; a stop that leaves the process the client
  started running after `Bounds.stop`, or anything it started after `Bounds.leftover`; an
  exit code other than LSP's (0 after shutdown and exit, 1 after exit alone);
- more than MAX_SHOW_MESSAGES window/showMessage notifications (each one pops up);
- peak memory over MAX_RSS_MB; a repository event that costs more than MAX_EVENT_CPU_S of
  server CPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tests.fuzz.runner import Outcome

MAX_RSS_MB = 200.0
MAX_SHOW_MESSAGES = 20  # window/showMessage pops up in the editor: a few, never a flood
MAX_EVENT_CPU_S = 1.0
TRACEBACK = "Traceback (most recent call last)"


@dataclass(frozen=True)
class Finding:
    key: str
    detail: str


def findings(outcome: Outcome) -> list[Finding]:
    found: list[Finding] = []
    found.extend(_requests(outcome))
    found.extend(Finding(f"invalid-output:{p.split(':')[0]}", p) for p in outcome.problems)
    found.extend(_tracebacks(outcome.stderr))
    found.extend(_lifetime(outcome))
    shown = [r.message for r in outcome.messages if r.message.get("method") == "window/showMessage"]
    if len(shown) > MAX_SHOW_MESSAGES:
        last = str(shown[-1].get("params"))[:200]
        found.append(Finding("show-message-flood", f"{len(shown)} window/showMessage, last {last}"))
    if outcome.peak_rss_mb > MAX_RSS_MB:
        found.append(Finding("rss", f"peak RSS {outcome.peak_rss_mb:.0f} MB"))
    for step, name, cpu in outcome.events:
        if cpu > MAX_EVENT_CPU_S:
            found.append(Finding(f"cpu:{name}", f"step {step}: {cpu:.2f} s of server CPU"))
    unique: dict[str, Finding] = {}
    for finding in found:
        # Keys and details name what the client sent: lone surrogates and NULs included.
        key, detail = _printable(finding.key), _printable(finding.detail)
        unique.setdefault(key, Finding(key, detail))
    return list(unique.values())


def _printable(text: str) -> str:
    return text.encode("ascii", "backslashreplace").decode("ascii").replace("\x00", "\\x00")


def _requests(outcome: Outcome) -> list[Finding]:
    found = []
    died = outcome.died_at is not None or outcome.exit_sent
    held = bool(outcome.held_by_policy)
    shut_down = outcome.stop == "shutdown-exit" and _is_result(outcome.shutdown_answer)
    accepted = False  # a shutdown sent before this request was answered with a result
    for request in outcome.requests:
        answers = outcome.answers(request.rid)
        after_shutdown, accepted = (
            accepted,
            accepted
            or (request.key == "shutdown" and bool(answers) and _is_result(answers[0].message)),
        )
        key = request.key
        where = f"{key} (id {request.rid!r}, step {request.step})"
        if len(answers) > 1:
            found.append(Finding(f"duplicate-response:{key}", f"{where}: {len(answers)} answers"))
        if not answers:
            if died:
                continue
            if request.waits and held:
                if shut_down:
                    found.append(Finding(f"unanswered-at-exit:{key}", f"{where}: never answered"))
                continue
            found.append(Finding(f"no-response:{key}", f"{where}: no answer"))
            continue
        first = answers[0]
        if first.at > request.sent_at + request.bound and not (request.waits and held):
            # A quick request is waited for before the next write: if a later write came
            # first, only that write got it read.
            stalled = not request.waits and first.writes > request.writes
            kind = "stalled" if stalled else "late"
            delay = first.at - request.sent_at
            found.append(Finding(f"{kind}:{key}", f"{where}: answered after {delay:.1f} s"))
        found.extend(_answer(request.key, where, first.message, request, after_shutdown))
    return found


def _answer(
    key: str, where: str, message: dict[str, Any], request: Any, after_shutdown: bool
) -> list[Finding]:
    found = []
    error = message.get("error")
    if (
        request.before_initialize
        and key != "initialize"
        and (not isinstance(error, dict) or error.get("code") != -32002)
    ):
        found.append(Finding("not-refused-before-initialize", f"{where}: {str(message)[:200]}"))
    # After a shutdown the server accepted (one refused before initialize does not count).
    if after_shutdown and "result" in message:
        found.append(Finding("answered-after-shutdown", f"{where}: {str(message)[:200]}"))
    if isinstance(error, dict):
        if error.get("code") == -32603:
            found.append(
                Finding(f"internal-error:{key}", f"{where}: {str(error.get('message'))[:200]}")
            )
        data = str(error.get("data", ""))
        if "traceback" in data.lower() or 'File "' in data or "/lsp_verify/" in data:
            found.append(Finding(f"traceback-in-error:{key}", f"{where}: {data[:300]}"))
    return found


def _is_result(message: dict[str, Any] | None) -> bool:
    return message is not None and "result" in message


_FRAME = re.compile(r'^\s*File "([^"]+)", line \d+, in (\S+)', re.MULTILINE)


def _tracebacks(stderr: str) -> list[Finding]:
    found = []
    blocks = stderr.split(TRACEBACK)[1:]
    for block in blocks:
        lines = block.splitlines()
        frames = _FRAME.findall(block)
        exception = next((ln for ln in lines[1:] if ln and not ln.startswith((" ", "\t"))), "?")
        name = exception.split(":")[0].strip().rsplit(".", 1)[-1]
        ours = (
            [f for f in frames if "lsp_verify" in f[0]]
            or [f for f in frames if "pygls" in f[0]]
            or frames
        )
        where = ""
        if ours:
            path, function = ours[-1]
            where = f"@{path.rsplit('/', 1)[-1]}:{function}"
        found.append(Finding(f"traceback:{name}{where}", exception[:300]))
    return found


def _lifetime(outcome: Outcome) -> list[Finding]:
    found = []
    if outcome.died_at is not None and not outcome.exit_sent:
        found.append(Finding("died", f"the server was gone before step {outcome.died_at}"))
        return found
    if outcome.exit_sent or outcome.died_at is not None:
        return found
    how = outcome.stop
    if outcome.exit_code is None:
        found.append(Finding(f"stop-failed:{how}", f"still running after {how}"))
        return found
    if outcome.left_behind:
        found.append(Finding(f"left-behind:{how}", "; ".join(outcome.left_behind)[:300]))
    if how == "shutdown-exit" and _is_result(outcome.shutdown_answer) and outcome.exit_code != 0:
        found.append(Finding(f"exit-code:{how}", f"exit {outcome.exit_code} after shutdown"))
    return found

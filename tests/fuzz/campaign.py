"""Sessions in a row: generate, run, judge, and write a replay file for each session with a
finding. Bounded by a session count per seed and a total time budget."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tests.fuzz.grammar import generate
from tests.fuzz.oracle import Finding, findings
from tests.fuzz.runner import BOUNDS, Bounds, Outcome, run_session
from tests.fuzz.session import Session, save_replay


@dataclass
class Found:
    session: Session
    findings: list[Finding]
    replay: Path


@dataclass
class Report:
    sessions: int = 0
    found: list[Found] = field(default_factory=list)
    seconds: float = 0.0

    def classes(self) -> dict[str, Found]:
        """The first session that showed each class of finding."""
        first: dict[str, Found] = {}
        for found in self.found:
            for finding in found.findings:
                first.setdefault(finding.key, found)
        return first


def judge(session: Session, bounds: Bounds = BOUNDS) -> tuple[list[Finding], Outcome]:
    """Run `session` against a fresh server in fresh temporary folders, and judge it."""
    with tempfile.TemporaryDirectory(prefix="lsp-verify-fuzz-") as tmp:
        outcome = run_session(session, Path(tmp), bounds)
    return findings(outcome), outcome


def planned(seeds: Sequence[int], sessions: int) -> Iterator[Session]:
    for seed in seeds:
        for index in range(sessions):
            yield generate(seed, index)


def fuzz(
    sessions: Iterator[Session],
    replays: Path,
    budget_s: float,
    say: Callable[[str], None] = print,
) -> Report:
    """Run sessions until they run out or the budget is spent (a session started is
    finished); a replay file is written for every session with a finding."""
    report = Report()
    start = time.monotonic()
    for session in sessions:
        if time.monotonic() - start >= budget_s:
            break
        found, outcome = judge(session)
        report.sessions += 1
        name = f"seed{session.get('seed')}-{session.get('index')}"
        keys = ", ".join(f.key for f in found) or "ok"
        say(f"{name}: {len(session['steps'])} steps, {outcome.elapsed:.1f} s: {keys}")
        if found:
            path = save_replay(session, replays, name)
            report.found.append(Found(session, found, path))
    report.seconds = time.monotonic() - start
    return report


def slug(key: str) -> str:
    """A finding's key as part of a file name."""
    return "".join(c if c.isalnum() else "-" for c in key)[:60]


def describe(session: Session) -> str:
    """A session as a few readable lines: the policy, each step, the stop."""
    lines = []
    if session.get("policy"):
        lines.append(f"policy: {json.dumps(session['policy'])}")
    for step in session["steps"]:
        text = json.dumps(step)
        lines.append(text if len(text) <= 400 else text[:400] + "...")
    lines.append(f"stop: {session['stop']}")
    return "\n".join(lines)

"""The record of one run: an immutable value, the same for the server and the CLI."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # only types: the server imports this before it answers `initialize`
    from lsp_verify.problems.base import Problem

Outcome = Literal["passed", "failed", "timed-out", "cancelled", "skipped", "declined", "no-plan"]
# What asked for the run: a save (or a change on disk, or a synced edit), the user's
# verify.runNow, or `lsp-verify check`.
Trigger = Literal["save", "runNow", "cli"]


def utc_iso(seconds: float) -> str:
    """A time.time() value as ISO 8601 in UTC with milliseconds: 2026-11-30T05:40:01.123Z."""
    t = time.gmtime(seconds)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{int(seconds * 1000) % 1000:03d}Z"
    )


def now_iso() -> str:
    """Now, as `utc_iso` writes it."""
    return utc_iso(time.time())


@dataclass(frozen=True)
class Phase:
    """One command a run ran: the saved test file and the test files the changes affect
    ("quick"), or the full command."""

    name: Literal["quick", "full"]
    command: str
    outcome: Outcome
    exit_code: int | None
    duration_ms: int

    def to_json(self) -> dict[str, Any]:
        values = (self.name, self.command, self.outcome, self.exit_code, self.duration_ms)
        return dict(zip(("phase", "command", "outcome", "exitCode", "durationMs"), values))


@dataclass(frozen=True)
class Affected:
    """What affected-first found for a run (see SPEC section 4): the files changed since the
    last run, the test files that import them and run first, the import chain of the first
    of them (test file first, changed file last), and what was done, in words."""

    note: str
    changed: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()
    chain: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "note": self.note,
            "changed": list(self.changed),
            "selected": list(self.selected),
            "chain": list(self.chain),
        }


@dataclass(frozen=True)
class Record:
    """One run, as `showLastRun` and `check --json` give it. Built by `record_for_plan`,
    or `Record.not_started` for a run dropped before anything was planned; the plan's
    fields are None where there was no plan."""

    folder: str
    trigger: Trigger
    outcome: Outcome
    reason: str
    started_at: str
    command: str | None = None
    source: str | None = None
    runner: str | None = None
    manifest: str | None = None
    fingerprint: str | None = None
    manifest_sha256: str | None = None
    steps: tuple[str, ...] = ()
    duration_ms: int = 0
    exit_code: int | None = None
    tail: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    document: str | None = None
    failed_first: str | None = None
    phases: tuple[Phase, ...] = ()
    affected: Affected | None = None
    # Failures of the problem matchers: the located problems may be incomplete.
    matcher_errors: int = 0

    @classmethod
    def not_started(cls, folder: str, trigger: Trigger, outcome: Outcome, reason: str) -> Record:
        """A run dropped before anything was planned or started."""
        return cls(folder, trigger, outcome, reason, now_iso())

    @property
    def exit_text(self) -> str:
        return "null" if self.exit_code is None else str(self.exit_code)

    @property
    def failed(self) -> bool:
        """A run whose failure is shown to the user: a non-zero exit or a timeout."""
        return self.outcome in ("failed", "timed-out")

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "command": self.command,
            "source": self.source,
            "runner": self.runner,
            "reason": self.reason,
            "manifest": self.manifest,
            "fingerprint": self.fingerprint,
            "manifestSha256": self.manifest_sha256,
            "steps": list(self.steps),
            "trigger": self.trigger,
            "startedAt": self.started_at,
            "durationMs": self.duration_ms,
            "exitCode": self.exit_code,
            "outcome": self.outcome,
            "tail": list(self.tail),
            "problems": [problem_to_json(p) for p in self.problems],
            "failedFirst": self.failed_first,
            "phases": [phase.to_json() for phase in self.phases],
            "affected": self.affected.to_json() if self.affected is not None else None,
            "matcherErrors": self.matcher_errors,
        }


def problem_to_json(problem: Problem) -> dict[str, Any]:
    return {
        "path": problem.path,
        "line": problem.line,
        "column": problem.column,
        "endLine": problem.end_line,
        "endColumn": problem.end_column,
        "severity": problem.severity,
        "code": problem.code,
        "message": problem.message,
        "related": [
            {"path": r.path, "line": r.line, "column": r.column, "message": r.message}
            for r in problem.related
        ],
    }


def failure_header(record: Record) -> str:
    """The one way a failure is announced: `verify failed (exit N)`, N null when killed."""
    return f"verify failed (exit {record.exit_text})"


def log_line(record: Record) -> str:
    """The one log line a finished run writes."""
    return (
        f"verify {record.outcome} (exit {record.exit_text}) in {record.duration_ms} ms: "
        f"{record.command or '-'} [{record.folder}]"
        + (f" ({record.reason})" if record.outcome not in ("passed", "failed") else "")
        + (f" ({matcher_errors_text(record)})" if record.matcher_errors else "")
    )


def matcher_errors_text(record: Record) -> str:
    """What a run whose problem matchers failed says of it."""
    times = "once" if record.matcher_errors == 1 else f"{record.matcher_errors} times"
    return f"a problem matcher failed {times}: located problems may be missing"

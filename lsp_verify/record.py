"""The record of one run: an immutable value, the same for the server and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only types: the server imports this before it answers `initialize`
    from lsp_verify.detect import Plan
    from lsp_verify.problems.base import Problem

OUTCOMES = ("passed", "failed", "timed-out", "cancelled", "skipped", "declined", "no-plan")
TRIGGERS = ("save", "runNow", "cli", "watch", "sync")


def now_iso() -> str:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-11-30T05:40:01.123Z."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Record:
    folder: str
    command: str | None
    source: str | None
    runner: str | None
    reason: str
    manifest: str | None
    fingerprint: str | None
    steps: tuple[str, ...]
    trigger: str
    started_at: str
    duration_ms: int
    exit_code: int | None
    outcome: str
    tail: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    document: str | None = None

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
            "steps": list(self.steps),
            "trigger": self.trigger,
            "startedAt": self.started_at,
            "durationMs": self.duration_ms,
            "exitCode": self.exit_code,
            "outcome": self.outcome,
            "tail": list(self.tail),
            "problems": [problem_to_json(p) for p in self.problems],
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
    }


def record_for_plan(
    plan: Plan,
    *,
    trigger: str,
    outcome: str,
    reason: str | None = None,
    document: str | None = None,
) -> Record:
    """A record for a run that never started (no plan, declined, skipped before spawning)."""
    return Record(
        folder=plan.folder,
        command=plan.command,
        source=plan.source,
        runner=plan.runner,
        reason=reason if reason is not None else plan.reason,
        manifest=plan.manifest,
        fingerprint=plan.fingerprint,
        steps=plan.steps,
        trigger=trigger,
        started_at=now_iso(),
        duration_ms=0,
        exit_code=None,
        outcome=outcome,
        document=document,
    )


def with_outcome(record: Record, outcome: str) -> Record:
    return replace(record, outcome=outcome)

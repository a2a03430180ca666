"""A plan for a given command, its run through the real runner, and the order in which the
detector's rules are tried (as `explain` lists them)."""

from __future__ import annotations

from pathlib import Path

from lsp_verify.planning.plan import Plan
from lsp_verify.running.execute import run_plan
from lsp_verify.running.runner import RunResult


def plan_for(folder: Path | str, command: str | None, **fields: object) -> Plan:
    values: dict[str, object] = {
        "folder": str(folder),
        "source": "settings",
        "runner": None,
        "command": command,
        "reason": "test",
        "manifest": None,
        "manifest_sha256": None,
        "steps": (command,) if command else (),
    }
    values.update(fields)
    return Plan(**values)  # type: ignore[arg-type]


async def run(folder: Path | str, command: str, **kw: object) -> RunResult:
    """`command` run in `folder` with a 10 s timeout and a 40-line tail unless `kw` says."""
    kw.setdefault("timeout_ms", 10_000)
    kw.setdefault("tail_lines", 40)
    return await run_plan(plan_for(folder, command), **kw)  # type: ignore[arg-type]


ORDER = [  # the detector's rules, in the order they are tried
    "settings",
    "project-file",
    "script",
    "pytest",
    "tox",
    "npm",
    "cargo",
    "make",
    "go",
    "deno",
    "mix",
    "rake",
    "zig",
    "just",
]

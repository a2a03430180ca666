"""Which command runs for a folder, and why (SPEC 2)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One rule the planner looked at: did it match, and why (or why not)."""

    runner: str
    matched: bool
    why: str


@dataclass(frozen=True)
class Plan:
    """What would run in a folder. `command is None` means there is no plan.

    folder: absolute path. manifest: relative to the folder, POSIX, or None.
    fingerprint: "sha256:<hex>" of the manifest bytes, or None.
    steps: the shell commands a run executes, in order (npm: pretest/test/posttest strings).
    snapshot: the manifest bytes for Makefile / package.json / pytest.ini, else None.
    env: extra environment for the run (npm_package_name, npm_package_version).
    """

    folder: str
    source: str | None
    runner: str | None
    command: str | None
    reason: str
    manifest: str | None
    fingerprint: str | None
    steps: tuple[str, ...]
    snapshot: bytes | None = None
    env: tuple[tuple[str, str], ...] = ()
    rules: tuple[Rule, ...] = ()

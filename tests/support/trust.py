"""What the approval tests share: a home of their own, a repository's plan, the store's file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.planning.plan import Plan


def isolate_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG folders and HOME under `tmp_path`, so a fallback can never reach the real home; the
    state folder is returned."""
    state = tmp_path / "state"
    monkeypatch.delenv("CLAUDECODE", raising=False)  # tests run inside Claude Code approve too
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return state


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "proj"
    folder.mkdir(parents=True)
    return folder


def make(folder: Path | str, **changes: Any) -> Plan:
    """A plan from the repository's Makefile (one that needs approval), with `changes`."""
    plan = Plan(
        folder=str(folder),
        source="detected",
        runner="make",
        command="make test",
        reason="Makefile has a test rule",
        manifest="Makefile",
        manifest_sha256="sha256:" + "a" * 64,
        steps=("make test",),
        snapshot=b"test:\n\ttrue\n",
    )
    return replace(plan, **changes)


def store_path(state: Path) -> Path:
    return state / "lsp-verify" / "approvals.json"

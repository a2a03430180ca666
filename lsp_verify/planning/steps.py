"""A plan made ready to run: the concrete steps (command, environment, folder) it comes to.

`prepared(plan)` gives the steps, or why the run must not happen:
- npm: one step per lifecycle script the plan holds (pretest, test, posttest), the approved
  strings, each with npm's environment (npm_lifecycle_event, npm_lifecycle_script,
  INIT_CWD) and the PATH npm gives it: the node_modules/.bin of the folder and of every
  folder above it, nearest first (a package of a hoisted workspace finds the root's tools);
- any other plan runs its command in place, against the real files, exactly as the user
  would type it (a copy of a Makefile or pytest.ini changes what `$(MAKEFILE_LIST)` and
  pytest's `pythonpath` resolve against), once the manifest's bytes are checked against the
  plan's fingerprint: a manifest changed since planning skips the run.
Every step's environment is this process's, with the plan's own values on top.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from lsp_verify.planning.plan import Plan, fingerprint


@dataclass(frozen=True)
class Step:
    """One command to run as it stands: `sh -c command` in `cwd` with `env`, to which the
    runner adds only the run's marker (`reaper.MARKER_VAR`)."""

    command: str
    env: Mapping[str, str]
    cwd: str


__all__ = ["Ready", "prepared"]


@dataclass(frozen=True)
class Ready:
    """The steps to run, or (`skip`) why the run must not happen."""

    steps: tuple[Step, ...]
    skip: str | None = None


_environ_copy: tuple[dict[bytes, bytes], dict[str, str]] | None = None


def _environment() -> dict[str, str]:
    """A copy of os.environ for a run.

    Decoding os.environ entry by entry costs more than the rest of a run's preparation, so
    the decoded copy is kept, and made again only when the environment differs from the one
    it was made from. CPython keeps the raw environment as a dict of bytes; where it does
    not, the copy is made every time."""
    global _environ_copy
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):
        return dict(os.environ)
    kept = _environ_copy
    if kept is None or kept[0] != raw:
        kept = (dict(raw), dict(os.environ))
        _environ_copy = kept
    return dict(kept[1])


def prepared(plan: Plan) -> Ready:
    """The plan's steps, or why it must not run; reads only the manifest, never raises."""
    assert plan.command is not None
    env = _environment()
    env.update(plan.env)
    folder = plan.folder

    if plan.runner == "npm":
        env["PATH"] = os.pathsep.join([*_bin_dirs(folder), env.get("PATH", os.defpath)])
        env["INIT_CWD"] = folder
        steps = []
        for name, script in zip(_npm_step_names(plan), plan.steps):
            step_env = dict(env)
            step_env["npm_lifecycle_event"] = name
            step_env["npm_lifecycle_script"] = script
            steps.append(Step(script, step_env, folder))
        return Ready(tuple(steps))

    manifest = plan.manifest
    if (
        manifest is not None
        and plan.manifest_sha256 is not None
        and _fingerprint_of(os.path.join(folder, manifest)) != plan.manifest_sha256
    ):
        return Ready((), skip=f"manifest changed: {manifest}")
    return Ready((Step(plan.command, env, folder),))


def _bin_dirs(folder: str) -> list[str]:
    """node_modules/.bin of `folder` and of every folder above it, nearest first, as npm
    puts them on PATH."""
    dirs = []
    current = folder
    while True:
        dirs.append(os.path.join(current, "node_modules", ".bin"))
        parent = os.path.dirname(current)
        if parent == current:
            return dirs
        current = parent


def _npm_step_names(plan: Plan) -> list[str]:
    """Which lifecycle script each step is: the existing ones of pretest/test/posttest."""
    count = len(plan.steps)
    if plan.snapshot is not None:
        try:
            data = json.loads(plan.snapshot)
        except (ValueError, RecursionError):
            data = None
        scripts = data.get("scripts") if isinstance(data, dict) else None
        if isinstance(scripts, dict):
            names = [n for n in ("pretest", "test", "posttest") if isinstance(scripts.get(n), str)]
            if len(names) == count:
                return names
    # Without a readable snapshot only the count is known; "test" always exists.
    by_count = {1: ["test"], 2: ["pretest", "test"], 3: ["pretest", "test", "posttest"]}
    return by_count.get(count, ["test"] * count)


def _fingerprint_of(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return fingerprint(data)

"""A plan made ready to run: the concrete steps (command, environment, folder) it comes to.

`with prepared(plan) as ready:` gives the steps, or why the run must not happen:
- npm: one step per lifecycle script the plan holds (pretest, test, posttest), each with
  npm's environment (npm_lifecycle_event, npm_lifecycle_script, INIT_CWD) and the
  project's node_modules/.bin first on PATH;
- a Makefile, or pytest.ini for pytest: the command reads a private copy of the manifest as
  it was planned, in a temporary directory that lasts as long as the `with`;
- any other manifest: the run is skipped when the file's bytes no longer match the plan's
  fingerprint.
Every step's environment is this process's, with the plan's own values on top.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from dataclasses import dataclass

from lsp_verify.plan import Plan, fingerprint
from lsp_verify.runner import Step

__all__ = ["Ready", "prepared"]


@dataclass(frozen=True)
class Ready:
    """The steps to run, or (`skip`) why the run must not happen. Leaving its `with` block
    removes the snapshot the steps read, if there is one."""

    steps: tuple[Step, ...]
    skip: str | None = None
    snapshot_dir: str | None = None

    def __enter__(self) -> Ready:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.snapshot_dir is not None:
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)


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
    """The plan's steps, for a `with` block. May raise OSError (writing a snapshot)."""
    assert plan.command is not None
    env = _environment()
    env.update(plan.env)
    folder = plan.folder

    if plan.runner == "npm":
        env["PATH"] = (
            os.path.join(folder, "node_modules", ".bin") + os.pathsep + env.get("PATH", os.defpath)
        )
        env["INIT_CWD"] = folder
        steps = []
        for name, script in zip(_npm_step_names(plan), plan.steps):
            step_env = dict(env)
            step_env["npm_lifecycle_event"] = name
            step_env["npm_lifecycle_script"] = script
            steps.append(Step(script, step_env, folder))
        return Ready(tuple(steps))

    snapshot_run = plan.runner == "make" or (
        plan.runner == "pytest" and plan.manifest == "pytest.ini"
    )
    if snapshot_run and plan.snapshot is not None and plan.manifest is not None:
        import tempfile  # here: most runs have no snapshot, and the server stays smaller

        tmpdir = tempfile.mkdtemp(prefix="lsp-verify-")  # 0700: the snapshot is private
        try:
            # The same file name keeps make's and pytest's own reading of it (pytest treats a
            # file named pytest.ini differently from other .ini files).
            path = os.path.join(tmpdir, os.path.basename(plan.manifest))
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(plan.snapshot)
        except BaseException:
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        if plan.runner == "make":
            command = f"make -f {shlex.quote(path)} test"
        else:
            command = f"{plan.command} -c {shlex.quote(path)} --rootdir {shlex.quote(folder)}"
        return Ready((Step(command, env, folder),), snapshot_dir=tmpdir)

    manifest = plan.manifest
    if (
        manifest is not None
        and plan.fingerprint is not None
        and _fingerprint_of(os.path.join(folder, manifest)) != plan.fingerprint
    ):
        return Ready((), skip=f"manifest changed: {manifest}")
    return Ready((Step(plan.command, env, folder),))


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

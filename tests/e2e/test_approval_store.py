"""The approval store across processes: one fingerprint everywhere, two writers at once, the
command line as a subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lsp_verify import cli
from lsp_verify.trust import (
    TrustStore,
    plan_fingerprint,
)
from tests.support.paths import REPO
from tests.support.trust import isolate_home, make, project


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state dir; HOME too (tests/support/trust.py)."""
    return isolate_home(tmp_path, monkeypatch)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return project(tmp_path)


# -- fingerprint and policy


def test_fingerprint_is_stable_across_processes(workspace: Path) -> None:
    code = (
        "from lsp_verify.planning.plan import Plan; from lsp_verify.trust import plan_fingerprint;"
        f"print(plan_fingerprint(Plan({str(workspace)!r}, 'detected', 'make', 'make test',"
        f"'r', 'Makefile', 'sha256:' + 'a' * 64, ('make test',))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == plan_fingerprint(make(workspace))


# -- round trips


# -- where and how it is written


# -- damaged stores


# -- two processes at once

_WRITER = textwrap.dedent(
    """
    import sys
    from lsp_verify.planning.plan import Plan
    from lsp_verify.trust import TrustStore

    tag = sys.argv[1]
    store = TrustStore()
    print("ready", flush=True)
    sys.stdin.readline()
    ok = 0
    for n in range(20):
        plan = Plan(f"/proj/{tag}{n}", "detected", "make", "make test", "r", "Makefile",
                    "sha256:" + "a" * 64, ("make test",))
        ok += store.approve(plan)
    print(ok, store.take_warnings(), flush=True)
    """
)


def test_two_processes_approving_at_once_both_end_up_stored(_isolated_home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, tag],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tag in ("a", "b")
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        # Release both only once both are loaded, so their writes overlap.
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outputs = [p.communicate(timeout=30)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [o.strip() for o in outputs] == ["20 []", "20 []"]
    assert all(p.returncode == 0 for p in procs)
    folders = {d.folder for d in TrustStore().decisions()}
    assert folders == {f"/proj/{t}{n}" for t in "ab" for n in range(20)}


# -- command line


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("manifest", "text"),
    [
        (".lsp-verify.toml", 'command = "true"\n'),
        ("Makefile", "test:\n\ttrue\n"),
        ("package.json", '{"scripts": {"pretest": "true", "test": "true"}}'),
    ],
)
def test_one_plan_shows_one_fingerprint_in_every_view(
    capsys: pytest.CaptureFixture[str], workspace: Path, manifest: str, text: str
) -> None:
    # explain, approve (printed and stored), approvals and check's record name the same plan
    # by the same fingerprint; the manifest's own sha256 is a separate, named field.
    (workspace / manifest).write_text(text)
    status, out, _ = run_cli(capsys, "explain", str(workspace))
    assert status == 0
    explained = json.loads(out)
    shown = explained["fingerprint"]
    assert shown.startswith("sha256:")
    data = (workspace / manifest).read_bytes()
    assert explained["manifestSha256"] == "sha256:" + hashlib.sha256(data).hexdigest() != shown
    status, out, _ = run_cli(capsys, "approve", str(workspace))
    assert status == 0 and f"fingerprint: {shown}" in out
    assert [d.fingerprint for d in TrustStore().decisions()] == [shown]
    status, out, _ = run_cli(capsys, "approvals", str(workspace))
    assert json.loads(out)["fingerprint"] == shown
    status, out, _ = run_cli(capsys, "check", "--json", str(workspace))
    record = json.loads(out)
    assert (status, record["fingerprint"], record["manifestSha256"]) == (
        0,
        shown,
        explained["manifestSha256"],
    )


def test_real_subprocess_lists_approvals(_isolated_home: Path, workspace: Path) -> None:
    TrustStore().refuse(make(workspace))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "lsp_verify", "approvals"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    entry = json.loads(line)
    assert (entry["folder"], entry["verdict"]) == (str(workspace), "refused")
    assert done.stderr == ""

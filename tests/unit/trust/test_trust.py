"""The approval store: fingerprints, the gate, round trips, damage."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_verify.planning.plan import Plan, Rule
from lsp_verify.trust import (
    APPROVED,
    REFUSED,
    TrustStore,
    gate,
    needs_question,
    plan_fingerprint,
    state_dir,
)
from lsp_verify.trust import store as store_module
from tests.support.trust import isolate_home, make, project, store_path


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state dir; HOME too (tests/support/trust.py)."""
    return isolate_home(tmp_path, monkeypatch)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return project(tmp_path)


def listing(folder: Path) -> list[tuple[str, int, int]]:
    out = []
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            st = os.lstat(os.path.join(root, name))
            out.append((os.path.join(root, name), st.st_mtime_ns, st.st_size))
    return sorted(out)


# -- fingerprint and policy


def test_fingerprint_is_a_sha256(workspace: Path) -> None:
    fp = plan_fingerprint(make(workspace))
    assert fp.startswith("sha256:")
    assert len(fp) == len("sha256:") + 64
    int(fp[len("sha256:") :], 16)


@pytest.mark.parametrize(
    "change",
    [
        {"command": "make check"},
        {"steps": ("make test", "make lint")},
        {"manifest_sha256": "sha256:" + "b" * 64},
        {"source": "project-file"},
        {"manifest": "GNUmakefile"},
        {"runner": "tox"},
    ],
)
def test_fingerprint_changes_with_what_runs(workspace: Path, change: dict[str, Any]) -> None:
    assert plan_fingerprint(make(workspace, **change)) != plan_fingerprint(make(workspace))


@pytest.mark.parametrize(
    "change",
    [
        {"reason": "some other wording"},
        {"rules": (Rule("pytest", False, "no pytest.ini"),)},
        {"env": (("npm_package_name", "x"),)},
        {"snapshot": None},
    ],
)
def test_fingerprint_ignores_what_does_not_run(workspace: Path, change: dict[str, Any]) -> None:
    assert plan_fingerprint(make(workspace, **change)) == plan_fingerprint(make(workspace))
    # The folder is the store's key, not part of the fingerprint.
    assert plan_fingerprint(make("/elsewhere")) == plan_fingerprint(make(workspace))


def test_needs_question_only_for_repository_commands(workspace: Path) -> None:
    assert needs_question(make(workspace))
    assert needs_question(make(workspace, source="project-file", runner=None))
    assert needs_question(make(workspace, source="script", runner=None))
    assert needs_question(make(workspace, source="workspace-settings", runner=None))
    assert not needs_question(make(workspace, source="settings", runner=None))
    assert not needs_question(make(workspace, source=None, command=None, steps=()))


def test_gate_follows_confirm_trust_and_stored_verdicts(workspace: Path) -> None:
    store = TrustStore()
    plan = make(workspace)
    settings_plan = make(workspace, source="settings")

    def g(p: Plan = plan, **kw: Any) -> tuple[str, bool]:
        result = gate(p, store, **kw)
        return result.action, result.offer_always

    assert g(settings_plan, workspace_trusted=False) == ("run", False)
    assert g() == ("ask", True)
    assert g(confirm="always") == ("ask", False)
    assert g(confirm="never") == ("run", False)
    assert g(workspace_trusted=False, confirm="never") == ("decline", False)
    assert g(workspace_trusted=False, run_now=True) == ("ask", False)
    assert store.refuse(plan)
    assert g() == ("decline", False)
    assert g(run_now=True) == ("ask", True)
    assert store.approve(plan)
    assert g() == ("run", False)
    assert g(confirm="always") == ("ask", False)
    assert g(make(workspace, command="make check")) == ("ask", True)


def test_state_dir_follows_xdg_then_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert state_dir() == tmp_path / "state" / "lsp-verify"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "lsp-verify"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert state_dir() == tmp_path / "home" / ".local" / "state" / "lsp-verify"


# -- round trips


def test_approve_refuse_lookup_revoke(tmp_path: Path, workspace: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    store = TrustStore()
    plan = make(workspace)
    fp = plan_fingerprint(plan)
    assert store.lookup(str(workspace), fp) is None

    assert store.approve(plan) is True
    assert store.lookup(str(workspace), fp) == APPROVED
    assert store.lookup(str(workspace), plan_fingerprint(make(workspace, command="x"))) is None
    assert store.lookup(str(other), fp) is None

    assert store.refuse(plan) is True
    assert store.lookup(str(workspace), fp) == REFUSED
    assert [d.verdict for d in store.decisions(str(workspace))] == [REFUSED]

    assert store.approve(make(other)) is True
    assert store.approve(make(workspace, command="make check")) is True
    assert len(store.decisions()) == 3
    assert store.revoke(str(workspace)) == 2
    assert store.lookup(str(workspace), fp) is None
    assert [d.folder for d in store.decisions()] == [str(other)]
    assert store.revoke(str(workspace)) == 0
    assert store.take_warnings() == []


def test_decision_records_what_was_decided(workspace: Path) -> None:
    store = TrustStore()
    store.approve(make(workspace))
    (decision,) = store.decisions()
    assert decision.folder == str(workspace)
    assert decision.fingerprint == plan_fingerprint(make(workspace))
    assert (decision.verdict, decision.command, decision.source, decision.manifest) == (
        APPROVED,
        "make test",
        "detected",
        "Makefile",
    )
    assert decision.decided_at.endswith("Z") and decision.decided_at[4] == "-"


def test_a_new_instance_sees_the_file(workspace: Path) -> None:
    assert TrustStore().approve(make(workspace))
    fresh = TrustStore()
    assert fresh.lookup(str(workspace), plan_fingerprint(make(workspace))) == APPROVED
    # A write by another instance after the first read is seen too (the file was replaced).
    TrustStore().refuse(make(workspace))
    assert fresh.lookup(str(workspace), plan_fingerprint(make(workspace))) == REFUSED


def test_folder_keys_are_resolved(tmp_path: Path, workspace: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(workspace)
    store = TrustStore()
    assert store.approve(make(link))
    fp = plan_fingerprint(make(link))
    assert store.lookup(str(workspace), fp) == APPROVED
    assert store.lookup(str(workspace) + "/./", fp) == APPROVED
    assert [d.folder for d in store.decisions(str(link))] == [str(workspace)]
    assert store.revoke(str(link)) == 1


def test_plans_without_a_repository_command_are_not_stored(
    _isolated_home: Path, workspace: Path
) -> None:
    store = TrustStore()
    assert store.approve(make(workspace, source="settings")) is False
    assert store.refuse(make(workspace, source=None, command=None, steps=())) is False
    assert not store_path(_isolated_home).exists()
    assert store.take_warnings() == []


def test_old_decisions_of_a_folder_are_capped(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(range(1000))
    monkeypatch.setattr(store_module, "now_iso", lambda: f"2026-01-01T00:00:00.{next(ticks):03d}Z")
    store = TrustStore()
    total = store_module.MAX_DECISIONS_PER_FOLDER + 5
    for n in range(total):
        assert store.approve(make(workspace, command=f"make test{n}"))
    kept = [d.command for d in store.decisions(str(workspace))]
    assert kept == [f"make test{n}" for n in range(5, total)]


def test_unencodable_folder_names_round_trip(tmp_path: Path) -> None:
    folder = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    os.mkdir(folder)
    assert TrustStore().approve(make(folder))
    assert TrustStore().lookup(folder, plan_fingerprint(make(folder))) == APPROVED


# -- where and how it is written


def test_file_modes_and_nothing_in_the_workspace(_isolated_home: Path, workspace: Path) -> None:
    (workspace / "Makefile").write_text("test:\n\ttrue\n")
    before = listing(workspace)
    store = TrustStore()
    assert store.approve(make(workspace))
    assert store.refuse(make(workspace, command="other"))
    assert store.revoke(str(workspace)) == 2
    assert store.approve(make(workspace))
    assert listing(workspace) == before

    path = store_path(_isolated_home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(str(path) + ".lock").stat().st_mode) == 0o600
    # Only the store and its lock: no temp file left behind.
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "approvals.json",
        "approvals.json.lock",
    ]
    data = json.loads(path.read_text())
    assert data["version"] == store_module.FORMAT_VERSION
    assert list(data["folders"]) == [str(workspace)]


def test_modes_hold_whatever_the_umask(_isolated_home: Path, workspace: Path) -> None:
    # 0o277 would leave the dir 0500 and the file 0400 if the modes came from the umask.
    old = os.umask(0o277)
    try:
        assert TrustStore().approve(make(workspace))
    finally:
        os.umask(old)
    path = store_path(_isolated_home)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The missing XDG_STATE_HOME too: left 0500, it refused the folder inside it (to any user
    # but root).
    assert stat.S_IMODE(_isolated_home.stat().st_mode) == 0o700


def test_a_custom_path_is_honoured(tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "elsewhere" / "store.json"
    assert TrustStore(path).approve(make(workspace))
    assert path.is_file()
    assert TrustStore(path).decisions()[0].folder == str(workspace)
    assert not (tmp_path / "state").exists()


# -- damaged stores


@pytest.mark.parametrize(
    "content",
    [
        b"this is not json {",
        b"[]",
        b'{"approvals": {}}',
        b'{"version": 1, "folders": []}',
        b'\xff\xfe{"version": 1}',
        b"",
        b"  \n",
    ],
    ids=["garbage", "list", "no-version", "bad-folders", "non-utf8", "empty", "blank"],
)
def test_damaged_store_reads_empty_warns_once_and_is_rewritten(
    _isolated_home: Path, workspace: Path, content: bytes
) -> None:
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    store = TrustStore()
    fp = plan_fingerprint(make(workspace))
    assert store.lookup(str(workspace), fp) is None
    assert store.lookup(str(workspace), fp) is None
    assert store.decisions() == []
    warnings = store.take_warnings()
    assert len(warnings) == 1
    assert str(path) in warnings[0]
    assert store.take_warnings() == []

    assert store.approve(make(workspace)) is True
    assert store.take_warnings() == []
    data = json.loads(path.read_bytes().decode("utf-8"))
    assert data["version"] == store_module.FORMAT_VERSION
    assert list(data["folders"][str(workspace)]) == [fp]
    assert TrustStore().lookup(str(workspace), fp) == APPROVED


def test_a_store_broken_again_warns_again(_isolated_home: Path, workspace: Path) -> None:
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"junk")
    store = TrustStore()
    store.decisions()
    assert len(store.take_warnings()) == 1
    store.approve(make(workspace))
    assert store.decisions() != []
    path.write_bytes(b"junk")
    store.decisions()
    assert len(store.take_warnings()) == 1


def test_malformed_entries_are_dropped_and_the_rest_kept(
    _isolated_home: Path, workspace: Path
) -> None:
    good = {"verdict": "approved", "command": "make", "source": "detected", "decidedAt": "t"}
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "folders": {
                    "/a": {"sha256:1": good, "sha256:2": {"verdict": "maybe", "decidedAt": "t"}},
                    "/b": "not a mapping",
                    "/c": {"sha256:3": {**good, "command": 5}},
                },
            }
        )
    )
    store = TrustStore()
    assert store.lookup("/a", "sha256:1") == APPROVED
    assert store.lookup("/a", "sha256:2") is None
    assert [d.fingerprint for d in store.decisions()] == ["sha256:1"]
    (warning,) = store.take_warnings()
    assert "3 malformed" in warning
    assert store.approve(make(workspace))
    assert set(json.loads(path.read_text())["folders"]) == {"/a", str(workspace)}


def test_unreadable_store_reads_empty_then_is_rewritten(
    _isolated_home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, which chmod 000 does not stop: make the read itself fail.
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "folders": {}}')

    def denied(p: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(p))

    fp = plan_fingerprint(make(workspace))
    # A context, not monkeypatch.undo(): that would also restore the real XDG_STATE_HOME.
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "_read_store_bytes", denied)
        store = TrustStore()
        assert store.lookup(str(workspace), fp) is None
        assert store.decisions() == []
        (warning,) = store.take_warnings()
        assert "Permission denied" in warning
        assert store.approve(make(workspace)) is True
    assert TrustStore().lookup(str(workspace), fp) == APPROVED


@contextlib.contextmanager
def fifo_released_after(fifo: Path, seconds: float = 3.0) -> Iterator[None]:
    """A blocking open of the FIFO would wait for a writer forever: one comes after `seconds`,
    so that a store without the defence fails the test instead of hanging it."""

    def release() -> None:
        with contextlib.suppress(OSError):  # ENXIO: nobody is reading, nothing to release
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(seconds, release)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def test_a_fifo_at_the_store_path_reads_empty_and_is_replaced(
    _isolated_home: Path, workspace: Path
) -> None:
    # Opening a FIFO for reading blocks until a writer comes: it must never be opened so.
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    store = TrustStore()
    fp = plan_fingerprint(make(workspace))
    with fifo_released_after(path):
        assert store.lookup(str(workspace), fp) is None
    (warning,) = store.take_warnings()
    assert str(path) in warning and "not a regular file" in warning
    assert store.approve(make(workspace)) is True
    assert path.is_file()
    assert TrustStore().lookup(str(workspace), fp) == APPROVED


def test_a_store_swapped_for_a_fifo_after_the_stat_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with fifo_released_after(fifo), pytest.raises(OSError, match="not a regular file"):
        store_module._read_store_bytes(fifo)


def test_a_fifo_at_the_lock_path_fails_the_write_softly(
    _isolated_home: Path, workspace: Path
) -> None:
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    os.mkfifo(str(path) + ".lock")
    store = TrustStore()
    assert store.approve(make(workspace)) is False
    (warning,) = store.take_warnings()
    assert "lock file" in warning and "not a regular file" in warning
    assert not path.exists()


def test_a_directory_at_the_store_path_fails_softly(_isolated_home: Path, workspace: Path) -> None:
    path = store_path(_isolated_home)
    path.mkdir(parents=True)
    store = TrustStore()
    fp = plan_fingerprint(make(workspace))
    assert store.lookup(str(workspace), fp) is None
    assert store.lookup(str(workspace), fp) is None
    (warning,) = store.take_warnings()
    assert "directory" in warning
    assert store.approve(make(workspace)) is False
    (failure,) = store.take_warnings()
    assert "not written" in failure
    assert store.revoke_checked(str(workspace)) == (True, 0)
    assert path.is_dir()
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_an_unwritable_state_dir_fails_softly(tmp_path: Path, workspace: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the state dir should be")
    store = TrustStore(blocker / "lsp-verify" / "approvals.json")
    assert store.approve(make(workspace)) is False
    (warning,) = store.take_warnings()
    assert "not written" in warning
    assert store.lookup(str(workspace), plan_fingerprint(make(workspace))) is None


def test_a_newer_format_is_read_as_empty_and_left_alone(
    _isolated_home: Path, workspace: Path
) -> None:
    path = store_path(_isolated_home)
    path.parent.mkdir(parents=True)
    content = b'{"version": 2, "folders": {"/a": {}}, "more": true}'
    path.write_bytes(content)
    store = TrustStore()
    assert store.decisions() == []
    assert "newer" in store.take_warnings()[0]
    assert store.approve(make(workspace)) is False
    assert "newer" in store.take_warnings()[0]
    assert path.read_bytes() == content


def test_no_home_and_no_xdg_state_home_fails_softly(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_STATE_HOME")

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    store = TrustStore()
    assert store.path is None
    assert len(store.take_warnings()) == 1
    assert store.lookup(str(workspace), "sha256:x") is None
    assert store.approve(make(workspace)) is False
    assert len(store.take_warnings()) == 1


# -- two processes at once


# -- command line

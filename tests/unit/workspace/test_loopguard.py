"""The loop guard's one clock: a change's modification time, stamped by its file system's
clock, is compared with a run's span moved into that clock, whatever the skew between the
file system and us and however coarse its stamps. Ours is moved here (time.time, which the
guard and the workspace read) rather than the file system's, to the same effect."""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lsp_verify.workspace import loopguard
from lsp_verify.workspace.loopguard import LoopGuard

REAL_TIME = time.time


def our_clock_off_by(monkeypatch: pytest.MonkeyPatch, seconds: float) -> Callable[[], float]:
    """Our clock `seconds` ahead of the file system's (behind, when negative)."""

    def skewed() -> float:
        return REAL_TIME() + seconds

    monkeypatch.setattr(time, "time", skewed)
    return skewed


def write(path: Path) -> str:
    path.write_text("report\n")
    return str(path)


@pytest.mark.parametrize("skew", [30.0, -30.0, 3600.0])
def test_a_run_s_own_write_is_its_echo_whatever_the_skew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skew: float
) -> None:
    clock = our_clock_off_by(monkeypatch, skew)
    guard = LoopGuard()
    span = guard.begin(echo=True)
    report = write(tmp_path / "report.xml")  # during the run: its own output
    assert guard.verdict(report) == "drop"
    span.end = clock()
    assert guard.verdict(report) == "drop"


@pytest.mark.parametrize("skew", [30.0, -30.0])
def test_a_write_before_or_after_the_run_triggers_whatever_the_skew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, skew: float
) -> None:
    clock = our_clock_off_by(monkeypatch, skew)
    guard = LoopGuard()
    before = write(tmp_path / "before.py")
    time.sleep(0.05)  # more than the file system's unit (a kernel tick) on both sides
    span = guard.begin(echo=True)
    assert guard.verdict(before) == "trigger"  # the span still open
    time.sleep(0.05)
    span.end = clock()
    time.sleep(0.05)
    after = write(tmp_path / "after.py")
    assert guard.verdict(before) == "trigger"
    assert guard.verdict(after) == "trigger"


def coarse(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system stamping whole seconds (a 1 s unit, as on ext3 or HFS+): the probe's
    stamps are truncated as a file's are."""
    real = getattr(loopguard, "_probe", None)  # (None before the guard had one clock)

    def truncated(directory: str, device: int, root: str | None) -> int | None:
        assert real is not None
        stamp = real(directory, device, root)
        assert stamp is not None, "no nameless file here: the test needs one"
        seconds = stamp // 1_000_000_000
        return (seconds | 1) * 1_000_000_000 if seconds % 2 else seconds * 1_000_000_000

    monkeypatch.setattr(loopguard, "_probe", truncated, raising=False)


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="the probe by a nameless file")
def test_on_a_coarse_file_system_a_write_in_the_run_s_first_second_is_its_echo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    coarse(monkeypatch)
    guard = LoopGuard()
    while REAL_TIME() % 1 > 0.8:  # start and write within one second
        time.sleep(0.05)
    span = guard.begin(echo=True)
    report = write(tmp_path / "report.xml")
    stamped = math.floor(span.start)  # as the file system stamps it: before the start
    os.utime(report, (stamped, stamped))
    assert guard.verdict(report) == "drop"
    span.end = time.time()
    assert guard.verdict(report) == "drop"
    # Well outside the span and its unit: not the run's.
    os.utime(report, (stamped - 5, stamped - 5))
    guard = LoopGuard()
    guard.spans.append(span)
    assert guard.verdict(report) == "trigger"


def test_without_a_probe_a_whole_second_stamp_is_read_as_coarse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file system where no file can be made (read-only, or no O_TMPFILE and no `.git`):
    # the clocks are taken to agree, and the file's own stamp tells its unit.
    monkeypatch.setattr(loopguard, "_probe", lambda *args: None)
    guard = LoopGuard()
    while REAL_TIME() % 1 > 0.8:
        time.sleep(0.05)
    span = guard.begin(echo=False)
    span.end = time.time()
    report = write(tmp_path / "report.xml")
    os.utime(report, (math.floor(span.start),) * 2)
    assert guard.verdict(report, str(tmp_path)) == "echo"
    os.utime(report, (span.start - 0.5,) * 2)  # a fine stamp half a second before: not
    assert guard.verdict(report, str(tmp_path)) == "trigger"


@pytest.mark.skipif(sys.platform == "win32", reason="a directory's write permission")
def test_without_a_nameless_file_the_probe_is_a_named_one_in_git_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loopguard, "_stamp_nameless", lambda directory: None)
    (tmp_path / ".git").mkdir()
    clock = our_clock_off_by(monkeypatch, 30.0)
    guard = LoopGuard()
    span = guard.begin(echo=True)
    (tmp_path / "sub").mkdir()
    report = write(tmp_path / "sub" / "report.xml")
    span.end = clock()
    assert guard.verdict(report, str(tmp_path)) == "drop"
    assert os.listdir(tmp_path / ".git") == []
    assert sorted(os.listdir(tmp_path)) == [".git", "sub"]


def test_one_probe_serves_a_notification_of_many_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes: list[str] = []
    real = loopguard._probe

    def counted(directory: str, device: int, root: str | None) -> int | None:
        probes.append(directory)
        return real(directory, device, root)

    monkeypatch.setattr(loopguard, "_probe", counted)
    guard = LoopGuard()
    assert guard.verdict(write(tmp_path / "a.py"), str(tmp_path)) == "trigger"
    assert probes == []  # no run yet: nothing to compare with
    guard.begin(echo=False)
    for index in range(100):
        assert guard.verdict(write(tmp_path / f"out{index}.txt"), str(tmp_path)) == "echo"
    assert len(probes) == 1

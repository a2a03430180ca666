"""The reaper's parts: the pid window, the fork-counter shortcut, the subreaper flag."""

from __future__ import annotations

import ctypes
import sys

import pytest

from lsp_verify.running.reaper import escapees, set_subreaper

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


@pytest.mark.parametrize(
    ("last", "forks", "expected"),
    [
        (1010, 5020, list(range(1000, 1011))),  # no wrap, small: probe the range directly
        (1900, 5020, [1005, 1900]),  # no wrap, wide: listed pids inside the range
        (990, 5020, [1, 1005, 1900, 99999]),  # the counter wrapped: everything
        (1010, 5000 + 16384, [1, 1005, 1900, 99999]),  # so many forks it may have wrapped
    ],
)
def test_pid_window(
    monkeypatch: pytest.MonkeyPatch, last: int, forks: int, expected: list[int]
) -> None:
    files = {"/proc/sys/kernel/pid_max": 32768, "/proc/sys/kernel/ns_last_pid": last}
    monkeypatch.setattr(escapees, "_int_from", files.get)
    monkeypatch.setattr(escapees, "_pid_max", None)
    monkeypatch.setattr(escapees, "all_pids", lambda: [1, 1005, 1900, 99999])
    monkeypatch.setattr(escapees, "_forks_since_boot", lambda: 5000)
    window = escapees.PidWindow()
    window.note(1000)
    window.note(1003)  # only the first spawn counts
    monkeypatch.setattr(escapees, "_forks_since_boot", lambda: forks)
    assert list(window.candidates()) == expected


@pytest.mark.parametrize(
    ("spawned", "forks_after", "alone"),
    [
        (1, 5001, True),  # only our step was forked since the window opened
        (1, 5002, False),  # one more process somewhere: it may be the step's
        (2, 5002, True),  # two npm steps, nothing else
        (0, 5000, False),  # nothing spawned: no claim to make
    ],
)
def test_nothing_else_forked(
    monkeypatch: pytest.MonkeyPatch, spawned: int, forks_after: int, alone: bool
) -> None:
    monkeypatch.setattr(escapees, "_forks_since_boot", lambda: 5000)
    window = escapees.PidWindow()
    for pid in range(1000, 1000 + spawned):
        window.note(pid)
    monkeypatch.setattr(escapees, "_forks_since_boot", lambda: forks_after)
    assert escapees.nothing_else_forked(window) is alone


def test_nothing_else_forked_without_the_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(escapees, "_forks_since_boot", lambda: None)
    window = escapees.PidWindow()
    window.note(1000)
    assert escapees.nothing_else_forked(window) is False


def test_enable_subreaper_sets_the_flag() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(-1)
    try:
        assert set_subreaper(True)
        assert set_subreaper(True)  # idempotent
        assert libc.prctl(37, ctypes.byref(flag), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
        assert flag.value == 1
    finally:
        set_subreaper(False)


# ------------------------------------------------------- the path of other Unix systems

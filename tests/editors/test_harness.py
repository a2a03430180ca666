"""The editor tests skip only where the editor is missing, and never under CI; the terminal
they read Neovim's screen in leaves nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.editors import harness
from tests.editors.terminal import ScreenTimeout, Terminal

MISSING = "lsp-verify-no-such-editor"


def test_missing_editor_skips_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install some-package"):
        harness.require(MISSING, "some-package")


def test_missing_editor_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        harness.require(MISSING, "some-package")


def test_present_binary_is_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert harness.require("sh", "dash").endswith("/sh")


def test_terminal_shows_what_is_typed_and_leaves_nothing_behind(tmp_path: Path) -> None:
    tmux = harness.require("tmux", "tmux")
    marker = str(tmp_path / "marker")
    env = {**os.environ, "LSP_VERIFY_OUT": marker, "LC_ALL": "C.UTF-8"}
    env.pop("TMUX", None)
    term = Terminal(tmux, tmp_path, ["cat"], env=env, cwd=tmp_path, size=(40, 5))
    try:
        term.type("hello ■ terminal")
        term.keys("Enter")
        screen = term.wait_for_text("hello ■ terminal\nhello ■ terminal", timeout=30)
        assert len(screen.splitlines()) <= 5, screen
        with pytest.raises(ScreenTimeout, match="hello ■ terminal"):
            term.wait_for_text("never shown", timeout=0.3)
        assert term.alive()
    finally:
        term.close()
    still_open = term.alive()
    leftovers = harness.reap(marker)  # kills what close() left, so that nothing stays
    assert not still_open
    assert leftovers == []

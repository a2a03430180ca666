"""The editor tests skip only where the editor is missing, and never under CI."""

from __future__ import annotations

import pytest

from tests.editors import harness

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

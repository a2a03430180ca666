"""The workspace's unit tests: a fake client (tests/support/fake_ui.py) and XDG folders in
temp, so the trust store a state opens is never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_ui import FakeUI


@pytest.fixture(autouse=True)
def xdg(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("xdg")  # beside the test's tmp_path, not inside it
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        (home / name).mkdir(parents=True)
        monkeypatch.setenv(name, str(home / name))
    return home


@pytest.fixture
def ui() -> FakeUI:
    return FakeUI()

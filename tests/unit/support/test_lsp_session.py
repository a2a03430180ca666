"""What the end-to-end tests rely on in pytest-lsp's capability profiles."""

from __future__ import annotations

from pytest_lsp import client_capabilities


def test_capability_profiles_exist() -> None:
    # What the tests rely on: VS Code declares progress and configuration; Neovim 0.7 no
    # workspace/configuration, so its settings come from initializationOptions.
    assert client_capabilities("visual_studio_code").window.work_done_progress
    assert not client_capabilities("neovim@v0.7.0").workspace.configuration

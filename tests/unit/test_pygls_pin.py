"""The pygls that pyproject.toml admits is the pygls the tests ran with: the server uses some
of pygls' internals, so a pygls release it was never tested with must not reach an install.
(.ci/pygls-newest.sh tries the newest 2.x in CI.)"""

from __future__ import annotations

import importlib.util
import os
from importlib.metadata import version
from types import ModuleType

import pytest
from packaging.version import Version

from tests.support.paths import REPO

CI = REPO / ".ci"


def versions_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pygls_versions", CI / "pygls_versions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_installed_pygls_is_one_the_pin_admits_and_no_untested_minor_is() -> None:
    installed = Version(version("pygls"))
    if os.environ.get("LSP_VERIFY_PYGLS_TRIAL") == str(installed):
        pytest.skip(f"pygls {installed}: the newest 2.x, tried outside the pin on purpose")
    specifier = versions_script().pin().specifier
    assert specifier.contains(installed), f"pygls {installed} is outside {specifier}"
    next_minor = Version(f"{installed.major}.{installed.minor + 1}.0")
    assert not specifier.contains(next_minor), f"{specifier} admits the untested {next_minor}"


def test_the_newest_2x_is_read_from_the_package_index() -> None:
    printed = (
        "pygls (3.0.0)\n"
        "Available versions: 3.0.0, 2.2.0rc1, 2.1.10, 2.1.9, 2.0.1, 1.3.1\n"
        "  INSTALLED: 2.1.9\n"
        "  LATEST:    3.0.0\n"
    )
    assert versions_script().newest_2x(printed) == "2.1.10"


def test_the_project_s_requirements_are_read_with_the_test_extra() -> None:
    names = [r.name for r in versions_script().requirements()]
    assert "pygls" in names and "lsprotocol" in names and "pytest" in names

"""What is published: the PyPI metadata, and what the VS Code bundle needs."""

from __future__ import annotations

import re
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from hatch_build import absolute_links
from tests.support.paths import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

CLIENT = REPO / "vscode-client"
PROJECT: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_vscode_bundle_carries_every_runtime_dependency() -> None:
    """The .vsix bundles the server with pinned copies of its dependencies: one that the
    package needs and the bundle lacks is a server that cannot start in VS Code."""
    needed = {
        re.split(r"[<>=!~;\[ ]", dependency, maxsplit=1)[0].lower().replace("_", "-")
        for dependency in PROJECT["project"]["dependencies"]
    }
    bundle = CLIENT / "bundled" / "requirements.txt"
    pinned = {
        line.split("==", 1)[0].strip().lower().replace("_", "-")
        for line in bundle.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert needed <= pinned, needed - pinned


def test_the_package_page_has_its_metadata() -> None:
    project = PROJECT["project"]
    assert project["authors"] and all(author.get("name") for author in project["authors"])
    assert len(project["keywords"]) >= 3
    classifiers = project["classifiers"]
    assert any(c.startswith("Development Status :: ") for c in classifiers)
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    # The license is an SPDX expression: a License :: classifier beside it is an error.
    assert project["license"] == "MIT" and not [c for c in classifiers if c.startswith("License")]
    assert set(project["urls"]) >= {"Homepage", "Issues", "Changelog"}
    # The long description is the README made for the package page (hatch_build.py).
    assert "readme" in project["dynamic"] and "readme" not in project
    assert PROJECT["tool"]["hatch"]["metadata"]["hooks"]["custom"] == {}


def test_the_build_backend_has_its_floor() -> None:
    """hatchling before 1.26 writes a License-Expression that `twine check` rejects."""
    [hatchling] = [Requirement(r) for r in PROJECT["build-system"]["requires"]]
    assert hatchling.name == "hatchling"
    assert not hatchling.specifier.contains(Version("1.25.99"))
    assert hatchling.specifier.contains(Version("1.26"))


def test_relative_links_become_absolute_at_the_release_tag() -> None:
    home = "https://example.org/o/r"
    text = (
        "See [the editors](docs/editors.md), [here](./docs/x.md#part), [a part](#trust),\n"
        "![shot](docs/images/a.png), [kept](https://other.example/x), [mail](mailto:a@b.c).\n"
        "[ref]: docs/agents.md\n"
    )
    assert absolute_links(text, home + "/", "v1.2.3") == (
        "See [the editors](https://example.org/o/r/blob/v1.2.3/docs/editors.md), "
        "[here](https://example.org/o/r/blob/v1.2.3/docs/x.md#part), "
        "[a part](https://example.org/o/r#trust),\n"
        "![shot](https://example.org/o/r/raw/v1.2.3/docs/images/a.png), "
        "[kept](https://other.example/x), [mail](mailto:a@b.c).\n"
        "[ref]: https://example.org/o/r/blob/v1.2.3/docs/agents.md\n"
    )

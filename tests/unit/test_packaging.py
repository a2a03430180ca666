"""What is published: the PyPI metadata, the project's home wherever it is named, and the VS
Code extension's manifest, icon and README as the marketplace shows them."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

from packaging.requirements import Requirement
from packaging.version import Version

from hatch_build import absolute_links
from lsp_verify.planning.plan import PLAN_INPUTS
from lsp_verify.planning.pytest_config import _CANDIDATES
from tests.support.paths import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

CLIENT = REPO / "vscode-client"
PROJECT: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text())
HOME: str = PROJECT["project"]["urls"]["Homepage"]
MANIFEST: dict[str, Any] = json.loads((CLIENT / "package.json").read_text())
# Folders of a work tree that are not the project's sources.
NOT_SOURCES = {".git", ".venv", "venv", "node_modules", "dist", "out", "build", "libs",
               "test-artifacts", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
               ".hypothesis", ".import_linter_cache"}  # fmt: skip


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


def _sources() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in NOT_SOURCES]
        found += [Path(folder, f) for f in files if not f.endswith((".png", ".vsix"))]
    return found


def test_every_place_that_names_the_home_agrees() -> None:
    """The home is in pyproject.toml's `project.urls`; the extension's manifest and README and
    the docs name it too. A rename missed in one of them is a dead link on a package page."""
    owner_repo = re.compile(r"(?:github\.com|raw\.githubusercontent\.com)[/:]([\w.-]+/[\w.-]+)")
    ours = HOME.split("github.com/", 1)[1]
    named: dict[str, set[str]] = {}
    for path in _sources():
        if path.name == "package-lock.json":
            continue
        for found in owner_repo.findall(path.read_text(errors="replace")):
            found = found.removesuffix(".git")
            if "lsp-verify" in found or "lsp_verify" in found:
                named.setdefault(found, set()).add(path.relative_to(REPO).as_posix())
    assert set(named) == {ours}, named
    assert {"pyproject.toml", "vscode-client/package.json", "vscode-client/README.md"} <= named[
        ours
    ]
    assert MANIFEST["repository"]["url"] in (HOME, HOME + ".git")
    assert MANIFEST["repository"]["directory"] == "vscode-client"
    for url in (
        MANIFEST["homepage"],
        MANIFEST["bugs"]["url"],
        *PROJECT["project"]["urls"].values(),
    ):
        assert url == HOME or url.startswith((HOME + "/", HOME + "#")), url


def test_the_extension_manifest_is_publishable() -> None:
    assert "private" not in MANIFEST
    assert MANIFEST["publisher"] == "lsp-verify"
    assert "--allow-missing-repository" not in json.dumps(MANIFEST["scripts"])
    # vsce runs vscode:prepublish before it packages: the CHANGELOG the .vsix carries.
    assert MANIFEST["scripts"]["vscode:prepublish"] == "node scripts/copy-changelog.mjs"
    assert "CHANGELOG.md" in (CLIENT / "scripts" / "copy-changelog.mjs").read_text()
    icon = (CLIENT / MANIFEST["icon"]).read_bytes()
    assert icon[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", icon[16:24]) == (128, 128)


def test_the_extension_loads_only_where_it_can_help() -> None:
    """Activation: a folder with a file planning reads (the project file, the script, or a
    manifest the detector reads, at the folder's root), or one of the extension's own
    commands; never in every window."""
    events = MANIFEST["activationEvents"]
    assert not {"*", "onStartupFinished"} & set(events)
    contains = {e.split(":", 1)[1] for e in events if e.startswith("workspaceContains:")}
    # What planning reads that is not a sign of a project on its own: a lock file or a venv.
    planning = {p for p in PLAN_INPUTS if not p.endswith(".lock") and "/bin/" not in p}
    planning |= {name for name, _ in _CANDIDATES}
    assert contains == planning
    commands = {e.split(":", 1)[1] for e in events if e.startswith("onCommand:")}
    contributed = {c["command"] for c in MANIFEST["contributes"]["commands"]}
    hidden = {m["command"] for m in MANIFEST["contributes"]["menus"]["commandPalette"]}
    # The commands that are in the palette before the server runs are the way in.
    assert commands == contributed - hidden


def _load_icon_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_icon", CLIENT / "scripts" / "make-icon.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _png_rows(data: bytes) -> bytes:
    """The filtered rows of a PNG (its IDAT chunks, inflated)."""
    position, idat = 8, b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        if kind == b"IDAT":
            idat += data[position + 8 : position + 8 + length]
        position += 12 + length
    return zlib.decompress(idat)


def test_the_icon_is_what_its_script_draws() -> None:
    """images/icon.png is committed; scripts/make-icon.py is its source."""
    script = _load_icon_script()
    committed = (CLIENT / MANIFEST["icon"]).read_bytes()
    assert committed[:33] == script.png()[:33]  # signature and header: size, RGBA
    assert _png_rows(committed) == script.pixels()


def test_the_extension_readme_shows_screenshots_the_marketplace_can_load() -> None:
    """The marketplace page is not on GitHub: every image is an absolute https URL, into the
    repository at a file that exists."""
    readme = (CLIENT / "README.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme)
    assert len(images) >= 3
    for url in images:
        assert url.startswith(HOME + "/raw/HEAD/"), url
        assert (REPO / url.removeprefix(HOME + "/raw/HEAD/")).is_file(), url
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s]+)", readme)
    assert links and all(re.match(r"https://", link) for link in links), links


def test_the_activation_is_explained() -> None:
    text = (REPO / "docs" / "vscode.md").read_text()
    assert "workspaceContains:" in text and "onCommand:" in text


def test_the_release_workflow_publishes_only_what_was_built_and_tested() -> None:
    """.github/workflows/release.yml cannot run here; CI's lint stage checks it against
    GitHub's schema and with zizmor. What those cannot know: what it promises to do."""
    text = (REPO / ".github" / "workflows" / "release.yml").read_text()
    body = text.split("\njobs:\n", 1)[1]
    jobs = dict(re.findall(r"^  ([\w-]+):\n(.*?)(?=^  [\w-]+:\n|\Z)", body, re.M | re.S))
    assert set(jobs) == {"build", "pypi", "vscode-marketplace", "open-vsx"}
    assert re.search(r"^on:\n  push:\n    tags: \[\"v\*\"\]\n", text, re.M)
    assert "run: bash .ci/run\n" in jobs["build"] and "twine check --strict" in jobs["build"]
    for name in ("pypi", "vscode-marketplace", "open-vsx"):
        assert "    needs: build\n" in jobs[name] and "environment:" in jobs[name], name
    # Trusted publishing: a token from GitHub, no password; only that job may ask for one.
    assert "id-token: write" in jobs["pypi"] and "password" not in jobs["pypi"]
    assert [n for n in jobs if "id-token" in jobs[n]] == ["pypi"]
    assert "secrets.VSCE_PAT" in jobs["vscode-marketplace"]
    assert "secrets.OVSX_PAT" in jobs["open-vsx"]
    # Every action is pinned to a commit.
    for action in re.findall(r"uses: (\S+)", text):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action

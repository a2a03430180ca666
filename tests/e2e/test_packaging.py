"""What gets shipped: the wheel and sdist built from a clone, offline, and installs from both;
their metadata as PyPI reads it; and the packaged VS Code extension (marked `vsix`).

Everything runs on a copy of the source tree (never writing into the work tree) and without
the network: the build backend must already be installed (`--no-isolation`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import lsp_verify
from tests.support.paths import REPO

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

HOME = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]["Homepage"]

# Never part of a clone's contents worth copying, and some are large.
JUNK = (".git", ".venv", "venv", "node_modules", "__pycache__", "*.pyc", ".*_cache",
        ".hypothesis", "build", "dist", "*.egg-info", "out")  # fmt: skip

PACKAGE_FILES = sorted(
    p.relative_to(REPO).as_posix()
    for p in (REPO / "lsp_verify").rglob("*")
    if p.is_file() and (p.suffix == ".py" or p.name == "py.typed")
)


def _offline_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PIP_NO_INDEX="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        HOME=str(tmp / "home"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_STATE_HOME=str(tmp / "state"),
        XDG_CONFIG_HOME=str(tmp / "config"),
    )
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        argv,
        cwd=str(cwd),
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{argv} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _needed(module: str, what: str) -> None:
    """Skips without `module`, except under CI, where it is a failure (the test extra has it)."""
    if importlib.util.find_spec(module) is None:
        reason = f"{module} is not installed here, so {what}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}: it belongs in the test extra")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _needed("hatchling", "nothing can be built offline")
    target = tmp_path_factory.mktemp("clone") / "lsp-verify"
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(*JUNK), symlinks=True)
    return target


@pytest.fixture(scope="module")
def dist(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("dist")
    env = _offline_env(out)
    if importlib.util.find_spec("build") is not None:
        _run(
            [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), "."], clone, env
        )
    else:  # the same PEP 517 hooks `python -m build --no-isolation` calls
        code = (
            "import sys, hatchling.build as b; "
            "b.build_wheel(sys.argv[1]); b.build_sdist(sys.argv[1])"
        )
        _run([sys.executable, "-c", code, str(out)], clone, env)
    yield out


def _one(folder: Path, pattern: str) -> Path:
    [found] = list(folder.glob(pattern))
    return found


def test_wheel_holds_the_package_and_nothing_else(dist: Path) -> None:
    wheel = _one(dist, "lsp_verify-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    version = lsp_verify.__version__
    info = f"lsp_verify-{version}.dist-info/"
    assert wheel.name == f"lsp_verify-{version}-py3-none-any.whl"
    for name in PACKAGE_FILES:
        assert name in names, f"{name} is missing from the wheel"
    strays = [n for n in names if not (n.startswith(("lsp_verify/", info)))]
    assert strays == [], f"the wheel carries files outside the package: {strays}"
    assert not [n for n in names if "/tests/" in n or "fixtures" in n or n.endswith(".pyc")]


def test_wheel_metadata_and_entry_point(dist: Path) -> None:
    wheel = zipfile.ZipFile(_one(dist, "lsp_verify-*.whl"))
    info = f"lsp_verify-{lsp_verify.__version__}.dist-info/"
    metadata = wheel.read(info + "METADATA").decode()
    assert "Name: lsp-verify\n" in metadata
    assert f"Version: {lsp_verify.__version__}\n" in metadata
    assert "Requires-Python: >=3.9" in metadata
    assert "Requires-Dist: pygls" in metadata
    entry_points = wheel.read(info + "entry_points.txt").decode()
    assert "lsp-verify = lsp_verify.cli:main" in entry_points


def test_sdist_builds_the_package_without_local_junk(dist: Path) -> None:
    sdist = _one(dist, "lsp_verify-*.tar.gz")
    prefix = f"lsp_verify-{lsp_verify.__version__}/"
    with tarfile.open(sdist) as archive:
        names = [m.name for m in archive.getmembers() if m.isfile()]
    for name in ("pyproject.toml", "README.md", "LICENSE", *PACKAGE_FILES):
        assert prefix + name in names, f"{name} is missing from the sdist"
    junk = [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/.venv/" in n]
    assert junk == []
    assert not [n for n in names if "node_modules" in n or "/.git/" in n]


def _installed_works(target: Path, tmp: Path) -> None:
    """The installed copy (not the work tree) imports whole and its script plans the demo.

    (`lsp_verify.__main__` is left out: importing it starts the server.)
    """
    env = {**_offline_env(tmp), "PYTHONPATH": str(target)}
    code = (
        "import pkgutil, lsp_verify; print(lsp_verify.__file__); "
        "[__import__(m.name) for m in pkgutil.walk_packages(lsp_verify.__path__, 'lsp_verify.') "
        "if m.name != 'lsp_verify.__main__']"
    )
    imported = _run([sys.executable, "-c", code], tmp, env).stdout
    assert imported.startswith(str(target)), imported
    demo = tmp / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo, ignore=shutil.ignore_patterns(*JUNK))
    script = target / "bin" / "lsp-verify"
    plan = json.loads(_run([str(script), "explain", str(demo)], tmp, env).stdout)
    assert plan["runner"] == "pytest" and plan["manifest"] == "pytest.ini", plan


def test_built_wheel_installs_offline_and_runs(dist: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    wheel = _one(dist, "lsp_verify-*.whl")
    _run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        tmp_path,
        _offline_env(tmp_path),
    )
    _installed_works(target, tmp_path)


def test_pip_install_from_a_clone_works_offline(clone: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    argv = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation"]
    _run([*argv, "--target", str(target), str(clone)], tmp_path, _offline_env(tmp_path))
    _installed_works(target, tmp_path)


# -- what PyPI reads ------------------------------------------------------------------------


def test_twine_check_strict_passes_on_the_wheel_and_sdist(dist: Path) -> None:
    """What PyPI's upload checks: the metadata is valid and the long description renders."""
    _needed("twine", "the metadata cannot be checked as PyPI does")
    files = [str(_one(dist, "lsp_verify-*.whl")), str(_one(dist, "lsp_verify-*.tar.gz"))]
    out = _run(
        [sys.executable, "-m", "twine", "check", "--strict", *files], dist, os.environ.copy()
    )
    assert out.stdout.count("PASSED") == 2, out.stdout


def _description(dist: Path) -> tuple[dict[str, list[str]], str]:
    wheel = zipfile.ZipFile(_one(dist, "lsp_verify-*.whl"))
    text = wheel.read(f"lsp_verify-{lsp_verify.__version__}.dist-info/METADATA").decode()
    head, body = text.split("\n\n", 1)
    fields: dict[str, list[str]] = {}
    for line in head.splitlines():
        key, value = line.split(": ", 1)
        fields.setdefault(key, []).append(value)
    return fields, body


def test_the_package_page_metadata(dist: Path) -> None:
    fields, _ = _description(dist)
    assert fields["Author"] == ["The lsp-verify authors"]
    assert fields["License-Expression"] == ["MIT"]
    assert "language server" in fields["Keywords"][0]
    assert "Programming Language :: Python :: 3 :: Only" in fields["Classifier"]
    assert f"Homepage, {HOME}" in fields["Project-URL"]
    assert fields["Description-Content-Type"] == ["text/markdown"]


def test_the_long_description_links_nowhere_dead(dist: Path) -> None:
    """Rendered as PyPI renders it, every link and image is absolute; those into the
    repository name a file that exists (at the release's tag) or a heading of the README."""
    _needed("readme_renderer", "the description cannot be rendered as PyPI does")
    from readme_renderer.markdown import render

    _, body = _description(dist)
    html = render(body)
    assert html is not None
    targets = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert len([t for t in targets if t.startswith(HOME)]) >= 8, targets  # the README's own
    # The renderer links each heading to itself: an anchor whose id is on the page is alive.
    ids = set(re.findall(r' id="([^"]+)"', html))
    relative = [
        t
        for t in targets
        if not t.startswith(("https://", "http://", "mailto:"))
        and not (t.startswith("#") and t[1:] in ids)
    ]
    assert relative == [], relative
    readme = (REPO / "README.md").read_text()
    headings = {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in readme.splitlines()
        if line.startswith("#")
    }
    tagged = f"{HOME}/blob/v{lsp_verify.__version__}/"
    for target in targets:
        if target.startswith(tagged):
            assert (REPO / target[len(tagged) :].split("#")[0]).is_file(), target
        elif target.startswith(HOME + "#"):
            assert target[len(HOME) + 1 :] in headings, target


def _git(*argv: str, stdin: str | None = None) -> list[str]:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to compare the sdist with")
    done = subprocess.run(
        ["git", "-C", str(REPO), *argv], input=stdin, capture_output=True, text=True, timeout=60
    )
    assert done.returncode in (0, 1), done.stderr  # check-ignore: 1 when nothing is ignored
    return done.stdout.splitlines()


def test_the_sdist_is_the_source_tree_git_has(dist: Path) -> None:
    """So that the README's test command runs from it: every tracked file (the tests, their
    cases, the CI scripts, the extension's sources) and nothing git ignores."""
    prefix = f"lsp_verify-{lsp_verify.__version__}/"
    with tarfile.open(_one(dist, "lsp_verify-*.tar.gz")) as archive:
        names = {m.name[len(prefix) :] for m in archive.getmembers() if m.isfile()}
    names.discard("PKG-INFO")
    tracked = set(_git("ls-files"))
    tracked = {t for t in tracked if (REPO / t).is_file()}  # not deleted in the work tree
    missing = sorted(tracked - names)
    assert missing == [], missing
    ignored = _git("check-ignore", "--no-index", "--stdin", stdin="\n".join(sorted(names)))
    assert ignored == [], ignored


def test_the_sdist_builds_the_same_wheel(dist: Path, tmp_path: Path) -> None:
    """pip building from the sdist (no wheel for the platform, or --no-binary) gets the wheel
    the release uploads: the same files and metadata, the long description included."""
    with tarfile.open(_one(dist, "lsp_verify-*.tar.gz")) as archive:
        archive.extractall(tmp_path)
    [source] = tmp_path.iterdir()
    out = tmp_path / "out"
    code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    _run([sys.executable, "-c", code, str(out)], source, _offline_env(tmp_path))
    again = zipfile.ZipFile(_one(out, "lsp_verify-*.whl"))
    first = zipfile.ZipFile(_one(dist, "lsp_verify-*.whl"))
    assert sorted(again.namelist()) == sorted(first.namelist())
    metadata = f"lsp_verify-{lsp_verify.__version__}.dist-info/METADATA"
    assert again.read(metadata) == first.read(metadata)


# -- the packaged VS Code extension (.ci/vscode.sh runs these after `npm run package`) --------

# What the .vsix holds besides the bundled libraries: nothing of the sources, tests, build
# scripts or editor configuration.
VSIX_FILES = {
    "[Content_Types].xml",
    "extension.vsixmanifest",
    "extension/package.json",
    "extension/readme.md",
    "extension/changelog.md",
    "extension/LICENSE.txt",
    "extension/images/icon.png",
    "extension/dist/extension.js",
    "extension/bundled/serve.py",
}


@pytest.fixture
def vsix() -> zipfile.ZipFile:
    path = os.environ.get("LSP_VERIFY_VSIX")
    assert path, "the vsix tests run only with LSP_VERIFY_VSIX set (tests/conftest.py)"
    return zipfile.ZipFile(path)


@pytest.mark.vsix
def test_the_vsix_holds_the_extension_and_nothing_else(vsix: zipfile.ZipFile) -> None:
    names = set(vsix.namelist())
    libs = {n for n in names if n.startswith("extension/bundled/libs/")}
    assert names - libs == VSIX_FILES
    assert "extension/bundled/libs/lsp_verify/__init__.py" in libs
    assert not [n for n in libs if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.vsix
def test_the_vsix_is_what_the_marketplace_shows(vsix: zipfile.ZipFile) -> None:
    manifest = vsix.read("extension.vsixmanifest").decode()
    for asset in ("Content.Changelog", "Content.Details", "Icons.Default", "Content.License"):
        assert f'Type="Microsoft.VisualStudio.Services.{asset}"' in manifest, asset
    assert 'Id="Microsoft.VisualStudio.Services.Links.Source"' in manifest
    assert HOME in manifest
    changelog = vsix.read("extension/changelog.md").decode()
    assert changelog == (REPO / "CHANGELOG.md").read_text()
    readme = vsix.read("extension/readme.md").decode()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme)
    assert images and all(url.startswith(HOME + "/raw/") for url in images), images
    package = json.loads(vsix.read("extension/package.json"))
    assert "private" not in package and package["repository"]["url"].startswith(HOME)

"""What the VS Code bundle ships beside the server: every runtime dependency of the package."""

from __future__ import annotations

from tests.support.paths import REPO


def test_the_vscode_bundle_carries_every_runtime_dependency() -> None:
    """The .vsix bundles the server with pinned copies of its dependencies: one that the
    package needs and the bundle lacks is a server that cannot start in VS Code."""
    import re

    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    root = REPO
    project = tomllib.loads((root / "pyproject.toml").read_text())
    needed = {
        re.split(r"[<>=!~;\[ ]", dependency, maxsplit=1)[0].lower().replace("_", "-")
        for dependency in project["project"]["dependencies"]
    }
    bundle = root / "vscode-client" / "bundled" / "requirements.txt"
    pinned = {
        line.split("==", 1)[0].strip().lower().replace("_", "-")
        for line in bundle.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert needed <= pinned, needed - pinned

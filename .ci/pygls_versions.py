"""Which pygls the tests ran with, and which one a new install would get: prints
`INSTALLED NEWEST inside|outside`, NEWEST being the newest pygls 2.x on the package index and
the last word whether pyproject.toml's pin admits it. With `--requirements-but-pygls`, the
project's requirements and its test extra but pygls, one a line. For .ci/pygls-newest.sh; run
with the test environment's Python (it needs `packaging`, which pytest brings)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs 3.11
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def requirements(pyproject: Path = PYPROJECT) -> list[Requirement]:
    """The project's requirements, its test extra's included."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    lines = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [Requirement(line) for line in lines]


def pin(pyproject: Path = PYPROJECT) -> Requirement:
    """pyproject.toml's requirement on pygls."""
    for requirement in requirements(pyproject):
        if requirement.name == "pygls":
            return requirement
    raise SystemExit("pyproject.toml names no pygls")


def newest_2x(index_output: str) -> str:
    """The newest final pygls 2.x in what `pip index versions pygls` printed."""
    found = re.search(r"^Available versions: (.*)$", index_output, re.MULTILINE)
    if found is None:
        raise SystemExit(f"pip index versions printed no versions:\n{index_output}")
    versions = []
    for text in found.group(1).split(","):
        try:
            candidate = Version(text.strip())
        except InvalidVersion:
            continue
        if candidate.major == 2 and not candidate.is_prerelease:
            versions.append(candidate)
    if not versions:
        raise SystemExit("the package index has no pygls 2.x")
    return str(max(versions))


def main() -> None:
    if sys.argv[1:] == ["--requirements-but-pygls"]:
        for requirement in requirements():
            if requirement.name != "pygls":
                print(requirement)
        return
    index = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "pygls"],
        capture_output=True,
        text=True,
        check=False,
    )
    if index.returncode != 0:
        raise SystemExit(f"pip index versions pygls failed:\n{index.stderr}")
    newest = newest_2x(index.stdout)
    inside = "inside" if pin().specifier.contains(newest) else "outside"
    print(version("pygls"), newest, inside)


if __name__ == "__main__":
    main()

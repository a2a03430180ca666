"""The toolchains of the detector's rules 6 to 11 (go, deno, mix, rake, zig, just) for tests
that run them for real: where they are, and the environment they run in here (offline,
nothing written to the home folder).

Go, Ruby (rake, bundler) and Elixir come from Debian (`.ci/install-tools.sh`); Deno, Zig and
just from `tests/tools/install-lang-tools.sh DIR`, found in DIR/bin when
LSP_VERIFY_LANG_TOOLS=DIR. A missing tool skips its test on a developer's machine and fails it
under CI=true, where the install scripts ran: a green CI must never hide a tool that was not
there.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

VARIABLE = "LSP_VERIFY_LANG_TOOLS"
# What each runner's command needs on PATH.
TOOLS = {
    "go": ("go",),
    "deno": ("deno",),
    "mix": ("mix", "elixir"),
    "rake": ("rake", "ruby"),
    "bundle": ("bundle", "rake", "ruby"),
    "zig": ("zig",),
    "just": ("just",),
}


def lang_bin() -> str | None:
    folder = os.environ.get(VARIABLE)
    return os.path.join(folder, "bin") if folder else None


def search_path(path: str | None = None) -> str:
    """PATH with the installed toolchains' folder first."""
    parts = [lang_bin(), os.environ.get("PATH") if path is None else path]
    return os.pathsep.join(p for p in parts if p)


def missing(runner: str) -> str | None:
    """What the runner's command needs that is not here, or None."""
    for tool in TOOLS.get(runner, (runner,)):
        if shutil.which(tool, path=search_path()) is None:
            return (
                f"{tool} is not installed (.ci/install-tools.sh, tests/tools/install-lang-tools.sh)"
            )
    return None


def require(runner: str) -> None:
    """Skip (on a developer's machine) or fail (under CI=true) when the runner is missing."""
    why = missing(runner)
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {why}")
    pytest.skip(why)


def lang_env(env: dict[str, str], scratch: Path) -> dict[str, str]:
    """`env` made ready for the toolchains: PATH, and every cache in `scratch` but Zig's
    global one, which the install script filled (compiling it again costs minutes)."""
    env = dict(env)
    env["PATH"] = search_path(env.get("PATH"))
    folder = os.environ.get(VARIABLE)
    zig_cache = os.path.join(folder, "zig-cache") if folder else str(scratch / "zig-cache")
    env.update(
        {
            "GOPROXY": "off",
            "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": "local",
            "GOPATH": str(scratch / "gopath"),
            "GOCACHE": str(scratch / "go-build"),
            "DENO_NO_UPDATE_CHECK": "1",
            "DENO_DIR": str(scratch / "deno"),
            "ZIG_GLOBAL_CACHE_DIR": zig_cache,
            "MIX_HOME": str(scratch / "mix"),
            "HEX_OFFLINE": "1",
            "BUNDLE_USER_HOME": str(scratch / "bundle"),
        }
    )
    return env


def without_install_folder(text: str) -> str:
    """`text` less the toolchains' install folder (a zig stack trace names Zig's own library
    there, which is no path of a run's)."""
    folder = os.environ.get(VARIABLE)
    if not folder:
        return text
    for form in {os.path.realpath(folder), os.path.abspath(folder)}:
        text = text.replace(form, "<lang-tools>")
    return text

"""The CI's scripts with the commands they run stubbed: the apt install scripts (dpkg-query,
apt-get and sudo on PATH), .ci/pygls-newest.sh (the environments' Python) and .ci/run's stages
(every tool and script it calls). Nothing is installed for real; what would be run is
recorded."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

CI = REPO / ".ci"

STUBS = {
    # "Installed" for the packages named in $INSTALLED, unknown for the others.
    "dpkg-query": 'for p in $INSTALLED; do [ "$p" = "${!#}" ] && printf "install ok installed" '
    "&& exit 0; done; exit 1",
    # Held by another apt for the first $LOCKED calls (all of them: "always"); $APT_FAIL fails.
    "apt-get": 'echo "apt-get $*" >> "$APT_LOG"\n'
    'calls=$(wc -l < "$APT_LOG")\n'
    'if [ "${LOCKED:-0}" = always ] || [ "$calls" -le "${LOCKED:-0}" ]; then\n'
    '  lock="E: Could not get lock /var/lib/apt/lists/lock."\n'
    '  echo "$lock It is held by process 4242 (apt-get)" >&2\n'
    "  exit 100\n"
    "fi\n"
    'if [ -n "${APT_FAIL:-}" ]; then echo "E: $APT_FAIL" >&2; exit 100; fi',
    "sudo": 'exec "$@"',
}


def run(
    tmp_path: Path, script: str, *args: str, installed: str, status: int = 0, **env_vars: str
) -> tuple[str, list[str]]:
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    for name, body in STUBS.items():
        (stubs / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (stubs / name).chmod(0o755)
    log = tmp_path / "apt.log"
    env = dict(os.environ, PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}")
    env.update(INSTALLED=installed, APT_LOG=str(log), APT_LOCK_POLL_S="0.05", **env_vars)
    done = subprocess.run(
        ["bash", str(CI / script), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == status, done.stderr
    out = done.stdout if status == 0 else done.stdout + done.stderr
    return out, log.read_text().splitlines() if log.exists() else []


def lock_wait(line: str) -> int:
    """How long an apt-get call was told to wait for dpkg's lock."""
    found = re.search(r" -o DPkg::Lock::Timeout=(\d+) ", line)
    assert found is not None, line
    return int(found.group(1))


def without_lock_wait(apt: list[str]) -> list[str]:
    """The calls, their time left to wait aside (the clock may tick between two calls)."""
    return [re.sub(r" -o DPkg::Lock::Timeout=\d+ ", " ", line) for line in apt]


def test_nothing_is_run_when_every_package_is_there(tmp_path: Path) -> None:
    out, apt = run(tmp_path, "apt-install.sh", "things", "a", "b", installed="a b")
    assert (out, apt) == ("", [])


def test_only_the_missing_packages_are_installed(tmp_path: Path) -> None:
    out, apt = run(tmp_path, "apt-install.sh", "things", "a", "b", "c", installed="b")
    assert out == "installing things: a c\n"
    assert without_lock_wait(apt) == [
        "apt-get update -qq",
        "apt-get install -y -qq --no-install-recommends a c",
    ]
    assert 290 <= lock_wait(apt[1]) <= lock_wait(apt[0]) <= 300


def test_a_lock_held_by_another_apt_is_waited_for(tmp_path: Path) -> None:
    # apt-get waits for dpkg's lock itself (DPkg::Lock::Timeout), not for the lists lock.
    out, apt = run(tmp_path, "apt-install.sh", "things", "a", installed="", LOCKED="2")
    assert out == (
        "installing things: a\n"
        "waiting for another package manager to let go of apt's lock (up to 300s)\n"
    )
    assert without_lock_wait(apt) == ["apt-get update -qq"] * 3 + [
        "apt-get install -y -qq --no-install-recommends a"
    ]


def test_the_wait_for_a_lock_is_bounded(tmp_path: Path) -> None:
    out, apt = run(
        tmp_path,
        "apt-install.sh",
        "things",
        "a",
        installed="",
        status=1,
        LOCKED="always",
        APT_LOCK_WAIT_S="1",
    )
    assert "another package manager still holds apt's lock after 1s" in out
    assert "Could not get lock /var/lib/apt/lists/lock" in out
    assert set(without_lock_wait(apt)) == {"apt-get update -qq"}
    # What time is left is what apt-get may wait for the dpkg lock, never more.
    assert all(lock_wait(line) <= 1 for line in apt)


def test_another_failure_is_not_waited_for(tmp_path: Path) -> None:
    out, apt = run(
        tmp_path,
        "apt-install.sh",
        "things",
        "a",
        installed="",
        status=1,
        APT_FAIL="Unable to locate package a",
    )
    assert "E: Unable to locate package a" in out
    assert "waiting" not in out
    assert len(apt) == 1


@pytest.mark.parametrize(
    ("script", "packages"),
    [
        ("install-editors.sh", "neovim emacs-nox elpa-eglot tmux"),
        (
            "install-tools.sh",
            "golang-go shellcheck make gcc libc6-dev "
            "ruby rake ruby-minitest ruby-test-unit ruby-rspec bundler elixir",
        ),
    ],
)
def test_each_install_script_names_its_packages(tmp_path: Path, script: str, packages: str) -> None:
    assert run(tmp_path, script, installed=packages) == ("", [])
    apt = run(tmp_path, script, installed="")[1]
    assert without_lock_wait(apt)[-1] == (
        f"apt-get install -y -qq --no-install-recommends {packages}"
    )


# -- .ci/pygls-newest.sh, with the environments' Python stubbed --------------------------

# The test environment's Python: pygls_versions.py answers $VERSIONS; venv makes a second
# stub; pip and pytest are recorded, pytest exits $PYTEST_STATUS.
PYTHON_STUB = """#!/usr/bin/env bash
case "$1" in
    *pygls_versions.py)
        if [ "${2:-}" = --requirements-but-pygls ]; then
            printf 'lsprotocol>=2025.0.0\\ntomli>=1.1; python_version < "3.11"\\npytest>=8\\n'
        else
            echo "$VERSIONS"
        fi ;;
    -m)
        case "$2" in
            venv) mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
            pip) echo "$0 pip ${*:3}" >> "$LOG" ;;
            pytest)
                echo "$0 pytest ${*:3} (trial $LSP_VERIFY_PYGLS_TRIAL, PATH ${PATH%%:*})" >> "$LOG"
                exit "${PYTEST_STATUS:-0}" ;;
        esac ;;
esac
"""


def newest(
    tmp_path: Path, versions: str, status: int = 0, pytest_status: int = 0
) -> tuple[str, list[str]]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(PYTHON_STUB)
    (venv / "bin" / "python").chmod(0o755)
    log = tmp_path / "log"
    env = dict(os.environ, VERSIONS=versions, LOG=str(log), PYTEST_STATUS=str(pytest_status))
    trial = tmp_path / "trial"
    done = subprocess.run(
        ["bash", str(CI / "pygls-newest.sh"), str(venv), str(trial), "-x", "tests/a.py"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert done.returncode == status, done.stdout + done.stderr
    lines = log.read_text().splitlines() if log.exists() else []
    return done.stdout + done.stderr, [line.replace(str(tmp_path), "T") for line in lines]


def test_the_newest_pygls_is_not_tested_twice(tmp_path: Path) -> None:
    out, log = newest(tmp_path, "2.1.1 2.1.1 inside")
    assert out == "pygls 2.1.1 is the newest 2.x: the run above covers both\n"
    assert log == []
    assert not (tmp_path / "trial").exists()


def test_a_newer_pygls_is_tested_in_a_second_environment(tmp_path: Path) -> None:
    out, log = newest(tmp_path, "2.1.1 2.1.2 inside")
    assert out.splitlines() == [
        "pygls 2.1.1 was tested; the newest 2.x is 2.1.2 (inside the pin): testing it too",
        "pygls 2.1.2 passes the suite",
    ]
    assert log == [
        "T/trial/bin/python pip install --quiet --upgrade pip",
        "T/trial/bin/python pip install --quiet --no-deps -e .",
        "T/trial/bin/python pip install --quiet pygls==2.1.2 lsprotocol>=2025.0.0 "
        'tomli>=1.1; python_version < "3.11" pytest>=8',
        # The arguments .ci/run gave its own pytest, the second environment first on PATH.
        "T/trial/bin/python pytest -x tests/a.py (trial 2.1.2, PATH T/trial/bin)",
    ]


@pytest.mark.parametrize(
    ("inside", "pytest_status", "status", "says"),
    [
        ("inside", 1, 1, "pygls 2.1.2, which pyproject.toml admits, fails the suite: pin it out"),
        ("outside", 1, 0, "pygls 2.1.2 fails the suite: keep pyproject.toml's pin below it"),
        ("outside", 5, 1, "pytest collected no tests: failing"),
    ],
)
def test_a_newer_pygls_that_fails_fails_ci_only_where_the_pin_admits_it(
    tmp_path: Path, inside: str, pytest_status: int, status: int, says: str
) -> None:
    out, log = newest(tmp_path, f"2.1.1 2.1.2 {inside}", status, pytest_status)
    assert says in out
    assert log[-1].startswith("T/trial/bin/python pytest -x tests/a.py")


def test_a_failed_look_up_of_the_newest_pygls_fails(tmp_path: Path) -> None:
    out, log = newest(tmp_path, "", status=1)
    assert "could not tell which pygls is the newest" in out
    assert log == []


# -- .ci/run's stages, in a copy of the repository whose commands are stubbed ----------------

# Every command .ci/run runs, recorded as "NAME ARGS"; pytest with the environment the tests
# read. $FAIL names a command that fails (exit 3); pytest exits $PYTEST_STATUS.
RECORDER = """#!/usr/bin/env bash
name=${STUB_NAME:-$(basename "$0")}
line="$name $*"
if [ "$name" = python ] && [ "$1 $2" = "-m pytest" ]; then
    line="$line (fuzz ${LSP_VERIFY_FUZZ_SECONDS:-} node ${LSP_VERIFY_NODE_TOOLS:-}"
    line="$line opencode ${LSP_VERIFY_OPENCODE:-} claude ${LSP_VERIFY_CLAUDE_CODE:-}"
    line="$line PATH ${PATH%%:*} no-skips ${LSP_VERIFY_NO_SKIPS:-})"
fi
echo "$line" >> "$LOG"
case "$name $1 $2" in
    "python3 -m venv")
        mkdir -p "$3/bin"
        for tool in python ruff mypy lint-imports check-jsonschema zizmor; do
            cp "$0" "$3/bin/$tool"
        done ;;
esac
if [ -n "${FAIL:-}" ] && [[ "$line" == "$FAIL"* ]]; then exit 3; fi
if [ "$name $1 $2" = "python -m pytest" ]; then exit "${PYTEST_STATUS:-0}"; fi
exit 0
"""

# The scripts .ci/run calls, each replaced by a recorder in the copy.
CALLED = [
    ".ci/install-editors.sh",
    ".ci/install-tools.sh",
    ".ci/pygls-newest.sh",
    ".ci/vscode.sh",
    "tests/tools/install-node-tools.sh",
    "tests/tools/install-opencode.sh",
    "tests/tools/install-claude-code.sh",
    "tests/tools/install-lang-tools.sh",
]

ORDER = ["lint", "types", "imports", "unit", "e2e", "bench", "vscode"]


def ci_run(
    tmp_path: Path, *args: str, status: int = 0, venv: bool = True, **env_vars: str
) -> tuple[str, list[str]]:
    """`bash .ci/run ARGS` in a copy of the repository: its output and what it ran, with the
    temporary folder written T."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    shutil.copy(CI / "run", repo / ".ci" / "run")
    for script in CALLED:
        (repo / script).parent.mkdir(parents=True, exist_ok=True)
        (repo / script).write_text(f'STUB_NAME="bash {script}" exec "$RECORDER" "$@"\n')
    recorder = tmp_path / "recorder"
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    shutil.copy(recorder, stubs / "python3")
    if venv:
        (tmp_path / "venv" / "bin").mkdir(parents=True)
        for tool in ("python", "ruff", "mypy", "lint-imports", "check-jsonschema", "zizmor"):
            shutil.copy(recorder, tmp_path / "venv" / "bin" / tool)
    log = tmp_path / "log"
    # Not CI either: whether this run is CI's is for each test to say (CI="true").
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSP_VERIFY_") and k != "CI"}
    path = env_vars.pop("PATH", os.environ["PATH"])
    env.update(
        PATH=f"{stubs}{os.pathsep}{path}",
        LOG=str(log),
        RECORDER=str(recorder),
        LSP_VERIFY_VENV=str(tmp_path / "venv"),
        LSP_VERIFY_CI_CACHE=str(tmp_path / "cache"),
        **env_vars,
    )
    done = subprocess.run(
        ["bash", str(repo / ".ci" / "run"), *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    out = done.stdout + done.stderr
    assert done.returncode == status, out
    ran = log.read_text().splitlines() if log.exists() else []
    return out, [line.replace(str(tmp_path), "T") for line in ran]


PYTHON_SOURCES = "lsp_verify tests benchmarks hatch_build.py vscode-client/scripts"
LINT = [
    f"ruff check {PYTHON_SOURCES}",
    f"ruff format --check {PYTHON_SOURCES}",
    "python -m pip install --quiet check-jsonschema==0.39.0 zizmor==1.32.0",
    "check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml",
    "zizmor --offline --min-severity medium .github/workflows",
]

SETUP = [
    "python -m pip install --quiet --upgrade pip",
    "python -m pip install --quiet -e .[test]",
]


def stages_done(out: str) -> list[str]:
    """The stages that ended, in order, each with its time checked and left out."""
    ended = re.findall(r"^== (.+) done in \d+(?:\.\d)?s$", out, re.MULTILINE)
    assert ended[0] == "python environment", out
    assert re.search(r"^== done in \d+(?:\.\d)?s: python environment \d", out, re.MULTILINE)
    return ended[1:]


def test_one_stage_runs_alone_on_its_environment(tmp_path: Path) -> None:
    out, ran = ci_run(tmp_path, "unit")
    assert stages_done(out) == ["unit"]
    assert ran == [
        *SETUP,
        "python -m pytest -m unit (fuzz  node  opencode  claude  PATH T/venv/bin no-skips )",
    ]


def test_a_fresh_clone_gets_its_environment(tmp_path: Path) -> None:
    out, ran = ci_run(tmp_path, "lint", venv=False)
    assert stages_done(out) == ["lint"]
    assert ran == [
        "python3 -m venv T/venv",
        *SETUP,
        *LINT,
    ]


def test_every_stage_runs_in_order_when_none_is_named(tmp_path: Path) -> None:
    out, ran = ci_run(tmp_path, CI="true")
    assert stages_done(out) == ORDER
    assert ran == [
        *SETUP,
        *LINT,
        *(
            f"mypy --strict --python-version 3.9 --platform {platform} lsp_verify"
            for platform in ("linux", "darwin", "win32")
        ),
        "lint-imports --no-cache --no-logo",
        "python -m pytest -m unit (fuzz  node  opencode  claude  PATH T/venv/bin no-skips 1)",
        # Only e2e installs the editors and tools, and sets what the tests find them by.
        "bash .ci/install-editors.sh ",
        "bash .ci/install-tools.sh ",
        "bash tests/tools/install-lang-tools.sh T/cache/lang-tools",
        "bash tests/tools/install-node-tools.sh T/cache/node-tools",
        "bash tests/tools/install-opencode.sh T/cache/opencode",
        "bash tests/tools/install-claude-code.sh T/cache/claude-code",
        "python -m pytest -m not unit (fuzz 120 node T/cache/node-tools opencode T/cache/opencode "
        "claude T/cache/claude-code PATH T/venv/bin no-skips 1)",
        "bash .ci/pygls-newest.sh T/venv T/cache/venv-pygls-newest",
        "python benchmarks/detect.py --files 1000 --calls 50",
        "python benchmarks/overhead.py --runs 20",
        "python benchmarks/flood.py --mb 16",
        "python benchmarks/lsp.py --starts 1 --rounds 5 --long-run 1",
        "python benchmarks/adversarial.py --quick",
        "python benchmarks/located.py",
        "python benchmarks/feedback.py --quick",
        "python benchmarks/soak.py --quick",
        "bash .ci/vscode.sh ",
    ]
    assert ci_run(tmp_path / "all", "all", CI="true")[1] == ran


def test_stages_named_run_once_in_their_order_with_pytest_s_arguments(tmp_path: Path) -> None:
    out, ran = ci_run(
        tmp_path,
        "e2e",
        "vscode",
        "unit",
        "e2e",
        "--",
        "-x",
        "tests/a.py",
        LSP_VERIFY_FUZZ_SECONDS="5",
        CI="true",
    )
    assert stages_done(out) == ["unit", "e2e", "vscode"]
    assert [line for line in ran[len(SETUP) :] if "install" not in line] == [
        "python -m pytest -m unit -x tests/a.py "
        "(fuzz 5 node  opencode  claude  PATH T/venv/bin no-skips 1)",
        "python -m pytest -m not unit -x tests/a.py (fuzz 5 node T/cache/node-tools "
        "opencode T/cache/opencode claude T/cache/claude-code PATH T/venv/bin no-skips 1)",
        "bash .ci/pygls-newest.sh T/venv T/cache/venv-pygls-newest -x tests/a.py",
        "bash .ci/vscode.sh ",
    ]


def test_outside_ci_nothing_is_installed_as_root_and_skips_are_allowed(tmp_path: Path) -> None:
    """A newcomer's `bash .ci/run`: no apt-get (the editors' and tools' tests skip, saying
    why), node tools only where npm is, the vscode stage (Debian packages) left out, and a
    skipped test is not a failure."""
    stubs = tmp_path / "npm-bin"
    stubs.mkdir()
    for with_npm in (False, True):
        path = os.environ["PATH"]
        if with_npm:
            (stubs / "npm").write_text("#!/bin/sh\nexit 0\n")
            (stubs / "npm").chmod(0o755)
            path = f"{stubs}{os.pathsep}{path}"
        else:  # every command of the PATH but npm's
            without = tmp_path / "no-npm"
            without.mkdir()
            for folder in reversed(path.split(os.pathsep)):
                for tool in Path(folder).glob("*") if Path(folder).is_dir() else []:
                    if tool.name not in ("npm", "npx") and os.access(tool, os.X_OK):
                        (without / tool.name).unlink(missing_ok=True)
                        (without / tool.name).symlink_to(tool)
            path = str(without)
        out, ran = ci_run(tmp_path / f"npm-{with_npm}", "e2e", "vscode", PATH=path)
        assert stages_done(out) == ["e2e", "vscode"]
        assert not any("install-editors" in line or "install-tools" in line for line in ran)
        assert not any(".ci/vscode.sh" in line for line in ran), ran
        assert "no editors or system tools installed" in out
        assert "LSP_VERIFY_VSCODE=1 runs it" in out
        pytest_lines = [line for line in ran if " -m pytest " in line]
        assert pytest_lines and all(line.endswith("no-skips )") for line in pytest_lines)
        node = [line for line in ran if "install-node-tools" in line]
        assert bool(node) == with_npm, ran
        assert ("no npm: the tests of node tools" in out) != with_npm


@pytest.mark.parametrize("args", [["unit", "lnit"], ["-x"], ["all", "tests/a.py"]])
def test_an_unknown_stage_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    out, ran = ci_run(tmp_path, *args, status=2)
    assert f"unknown stage: {args[-1]}" in out
    assert f"stages, run in this order: {' '.join(ORDER)}" in out
    assert ran == []


def test_a_failing_stage_stops_the_run_and_says_which(tmp_path: Path) -> None:
    out, ran = ci_run(tmp_path, "lint", "types", status=3, FAIL="ruff format")
    assert re.search(r"^== lint failed after \d+(?:\.\d)?s \(exit status 3\)$", out, re.M), out
    assert ran[-1] == LINT[1]
    assert not any(line.startswith("mypy") for line in ran)


@pytest.mark.parametrize("stage", ["unit", "e2e"])
@pytest.mark.parametrize(("pytest_status", "status"), [(5, 1), (2, 2)])
def test_pytest_collecting_nothing_or_failing_fails_the_stage(
    tmp_path: Path, stage: str, pytest_status: int, status: int
) -> None:
    out, ran = ci_run(tmp_path, stage, "bench", status=status, PYTEST_STATUS=str(pytest_status))
    assert ("pytest collected no tests: failing" in out) == (pytest_status == 5)
    assert f"== {stage} failed after" in out
    assert "pytest" in ran[-1]  # neither the newest pygls nor the benchmarks ran


SKIPPING = """
import pytest


def test_runs():
    pass


def test_needs_a_tool():
    pytest.skip("no frobnicator on PATH")
"""


PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


@pytest.mark.parametrize("no_skips", ["", "1"])
def test_under_ci_a_skipped_test_fails_the_run(tmp_path: Path, no_skips: str) -> None:
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {**os.environ, "LSP_VERIFY_NO_SKIPS": no_skips, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [*PYTEST, "-p", "tests.support.no_skips", "--rootdir", str(tmp_path), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    if no_skips:
        assert done.returncode == 1, done.stdout
        assert "1 test(s) skipped, which fails this run" in done.stdout
        assert "test_skipping.py::test_needs_a_tool: Skipped: no frobnicator on PATH" in done.stdout
    else:
        assert done.returncode == 0, done.stdout


# -- tests/tools/install-lang-tools.sh, with npm and python3 stubbed -------------------------

LANG_STUBS = {
    # npm records where it ran and what it installed, then puts deno where npm would.
    "npm": 'echo "npm $* (in $PWD)" >> "$LOG"\n'
    "mkdir -p node_modules/.bin && printf '#!/bin/sh\\n' > node_modules/.bin/deno\n"
    "chmod +x node_modules/.bin/deno",
    "python3": 'echo "python3 $*" >> "$LOG"; exit 1',
}


def lang_install(tmp_path: Path, folder: Path) -> tuple[int, list[str]]:
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    for name, body in LANG_STUBS.items():
        (stubs / name).write_text(f"#!/usr/bin/env bash\n{body}\n")
        (stubs / name).chmod(0o755)
    log = tmp_path / "lang.log"
    done = subprocess.run(
        ["bash", str(REPO / "tests" / "tools" / "install-lang-tools.sh"), str(folder)],
        env=dict(os.environ, PATH=f"{stubs}{os.pathsep}{os.environ['PATH']}", LOG=str(log)),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    ran = log.read_text().splitlines() if log.exists() else []
    return done.returncode, [line.replace(str(tmp_path), "T") for line in ran]


def installed(folder: Path, *tools: str) -> None:
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    for tool in tools:
        (folder / "bin" / tool).write_text("#!/bin/sh\n")
        (folder / "bin" / tool).chmod(0o755)


def test_the_toolchains_once_installed_cost_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "lang"
    installed(folder, "deno", "zig", "just")
    (folder / "zig-cache").mkdir()
    (folder / "zig-cache" / "warm-0.17.0").write_text("")
    assert lang_install(tmp_path, folder) == (0, [])


def test_deno_is_installed_from_inside_its_own_folder(tmp_path: Path) -> None:
    """npm's --prefix would move its configuration (and the CA file the registry needs)."""
    folder = tmp_path / "lang"
    installed(folder, "zig", "just")
    (folder / "zig-cache").mkdir()
    (folder / "zig-cache" / "warm-0.17.0").write_text("")
    assert lang_install(tmp_path, folder) == (
        0,
        ["npm install --no-audit --no-fund deno@2.9.6 (in T/lang/deno)"],
    )
    assert os.access(folder / "bin" / "deno", os.X_OK)  # the link resolves


def test_a_failed_tool_install_skips_its_tests_outside_ci_and_fails_ci(tmp_path: Path) -> None:
    failing = "bash tests/tools/install-opencode.sh"
    out, ran = ci_run(tmp_path / "local", "e2e", FAIL=failing)
    assert "tests/tools/install-opencode.sh failed: the tests that need it are skipped" in out
    [pytest_line] = [line for line in ran if " -m pytest -m not unit" in line]
    assert " opencode  claude T/cache/claude-code " in pytest_line, pytest_line
    out, _ = ci_run(tmp_path / "ci", "e2e", FAIL=failing, CI="true", status=1)
    assert "tests/tools/install-opencode.sh failed" in out

"""The planner: sources in order, the seed's five detector rules, bad manifests (the rules
after them: test_detect_toolchains.py)."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest

from lsp_verify.config.project_file import load_project_file
from lsp_verify.config.settings import parse_settings
from lsp_verify.planning.plan import Plan, Rule, make_plan
from tests.support import files
from tests.support.files import record_joins, write
from tests.support.runs import ORDER

PYTEST_TABLE = '[tool.pytest.ini_options]\naddopts = "-ra"\n'
NPM_TEST = '{"scripts": {"test": "vitest run"}}'
NPM_PLACEHOLDER = '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'
MAKE_TEST = "test:\n\t@echo ok\n"


@pytest.fixture(autouse=True)
def empty_path(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return files.empty_path(tmp_path_factory, monkeypatch)


def rule(plan: Plan, runner: str) -> Rule:
    return next(r for r in plan.rules if r.runner == runner)


def check_invariants(plan: Plan) -> None:
    """What every plan promises: all rules listed in order; the first match decided."""
    assert [r.runner for r in plan.rules] == ORDER
    matched = [r.runner for r in plan.rules if r.matched]
    if plan.command is None:
        assert plan.source is None and plan.runner is None and not matched
        assert plan.steps == () and plan.manifest is None and plan.manifest_sha256 is None
    else:
        winner = plan.runner if plan.source == "detected" else plan.source
        if plan.source == "workspace-settings":
            winner = "settings"  # the editor's settings rule covers both command keys
        assert matched[0] == winner
        for later in plan.rules:
            if later.matched and later.runner != winner:
                assert "(not used:" in later.why


# --- the detector's table, row by row, positive and negative ----------------------------------

DETECTOR_CASES: list[tuple[str, dict[str, str | bytes], str | None, str | None]] = [
    # (id, files, runner or None, manifest)
    ("pytest.ini empty", {"pytest.ini": ""}, "pytest", "pytest.ini"),
    ("pytest.ini with section", {"pytest.ini": "[pytest]\naddopts = -x\n"}, "pytest", "pytest.ini"),
    ("pyproject ini_options", {"pyproject.toml": PYTEST_TABLE}, "pytest", "pyproject.toml"),
    ("pyproject tool.pytest", {"pyproject.toml": "[tool.pytest]\n"}, "pytest", "pyproject.toml"),
    (
        "pyproject mentions pytest in comment and string",
        {
            "pyproject.toml": "# tests: [tool.pytest.ini_options] with pytest\n"
            '[project]\nname = "x"\ndescription = "[tool.pytest] pytest"\n'
            'dependencies = ["pytest"]\n'
        },
        None,
        None,
    ),
    ("pyproject without tool table", {"pyproject.toml": '[project]\nname = "x"\n'}, None, None),
    (
        "pyproject tool.pytest not a table",
        {"pyproject.toml": '[tool]\npytest = "yes"\n'},
        None,
        None,
    ),
    (
        "setup.cfg tool:pytest",
        {"setup.cfg": "[tool:pytest]\naddopts = -x\n"},
        "pytest",
        "setup.cfg",
    ),
    ("setup.cfg [pytest] rejected", {"setup.cfg": "[pytest]\naddopts = -x\n"}, None, None),
    (
        "tox.ini pytest beats tox",
        {"tox.ini": "[tox]\nenvlist = py\n[pytest]\n"},
        "pytest",
        "tox.ini",
    ),
    ("tox.ini tox", {"tox.ini": "[tox]\nenvlist = py\n"}, "tox", "tox.ini"),
    ("tox.ini without tox section", {"tox.ini": "[testenv]\ncommands = x\n"}, None, None),
    (
        "pyproject tool.tox",
        {"pyproject.toml": "[tool.tox]\nenv_list = []\n"},
        "tox",
        "pyproject.toml",
    ),
    ("setup.cfg tox:tox", {"setup.cfg": "[tox:tox]\nenvlist = py\n"}, "tox", "setup.cfg"),
    ("tox.toml", {"tox.toml": 'env_list = ["py"]\n'}, "tox", "tox.toml"),
    ("package.json test", {"package.json": NPM_TEST}, "npm", "package.json"),
    (
        "package.json only test:unit",
        {"package.json": '{"scripts": {"test:unit": "vitest"}}'},
        None,
        None,
    ),
    (
        "package.json npm placeholder",
        {"package.json": NPM_PLACEHOLDER},
        None,
        None,
    ),
    ("package.json test a number", {"package.json": '{"scripts": {"test": 1}}'}, None, None),
    ("package.json test a list", {"package.json": '{"scripts": {"test": ["a"]}}'}, None, None),
    ("package.json test empty", {"package.json": '{"scripts": {"test": " "}}'}, None, None),
    ("package.json scripts a list", {"package.json": '{"scripts": ["test"]}'}, None, None),
    ("package.json an array", {"package.json": '["test"]'}, None, None),
    ("Cargo.toml", {"Cargo.toml": '[package]\nname = "x"\n'}, "cargo", "Cargo.toml"),
    ("Cargo.toml broken", {"Cargo.toml": "[package\nname = \n"}, "cargo", "Cargo.toml"),
    ("Cargo.toml not UTF-8", {"Cargo.toml": b"\xff\xfe[package]"}, "cargo", "Cargo.toml"),
    ("Makefile test:", {"Makefile": MAKE_TEST}, "make", "Makefile"),
    ("Makefile test::", {"Makefile": "test::\n\techo 1\n"}, "make", "Makefile"),
    ("Makefile check test:", {"Makefile": "check test: build\n\techo\n"}, "make", "Makefile"),
    (
        "Makefile .PHONY plus rule",
        {"Makefile": "all: build\n.PHONY: test\ntest: all\n\t./run\n"},
        "make",
        "Makefile",
    ),
    ("Makefile inline recipe", {"Makefile": "test: ; @true\n"}, "make", "Makefile"),
    ("Makefile grouped targets", {"Makefile": "a test &: x\n\ttrue\n"}, "make", "Makefile"),
    ("Makefile continued targets", {"Makefile": "check \\\ntest: x\n\ttrue\n"}, "make", "Makefile"),
    ("Makefile rule with comment", {"Makefile": "test: # run it\n\ttrue\n"}, "make", "Makefile"),
    ("Makefile CRLF", {"Makefile": "test:\r\n\ttrue\r\n"}, "make", "Makefile"),
    ("Makefile .PHONY only", {"Makefile": ".PHONY: test\n"}, None, None),
    ("Makefile test :=", {"Makefile": "test := x\n"}, None, None),
    ("Makefile test ?=", {"Makefile": "test ?= x\n"}, None, None),
    ("Makefile test =", {"Makefile": "test = x\n"}, None, None),
    ("Makefile test +=", {"Makefile": "test += x\n"}, None, None),
    ("Makefile test ::=", {"Makefile": "test ::= x\n"}, None, None),
    ("Makefile test !=", {"Makefile": "test != echo x\n"}, None, None),
    ("Makefile export test :=", {"Makefile": "export test := x\n"}, None, None),
    ("Makefile target variable", {"Makefile": "test: CFLAGS = -g\n"}, None, None),
    ("Makefile test indented", {"Makefile": "  test:\n\ttrue\n"}, None, None),
    ("Makefile test in recipe", {"Makefile": "all:\n\ttest: x\n"}, None, None),
    ("Makefile test commented", {"Makefile": "# test:\nall:\n\ttrue\n"}, None, None),
    ("Makefile tests target", {"Makefile": "tests:\n\ttrue\nunittest:\n"}, None, None),
    ("Makefile define body", {"Makefile": "define T\ntest:\n\ttrue\nendef\n"}, None, None),
    (
        "Makefile nested define body",
        {"Makefile": "define A\ndefine B\nendef\ntest:\nendef\nall:\n\ttrue\n"},
        None,
        None,
    ),
    (
        "Makefile rule after define",
        {"Makefile": "define A\ntest:\n  endef\ntest:\n\ttrue\n"},
        "make",
        "Makefile",
    ),
    (
        "GNUmakefile read first",
        {"GNUmakefile": "all:\n\ttrue\n", "Makefile": MAKE_TEST},
        None,
        None,
    ),
    (
        "makefile before Makefile",
        {"makefile": MAKE_TEST, "Makefile": "all:\n\ttrue\n"},
        "make",
        "makefile",
    ),
    ("GNUmakefile with test", {"GNUmakefile": MAKE_TEST}, "make", "GNUmakefile"),
    ("empty folder", {}, None, None),
    ("README only", {"README.md": "Run `pytest` or `npm test` or `make test`."}, None, None),
]


@pytest.mark.parametrize(
    ("files", "runner", "manifest"),
    [
        pytest.param(files, runner, manifest, id=name)
        for name, files, runner, manifest in DETECTOR_CASES
    ],
)
def test_detector_table(
    tmp_path: Path, files: dict[str, str | bytes], runner: str | None, manifest: str | None
) -> None:
    if "makefile" in files and "Makefile" in files:
        (tmp_path / "makefile").write_text("")
        if (tmp_path / "Makefile").exists():
            pytest.skip("case-insensitive file system: makefile and Makefile are one file")
    plan = make_plan(str(write(tmp_path, files)))
    check_invariants(plan)
    assert plan.runner == runner
    assert plan.manifest == manifest
    if runner is None:
        assert plan.command is None
        assert "No plan" in plan.reason
    else:
        assert plan.source == "detected"
        assert rule(plan, runner).matched
        expected = {
            "pytest": "pytest -x -q",
            "tox": "tox",
            "npm": "npm test",
            "cargo": "cargo test",
            "make": "make test",
        }
        assert plan.command == expected[runner]


@pytest.mark.parametrize(
    ("files", "runner", "fragment"),
    [
        ({"setup.cfg": "[pytest]\n"}, "pytest", "pytest rejects there"),
        ({"pyproject.toml": '[project]\nname = "x"\n'}, "pytest", "no [tool.pytest]"),
        ({"package.json": '{"scripts": {"test:unit": "x"}}'}, "npm", "test:unit alone"),
        ({"package.json": '{"scripts": {"test": 1}}'}, "npm", "not a string"),
        (
            {"package.json": NPM_PLACEHOLDER},
            "npm",
            "placeholder",
        ),
        ({"Makefile": "test := x\n"}, "make", "Makefile has no rule"),
        ({"GNUmakefile": "all:\n", "Makefile": MAKE_TEST}, "make", "GNUmakefile has no rule"),
        ({}, "cargo", "no Cargo.toml"),
    ],
)
def test_negative_rules_say_why(
    tmp_path: Path, files: dict[str, str | bytes], runner: str, fragment: str
) -> None:
    plan = make_plan(str(write(tmp_path, files)))
    assert not rule(plan, runner).matched
    assert fragment in rule(plan, runner).why


def test_broken_cargo_toml_still_matches_and_says_so(tmp_path: Path) -> None:
    plan = make_plan(str(write(tmp_path, {"Cargo.toml": "[package\n"})))
    assert plan.runner == "cargo"
    assert "Cargo.toml is not valid TOML" in rule(plan, "cargo").why


def test_detector_order_pytest_tox_npm_cargo_make(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "pytest.ini": "",
        "tox.ini": "[tox]\n",
        "package.json": NPM_TEST,
        "Cargo.toml": "",
        "Makefile": MAKE_TEST,
    }
    write(tmp_path, files)
    seen = []
    for name in files:
        plan = make_plan(str(tmp_path))
        check_invariants(plan)
        seen.append(plan.runner)
        (tmp_path / name).unlink()
    assert seen == ["pytest", "tox", "npm", "cargo", "make"]
    assert make_plan(str(tmp_path)).command is None


def test_pytest_config_order_within_the_rule(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pytest.ini": "",
            "pyproject.toml": PYTEST_TABLE,
            "setup.cfg": "[tool:pytest]\n",
            "tox.ini": "[pytest]\n",
        },
    )
    seen = []
    for name in ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"):
        seen.append(make_plan(str(tmp_path)).manifest)
        (tmp_path / name).unlink()
    assert seen == ["pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"]


# --- which pytest ---------------------------------------------------------------------------


def fake_uv(bin_dir: Path) -> None:
    uv = bin_dir / "uv"
    uv.write_text("#!/bin/sh\nexit 0\n")
    uv.chmod(0o755)


def test_uv_project_with_uv_on_path(tmp_path: Path, empty_path: Path) -> None:
    fake_uv(empty_path)
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE, "uv.lock": "version = 1\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command == "uv run pytest -x -q"
    assert "uv is on PATH" in plan.reason


def test_uv_lock_without_uv_on_path(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE, "uv.lock": "version = 1\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command == "pytest -x -q"
    assert "uv is not on PATH" in rule(plan, "pytest").why


def test_uv_on_path_without_uv_lock(tmp_path: Path, empty_path: Path) -> None:
    fake_uv(empty_path)
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE})
    assert make_plan(str(tmp_path)).command == "pytest -x -q"


def test_uv_lock_directory_is_not_a_uv_project(tmp_path: Path, empty_path: Path) -> None:
    fake_uv(empty_path)
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE})
    (tmp_path / "uv.lock").mkdir()
    assert make_plan(str(tmp_path)).command == "pytest -x -q"


@pytest.mark.parametrize("venv", [".venv", "venv"])
def test_folder_virtualenv_pytest(tmp_path: Path, venv: str) -> None:
    write(tmp_path, {"pytest.ini": "", f"{venv}/bin/pytest": "#!/bin/sh\n"})
    (tmp_path / venv / "bin" / "pytest").chmod(0o755)
    assert make_plan(str(tmp_path)).command == f"{venv}/bin/pytest -x -q"


def test_venv_pytest_not_executable_is_ignored(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "", ".venv/bin/pytest": "#!/bin/sh\n"})
    (tmp_path / ".venv" / "bin" / "pytest").chmod(0o644)
    assert make_plan(str(tmp_path)).command == "pytest -x -q"


def test_uv_beats_venv(tmp_path: Path, empty_path: Path) -> None:
    fake_uv(empty_path)
    write(tmp_path, {"pytest.ini": "", "uv.lock": "", ".venv/bin/pytest": "#!/bin/sh\n"})
    (tmp_path / ".venv" / "bin" / "pytest").chmod(0o755)
    assert make_plan(str(tmp_path)).command == "uv run pytest -x -q"


# --- polyglot --------------------------------------------------------------------------------


def test_polyglot_pytest_wins_and_reason_says_which_others_matched(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE, "package.json": NPM_TEST})
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert plan.runner == "pytest"
    assert "npm also matches here; the first in the detector's order (pytest)" in plan.reason
    assert "can run them all" in plan.reason
    npm = rule(plan, "npm")
    assert npm.matched and "(not used: pytest comes first)" in npm.why


def test_a_pure_python_project_is_not_called_polyglot(tmp_path: Path) -> None:
    """pytest, tox and make all match a Python project: the reason says that, and that the
    first one runs; it does not call the project polyglot."""
    write(tmp_path, {"tox.ini": "[tox]\n[pytest]\n", "Makefile": MAKE_TEST})
    plan = make_plan(str(tmp_path))
    assert plan.runner == "pytest"
    assert "tox and make also match here" in plan.reason
    assert "polyglot" not in plan.reason


def test_a_makefile_with_a_near_miss_target_says_so(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": "tests:\n\tpytest\ncheck: tests\n"})
    plan = make_plan(str(tmp_path))
    assert plan.command is None
    why = rule(plan, "make").why
    assert why.startswith("Makefile has no rule line whose targets include test")
    assert "it has `check` and `tests`: set verify.command to `make check`" in why


def test_single_runner_reason_does_not_claim_polyglot(tmp_path: Path) -> None:
    plan = make_plan(str(write(tmp_path, {"pyproject.toml": PYTEST_TABLE})))
    assert plan.reason.startswith("Detected pytest:")
    assert "pyproject.toml" in plan.reason
    assert "also match" not in plan.reason


# --- npm details, snapshot and fingerprint ---------------------------------------------------


def test_npm_steps_env_and_snapshot(tmp_path: Path) -> None:
    manifest = (
        '{"name": "demo", "version": "1.2.3", "scripts": {"posttest": "node after.js",'
        ' "test": "vitest run", "pretest": "node before.js", "test:unit": "x"}}'
    )
    write(tmp_path, {"package.json": manifest})
    plan = make_plan(str(tmp_path))
    assert plan.command == "npm test"
    assert plan.steps == ("node before.js", "vitest run", "node after.js")
    assert plan.env == (("npm_package_name", "demo"), ("npm_package_version", "1.2.3"))
    assert plan.snapshot == manifest.encode()
    assert "pretest, test, posttest" in plan.reason


def test_npm_only_existing_string_steps(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": '{"version": 3, "scripts": {"test": "jest", "pretest": 5}}'})
    plan = make_plan(str(tmp_path))
    assert plan.steps == ("jest",)
    assert plan.env == ()


SNAPSHOT_CASES = [
    # Makefiles and pytest.ini run in place: only npm's lifecycle needs the planned bytes.
    ("pytest.ini", "[pytest]\n", False),
    ("Makefile", MAKE_TEST, False),
    ("package.json", NPM_TEST, True),
    ("pyproject.toml", PYTEST_TABLE, False),
    ("setup.cfg", "[tool:pytest]\n", False),
    ("tox.ini", "[tox]\n", False),
    ("tox.toml", "", False),
    ("Cargo.toml", "[package]\n", False),
]


@pytest.mark.parametrize(("name", "content", "snapshot"), SNAPSHOT_CASES)
def test_fingerprint_and_snapshot(tmp_path: Path, name: str, content: str, snapshot: bool) -> None:
    write(tmp_path, {name: content})
    plan = make_plan(str(tmp_path))
    assert plan.manifest == name
    data = (tmp_path / name).read_bytes()
    assert plan.manifest_sha256 == "sha256:" + hashlib.sha256(data).hexdigest()
    assert plan.snapshot == (data if snapshot else None)


def test_fingerprint_follows_the_bytes(tmp_path: Path) -> None:
    write(tmp_path, {"Makefile": MAKE_TEST})
    before = make_plan(str(tmp_path)).manifest_sha256
    write(tmp_path, {"Makefile": MAKE_TEST + "# changed\n"})
    assert make_plan(str(tmp_path)).manifest_sha256 != before


# --- sources and their precedence (acceptance 2) ---------------------------------------------


def all_sources(folder: Path) -> None:
    write(
        folder,
        {
            ".lsp-verify.toml": 'command = "make check"\n',
            ".gptme/verify-completion.sh": "#!/bin/sh\necho verified > verified.txt\n",
            "pytest.ini": "",
        },
    )
    (folder / ".gptme" / "verify-completion.sh").chmod(0o755)


def test_precedence_settings_project_file_script_detection(tmp_path: Path) -> None:
    all_sources(tmp_path)
    editor = parse_settings({"command": "just test"})

    plan = make_plan(str(tmp_path), editor)
    check_invariants(plan)
    assert (plan.source, plan.command) == ("settings", "just test")
    assert plan.runner is None and plan.manifest is None and plan.manifest_sha256 is None
    assert plan.steps == ("just test",)
    assert rule(plan, "project-file").matched  # evaluated, listed as not used

    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert (plan.source, plan.command) == ("project-file", "make check")
    project_bytes = (tmp_path / ".lsp-verify.toml").read_bytes()
    assert plan.manifest == ".lsp-verify.toml"
    assert plan.manifest_sha256 == "sha256:" + hashlib.sha256(project_bytes).hexdigest()
    assert plan.runner is None and plan.steps == ("make check",)

    (tmp_path / ".lsp-verify.toml").unlink()
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert plan.source == "script"
    assert plan.manifest == ".gptme/verify-completion.sh"
    assert plan.command == "./.gptme/verify-completion.sh"
    script_bytes = (tmp_path / ".gptme" / "verify-completion.sh").read_bytes()
    assert plan.manifest_sha256 == "sha256:" + hashlib.sha256(script_bytes).hexdigest()

    (tmp_path / ".gptme" / "verify-completion.sh").chmod(0o644)
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert (plan.source, plan.runner) == ("detected", "pytest")
    assert "not executable" in rule(plan, "script").why


def test_script_directory_does_not_count(tmp_path: Path) -> None:
    (tmp_path / ".gptme" / "verify-completion.sh").mkdir(parents=True)
    plan = make_plan(str(tmp_path))
    assert plan.command is None
    assert "not a regular file" in rule(plan, "script").why


def test_auto_detect_off_stops_at_the_script(tmp_path: Path) -> None:
    all_sources(tmp_path)
    (tmp_path / ".lsp-verify.toml").unlink()
    off = parse_settings({"autoDetect": False})
    assert make_plan(str(tmp_path), off).source == "script"

    (tmp_path / ".gptme" / "verify-completion.sh").unlink()
    plan = make_plan(str(tmp_path), off)
    check_invariants(plan)
    assert plan.command is None
    assert "autoDetect is off" in plan.reason
    assert all(
        not r.matched and "not evaluated" in r.why
        for r in plan.rules
        if r.runner in ("pytest", "tox", "npm", "cargo", "make")
    )
    assert make_plan(str(tmp_path)).runner == "pytest"


def test_auto_detect_from_the_project_file_is_ignored(tmp_path: Path) -> None:
    # autoDetect is the user's key: the repository's file cannot set it either way.
    write(tmp_path, {".lsp-verify.toml": "autoDetect = false\n", "pytest.ini": ""})
    plan = make_plan(str(tmp_path))
    assert plan.runner == "pytest"
    assert rule(plan, "project-file").why == ".lsp-verify.toml sets no command"
    assert make_plan(str(tmp_path), parse_settings({"autoDetect": False})).command is None


def test_a_workspace_command_is_the_repositorys(tmp_path: Path) -> None:
    from lsp_verify.trust import needs_question, plan_fingerprint

    write(tmp_path, {".lsp-verify.toml": 'command = "make check"\n'})
    plan = make_plan(str(tmp_path), parse_settings({"workspaceCommand": "make lint"}))
    check_invariants(plan)
    assert plan.source == "workspace-settings"
    assert (plan.command, plan.steps, plan.manifest) == ("make lint", ("make lint",), None)
    assert needs_question(plan)
    assert "the workspace's settings" in rule(plan, "settings").why
    other = make_plan(str(tmp_path), parse_settings({"workspaceCommand": "make all"}))
    assert plan_fingerprint(other) != plan_fingerprint(plan)
    # The user's own command comes first, and runs unasked.
    both = parse_settings({"command": "make test", "workspaceCommand": "make lint"})
    mine = make_plan(str(tmp_path), both)
    assert (mine.source, mine.command) == ("settings", "make test")
    assert not needs_question(mine)


def test_project_argument_replaces_loading(tmp_path: Path) -> None:
    write(tmp_path, {".lsp-verify.toml": 'command = "make check"\n', "pytest.ini": ""})
    assert make_plan(str(tmp_path), project=None).source == "detected"
    loaded = load_project_file(str(tmp_path))
    assert make_plan(str(tmp_path), project=loaded).source == "project-file"


def test_broken_project_file_falls_through_with_reason(tmp_path: Path) -> None:
    write(tmp_path, {".lsp-verify.toml": 'command = "make check\n', "pytest.ini": ""})
    plan = make_plan(str(tmp_path))
    assert plan.source == "detected"
    why = rule(plan, "project-file").why
    assert "not valid TOML" in why and ".lsp-verify.toml" in why


def test_settings_with_bad_command_does_not_count(tmp_path: Path) -> None:
    plan = make_plan(str(tmp_path), parse_settings({"command": "  "}))
    assert plan.source is None
    assert "verify.command" in rule(plan, "settings").why


# --- bad input never raises (acceptance 3) ----------------------------------------------------

BIG = b"[pytest]\n" + b"#" * (1024 * 1024) + b"\n"

# (file name, its bytes, rule that reads it, words the why must hold)
BAD_CASES: list[tuple[str, bytes, str, str]] = [
    ("package.json", b'{"scripts": {"test": ', "npm", "not valid JSON"),
    ("package.json", b"[" * 100_000, "npm", "package.json is not valid JSON"),
    ("package.json", b'{"scripts": {"test": "\xff"}}', "npm", "not UTF-8"),
    ("package.json", b" " * (1024 * 1024 + 1), "npm", "larger than"),
    ("pyproject.toml", b"[tool.pytest\n", "pytest", "pyproject.toml is not valid TOML at line 1"),
    ("pyproject.toml", b"[tool.pytest]\n\xff", "pytest", "pyproject.toml is not UTF-8"),
    ("pyproject.toml", b"a = " + b"9" * 5000 + b"\n", "pytest", "pyproject.toml is not valid"),
    ("pytest.ini", b"[pytest]\n[pytest]\n", "pytest", "pytest.ini is not valid INI"),
    ("pytest.ini", b"no section\n", "pytest", "pytest.ini is not valid INI"),
    ("pytest.ini", b"[pytest]\n\xfe\n", "pytest", "pytest.ini is not UTF-8"),
    ("pytest.ini", BIG, "pytest", "pytest.ini cannot be read: larger than"),
    ("setup.cfg", b"[tool:pytest]\n[tool:pytest]\n", "pytest", "setup.cfg is not valid INI"),
    ("setup.cfg", b"[tool:pytest]\nx = 1\nx = 2\n", "pytest", "setup.cfg is not valid INI"),
    ("tox.ini", b"[pytest]\nbroken line\n", "pytest", "tox.ini is not valid INI"),
    ("tox.ini", b"[tox]\n[tox]\n", "tox", "tox.ini is not valid INI"),
    ("tox.toml", b"env_list = [\n", "tox", "tox.toml is not valid TOML"),
    ("Makefile", b"test:\n\t\xff\n", "make", "Makefile is not UTF-8"),
    ("Makefile", b"test:\n" + b"#" * (1024 * 1024), "make", "Makefile cannot be read"),
    ("Cargo.toml", b"#" * (1024 * 1024 + 1), "cargo", "Cargo.toml cannot be read: larger than"),
]


def fallback(folder: Path, broken: str) -> str | None:
    """Put a valid manifest of a later rule beside the broken one; return its runner."""
    if broken in ("Makefile", "GNUmakefile", "makefile"):
        return None
    write(folder, {"Makefile": MAKE_TEST})
    return "make"


@pytest.mark.parametrize(
    ("name", "content", "runner", "words"),
    [pytest.param(*case, id=f"{case[0]}-{i}") for i, case in enumerate(BAD_CASES)],
)
def test_bad_manifest_does_not_match_and_detection_goes_on(
    tmp_path: Path, name: str, content: bytes, runner: str, words: str
) -> None:
    write(tmp_path, {name: content})
    expected = fallback(tmp_path, name)
    plan = make_plan(str(tmp_path))
    check_invariants(plan)
    assert not rule(plan, runner).matched
    assert words in rule(plan, runner).why
    assert plan.runner == expected


@pytest.mark.parametrize(
    ("name", "runner"),
    [
        ("package.json", "npm"),
        ("pytest.ini", "pytest"),
        ("pyproject.toml", "pytest"),
        ("Cargo.toml", "cargo"),
        ("tox.toml", "tox"),
        ("Makefile", "make"),
    ],
)
def test_directory_named_like_a_manifest(tmp_path: Path, name: str, runner: str) -> None:
    (tmp_path / name).mkdir()
    expected = fallback(tmp_path, name)
    plan = make_plan(str(tmp_path))
    assert not rule(plan, runner).matched
    assert f"{name} cannot be read: is a directory" in rule(plan, runner).why
    assert plan.runner == expected


@pytest.mark.parametrize(("name", "runner"), [("package.json", "npm"), ("Cargo.toml", "cargo")])
def test_symlink_loop(tmp_path: Path, name: str, runner: str) -> None:
    (tmp_path / name).symlink_to(name)
    expected = fallback(tmp_path, name)
    plan = make_plan(str(tmp_path))
    assert not rule(plan, runner).matched
    assert name in rule(plan, runner).why
    assert "symbolic links" in rule(plan, runner).why  # ELOOP's text
    assert plan.runner == expected


def test_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").symlink_to("nowhere.toml")
    plan = make_plan(str(tmp_path))
    assert plan.command is None
    assert "Cargo.toml is a symbolic link to a missing file" in rule(plan, "cargo").why


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_manifest_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "package.json")
    plan = make_plan(str(tmp_path))
    assert "package.json cannot be read: not a regular file" in rule(plan, "npm").why


def test_unreadable_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"package.json": NPM_TEST, "Makefile": MAKE_TEST})
    target = str(tmp_path / "package.json")
    if os.geteuid() != 0:
        os.chmod(target, 0)
    else:
        # root reads a mode-000 file anyway: make the open fail as it would for a user.
        real_open = os.open

        def deny(path: str, flags: int, *args: int) -> int:
            if os.fspath(path) == target:
                raise PermissionError(errno.EACCES, "Permission denied", path)
            return real_open(path, flags, *args)

        monkeypatch.setattr(os, "open", deny)
    plan = make_plan(str(tmp_path))
    assert rule(plan, "npm").why == "package.json cannot be read: permission denied"
    assert plan.runner == "make"


def test_folder_that_does_not_exist(tmp_path: Path) -> None:
    plan = make_plan(str(tmp_path / "missing"))
    check_invariants(plan)
    assert plan.command is None


def test_folder_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert make_plan(str(tmp_path / "file")).command is None


# --- reads only root-level files (acceptance 6) -----------------------------------------------


def test_planning_never_lists_a_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"pyproject.toml": PYTEST_TABLE, "package.json": NPM_TEST, "sub/x.py": ""})

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the planner listed a directory")

    for name in ("listdir", "scandir", "walk"):
        monkeypatch.setattr(os, name, forbidden)
    assert make_plan(str(tmp_path)).runner == "pytest"


def test_package_json_with_byte_order_mark(tmp_path: Path) -> None:
    # npm accepts it, so the rule must too.
    write(tmp_path, {"package.json": b"\xef\xbb\xbf" + NPM_TEST.encode()})
    assert make_plan(str(tmp_path)).runner == "npm"


@pytest.mark.parametrize(
    ("text", "table"),
    [(PYTEST_TABLE, "[tool.pytest.ini_options]"), ("[tool.pytest]\n", "[tool.pytest]")],
)
def test_reason_names_the_pytest_table(tmp_path: Path, text: str, table: str) -> None:
    plan = make_plan(str(write(tmp_path, {"pyproject.toml": text})))
    assert f"pyproject.toml has a {table} table" in plan.reason


def test_planning_looks_only_at_the_declared_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan_signature` is only sound if PLAN_INPUTS lists every path planning touches."""
    import lsp_verify.config.project_file as settings_module
    import lsp_verify.planning.plan as plan_module

    (tmp_path / "uv.lock").write_text("")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n[tool.tox]\n")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "x"}}')
    (tmp_path / "Cargo.toml").write_text("")
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n")
    (tmp_path / ".lsp-verify.toml").write_text("autoDetect = true\n")
    touched = record_joins(monkeypatch, tmp_path, plan_module, settings_module)
    plan_module.make_plan(str(tmp_path))
    assert touched, "the recorder saw nothing: the test would pass vacuously"
    assert touched <= set(plan_module.PLAN_INPUTS), touched - set(plan_module.PLAN_INPUTS)


def test_plan_signature_changes_with_an_input(tmp_path: Path) -> None:
    from lsp_verify.planning.plan import plan_signature

    before = plan_signature(str(tmp_path))
    (tmp_path / "notes.txt").write_text("unrelated")
    assert plan_signature(str(tmp_path)) == before
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n")
    after = plan_signature(str(tmp_path))
    assert after != before
    (tmp_path / "Makefile").write_text("test:\n\tfalse\n")
    assert plan_signature(str(tmp_path)) != after


def _stat_signature(folder: Path) -> tuple[object, ...]:
    """What plan_signature must say, written the plain way: stat every input."""
    from lsp_verify.planning import plan as plan_module

    out: list[object] = [os.environ.get("PATH")]
    for name in plan_module.PLAN_INPUTS:
        try:
            st = os.stat(folder / name)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode))
    return tuple(out)


def test_plan_signature_says_what_stat_says(tmp_path: Path) -> None:
    from lsp_verify.planning.plan import plan_signature

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "pytest").write_text("#!/bin/sh\n")
    (tmp_path / "Makefile").symlink_to(tmp_path / "missing")  # dangling: as absent
    (tmp_path / "package.json").symlink_to(tmp_path / "pytest.ini")  # followed
    (tmp_path / "tox.ini").mkdir()  # a directory: its stat, like any input
    assert plan_signature(str(tmp_path)) == _stat_signature(tmp_path)
    gone = tmp_path / "gone"
    assert plan_signature(str(gone)) == _stat_signature(gone)
    assert plan_signature(str(tmp_path / "pytest.ini")) == _stat_signature(tmp_path / "pytest.ini")


def test_plan_signature_without_dir_fd_says_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_verify.planning import plan as plan_module

    (tmp_path / "Cargo.toml").write_text("[package]\n")
    with_fd = plan_module.plan_signature(str(tmp_path))
    monkeypatch.setattr(plan_module, "_DIR_FD", False)
    assert plan_module.plan_signature(str(tmp_path)) == with_fd == _stat_signature(tmp_path)
    assert plan_module.plan_signature(str(tmp_path) + "\0x") == (os.environ.get("PATH"),) + (
        None,
    ) * len(plan_module.PLAN_INPUTS)

"""`lsp-verify explain`: the plan as JSON, every rule with matched and why."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from lsp_verify.cli import main as cli_main
from lsp_verify.cli.explain import explain_main
from lsp_verify.planning.plan import Plan, Rule, make_plan, plan_to_json
from tests.support.properties import examples
from tests.support.runs import ORDER

SPEC_KEYS = {
    "folder",
    "source",
    "runner",
    "command",
    "reason",
    "manifest",
    "fingerprint",
    "manifestSha256",
    "steps",
    "rules",
}
# What explain adds to the plan: the command as it runs, and why so (arrange.py).
ARRANGED_KEYS = {"runs", "failedFirst", "quickPhase", "affectedFirst", "affected"}


def run_explain(folder: str) -> tuple[int, dict[str, object]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = explain_main(folder)
    return status, json.loads(out.getvalue())


def test_plan_to_json_has_exactly_spec_keys() -> None:
    plan = Plan(
        folder="/p",
        source="detected",
        runner="npm",
        command="npm test",
        reason="Detected npm.",
        manifest="package.json",
        manifest_sha256="sha256:ab",
        steps=("a", "b"),
        snapshot=b"{}",
        env=(("npm_package_name", "x"),),
        rules=(Rule("settings", False, "no"), Rule("npm", True, "yes")),
    )
    document = plan_to_json(plan)
    assert set(document) == SPEC_KEYS
    assert document["steps"] == ["a", "b"]
    assert document["rules"] == [
        {"runner": "settings", "matched": False, "why": "no"},
        {"runner": "npm", "matched": True, "why": "yes"},
    ]
    json.dumps(document)  # no bytes leak in: the snapshot stays out


def test_explain_prints_the_plan(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        '{"scripts": {"pretest": "lint", "test": "vitest run"}}', encoding="utf-8"
    )
    status, document = run_explain(str(tmp_path))
    assert status == 0
    assert set(document) == SPEC_KEYS | ARRANGED_KEYS | {"messages", "settings"}
    assert document["folder"] == str(tmp_path)
    assert document["source"] == "detected"
    assert document["runner"] == "npm"
    assert document["command"] == "npm test"
    assert document["manifest"] == "package.json"
    assert str(document["fingerprint"]).startswith("sha256:")
    assert document["steps"] == ["lint", "vitest run"]
    rules = document["rules"]
    assert isinstance(rules, list)
    assert [r["runner"] for r in rules] == ORDER
    assert all(set(r) == {"runner", "matched", "why"} and r["why"] for r in rules)
    assert [r["runner"] for r in rules if r["matched"]] == ["npm"]
    assert document["messages"] == []


def test_explain_without_a_plan_exits_0(tmp_path: Path) -> None:
    status, document = run_explain(str(tmp_path))
    assert status == 0
    assert document["source"] is None and document["command"] is None
    assert document["manifest"] is None and document["fingerprint"] is None
    assert document["steps"] == []
    assert "No plan" in str(document["reason"])


def test_explain_relative_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Cargo.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    status, document = run_explain(".")
    assert (status, document["folder"], document["runner"]) == (0, str(tmp_path), "cargo")


def test_explain_shows_project_file_messages(tmp_path: Path) -> None:
    (tmp_path / ".lsp-verify.toml").write_text('command = "make check"\ntimeoutMs = -1\n')
    status, document = run_explain(str(tmp_path))
    assert status == 0
    assert document["source"] == "project-file"
    assert document["messages"] == [
        "line 2: timeoutMs: expected a positive integer, got -1; using 60000"
    ]


def test_explain_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("test:\n\ttouch ran-make\n")
    script = tmp_path / ".gptme" / "verify-completion.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\ntouch ran-script\n")
    script.chmod(0o755)
    status, document = run_explain(str(tmp_path))
    assert (status, document["source"]) == (0, "script")
    assert not (tmp_path / "ran-make").exists()
    assert not (tmp_path / "ran-script").exists()


def test_explain_missing_dir_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert explain_main(str(tmp_path / "nope")) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "no such directory" in captured.err


def test_explain_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("")
    assert explain_main(str(tmp_path / "f")) == 2
    assert "not a directory" in capsys.readouterr().err


def test_cli_dispatches_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pytest.ini").write_text("")
    assert cli_main(["explain", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["runner"] == "pytest"


# --- arbitrary bytes in every manifest: explain always answers (acceptance 3) -----------------

MANIFEST_NAMES = [
    ".lsp-verify.toml",
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "tox.toml",
    "package.json",
    "Cargo.toml",
    "GNUmakefile",
    "makefile",
    "Makefile",
    "uv.lock",
    "go.mod",
    "deno.json",
    "deno.jsonc",
    "mix.exs",
    "Rakefile",
    "build.zig",
    "justfile",
    ".justfile",
]

plausible = st.sampled_from(
    [
        b"[pytest]\n",
        b"[tool:pytest]\n",
        b"[tox]\n[tox]\n",
        b"[tool.pytest.ini_options]\n",
        b"[tool.tox]\n",
        b'command = "true"\n',
        b'{"scripts": {"test": "true", "pretest": 1}}',
        b"test:\n\ttrue\n",
        b"test := 1\n",
        b"\xef\xbb\xbf[pytest]\n",
        b"[" * 2000,
        b'{"tasks": {"test": "deno test"}, // c\n}',
        b"task :test do\nend\n",
        b"namespace :a do\n  task :test\nend\n",
        b'b.step("test", "x");\n',
        b"test *args:\n\techo\n",
    ]
)
contents = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
    plausible,
    st.tuples(plausible, st.binary(max_size=20)).map(lambda p: p[0] + p[1]),
)


@hsettings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(MANIFEST_NAMES), contents, max_size=len(MANIFEST_NAMES)))
def test_explain_returns_for_arbitrary_manifest_bytes(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            Path(folder, name).write_bytes(data)
        status, document = run_explain(folder)
        assert status == 0
        assert set(document) == SPEC_KEYS | ARRANGED_KEYS | {"messages", "settings"}
        rules = document["rules"]
        assert isinstance(rules, list) and len(rules) == 14
        matched = [r["runner"] for r in rules if r["matched"]]
        plan = make_plan(folder)
        if plan.command is None:
            assert matched == []
        else:
            assert matched[0] == (plan.runner or plan.source)
            assert plan.manifest_sha256 is not None
            assert plan.steps


@pytest.mark.parametrize("command", ["explain", "check", "approve"])
def test_every_command_says_a_missing_folder_the_same_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    (tmp_path / "f").write_text("")
    assert cli_main([command, str(tmp_path / "nope")]) == 2
    assert (
        capsys.readouterr().err == f"lsp-verify {command}: {tmp_path / 'nope'}: no such directory\n"
    )
    assert cli_main([command, str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err == f"lsp-verify {command}: {tmp_path / 'f'}: not a directory\n"


def test_explain_shows_the_command_as_it_runs(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    status, document = run_explain(str(tmp_path))
    assert status == 0
    assert document["command"] == "pytest -x -q"  # the plan, as approved
    assert document["runs"] == "pytest -x -q --ff"
    assert document["failedFirst"] == "--ff added: failed first"


@pytest.mark.parametrize(
    ("ini", "why"),
    [
        ("addopts = -p no:cacheprovider", "addopts has -p no:cacheprovider (pytest.ini)"),
        ("addopts = --lf", "addopts already says --lf (pytest.ini)"),
    ],
)
def test_explain_says_why_not(tmp_path: Path, ini: str, why: str) -> None:
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    _, document = run_explain(str(tmp_path))
    assert document["runs"] == "pytest -x -q"
    assert document["failedFirst"] == f"failed first: not added: {why}"


def test_explain_honours_the_project_files_switch(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / ".lsp-verify.toml").write_text("failedFirst = false\n")
    _, document = run_explain(str(tmp_path))
    assert document["runs"] == "pytest -x -q"
    assert document["failedFirst"] == "failed first: off (failedFirst is false)"
    assert document["messages"] == []


# A folder of each kind the detector's rules 6 to 11 know: the rule that matched, the command
# as it runs, and why failed first is not added (none of them can keep the same test set).
KINDS = [
    ({"go.mod": "module x\n"}, "go", "go test ./...", "go.mod exists", "go test has no option"),
    ({"deno.json": "{}"}, "deno", "deno test", "deno.json exists", "deno test has no option"),
    ({"mix.exs": "defmodule X do\nend\n"}, "mix", "mix test", "mix.exs exists", "--failed runs"),
    (
        {"Rakefile": "task :test\n"},
        "rake",
        "rake test",
        "Rakefile defines the task test",
        "minitest",
    ),
    ({"build.zig": 'b.step("test", "t");'}, "zig", "zig build test", 'step "test"', "zig build"),
    ({"justfile": "test:\n\ttrue\n"}, "just", "just test", "recipe test", "the justfile's recipe"),
]


@pytest.mark.parametrize(
    ("files", "runner", "command", "why", "failed_first"),
    KINDS,
    ids=[kind[1] for kind in KINDS],
)
def test_explain_names_the_rule_that_matched(
    tmp_path: Path, files: dict[str, str], runner: str, command: str, why: str, failed_first: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    status, document = run_explain(str(tmp_path))
    assert status == 0
    assert (document["source"], document["runner"]) == ("detected", runner)
    assert document["manifest"] == next(iter(files))
    assert document["command"] == document["runs"] == command
    rules = document["rules"]
    assert isinstance(rules, list)
    matched = [r for r in rules if r["matched"]]
    assert [r["runner"] for r in matched] == [runner]
    assert why in matched[0]["why"]
    assert str(document["failedFirst"]).startswith("failed first: not added: ")
    assert failed_first in str(document["failedFirst"])

"""Affected first where the runner finds the related tests: which jest, vitest and go test
commands get a quick phase, which one, and why not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from lsp_verify.planning.arrange import arrange, arrangement_json
from lsp_verify.planning.plan import Plan, command_plan
from lsp_verify.planning.related import related
from tests.support.files import write


def npm_plan(folder: Path, *scripts: str) -> Plan:
    return replace(command_plan(str(folder), "npm test", "test"), runner="npm", steps=scripts)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write(tmp_path, {"src/sum.ts": "", "src/a b.js": "", "README.md": "", "pkg/x.go": ""})


@pytest.mark.parametrize(
    ("script", "quick"),
    [
        ("jest", "jest --passWithNoTests --findRelatedTests src/sum.ts"),
        (
            "jest --ci --silent",
            "jest --ci --silent --passWithNoTests --findRelatedTests src/sum.ts",
        ),
        ("CI=1 jest", "jest --passWithNoTests --findRelatedTests src/sum.ts"),
        ("vitest", "vitest related src/sum.ts --run --passWithNoTests"),
        ("vitest run", "vitest related src/sum.ts --run --passWithNoTests"),
        ("vitest run --coverage", "vitest related src/sum.ts --run --passWithNoTests --coverage"),
    ],
)
def test_plain_calls_get_the_related_tests_first(folder: Path, script: str, quick: str) -> None:
    found = related(npm_plan(folder, script), [str(folder / "src/sum.ts")])
    assert (found.command, found.files) == (quick, ("src/sum.ts",))


@pytest.mark.parametrize(
    ("scripts", "why"),
    [
        (("tsc", "jest"), "the npm script has pretest or posttest scripts"),
        (("jest && eslint .",), "the npm test script is not a plain jest or vitest call"),
        (("mocha",), "the npm test script is not a plain jest or vitest call"),
        (("jest src",), "the npm test script names what to run, or an option's value ('src')"),
        (("jest --config c.js",), "names what to run, or an option's value ('c.js')"),
        (("vitest bench",), "names what to run, or an option's value ('bench')"),
    ],
)
def test_other_scripts_run_as_they_are(folder: Path, scripts: tuple[str, ...], why: str) -> None:
    found = related(npm_plan(folder, *scripts), [str(folder / "src/sum.ts")])
    assert found.command is None and why in found.note


def test_only_source_files_of_the_folder_count(folder: Path, tmp_path: Path) -> None:
    plan = npm_plan(folder, "jest")
    named = [str(folder / "README.md"), "/elsewhere/x.js", str(folder / "src/gone.js")]
    found = related(plan, named)
    assert found.command is None
    assert found.note.endswith("no JavaScript or TypeScript file changed")
    spaced = related(plan, [str(folder / "src/a b.js")])
    assert spaced.command == "jest --passWithNoTests --findRelatedTests 'src/a b.js'"


def test_go_test_runs_the_changed_package_first(folder: Path) -> None:
    plan = command_plan(str(folder), "go test -count=1 ./...", "test")
    found = related(plan, [str(folder / "pkg/x.go")])
    assert found.command == "go test -count=1 ./pkg"
    narrowed = command_plan(str(folder), "go test ./pkg/...", "test")
    assert related(narrowed, [str(folder / "pkg/x.go")]).command is None


def test_arrange_puts_it_in_the_quick_phase_and_explain_says_why_not(folder: Path) -> None:
    plan = npm_plan(folder, "vitest")
    arranged = arrange(plan, True, None, {}, affected=True, changed=(str(folder / "src/sum.ts"),))
    assert arranged.quick is not None and arranged.quick.command.startswith("vitest related")
    assert arranged.command == "npm test"  # the full command as it is
    assert arrange(plan, True, None, {}, changed=(str(folder / "src/sum.ts"),)).quick is None
    document = arrangement_json(npm_plan(folder, "jest src"), True, True)
    assert "names what to run" in document["affectedFirst"]

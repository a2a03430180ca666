"""Recorded outputs of every family (tests/cases/outputs) give exactly the expected
problems, at the right file, line and column (acceptance 1), and hold no machine paths (5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cases.corpus import all_cases, fixture_lines
from tests.cases.problems_cases import FIXTURES, Case, collect, mismatches, write_project

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_recorded_output_gives_the_expected_problems(case: Case, tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_project(root, case.project)
    problems = collect(root, fixture_lines(case, root))
    assert mismatches(problems, case.expected) == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_recorded_output_needs_the_files_to_exist(case: Case, tmp_path: Path) -> None:
    # The same output in an empty folder: every problem points at a missing file, so none
    # is kept. This is also what shows that nothing in the expectations is hard-coded.
    root = tmp_path / "project"
    root.mkdir()
    assert collect(root, fixture_lines(case, root)) == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_fixture_says_the_command_that_produced_it(case: Case) -> None:
    command = (FIXTURES / case.family / f"{case.name}.cmd").read_text(encoding="utf-8")
    assert case.command in command
    assert case.expected, "a case without expected problems tests nothing"


MACHINE_PATH = re.compile(r"(?<![\w.}])/(?:tmp|root|home|Users|private|var/folders|opt)/")


def test_fixtures_hold_no_paths_of_the_recording_machine() -> None:
    texts = sorted(FIXTURES.rglob("*.txt")) + sorted(FIXTURES.rglob("*.cmd"))
    assert len(texts) == 2 * len(CASES)
    for path in texts:
        text = path.read_text(encoding="utf-8")
        assert not MACHINE_PATH.search(text), f"{path} holds a machine path"
        assert str(Path.home()) + "/" not in text or str(Path.home()) == "/", path

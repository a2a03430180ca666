"""The readable run record: Markdown that output and commands cannot break."""

from __future__ import annotations

import json
from pathlib import Path

from lsp_verify.problems.base import Problem
from lsp_verify.record import Record
from lsp_verify.run_view import record_markdown, write_run_view


def record(**changes: object) -> Record:
    values: dict[str, object] = {
        "folder": "/work/proj",
        "trigger": "save",
        "outcome": "failed",
        "reason": "exit 1",
        "started_at": "2026-12-01T07:00:00.000Z",
        "command": "pytest -x -q",
        "source": "detected",
        "manifest": "pytest.ini",
        "duration_ms": 1234,
        "exit_code": 1,
        "tail": ("collected 3 items", "FAILED tests/test_a.py::test_x"),
        "problems": (Problem("tests/test_a.py", 7, 5, "assert 1 == 2\nmore"),),
    }
    values.update(changes)
    return Record(**values)  # type: ignore[arg-type]


def test_the_verdict_comes_first_then_facts_problems_output_and_json() -> None:
    text = record_markdown(record())
    lines = text.splitlines()
    assert lines[0] == "# verify: Failed"
    for fact in (
        "- **command:** `pytest -x -q`",
        "- **from:** detected (pytest.ini)",
        "- **trigger:** save",
        "- **duration:** 1.23 s",
        "- **exit status:** 1",
    ):
        assert fact in lines
    link = "- [tests/test_a.py:7:5](file:///work/proj/tests/test_a.py#L7) error: assert 1 == 2"
    assert link in lines
    assert text.index("## Problems") < text.index("## Output") < text.index("## Record (JSON)")
    block = text.split("## Record (JSON)\n\n```text\n", 1)[1].rsplit("```", 1)[0]
    assert json.loads(block)["outcome"] == "failed"


def test_backticks_in_the_output_or_command_cannot_close_the_blocks() -> None:
    text = record_markdown(record(command="echo `date`", tail=("```", "````x")))
    assert "- **command:** `` echo `date` ``" in text
    assert "\n`````text\n```\n````x\n`````\n" in text


def test_a_declined_run_says_why(tmp_path: Path) -> None:
    text = record_markdown(
        record(outcome="declined", exit_code=None, reason="not approved", tail=(), problems=())
    )
    assert text.startswith("# verify: Declined (not approved)\n")
    assert "- **why:** not approved" in text and "- **exit status:** null" in text
    assert "## Problems" not in text and "## Output" not in text


def test_one_file_per_folder_replaced_by_each_run(tmp_path: Path) -> None:
    first = write_run_view(record(), tmp_path / "runs")
    second = write_run_view(record(outcome="passed", exit_code=0), tmp_path / "runs")
    other = write_run_view(record(folder="/work/other"), tmp_path / "runs")
    assert first == second != other
    assert second.read_text().startswith("# verify: Passed")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted({first.name, other.name})

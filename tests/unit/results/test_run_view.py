"""The readable run record: Markdown that output and commands cannot break."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from lsp_verify.problems.base import Problem
from lsp_verify.record import Record
from lsp_verify.results.run_view import record_markdown, write_run_view


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
    link = "- [`tests/test_a.py:7:5`](file:///work/proj/tests/test_a.py#L7) error: `assert 1 == 2`"
    assert link in lines
    assert text.index("## Problems") < text.index("## Output") < text.index("## Record (JSON)")
    block = text.split("## Record (JSON)\n\n```text\n", 1)[1].rsplit("```", 1)[0]
    assert json.loads(block)["outcome"] == "failed"


def test_problem_messages_and_paths_show_as_written_not_as_markdown_or_html() -> None:
    # A renderer takes `<module>` and `vector<int>` for HTML tags (VS Code's preview drops
    # them) and `__init__` for bold; as code spans they show as written.
    problems = (
        Problem("pkg/__init__.py", 3, 1, 'File "x.py", line 1, in <module>'),
        Problem("src/a.cpp", 9, 2, "no match for std::vector<int> & *p_q*", severity="warning"),
        Problem("src/b.c", 1, 1, "   "),
    )
    lines = record_markdown(record(problems=problems)).splitlines()
    assert (
        "- [`pkg/__init__.py:3:1`](file:///work/proj/pkg/__init__.py#L3) error: "
        + ('`File "x.py", line 1, in <module>`')
        in lines
    )
    assert (
        "- [`src/a.cpp:9:2`](file:///work/proj/src/a.cpp#L9) warning: "
        "`no match for std::vector<int> & *p_q*`"
    ) in lines
    assert "- [`src/b.c:1:1`](file:///work/proj/src/b.c#L1) error:" in lines


def test_backticks_in_the_output_or_command_cannot_close_the_blocks() -> None:
    text = record_markdown(record(command="echo `date`", tail=("```", "````x")))
    assert "- **command:** `` echo `date` ``" in text
    assert "\n`````text\n```\n````x\n`````\n" in text


def test_a_declined_run_says_why(tmp_path: Path) -> None:
    text = record_markdown(
        record(outcome="declined", exit_code=None, reason="not approved", tail=(), problems=())
    )
    assert text.startswith("# verify: Declined (not approved)\n")
    assert "- **why:** not approved" in text and "- **exit status:** none" in text
    assert "## Problems" not in text and "## Output" not in text


def test_one_file_per_folder_named_after_its_run(tmp_path: Path) -> None:
    first = write_run_view(record(), tmp_path / "runs")
    again = write_run_view(record(), tmp_path / "runs")
    second = write_run_view(
        record(outcome="passed", exit_code=0, started_at="2026-01-02T03:04:05.678Z"),
        tmp_path / "runs",
    )
    other = write_run_view(record(folder="/work/other"), tmp_path / "runs")
    # The same run keeps its view; a newer run gets a new name, so no preview open on the
    # older one is left showing it under the newer name.
    assert first == again and second != first and other != first
    assert second.name.startswith("last-run-proj-") and second.name.endswith(
        "20260102T030405678Z.md"
    )
    assert second.read_text().startswith("# verify: Passed")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        {second.name, other.name}
    )


def test_the_written_view_links_each_problem_relative_to_itself(tmp_path: Path) -> None:
    """Markdown renderers (VS Code's preview among them) drop `file:` links; a relative link
    from the view's own folder reaches the file, spaces and all."""
    project = tmp_path / "my project"
    problem = Problem("tests/test a.py", 7, 5, "assert 1 == 2")
    view = write_run_view(
        record(folder=str(project), problems=(problem,)), tmp_path / "state" / "runs"
    )
    text = view.read_text(encoding="utf-8")
    link = text.split("- [`tests/test a.py:7:5`](", 1)[1].split(")", 1)[0]
    assert "file:" not in link and " " not in link, link
    relative, fragment = link.split("#", 1)
    assert fragment == "L7"
    target = (view.parent / unquote(relative)).resolve()
    assert target == (project / "tests" / "test a.py").resolve()

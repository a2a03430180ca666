"""The README cannot drift from the code: its settings table, its links, the paths it names.
(Its first command, run for real: tests/e2e/test_readme.py.)"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from lsp_verify.config import settings
from tests.support.paths import REPO

README = REPO / "README.md"
MARKER = "<!-- settings-table:"


def _table() -> list[list[str]]:
    """The rows of the settings table (header and rule left out), cells stripped."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(MARKER)) + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    assert rows[0][:3] == ["key", "type", "default"], rows[0]
    return rows[2:]


def _code(cell: str) -> str:
    assert cell.startswith("`") and cell.endswith("`"), cell
    return cell[1:-1]


def _expected_type(field: dataclasses.Field[object], key: str) -> str:
    """The type column as the README spells it, from the field's validator and default."""
    if key == "runOn":
        return ", ".join(f'`"{v}"`' for v in settings.RUN_ON_VALUES)
    if key == "confirm":
        return ", ".join(f'`"{v}"`' for v in settings.CONFIRM_VALUES)
    default = field.default
    if key in ("command", "workspaceCommand"):
        return "string or null"
    if isinstance(default, bool):
        return "boolean"
    if isinstance(default, int):
        return "integer > 0"
    if isinstance(default, tuple):
        return "list of strings"
    raise AssertionError(f"the README has no way to spell the type of {key}: extend this test")


def test_settings_table_lists_every_key_in_order() -> None:
    assert [_code(row[0]) for row in _table()] == list(settings.KEYS)


def test_settings_table_types_and_defaults_match_the_code() -> None:
    fields = {f.name: f for f in dataclasses.fields(settings.Settings)}
    for row in _table():
        key = _code(row[0])
        field = fields[settings.KEYS[key]]
        assert row[1] == _expected_type(field, key), key
        default = getattr(settings.DEFAULTS, field.name)
        if isinstance(default, tuple):
            default = list(default)
        assert json.loads(_code(row[2])) == default, key


def test_settings_table_defaults_are_accepted_by_the_parser() -> None:
    for row in _table():
        key = _code(row[0])
        parsed = settings.parse_settings({key: json.loads(_code(row[2]))})
        assert parsed.messages == (), (key, parsed.messages)


def test_every_settings_field_has_a_key() -> None:
    # A new Settings field without a camelCase key would be missing from the table too.
    assert sorted(settings.KEYS.values()) == sorted(
        f.name for f in dataclasses.fields(settings.Settings)
    )


def test_top_holds_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in first_block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[0].endswith("lsp-verify check examples/demo"), commands[0]
    assert "pip install ." in commands[0]
    assert commands[1] == "bash .ci/run"
    assert "exit status 1" in first_block  # the demo's failing test is deliberate


_LINK = re.compile(r"\]\((?!https?://)([^)#\s]*)(?:#([^)\s]*))?\)")


def _anchors(markdown: str) -> set[str]:
    heads = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in heads}


@pytest.mark.parametrize("doc", ["README.md", "docs/editors.md", "CHANGELOG.md"])
def test_relative_links_resolve(doc: str) -> None:
    path = REPO / doc
    text = path.read_text(encoding="utf-8")
    for target, anchor in _LINK.findall(text):
        linked = (path.parent / target).resolve() if target else path
        assert linked.exists(), f"{doc}: broken link to {target}"
        if anchor:
            assert anchor in _anchors(linked.read_text(encoding="utf-8")), f"{doc}: #{anchor}"


def test_paths_the_quick_start_names_exist() -> None:
    text = README.read_text(encoding="utf-8")
    assert 'set rtp^=tests/editors/nvim" -c \'lua require("lsp-verify").setup()\'' in text
    assert (REPO / "tests/editors/nvim/lua/lsp-verify.lua").is_file()
    assert "examples/demo/tests/test_calc.py" in text
    test_calc = (REPO / "examples/demo/tests/test_calc.py").read_text().splitlines()
    assert test_calc[13].strip() == "assert mean([1.0, 2.0, 3.0]) == 2.0"  # "line 14"
    assert "(len(values) + 1)" in (REPO / "examples/demo/calc.py").read_text()

"""Settings: parsing from a string, an object or .lsp-verify.toml; merging."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from lsp_verify.config.project_file import ProjectFile, load_project_file
from lsp_verify.config.settings import (
    DEFAULTS,
    KEYS,
    PROJECT_FILE,
    REPOSITORY_KEYS,
    ParsedSettings,
    Settings,
    SettingsMessage,
    effective_settings,
    parse_settings,
)
from tests.support.properties import examples


def test_bare_string_is_the_command() -> None:
    parsed = parse_settings("pnpm test")
    assert parsed.values == {"command": "pnpm test"}
    assert parsed.messages == ()


def test_none_sets_nothing() -> None:
    assert parse_settings(None) == ParsedSettings({}, ())


def test_full_object() -> None:
    parsed = parse_settings(
        {
            "command": "pnpm typecheck",
            "globs": ["*.ts", "src"],
            "timeoutMs": 30000,
            "runOn": "manual",
            "tailLines": 10,
            "autoDetect": False,
            "confirm": "never",
        }
    )
    assert parsed.messages == ()
    assert parsed.values == {
        "command": "pnpm typecheck",
        "globs": ("*.ts", "src"),
        "timeout_ms": 30000,
        "run_on": "manual",
        "tail_lines": 10,
        "auto_detect": False,
        "confirm": "never",
    }
    assert effective_settings(parsed, None) == Settings(
        "pnpm typecheck", ("*.ts", "src"), 30000, "manual", 10, False, "never"
    )


def test_only_given_keys_are_in_values() -> None:
    assert parse_settings({"tailLines": 5}).values == {"tail_lines": 5}


def test_edit_is_the_same_as_save() -> None:
    assert parse_settings({"runOn": "edit"}).values == {"run_on": "save"}


def test_command_null_means_unset() -> None:
    parsed = parse_settings({"command": None, "runOn": "sync"})
    assert parsed.messages == ()
    assert "command" not in parsed.values


def test_integral_float_is_an_integer() -> None:
    assert parse_settings({"timeoutMs": 30000.0}).values == {"timeout_ms": 30000}


def test_message_wording() -> None:
    (message,) = parse_settings({"timeoutMs": "abc"}).messages
    assert message == SettingsMessage(
        "timeoutMs", "verify.timeoutMs: expected a positive integer, got 'abc'; using 60000"
    )


# (key, bad value, what the message shows of it, default as shown)
WRONG: list[tuple[str, object, str, str]] = [
    ("command", 3, "3", "null"),
    ("command", "", "''", "null"),
    ("command", "   ", "'   '", "null"),
    ("command", ["make"], '["make"]', "null"),
    ("command", True, "true", "null"),
    ("globs", "*.py", "'*.py'", "[]"),
    ("globs", ["*.py", 3], '["*.py", 3]', "[]"),
    ("globs", {"a": 1}, '{"a": 1}', "[]"),
    ("globs", None, "null", "[]"),
    ("timeoutMs", "abc", "'abc'", "60000"),
    ("timeoutMs", 0, "0", "60000"),
    ("timeoutMs", -5, "-5", "60000"),
    ("timeoutMs", True, "true", "60000"),
    ("timeoutMs", 1.5, "1.5", "60000"),
    ("timeoutMs", float("nan"), "nan", "60000"),
    ("timeoutMs", 2**31, "2147483648", "60000"),
    ("timeoutMs", 10**5000, "a number of about", "60000"),
    ("timeoutMs", None, "null", "60000"),
    ("runOn", "Save", "'Save'", "'save'"),
    ("runOn", "always", "'always'", "'save'"),
    ("runOn", 1, "1", "'save'"),
    ("tailLines", 0, "0", "40"),
    ("tailLines", "40", "'40'", "40"),
    ("tailLines", False, "false", "40"),
    ("tailLines", 10**9, "1000000000", "40"),
    ("autoDetect", "yes", "'yes'", "true"),
    ("autoDetect", 1, "1", "true"),
    ("autoDetect", None, "null", "true"),
    ("failedFirst", "no", "'no'", "true"),
    ("failedFirst", 0, "0", "true"),
    ("affectedFirst", "off", "'off'", "true"),
    ("confirm", "sometimes", "'sometimes'", "'onChange'"),
    ("confirm", "onchange", "'onchange'", "'onChange'"),
    ("confirm", False, "false", "'onChange'"),
]


FIELDS = {
    "command": "command",
    "globs": "globs",
    "timeoutMs": "timeout_ms",
    "runOn": "run_on",
    "tailLines": "tail_lines",
    "autoDetect": "auto_detect",
    "confirm": "confirm",
    "failedFirst": "failed_first",
    "affectedFirst": "affected_first",
}


@pytest.mark.parametrize(
    ("key", "value", "shown", "default"),
    [pytest.param(*case, id=f"{case[0]}-{case[2][:20]}") for case in WRONG],
)
def test_wrong_type_or_value_gives_message_and_default(
    key: str, value: object, shown: str, default: str
) -> None:
    parsed = parse_settings({key: value})
    assert parsed.values == {}
    (message,) = parsed.messages
    assert message.key == key
    assert message.text.startswith(f"verify.{key}: expected ")
    assert f"got {shown}" in message.text
    assert message.text.endswith(f"; using {default}")
    field = FIELDS[key]
    assert getattr(effective_settings(parsed, None), field) == getattr(DEFAULTS, field)


def test_a_bad_key_leaves_the_good_ones() -> None:
    parsed = parse_settings({"timeoutMs": "soon", "tailLines": 7})
    assert parsed.values == {"tail_lines": 7}
    assert [m.key for m in parsed.messages] == ["timeoutMs"]


def test_too_large_says_the_limit() -> None:
    (message,) = parse_settings({"timeoutMs": 2**31}).messages
    assert "no larger than 2147483647" in message.text


@pytest.mark.parametrize(
    ("key", "hint"),
    [("timeout_ms", "timeoutMs"), ("runon", "runOn"), ("comand", "command"), ("zzz", None)],
)
def test_unknown_keys_are_reported(key: str, hint: str | None) -> None:
    parsed = parse_settings({key: 1, "command": "make"})
    assert parsed.values == {"command": "make"}
    (message,) = parsed.messages
    assert message.key == key
    assert message.text.startswith(f"verify.{key}: unknown key; ignored")
    if hint:
        assert f"did you mean {hint}?" in message.text
    else:
        assert "did you mean" not in message.text


def test_non_string_key_is_reported() -> None:
    (message,) = parse_settings({3: "x"}).messages
    assert "unknown key" in message.text


@pytest.mark.parametrize("value", [[1], 3, True, 2.5, b"make"])
def test_whole_value_of_wrong_type(value: object) -> None:
    parsed = parse_settings(value)
    assert parsed.values == {}
    (message,) = parsed.messages
    assert message.key is None
    assert message.text.startswith("verify: expected a command string or an object")
    assert message.text.endswith("using the defaults")


def test_origin_of_project_file_and_command_line_writes_bare_keys() -> None:
    for origin in (".lsp-verify.toml", "command line"):
        (message,) = parse_settings({"tailLines": 0}, origin).messages
        assert message.text.startswith("tailLines: expected")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
keys = st.sampled_from(
    ["command", "globs", "timeoutMs", "runOn", "tailLines", "autoDetect", "confirm", "other"]
)


@hsettings(max_examples=examples(300), deadline=None)
@given(st.one_of(json_values, st.dictionaries(keys, json_values, max_size=8)))
def test_parse_never_raises_and_values_are_well_typed(value: object) -> None:
    parsed = parse_settings(value)
    merged = effective_settings(parsed, None)
    assert merged.command is None or (isinstance(merged.command, str) and merged.command.strip())
    assert isinstance(merged.globs, tuple) and all(isinstance(g, str) for g in merged.globs)
    for number in (merged.timeout_ms, merged.tail_lines):
        assert type(number) is int and number > 0
    assert merged.run_on in ("save", "sync", "manual")
    assert type(merged.auto_detect) is bool
    assert merged.confirm in ("onChange", "always", "never")
    for message in parsed.messages:
        assert message.text and len(message.text) < 400


# --- effective settings ------------------------------------------------------------------------


def project(folder: Path, text: str | bytes) -> Path:
    path = folder / ".lsp-verify.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return folder


def test_editor_beats_project_file_beats_defaults_key_by_key(tmp_path: Path) -> None:
    project(tmp_path, 'command = "make check"\ntimeoutMs = 5000\nglobs = ["*.py"]\n')
    editor = parse_settings({"timeoutMs": 100, "confirm": "always"})
    merged = effective_settings(editor, load_project_file(str(tmp_path)))
    assert merged == dataclasses.replace(
        DEFAULTS, command="make check", timeout_ms=100, globs=("*.py",), confirm="always"
    )
    assert effective_settings(None, None) == DEFAULTS


# --- .lsp-verify.toml --------------------------------------------------------------------------


def test_no_project_file(tmp_path: Path) -> None:
    assert load_project_file(str(tmp_path)) is None


def test_project_file_values_and_bytes(tmp_path: Path) -> None:
    text = 'command = "make check"\nrunOn = "manual"\n'
    project(tmp_path, text)
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert loaded.path == os.path.join(str(tmp_path), ".lsp-verify.toml")
    assert loaded.data == text.encode()
    assert loaded.parsed == ParsedSettings({"command": "make check", "run_on": "manual"}, ())


def test_project_file_relative_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project(tmp_path, 'command = "x"\n')
    monkeypatch.chdir(tmp_path)
    loaded = load_project_file(".")
    assert loaded is not None and os.path.isabs(loaded.path)


def test_project_file_unknown_and_wrong_keys_have_lines(tmp_path: Path) -> None:
    project(tmp_path, 'command = "make check"\n\n"timeOut" = 3\ntailLines = "x"\n')
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert loaded.parsed.values == {"command": "make check"}
    by_key = {m.key: m for m in loaded.parsed.messages}
    assert by_key["timeOut"].line == 3
    assert by_key["timeOut"].text.startswith("timeOut: unknown key")
    assert by_key["tailLines"].line == 4
    assert by_key["tailLines"].text == "tailLines: expected a positive integer, got 'x'; using 40"


def test_project_file_never_yields_the_users_keys(tmp_path: Path) -> None:
    project(
        tmp_path,
        'command = "make check"\nconfirm = "never"\n\nautoDetect = false\n'
        'workspaceCommand = "x"\nconfirm_ = 1\n',
    )
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert loaded.parsed.values == {"command": "make check"}
    by_key = {m.key: m for m in loaded.parsed.messages}
    assert by_key["confirm"].line == 2
    assert by_key["autoDetect"].line == 4
    assert by_key["workspaceCommand"].line == 5
    for key in ("confirm", "autoDetect", "workspaceCommand"):
        assert by_key[key].text.startswith(f"{key}: ignored here; only your editor's settings")
    # A near miss is not pointed at a key the file may not set.
    assert by_key["confirm_"].text == "confirm_: unknown key; ignored"


def test_the_repository_keys_are_the_spec_list() -> None:
    assert sorted(REPOSITORY_KEYS) == [
        "affectedFirst",
        "command",
        "failedFirst",
        "globs",
        "runOn",
        "tailLines",
        "timeoutMs",
    ]
    assert REPOSITORY_KEYS.issubset(KEYS) and set(KEYS) != REPOSITORY_KEYS


def test_merging_takes_only_repository_keys_from_a_project_file() -> None:
    # Even a ProjectFile built by hand with the user's keys in it cannot weaken trust.
    values = {"command": "x", "confirm": "never", "auto_detect": False, "workspace_command": "y"}
    forged = ProjectFile(PROJECT_FILE, b"", ParsedSettings(values, ()))
    merged = effective_settings(None, forged)
    assert merged == dataclasses.replace(DEFAULTS, command="x")
    user = parse_settings({"confirm": "never", "autoDetect": False})
    assert effective_settings(user, forged) == dataclasses.replace(
        DEFAULTS, command="x", confirm="never", auto_detect=False
    )


def test_workspace_command_is_a_command_key() -> None:
    assert parse_settings({"workspaceCommand": "make"}).values == {"workspace_command": "make"}
    assert parse_settings({"workspaceCommand": None}) == ParsedSettings({}, ())
    (message,) = parse_settings({"workspaceCommand": " "}).messages
    assert message.text.startswith("verify.workspaceCommand: expected a non-empty command")


def test_project_file_verify_table_hint(tmp_path: Path) -> None:
    project(tmp_path, '# settings\n[verify]\ncommand = "make"\n')
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    (message,) = loaded.parsed.messages
    assert message.line == 2
    assert "top level" in message.text
    assert loaded.parsed.values == {}


BROKEN = [
    ('command = "x\n', "is not valid TOML", 1),
    ('ok = 1\ncommand = = "x"\n', "is not valid TOML", 2),
    (b'command = "\xff"\n', "is not UTF-8", None),
    (b"a = " + b"9" * 5000 + b"\n", "is not valid TOML", None),
    (b"a = " + b"[" * 50_000, "is not valid TOML", None),
    (b"#" * (1024 * 1024 + 1), "larger than", None),
]


@pytest.mark.parametrize(("content", "words", "line"), BROKEN)
def test_broken_project_file_is_a_message(
    tmp_path: Path, content: str | bytes, words: str, line: int | None
) -> None:
    project(tmp_path, content)
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert loaded.parsed.values == {}
    (message,) = loaded.parsed.messages
    assert message.key is None
    assert message.text.startswith(".lsp-verify.toml ")
    assert words in message.text
    assert message.line == line


def test_project_file_directory(tmp_path: Path) -> None:
    (tmp_path / ".lsp-verify.toml").mkdir()
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None and loaded.data == b""
    assert "is a directory" in loaded.parsed.messages[0].text


def test_project_file_symlink_loop_and_dangling(tmp_path: Path) -> None:
    (tmp_path / ".lsp-verify.toml").symlink_to(".lsp-verify.toml")
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert "symbolic links" in loaded.parsed.messages[0].text
    (tmp_path / ".lsp-verify.toml").unlink()
    (tmp_path / ".lsp-verify.toml").symlink_to("gone.toml")
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    assert "missing file" in loaded.parsed.messages[0].text


def test_project_file_when_folder_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert load_project_file(str(tmp_path / "f")) is None


@hsettings(max_examples=examples(150), deadline=None)
@given(st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "replace")))
def test_load_project_file_never_raises(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, ".lsp-verify.toml").write_bytes(data)
        loaded = load_project_file(folder)
        assert loaded is not None and loaded.data == data
        effective_settings(None, loaded)


def test_failed_first_is_a_switch_a_repository_may_turn_off() -> None:
    """It only orders the tests the approved command runs anyway: the project file may say."""
    assert parse_settings({"failedFirst": False}).values == {"failed_first": False}
    assert effective_settings(None, None).failed_first is True
    project = ProjectFile(
        "/p/.lsp-verify.toml", b"", parse_settings({"failedFirst": False}, PROJECT_FILE)
    )
    assert project.parsed.messages == ()
    assert effective_settings(None, project).failed_first is False
    editor = parse_settings({"failedFirst": True})
    assert effective_settings(editor, project).failed_first is True


def test_agent_hooks_is_an_option_beside_the_settings_not_a_setting() -> None:
    from lsp_verify.config.settings import parse_init_options

    options = parse_init_options({"agentHooks": True, "command": "make"}, client_pulls=False)
    assert options.agent_hooks is True and options.settings == {"command": "make"}
    assert parse_init_options({"agentHooks": "yes"}, client_pulls=False).agent_hooks is False
    assert parse_init_options(None, client_pulls=False).agent_hooks is False

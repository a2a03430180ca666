"""`.lsp-verify.toml` at a bounded cost: a repository's file, read at `initialized` and on
every change, with problems reported in one pass and capped, and TOML parsed only when its
parse costs what a save may (SPEC section 7)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsp_verify.config.project_file import (
    MAX_KEY_PARTS,
    MAX_MESSAGES,
    TooCostly,
    load_project_file,
    parse_toml,
)
from lsp_verify.config.settings import PROJECT_FILE, parse_settings
from tests.support.cost import cpu_clock


def write(folder: Path, text: str) -> None:
    (folder / PROJECT_FILE).write_text(text, encoding="utf-8")


def test_many_unknown_keys_cost_one_pass_and_a_capped_list(tmp_path: Path) -> None:
    """Each message scanned every line for its key: 4 000 keys took 1.9 s, 12 000 took
    13.2 s, and each key was a diagnostic of its own."""
    write(tmp_path, 'command = "make check"\n' + "".join(f"k{i} = {i}\n" for i in range(12_000)))
    start = cpu_clock()
    loaded = load_project_file(str(tmp_path))
    spent = time.process_time() - start
    assert spent < 0.25, f"{spent:.2f} s of CPU"
    assert loaded is not None
    assert loaded.parsed.values == {"command": "make check"}
    messages = loaded.parsed.messages
    assert len(messages) == MAX_MESSAGES + 1
    for i, message in enumerate(messages[:MAX_MESSAGES]):
        assert message.text == f"k{i}: unknown key; ignored"  # as worded one by one
        assert message.line == i + 2
    summary = messages[-1]
    assert summary.key == f"k{MAX_MESSAGES}"
    assert summary.line == MAX_MESSAGES + 2  # at the first key not listed
    assert summary.text == (
        f"k{MAX_MESSAGES} and {12_000 - MAX_MESSAGES - 1} more keys after it have problems "
        f"too; only the first {MAX_MESSAGES} are listed"
    )


def test_a_problem_with_the_command_is_never_left_out(tmp_path: Path) -> None:
    """The plan says why the project file gives no command from these messages."""
    write(tmp_path, "".join(f"k{i} = {i}\n" for i in range(100)) + "command = 5\n")
    loaded = load_project_file(str(tmp_path))
    assert loaded is not None
    by_key = {m.key: m for m in loaded.parsed.messages}
    assert by_key["command"].text.startswith("command: expected")
    assert by_key["command"].line == 101
    assert len(loaded.parsed.messages) == MAX_MESSAGES + 2


def test_wrong_values_and_the_users_keys_count_towards_the_cap() -> None:
    value = {f"k{i}": 1 for i in range(5)}
    value.update({"confirm": "never", "tailLines": "x", "autoDetect": False, "globs": 3})
    parsed = parse_settings(value, origin=PROJECT_FILE, limit=6)
    keys = [m.key for m in parsed.messages]
    assert keys == ["k0", "k1", "k2", "k3", "k4", "confirm", "tailLines"]
    assert parsed.messages[-1].text.startswith("tailLines and 2 more keys after it")


def test_without_a_limit_every_problem_is_listed() -> None:
    parsed = parse_settings({f"k{i}": 1 for i in range(50)}, origin="settings")
    assert len(parsed.messages) == 50
    assert parsed.messages[0].text == "verify.k0: unknown key; ignored"


def test_a_long_key_is_shown_as_it_begins(tmp_path: Path) -> None:
    key = "k" * 500_000
    write(tmp_path, f'command = "x"\n{key} = 1\n')
    start = cpu_clock()
    loaded = load_project_file(str(tmp_path))
    assert time.process_time() - start < 0.25
    assert loaded is not None
    (message,) = loaded.parsed.messages
    assert message.text == "k" * 77 + "...: unknown key; ignored"
    assert message.line == 2


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("".join(f"[t{i}]\n" for i in range(150_000)), "too long to parse on a save"),
        ("a = [" + "1," * 400_000 + "]\n", "too long to parse on a save"),
        ("\n" * 1_000_000, "too long to parse on a save"),
        ("a" + ".a" * MAX_KEY_PARTS + " = 1\n", f"more than {MAX_KEY_PARTS} dotted parts"),
        ("[" + "a." * MAX_KEY_PARTS + "a]\n", f"more than {MAX_KEY_PARTS} dotted parts"),
        ("x = {" + "a." * MAX_KEY_PARTS + "a = 1}\n", f"more than {MAX_KEY_PARTS} dotted parts"),
    ],
)
def test_toml_too_costly_to_parse_is_refused_at_once(text: str, words: str) -> None:
    """tomllib is pure Python: 1 MiB of tables took a second, and a dotted key costs the
    square of its parts (16 kB of `a.a.a...` took 0.6 s and 258 MB, 1 MiB never ended)."""
    start = cpu_clock()
    with pytest.raises(TooCostly, match=words):
        parse_toml(text)
    assert time.process_time() - start < 0.1


def test_a_key_of_as_many_parts_as_allowed_is_parsed() -> None:
    assert parse_toml("a" + ".a" * (MAX_KEY_PARTS - 1) + " = 1\n")["a"]["a"]


def test_a_costly_project_file_is_a_message(tmp_path: Path) -> None:
    write(tmp_path, "a" + ".a" * 300_000 + " = 1\n")
    start = cpu_clock()
    loaded = load_project_file(str(tmp_path))
    assert time.process_time() - start < 0.25
    assert loaded is not None
    (message,) = loaded.parsed.messages
    assert message.text.startswith(f"{PROJECT_FILE} is not read: ")
    assert message.text.endswith("; its settings are ignored")

"""INI files as configparser reads them, in one linear pass: the same sections, values and
errors as configparser on generated files, and a bounded cost on hostile ones."""

from __future__ import annotations

import configparser
import contextlib
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_verify.config.project_file import TooCostly
from lsp_verify.planning.ini import MAX_LINES, IniError, read_ini
from lsp_verify.planning.plan import make_plan
from tests.support.cost import cpu_clock
from tests.support.properties import examples

_PIECES = [
    "[a]", "[b]", "[DEFAULT]", "[]", "[[x]]", "[a] tail", "]", "[", "k", "K", "v", "=", ":",
    " ", "  ", "\t", "#", ";", "\n", "\n", "\n", "\r", "\u00a0", "\u2028", "x = 1", "y: 2",
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@settings(max_examples=examples(2000), deadline=None)
@given(text=texts, strict=st.booleans())
def test_reads_as_configparser_reads(text: str, strict: bool) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=strict)
    try:
        parser.read_string(text)
    except configparser.Error:
        with pytest.raises(IniError):
            read_ini(text, strict)
        return
    ini = read_ini(text, strict)
    assert list(ini.sections) == parser.sections()
    assert ini.defaults == dict(parser.defaults())
    for name in parser.sections():
        assert {k: ini.get(name, k) for k in parser.options(name)} == dict(
            parser.items(name, raw=True)
        )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("x = 1\n", "line 1: text before the first [section] header"),
        ("[a]\nok = 1\nbroken\n", "line 3: cannot parse 'broken'"),
        ("[a]\n= 1\n", "line 2: cannot parse '= 1'"),
        ("[a]\n[a]\n", "line 2: section 'a' already exists"),
        ("[a]\nX = 1\nx = 2\n", "line 3: option 'x' in section 'a' already exists"),
        ("[a]\n" + "y" * 500, "line 2: cannot parse 'yyyy"),
    ],
)
def test_the_first_error_and_its_line(text: str, error: str) -> None:
    with pytest.raises(IniError) as raised:
        read_ini(text)
    assert str(raised.value).startswith(error)
    assert len(str(raised.value)) < 120  # a long line is shown as it begins


def test_not_strict_takes_the_later_one() -> None:
    ini = read_ini("[a]\nx = 1\n[a]\nx = 2\n  more\n", strict=False)
    assert ini.sections == {"a": {"x": "2\nmore"}}


MIB = 1024 * 1024


@pytest.mark.parametrize(
    "text",
    [
        "[s]\n" + "bad line\n" * 19_000,  # configparser: its message rebuilt per line
        "[s]\na" + " " * (MIB - 10) + "b\n",  # configparser: backtracks over the blanks
        "[s]\na" + " " * (MIB - 10) + "=b\n",
        "[s]\nk =\n" + " x\n" * 19_000,
        "".join(f"[s{i}]\n" for i in range(19_000)),  # configparser: 1.7 s for 116 000
        "[s]\n" + "".join(f"k{i} = v\n" for i in range(19_000)),
    ],
    ids=lambda text: repr(text[:12]),
)
def test_a_hostile_file_costs_little(text: str) -> None:
    start = cpu_clock()
    with contextlib.suppress(IniError):
        read_ini(text)
    assert time.process_time() - start < 0.1


def test_past_the_line_limit_the_file_is_not_read() -> None:
    start = cpu_clock()
    with pytest.raises(TooCostly, match=f"more than {MAX_LINES} lines"):
        read_ini("[s]\n" + "\n" * MAX_LINES)
    assert time.process_time() - start < 0.05


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", "pytest.ini"])
def test_a_hostile_manifest_is_a_reason_at_a_bounded_cost(tmp_path: Path, name: str) -> None:
    """configparser rebuilt its message for each bad line: 8.2 s for 50 000 of them."""
    (tmp_path / name).write_text("[x]\nfirst bad line\n" + f"{'bad ' * 12}\n" * 19_000)
    start = cpu_clock()
    plan = make_plan(str(tmp_path))
    assert time.process_time() - start < 0.2
    reasons = " ".join(rule.why for rule in plan.rules)
    assert f"{name} is not valid INI: line 2: cannot parse 'first bad line'" in reasons

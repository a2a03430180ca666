"""The ignore rules: built-in names, and git's answer from nested `.gitignore` files."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lsp_verify.workspace import ignore
from lsp_verify.workspace.ignore import IgnoreRules
from lsp_verify.workspace.ignore import wildmatch as gitwildmatch
from tests.support.cost import cpu_clock


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".gitignore").write_text("# comment\n*.log\n/out/\nbuild-*/\n!important.log\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / ".gitignore").write_text("gen_*.py\n!keep.log\n/local.txt\n")
    (tmp_path / "pkg" / "deep").mkdir()
    (tmp_path / "pkg" / "deep" / ".gitignore").write_text("!gen_special.py\n*.txt\n")
    return tmp_path


@pytest.mark.parametrize(
    ("rel", "ignored"),
    [
        ("app.py", False),
        ("run.log", True),
        ("important.log", False),  # negated at the root
        ("pkg/run.log", True),  # the root's pattern applies below
        ("pkg/keep.log", False),  # re-included by the nested file
        ("keep.log", True),  # ...only below it
        ("pkg/gen_api.py", True),
        ("gen_api.py", False),  # the nested file's patterns are relative to it
        ("pkg/deep/gen_special.py", False),  # deeper files override
        ("pkg/deep/gen_other.py", True),
        ("pkg/local.txt", True),  # anchored to pkg/
        ("pkg/sub/local.txt", False),
        ("pkg/deep/notes.txt", True),
        ("out/x.py", True),  # a directory pattern covers what is inside
        ("pkg/out/x.py", False),  # anchored at the root only
        ("build-2/a/b.py", True),
        ("node_modules/x/index.js", True),  # built in, no .gitignore needed
        ("src/__pycache__/m.pyc", True),
        (".coverage.host.123", True),
        ("pkg.egg-info/PKG-INFO", True),
    ],
)
def test_git_s_answer_at_every_level(root: Path, rel: str, ignored: bool) -> None:
    assert IgnoreRules(str(root)).ignored(rel) is ignored


def test_a_file_under_an_ignored_directory_cannot_be_re_included(root: Path) -> None:
    (root / ".gitignore").write_text("logs/\n!logs/keep.txt\n")
    assert IgnoreRules(str(root)).ignored("logs/keep.txt")


def test_git_info_exclude_counts(root: Path) -> None:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("scratch/\n")
    assert IgnoreRules(str(root)).ignored("scratch/a.py")
    assert not IgnoreRules(str(root)).ignored("app.py")


def test_an_edited_gitignore_is_read_again(root: Path) -> None:
    rules = IgnoreRules(str(root))
    assert not rules.ignored("notes.md")
    (root / ".gitignore").write_text("*.md\n")
    os.utime(root / ".gitignore", ns=(1, 1))  # a different stat, however fast the edit
    assert rules.ignored("notes.md")
    assert not rules.ignored("run.log")


@pytest.mark.parametrize(
    "content", [b"\xff\xfe\x00bad\n*.log\n", b"[\n", b"\\\n", b"a" * (2 * 1024 * 1024)]
)
def test_a_strange_gitignore_never_raises(root: Path, content: bytes) -> None:
    (root / ".gitignore").write_bytes(content)
    rules = IgnoreRules(str(root))
    assert rules.ignored("app.py") in (True, False)
    assert not rules.ignored("src/app.py")


def test_an_unreadable_gitignore_counts_as_empty(root: Path) -> None:
    (root / ".gitignore").unlink()
    (root / ".gitignore").mkdir()  # a directory where the file should be
    assert not IgnoreRules(str(root)).ignored("run.log")


def test_an_edited_nested_gitignore_is_read_again(root: Path) -> None:
    rules = IgnoreRules(str(root))
    assert not rules.ignored("pkg/deep/notes.md")
    assert rules.ignored("pkg/deep/notes.txt")
    (root / "pkg" / ".gitignore").write_text("deep/\n")
    os.utime(root / "pkg" / ".gitignore", ns=(1, 1))
    assert rules.ignored("pkg/deep/notes.md")  # the directory itself is ignored now
    (root / "pkg" / ".gitignore").unlink()
    assert not rules.ignored("pkg/deep/notes.md")
    assert rules.chain("pkg/deep") is not None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_gitignore_is_not_waited_for(root: Path) -> None:
    (root / "pkg" / "deep" / ".gitignore").unlink()
    os.mkfifo(root / "pkg" / "deep" / ".gitignore")
    rules = IgnoreRules(str(root))
    assert rules.ignored("pkg/deep/x.log")  # the levels above still count
    assert not rules.ignored("pkg/deep/notes.txt")  # the FIFO counts as empty


# --- git's reading, where pathspec (what this module used before) read otherwise --------

# (.gitignore, path, ignored): each checked against `git check-ignore --no-index`.
GIT_CASES = [
    ("b/**/\n", "b/b", False),  # a trailing `/**/` matches directories inside, not files
    ("b/**/\n", "b/c/x", True),
    ("?[!a][!a]*\n", "b/bb", False),  # a class never matches `/`
    ("****/*\n", "bb", True),  # a run of stars as a whole segment is `**`
    ("b?\n!a*\n", "ab/bb/a/ab", True),  # a negation above cannot re-include below `bb/`
    ("foo**/bar\n", "foobar", True),  # git wildmatches the part after the literal prefix
    ("foo**/bar\n", "foox/y/bar", True),
    ("a/b**\n", "a/bx/z", True),
    ("**/foo\n", "x/y/foo", True),
    ("**/foo\n", "foo", True),
    ("a/**/b\n", "a/b", True),
    ("a/**/b\n", "a/x/y/b", True),
    ("a/**\n", "a", False),
    ("a/**\n", "a/x/y", True),
    ("/a\n", "x/a", False),  # a leading slash anchors
    ("x/\n", "x", False),  # a trailing slash: directories only
    ("x/\n", "x/y", True),
    ("*.log\n!keep.log\n", "keep.log", False),
    ("*.log\n!keep.log\n*.log\n", "keep.log", True),  # the last match decides
    ("trail \n", "trail", True),  # trailing spaces go
    ("esc\\ \n", "esc ", True),  # unless escaped
    ("\\#hash\n", "#hash", True),
    ("\\!bang\n", "!bang", True),
    ("#comment\n", "#comment", False),
    ("\ufeffbom\n", "bom", True),  # a byte-order mark at the start goes
    ("crlf\r\n", "crlf", True),
    ("[a-c]x\n", "bx", True),
    ("[[:digit:]]x\n", "5x", True),
    ("[[:nope:]]x\n", "5x", False),  # an unknown class name matches nothing
    ("[ab\n", "[ab", False),  # a class never closed matches nothing
    ("back\\\n", "back", False),  # a trailing backslash matches nothing
    ("a[]]b\n", "a]b", True),
]


@pytest.mark.parametrize(("content", "rel", "ignored"), GIT_CASES)
def test_git_edge_cases(tmp_path: Path, content: str, rel: str, ignored: bool) -> None:
    (tmp_path / ".gitignore").write_bytes(content.encode())
    assert IgnoreRules(str(tmp_path)).ignored(rel) is ignored


# --- what a hostile .gitignore costs (SPEC section 7) ------------------------------------


def _cpu(call: Callable[[], object]) -> float:
    start = cpu_clock()
    call()
    return time.process_time() - start


@pytest.mark.parametrize("length", [36, 200])
def test_a_backtracking_pattern_costs_linear_time(tmp_path: Path, length: int) -> None:
    """pathspec's regular expressions took 1.5 s for 36 a's here, and never ended for 200."""
    (tmp_path / ".gitignore").write_text("a*a*a*a*a*a*a*a*a*a*b\n")
    rules = IgnoreRules(str(tmp_path))
    assert _cpu(lambda: rules.ignored("a" * length)) < 0.25
    assert not rules.ignored("a" * length)
    assert rules.ignored("a" * length + "b")


def _many_patterns(count: int) -> str:
    shapes = ("*{0}*.tmp", "/build{0}/**", "**/gen{0}/*.py", "out{0}/", "x{0}?[ab]", "!k{0}")
    return "".join(shapes[i % len(shapes)].format(i) + "\n" for i in range(count))


@pytest.mark.parametrize("depth", [200, 1000])
def test_many_patterns_and_a_deep_path(tmp_path: Path, depth: int) -> None:
    """20 000 patterns: pathspec's cost was patterns x levels for every path (depth 200:
    7.4 s); here each file is compiled once and each directory matched once."""
    (tmp_path / ".gitignore").write_text(_many_patterns(20_000) + "*.log\n")
    rules = IgnoreRules(str(tmp_path))
    deep = "/".join(f"d{i}" for i in range(depth))
    assert _cpu(lambda: rules.ignored(f"{deep}/a.py")) < 0.5
    assert _cpu(lambda: rules.ignored(f"{deep}/b.log")) < 0.05  # the directories are known
    assert not rules.ignored(f"{deep}/a.py")
    assert rules.ignored(f"{deep}/b.log")
    assert rules.ignored(f"{deep}/gen2/c.py")  # `**/gen2/*.py`, at any depth


def test_a_symlink_loop_compiles_the_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`loop -> .` puts the same .gitignore at every level: pathspec compiled it again at
    each (4 000 patterns at depth 40: 7 s)."""
    (tmp_path / ".gitignore").write_text(_many_patterns(4_000) + "*.log\n")
    (tmp_path / "loop").symlink_to(".")
    compiled: list[bytes] = []
    real = ignore.PatternFile

    def counting(data: bytes) -> ignore.PatternFile:
        compiled.append(data)
        return real(data)

    monkeypatch.setattr(ignore, "PatternFile", counting)
    rules = IgnoreRules(str(tmp_path))
    deep = "/".join(["loop"] * 40)
    assert _cpu(lambda: rules.ignored(f"{deep}/a.py")) < 0.25
    assert rules.ignored(f"{deep}/a.log")
    assert not rules.ignored(f"{deep}/a.py")
    assert len(compiled) == 1


def test_a_file_too_complex_counts_as_empty_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lines = "".join(f"\\e{i}*\n" for i in range(gitwildmatch.MAX_SLOW + 1))  # escapes
    (tmp_path / ".gitignore").write_text(lines + "*.log\n")
    rules = IgnoreRules(str(tmp_path))
    assert _cpu(lambda: rules.ignored("a.log")) < 0.25
    assert not rules.ignored("a.log")
    assert "it counts as empty" in caplog.text


def test_the_states_kept_with_directories_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state holds a bit per pattern token: 1 MiB of `**/` patterns kept with thousands of
    directories would be hundreds of MB."""
    monkeypatch.setattr(ignore, "_MAX_STATE_BYTES", 50_000)
    (tmp_path / ".gitignore").write_text("".join(f"**/x/**/y{i}/z\n" for i in range(2000)))
    rules = IgnoreRules(str(tmp_path))
    for k in range(300):
        assert rules.ignored(f"x/d{k}/y7/z")
        assert not rules.ignored(f"x/d{k}/y7/w")
    assert len(rules._chains) < 100


def test_big_ignore_files_on_one_path_are_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each level's own big file compiled on the way down: 0.1 s a MiB, for every level."""
    deep = tmp_path
    for level in range(4):
        deep = deep / f"d{level}"
        deep.mkdir()
        patterns = "".join(f"p{level}x{i}\n" for i in range(90_000))  # 800 kB each
        (deep / ".gitignore").write_text(patterns + f"*.l{level}\n")
    rules = IgnoreRules(str(tmp_path))
    rel = "d0/d1/d2/d3"
    assert _cpu(lambda: rules.ignored(f"{rel}/a.py")) < 0.5
    assert rules.ignored(f"{rel}/a.l0")
    assert rules.ignored(f"{rel}/a.l1")
    assert not rules.ignored(f"{rel}/a.l2")  # past 2 MiB along the path: not read
    assert "it counts as empty" in caplog.text


def test_the_files_kept_compiled_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ignore, "_MAX_COMPILED_BYTES", 2_000)
    for k in range(20):
        (tmp_path / f"d{k}").mkdir()
        (tmp_path / f"d{k}" / ".gitignore").write_text(f"x{k}*\n" * 100 + f"*.k{k}\n")
    rules = IgnoreRules(str(tmp_path))
    for k in range(20):
        assert rules.ignored(f"d{k}/a.k{k}")
    assert len(rules._compiled) < 20

"""The ignore rules: built-in names, and git's answer from nested `.gitignore` files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_verify.ignore import IgnoreRules


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

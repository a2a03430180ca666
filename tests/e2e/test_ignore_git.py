"""The ignore rules agree with git itself (`git check-ignore`) on generated repositories."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_verify.workspace.ignore import IgnoreRules

# --- generated .gitignore files and paths ---------------------------------------------------


# Anything git reads: negation, escapes, classes (negated, ranges, POSIX), spaces, comments.
_GIT_ATOMS = ["a", "b", "*", "?", "**", "/", "**/", "/**", "[ab]", "[!a]", "[a-b]"]
_GIT_ATOMS += ["[[:alpha:]]", "\\*", "\\ ", " ", "#", "!", "\\", "[", "]", "-"]
git_patterns = st.lists(st.sampled_from(_GIT_ATOMS), min_size=1, max_size=5).map("".join)
git_paths = st.lists(
    st.text(alphabet="ab* #!-[]", min_size=1, max_size=2).filter(lambda n: n.strip(". ")),
    min_size=1,
    max_size=4,
).map("/".join)


def _layout(folder: Path, root: list[str], nested: list[str], rels: list[str]) -> list[str]:
    """Write the ignore files and the files; the paths kept are those that are files (one
    path cannot be both a file and the directory of another)."""
    (folder / ".gitignore").write_text("\n".join(root) + "\n")
    kept: list[str] = []
    for rel in rels:
        if any(rel == k or rel.startswith(k + "/") or k.startswith(rel + "/") for k in kept):
            continue
        kept.append(rel)
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).touch()
    if nested and (folder / "a").is_dir():
        (folder / "a" / ".gitignore").write_text("\n".join(nested) + "\n")
    return kept


# --- the oracle: what ignore.py answered with pathspec ----------------------------------


# --- git itself ------------------------------------------------------------------------


def _git_ignored(folder: Path, rels: list[str]) -> set[str]:
    out = subprocess.run(
        ["git", "-C", str(folder), "check-ignore", "--no-index", "--stdin", "-z"],
        input="\0".join(rels) + "\0",
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(folder)},
    ).stdout
    return set(out.split("\0")) - {""}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root=st.lists(git_patterns, min_size=1, max_size=4),
    nested=st.lists(git_patterns, max_size=3),
    rels=st.lists(git_paths, min_size=1, max_size=6),
)
def test_agrees_with_git_check_ignore(root: list[str], nested: list[str], rels: list[str]) -> None:
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "repo"
        folder.mkdir()
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
        kept = _layout(folder, root, nested, rels)
        ignored = _git_ignored(folder, kept)
        rules = IgnoreRules(str(folder))
        for rel in kept:
            assert rules.ignored(rel) is (rel in ignored), (root, nested, rel)

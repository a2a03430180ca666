from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_verify.globs import glob_matches, matches_any

CASES = [
    # (pattern, path, expected)
    ("*.ts", "src/foo.ts", True),
    ("*.ts", "foo.ts", True),
    ("*.ts", "src/foo.tsx", False),
    ("*.tsx", "src/foo.tsx", True),
    ("*", "anything/at/all.py", True),
    ("*_test.go", "pkg/x_test.go", True),
    ("*_test.go", "pkg/x.go", False),
    ("src/foo.ts", "src/foo.ts", True),
    ("src/foo.ts", "app/src/foo.ts", True),
    ("src/foo.ts", "app/xsrc/foo.ts", False),
    ("foo.ts", "src/foo.ts", True),
    ("oo.ts", "src/foo.ts", False),
    ("src", "src/deep/file.py", True),
    ("src", "app/src/file.py", True),
    ("src", "srcs/file.py", False),
    ("src", "mysrc/file.py", False),
    ("tests", "tests", True),
    # No mid-pattern star and no **: they are literal characters here.
    ("src/*.py", "src/a.py", False),
    ("**/*.py", "src/a.py", False),
    ("a*b", "a*b", True),
    ("", "src/a.py", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_glob_table(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def test_empty_globs_match_everything() -> None:
    assert matches_any([], "any/file.txt")
    assert matches_any(["*.py", "docs"], "docs/index.md")
    assert not matches_any(["*.py", "docs"], "src/index.md")


segment = st.text(alphabet="abcxyz._-", min_size=1, max_size=6)
paths = st.lists(segment, min_size=1, max_size=5).map("/".join)


@given(paths)
def test_whole_path_and_each_segment_match(path: str) -> None:
    assert glob_matches(path, path)
    for part in path.split("/"):
        assert glob_matches(part, path)


@given(paths, st.integers(min_value=0, max_value=4))
def test_every_trailing_suffix_on_a_boundary_matches(path: str, cut: int) -> None:
    parts = path.split("/")
    suffix = "/".join(parts[min(cut, len(parts) - 1) :])
    assert glob_matches(suffix, path)


@given(paths, st.text(alphabet="abc.", max_size=4))
def test_star_pattern_is_a_plain_suffix_test(path: str, tail: str) -> None:
    assert glob_matches("*" + tail, path) is path.endswith(tail)


@given(paths)
def test_a_non_star_pattern_never_matches_inside_a_segment(path: str) -> None:
    # Gluing characters onto the last segment makes a pattern that is no whole segment.
    last = path.split("/")[-1]
    pattern = "q" + last
    if pattern not in path.split("/"):
        assert not glob_matches(pattern, path)

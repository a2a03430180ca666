"""git's wildmatch without backtracking: git's own test table, the two ways of reading a
pattern agreeing, and what one pattern costs however hostile."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_verify.workspace.ignore import wildmatch as gitwildmatch
from lsp_verify.workspace.ignore.wildmatch import wildmatch
from tests.support.cost import cpu_clock
from tests.support.properties import examples

# git's t/t3070-wildmatch.sh, the test-tool rows: (text, pattern, with WM_PATHNAME, without).
GIT_TABLE = [
    ("foo", "foo", True, True),
    ("foo", "bar", False, False),
    ("", "", True, True),
    ("foo", "???", True, True),
    ("foo", "??", False, False),
    ("foo", "*", True, True),
    ("foo", "f*", True, True),
    ("foo", "*f", False, False),
    ("foo", "*foo*", True, True),
    ("foobar", "*ob*a*r*", True, True),
    ("aaaaaaabababab", "*ab", True, True),
    ("foo*", "foo\\*", True, True),
    ("foobar", "foo\\*bar", False, False),
    ("f\\oo", "f\\\\oo", True, True),
    ("ball", "*[al]?", True, True),
    ("ten", "[ten]", False, False),
    ("ten", "**[!te]", True, True),
    ("ten", "**[!ten]", False, False),
    ("ten", "t[a-g]n", True, True),
    ("ten", "t[!a-g]n", False, False),
    ("ton", "t[!a-g]n", True, True),
    ("ton", "t[^a-g]n", True, True),
    ("a]b", "a[]]b", True, True),
    ("a-b", "a[]-]b", True, True),
    ("a]b", "a[]-]b", True, True),
    ("aab", "a[]-]b", False, False),
    ("aab", "a[]a-]b", True, True),
    ("]", "]", True, True),
    ("foo/baz/bar", "foo*bar", False, True),
    ("foo/baz/bar", "foo**bar", False, True),
    ("foobazbar", "foo**bar", True, True),
    ("foo/baz/bar", "foo/**/bar", True, True),
    ("foo/baz/bar", "foo/**/**/bar", True, False),
    ("foo/b/a/z/bar", "foo/**/bar", True, True),
    ("foo/b/a/z/bar", "foo/**/**/bar", True, True),
    ("foo/bar", "foo/**/bar", True, False),
    ("foo/bar", "foo/**/**/bar", True, False),
    ("foo/bar", "foo?bar", False, True),
    ("foo/bar", "foo[/]bar", False, True),
    ("foo/bar", "foo[^a-z]bar", False, True),
    ("foo/bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", False, True),
    ("foo-bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", True, True),
    ("foo", "**/foo", True, False),
    ("XXX/foo", "**/foo", True, True),
    ("bar/baz/foo", "**/foo", True, True),
    ("bar/baz/foo", "*/foo", False, True),
    ("foo/bar/baz", "**/bar*", False, True),
    ("deep/foo/bar/baz", "**/bar/*", True, True),
    ("deep/foo/bar/baz/", "**/bar/*", False, True),
    ("deep/foo/bar/baz/", "**/bar/**", True, True),
    ("deep/foo/bar", "**/bar/*", False, False),
    ("deep/foo/bar/", "**/bar/**", True, True),
    ("foo/bar/baz", "**/bar**", False, True),
    ("foo/bar/baz/x", "*/bar/**", True, True),
    ("deep/foo/bar/baz/x", "*/bar/**", False, True),
    ("deep/foo/bar/baz/x", "**/bar/*/*", True, True),
    ("acrt", "a[c-c]st", False, False),
    ("acrt", "a[c-c]rt", True, True),
    ("]", "[!]-]", False, False),
    ("a", "[!]-]", True, True),
    ("", "\\", False, False),
    ("\\", "\\", False, False),
    ("XXX/\\", "*/\\", False, False),
    ("XXX/\\", "*/\\\\", True, True),
    ("foo", "foo", True, True),
    ("@foo", "@foo", True, True),
    ("foo", "@foo", False, False),
    ("[ab]", "\\[ab]", True, True),
    ("[ab]", "[[]ab]", True, True),
    ("[ab]", "[[:]ab]", True, True),
    ("[ab]", "[[::]ab]", False, False),
    ("[ab]", "[[:digit]ab]", True, True),
    ("[ab]", "[\\[:]ab]", True, True),
    ("?a?b", "\\??\\?b", True, True),
    ("abc", "\\a\\b\\c", True, True),
    ("foo", "", False, False),
    ("foo/bar/baz/to", "**/t[o]", True, True),
    ("a1B", "[[:alpha:]][[:digit:]][[:upper:]]", True, True),
    ("a", "[[:digit:][:upper:][:space:]]", False, False),
    ("A", "[[:digit:][:upper:][:space:]]", True, True),
    ("1", "[[:digit:][:upper:][:space:]]", True, True),
    ("1", "[[:digit:][:upper:][:spaci:]]", False, False),
    (" ", "[[:digit:][:upper:][:space:]]", True, True),
    (".", "[[:digit:][:upper:][:space:]]", False, False),
    (".", "[[:digit:][:punct:][:space:]]", True, True),
    ("5", "[[:xdigit:]]", True, True),
    ("f", "[[:xdigit:]]", True, True),
    ("D", "[[:xdigit:]]", True, True),
    (
        "_",
        "[[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:graph:][:lower:][:print:][:punct:][:space:][:upper:][:xdigit:]]",
        True,
        True,
    ),
    (
        ".",
        "[^[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:lower:][:space:][:upper:][:xdigit:]]",
        True,
        True,
    ),
    ("5", "[a-c[:digit:]x-z]", True, True),
    ("b", "[a-c[:digit:]x-z]", True, True),
    ("y", "[a-c[:digit:]x-z]", True, True),
    ("q", "[a-c[:digit:]x-z]", False, False),
    ("]", "[\\\\-^]", True, True),
    ("[", "[\\\\-^]", False, False),
    ("-", "[\\-_]", True, True),
    ("]", "[\\]]", True, True),
    ("\\]", "[\\]]", False, False),
    ("\\", "[\\]]", False, False),
    ("ab", "a[]b", False, False),
    ("a[]b", "a[]b", False, False),
    ("ab[", "ab[", False, False),
    ("ab", "[!", False, False),
    ("ab", "[-", False, False),
    ("-", "[-]", True, True),
    ("-", "[a-", False, False),
    ("-", "[!a-", False, False),
    ("-", "[--A]", True, True),
    ("5", "[--A]", True, True),
    (" ", "[ --]", True, True),
    ("$", "[ --]", True, True),
    ("-", "[ --]", True, True),
    ("0", "[ --]", False, False),
    ("-", "[---]", True, True),
    ("-", "[------]", True, True),
    ("j", "[a-e-n]", False, False),
    ("-", "[a-e-n]", True, True),
    ("a", "[!------]", True, True),
    ("[", "[]-a]", False, False),
    ("^", "[]-a]", True, True),
    ("^", "[!]-a]", False, False),
    ("[", "[!]-a]", True, True),
    ("^", "[a^bc]", True, True),
    ("-b]", "[a-]b]", True, True),
    ("\\", "[\\]", False, False),
    ("\\", "[\\\\]", True, True),
    ("\\", "[!\\\\]", False, False),
    ("G", "[A-\\\\]", True, True),
    ("aaabbb", "b*a", False, False),
    ("aabcaa", "*ba*", False, False),
    (",", "[,]", True, True),
    (",", "[\\\\,]", True, True),
    ("\\", "[\\\\,]", True, True),
    ("-", "[,-.]", True, True),
    ("+", "[,-.]", False, False),
    ("-.]", "[,-.]", False, False),
    ("2", "[\\1-\\3]", True, True),
    ("3", "[\\1-\\3]", True, True),
    ("4", "[\\1-\\3]", False, False),
    ("\\", "[[-\\]]", True, True),
    ("[", "[[-\\]]", True, True),
    ("]", "[[-\\]]", True, True),
    ("-", "[[-\\]]", False, False),
    (
        "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1",
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        True,
        True,
    ),
    (
        "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1",
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        False,
        False,
    ),
    (
        "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1",
        "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
        False,
        False,
    ),
    (
        "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1",
        "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
        True,
        True,
    ),
    (
        "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1",
        "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
        False,
        False,
    ),
    ("abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", "**/*a*b*g*n*t", True, True),
    ("abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", "**/*a*b*g*n*t", False, False),
    ("foo", "*/*/*", False, False),
    ("foo/bar", "*/*/*", False, False),
    ("foo/bba/arr", "*/*/*", True, True),
    ("foo/bb/aa/rr", "*/*/*", False, True),
    ("foo/bb/aa/rr", "**/**/**", True, True),
    ("abcXdefXghi", "*X*i", True, True),
    ("ab/cXd/efXg/hi", "*X*i", False, True),
    ("ab/cXd/efXg/hi", "*/*X*/*/*i", True, True),
    ("ab/cXd/efXg/hi", "**/*X*/**/*i", True, True),
    ("foo", "fo", False, False),
    ("foo/bar", "foo/bar", True, True),
    ("foo/bar", "foo/*", True, True),
    ("foo/bba/arr", "foo/*", False, True),
    ("foo/bba/arr", "foo/**", True, True),
    ("foo/bba/arr", "foo*", False, True),
    ("foo/bba/arr", "foo**", False, True),
    ("foo/bba/arr", "foo/*arr", False, True),
    ("foo/bba/arr", "foo/**arr", False, True),
    ("foo/bba/arr", "foo/*z", False, False),
    ("foo/bba/arr", "foo/**z", False, False),
    ("foo/bar", "foo?bar", False, True),
    ("foo/bar", "foo[/]bar", False, True),
    ("foo/bar", "foo[^a-z]bar", False, True),
    ("ab/cXd/efXg/hi", "*Xg*i", False, True),
    ("a", "[A-Z]", False, False),
    ("A", "[A-Z]", True, True),
    ("A", "[a-z]", False, False),
    ("a", "[a-z]", True, True),
    ("a", "[[:upper:]]", False, False),
    ("A", "[[:upper:]]", True, True),
    ("A", "[[:lower:]]", False, False),
    ("a", "[[:lower:]]", True, True),
    ("A", "[B-Za]", False, False),
    ("a", "[B-Za]", True, True),
    ("A", "[B-a]", False, False),
    ("a", "[B-a]", True, True),
    ("z", "[Z-y]", False, False),
    ("Z", "[Z-y]", True, True),
]


@pytest.mark.parametrize(("text", "pattern", "pathname", "plain"), GIT_TABLE)
def test_gits_own_wildmatch_table(text: str, pattern: str, pathname: bool, plain: bool) -> None:
    assert wildmatch(pattern.encode(), text.encode(), pathname=True) is pathname
    assert wildmatch(pattern.encode(), text.encode(), pathname=False) is plain


@pytest.fixture
def one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pattern read token by token, as patterns with escapes are."""
    monkeypatch.setattr(gitwildmatch, "_FAST", re.compile(rb"(?!)"))


@pytest.mark.parametrize(("text", "pattern", "pathname", "plain"), GIT_TABLE)
def test_gits_table_read_one_by_one(
    one_by_one: None, text: str, pattern: str, pathname: bool, plain: bool
) -> None:
    assert wildmatch(pattern.encode(), text.encode(), pathname=True) is pathname
    assert wildmatch(pattern.encode(), text.encode(), pathname=False) is plain


_PIECES = [
    "a",
    "b",
    "/",
    "*",
    "**",
    "?",
    "[ab]",
    "[!a]",
    "[a-b]",
    "[b-a]",
    "[!]",
    "[*?]",
    "-",
    "!",
    "^",
]
patterns = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7).map("".join)
texts = st.text(alphabet="ab/-*?!^[]", max_size=8)


@settings(max_examples=examples(400), deadline=None)
@given(pattern=patterns, text=texts, pathname=st.booleans())
def test_the_fast_reading_agrees_with_the_one_by_one(
    pattern: str, text: str, pathname: bool
) -> None:
    fast = wildmatch(pattern.encode(), text.encode(), pathname)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gitwildmatch, "_FAST", re.compile(rb"(?!)"))
        assert wildmatch(pattern.encode(), text.encode(), pathname) is fast


def _cpu(call: object) -> float:
    start = cpu_clock()
    call()  # type: ignore[operator]
    return time.process_time() - start


@pytest.mark.parametrize("length", [36, 200, 100_000])
def test_stars_cost_linear_time(length: int) -> None:
    """`a*a*a*...b` against a name of a's: exponential for a backtracking matcher (36 a's
    took 1.5 s, 200 never ended), linear here."""
    pattern = b"a*" * 10 + b"b"
    assert _cpu(lambda: wildmatch(pattern, b"a" * length)) < 0.25
    assert wildmatch(pattern, b"a" * length + b"b")
    assert not wildmatch(pattern, b"a" * length)


def test_many_double_stars_cost_linear_time() -> None:
    """`**/` chains make git's own wildmatch retry every split of the path."""
    pattern = b"**/a/" * 30 + b"b"
    text = b"/".join([b"a"] * 2000)
    assert _cpu(lambda: wildmatch(pattern, text)) < 0.25
    assert not wildmatch(pattern, text)
    assert wildmatch(pattern, text + b"/b")

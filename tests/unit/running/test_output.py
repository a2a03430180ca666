"""Output lines: the LineCleaner's rules and the Tail's bounds, without a process."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_verify.running import output
from lsp_verify.running.output import LINE_CAP, LineCleaner, Tail
from tests.support.properties import examples

# ------------------------------------------------------------------------------- tail


def tail_of(batches: list[list[str]], max_lines: int, max_chars: int) -> tuple[str, ...]:
    tail = Tail(max_lines, max_chars)
    for batch in batches:
        tail.extend(batch)
    return tail.lines()


NOTE_100 = Tail(1, 100).note
ROOM_100 = 100 - len(NOTE_100) - 1  # characters left for the lines of a 100-character tail


@pytest.mark.parametrize(
    ("batches", "max_lines", "expected"),
    [
        ([["a", "b", "c"]], 2, ("b", "c")),
        ([["a"], ["b"], ["c"]], 5, ("a", "b", "c")),
        ([["x" * 30, "y" * 40, "z"]], 5, (NOTE_100, "y" * (ROOM_100 - 2 - 1), "z")),
        ([["x" * 500]], 5, (NOTE_100, "x" * (ROOM_100 - 1))),
        ([["x" * 500], ["a", "b"]], 5, (NOTE_100, "x" * (ROOM_100 - 5), "a", "b")),
        # A line cut by the character bound that the line bound drops anyway: no note.
        ([["x" * 500], ["a"], ["b"]], 2, ("a", "b")),
        # The room filled exactly: whole lines, and the note for the line before them.
        ([["x", "y" * (ROOM_100 - 1)]], 5, (NOTE_100, "y" * (ROOM_100 - 1))),
        ([["", "", ""]], 2, ("", "")),
    ],
    ids=[
        "lines",
        "batches",
        "cut-line-keeps-its-end",
        "one-huge-line",
        "huge-then-short",
        "line-bound-first",
        "exact-fit",
        "empty-lines",
    ],
)
def test_tail_bounds(batches: list[list[str]], max_lines: int, expected: tuple[str, ...]) -> None:
    assert tail_of(batches, max_lines, 100) == expected


@settings(max_examples=examples(300), deadline=None)
@given(
    batches=st.lists(
        st.lists(st.text(alphabet="ab\U0001f600", max_size=30), max_size=6), max_size=6
    ),
    max_lines=st.integers(1, 8),
    extra=st.integers(2, 60),
)
def test_tail_is_the_newest_text_within_both_bounds(
    batches: list[list[str]], max_lines: int, extra: int
) -> None:
    max_chars = len(NOTE_100) + extra
    note = Tail(1, max_chars).note
    tail = tail_of(batches, max_lines, max_chars)
    assert len("\n".join(tail)) < max_chars
    everything = [line for batch in batches for line in batch][-max_lines:]
    if tail and tail[0] == note:
        # The newest text, as much as fits: the kept lines, the first one perhaps cut.
        lines = tail[1:]
        joined = "\n".join(everything)
        assert joined.endswith("\n".join(lines))
        room = max_chars - len(note) - 1
        assert len("\n".join(lines)) + 1 in (room, room - 1) or not lines
    else:
        assert tail == tuple(everything)


# ------------------------------------------------------------------------ LineCleaner


def oracle(data: bytes, cap: int) -> list[str]:
    """The line rules applied to the whole output at once."""
    text = data.decode("utf-8", "replace")
    segments = text.split("\n")
    if segments[-1] == "":
        segments.pop()
    lines = []
    for segment in segments:
        line = segment.rstrip("\r")
        line = line[line.rfind("\r") + 1 :]
        if len(line) > cap:
            line = line[:cap] + f" [line truncated: {len(line) - cap} more characters dropped]"
        lines.append(output._ANSI.sub("", line))
    return lines


def cleaned(chunks: list[bytes], cap: int = LINE_CAP) -> list[str]:
    cleaner = LineCleaner(cap)
    out: list[str] = []
    for chunk in chunks:
        out.extend(cleaner.feed(chunk))
    return out + cleaner.finish()


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"10%\r20", b"%\r30%\n"], ["30%"]),
        ([b"a\r", b"\nb\r", b"\n"], ["a", "b"]),
        ([b"a\r", b"b\n"], ["b"]),
        ([b"a\r", b"\r", b"\n"], ["a"]),
        ([b"\xe2\x82", b"\xac\n"], ["\u20ac"]),
        ([b"\x1b[3", b"1mred\x1b", b"[0m\n"], ["red"]),
        ([b"\n\n"], ["", ""]),
        ([b"last"], ["last"]),
        ([b"\r"], [""]),
        ([], []),
    ],
)
def test_line_cleaner_chunk_boundaries(chunks: list[bytes], expected: list[str]) -> None:
    assert cleaned(chunks) == expected


def test_line_cleaner_caps_a_line_fed_in_pieces() -> None:
    assert cleaned([b"abc", b"defg", b"hij\n", b"k\n"], cap=5) == [
        "abcde [line truncated: 5 more characters dropped]",
        "k",
    ]
    # A carriage return starts the line over, truncation included.
    assert cleaned([b"abcdefgh", b"ij\rxy\n"], cap=5) == ["xy"]


_pieces = st.sampled_from(
    [
        *(b"a", b"bc", b"xxxxxxx", b" ", b"\n", b"\r", b"\r\n"),
        *(b"\x1b[31m", b"\x1b]0;t\x07", b"\x1b"),  # escapes, and a lone ESC
        *(b"\xc3\xa9", b"\xe2\x82\xac", b"\xff", b"\xc3"),  # multibyte, invalid, cut
    ]
)


@settings(max_examples=examples(300), deadline=None)
@given(
    parts=st.lists(_pieces, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
    cap=st.integers(min_value=1, max_value=12),
)
def test_line_cleaner_does_not_depend_on_chunking(
    parts: list[bytes], cuts: list[int], cap: int
) -> None:
    data = b"".join(parts)
    points = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    assert cleaned(chunks, cap) == oracle(data, cap)

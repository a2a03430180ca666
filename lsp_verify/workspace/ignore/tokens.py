"""git's wildmatch (wildmatch.c) read one pattern at a time, token by token: the reading
gitwildmatch.py falls back on for patterns with escapes or unusual classes, and the
reference its fast reading of a whole file is tested against.

A pattern becomes tokens: a literal byte, `?`, `*` (never `/` with WM_PATHNAME), `**` as a
whole segment (anything, `/` included; `**/` may also match nothing), and classes as
wildmatch reads them (`!` or `^` negates, `]` first is literal, ranges, `[:alpha:]` and the
other POSIX names). A class never closed, an unknown class name or a trailing backslash make
the pattern match nothing: wildmatch aborts on reaching them, and a match must reach them.
"""

from __future__ import annotations

import re

# Token kinds. A token consumes one byte, except the stars, which consume zero or more.
LIT = 1  # one given byte
ANY = 2  # `?`: one byte but `/` (in a path; a last component has no `/`)
STAR = 3  # `*`: bytes but `/`
ANYSTAR = 4  # `**` as a whole segment: any bytes
CLASS = 5  # `[...]`: one byte of a set
SEP = 6  # between two patterns: accepts nothing, so no state crosses it
BYPASS = 7  # the `/` of a `**/`: with the `**` before it, it may also match nothing

SLASH = 0x2F
SPECIALS = re.compile(rb"[*?[\\]")  # git's is_glob_special
_ALL_BYTES = (1 << 256) - 1


def _byte_set(*ranges: tuple[int, int]) -> int:
    bits = 0
    for low, high in ranges:
        bits |= ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)
    return bits


_UPPER = _byte_set((0x41, 0x5A))
_LOWER = _byte_set((0x61, 0x7A))
_DIGIT = _byte_set((0x30, 0x39))
_GRAPH = _byte_set((0x21, 0x7E))
# ASCII only, as git's own ctype (non-ASCII bytes are in no class; its space is " \t\n\r").
_POSIX_CLASSES: dict[bytes, int] = {
    b"alnum": _UPPER | _LOWER | _DIGIT,
    b"alpha": _UPPER | _LOWER,
    b"blank": _byte_set((0x20, 0x20), (0x09, 0x09)),
    b"cntrl": _byte_set((0x00, 0x1F), (0x7F, 0x7F)),
    b"digit": _DIGIT,
    b"graph": _GRAPH,
    b"lower": _LOWER,
    b"print": _byte_set((0x20, 0x7E)),
    b"punct": _GRAPH & ~(_UPPER | _LOWER | _DIGIT),
    b"space": _byte_set((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)),
    b"upper": _UPPER,
    b"xdigit": _DIGIT | _byte_set((0x41, 0x46), (0x61, 0x66)),
}


class _Never(Exception):
    """The pattern can match nothing: wildmatch aborts when it reaches this spot."""


def tokenize(
    pattern: bytes, pathname: bool
) -> tuple[bytearray, bytearray, list[tuple[int, int]]] | None:
    """wildmatch's reading of `pattern` as (kinds, literal bytes, classes as (index, byte
    set)), or None when it matches nothing. `pathname`: WM_PATHNAME (`*`, `?` and classes
    never match `/`; `**` as a whole segment spans them)."""
    kinds = bytearray()
    lits = bytearray()
    classes: list[tuple[int, int]] = []
    i, end = 0, len(pattern)
    try:
        while i < end:
            special = SPECIALS.search(pattern, i)
            stop = special.start() if special is not None else end
            if stop > i:
                kinds += _LIT_RUN[: stop - i] if stop - i <= 64 else bytes((LIT,)) * (stop - i)
                lits += pattern[i:stop]
                i = stop
                continue
            char = pattern[i]
            if char == 0x5C:  # backslash: the next byte as it is
                if i + 1 >= end:
                    raise _Never
                kinds.append(LIT)
                lits.append(pattern[i + 1])
                i += 2
            elif char == 0x3F:  # ?
                kinds.append(ANY)
                lits.append(0)
                i += 1
            elif char == 0x5B:  # [
                accept, i = read_class(pattern, i + 1)
                if pathname:
                    accept &= ~(1 << SLASH)
                classes.append((len(kinds), accept))
                kinds.append(CLASS)
                lits.append(0)
            else:
                i = _read_stars(pattern, i, pathname, kinds, lits)
    except _Never:
        return None
    return kinds, lits, classes


_LIT_RUN = bytes((LIT,)) * 64


def _read_stars(pattern: bytes, i: int, pathname: bool, kinds: bytearray, lits: bytearray) -> int:
    """A run of `*` at `i`, as tokens; the index after what it took."""
    run = i
    while run < len(pattern) and pattern[run] == 0x2A:
        run += 1
    after = pattern[run : run + 2]
    whole_segment = (
        pathname
        and run - i >= 2
        and (i == 0 or pattern[i - 1] == SLASH)
        and (after[:1] in (b"", b"/") or after == b"\\/")
    )
    if not whole_segment:
        kinds.append(STAR)
        lits.append(0)
        return run
    if after[:1] == b"/":
        # `**/`: nothing, or anything ending at a `/`; a second one right after adds nothing.
        if not kinds or kinds[-1] != BYPASS:
            kinds += bytes((ANYSTAR, BYPASS))
            lits += bytes((0, SLASH))
        return run + 1
    kinds.append(ANYSTAR)  # at the end, or before `\/` (where git skips its shortcut)
    lits.append(0)
    return run


def read_class(pattern: bytes, i: int) -> tuple[int, int]:
    """The byte set of the class whose `[` is just before `i`, and the index after its `]`
    (a port of wildmatch's loop, so that every odd spelling reads as git reads it)."""
    end = len(pattern)

    def at(k: int) -> int:
        return pattern[k] if k < end else 0

    char = at(i)
    if char == 0x5E:  # ^ negates as ! does
        char = 0x21
    negated = char == 0x21
    if negated:
        i += 1
        char = at(i)
    members = 0
    previous = 0
    while True:
        if not char:
            raise _Never
        if char == 0x5C:
            i += 1
            char = at(i)
            if not char:
                raise _Never
            members |= 1 << char
        elif char == 0x2D and previous and at(i + 1) and at(i + 1) != 0x5D:
            i += 1
            char = at(i)
            if char == 0x5C:
                i += 1
                char = at(i)
                if not char:
                    raise _Never
            if char >= previous:
                members |= _byte_set((previous, char))
            char = 0
        elif char == 0x5B and at(i + 1) == 0x3A:
            start = i + 2
            close = pattern.find(b"]", start)
            if close < 0:
                raise _Never
            if close - start - 1 < 0 or pattern[close - 1] != 0x3A:
                members |= 1 << 0x5B  # no `:]`: the `[` is a member like any other
            else:
                name = pattern[start : close - 1]
                if name not in _POSIX_CLASSES:
                    raise _Never
                members |= _POSIX_CLASSES[name]
                i = close
                char = 0
        else:
            members |= 1 << char
        previous = char
        i += 1
        char = at(i)
        if char == 0x5D:
            break
    return (_ALL_BYTES & ~members if negated else members), i + 1

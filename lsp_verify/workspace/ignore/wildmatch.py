"""git's wildmatch (wildmatch.c) for the patterns of one ignore file, without backtracking.

A `.gitignore` is a file the repository ships: it may hold a million bytes of patterns such
as `a*a*a*a*a*b`, which a backtracking matcher (a regular expression, or git's own wildmatch
with several `**`) takes exponential time on. Here every pattern of a file is a run of
positions in one bit-parallel NFA (Shift-And: each state one bit of a Python int), so that a
text of n bytes costs n steps of a few operations on ints of one bit per token: linear in
the text, linear in the patterns, whatever they are. The tokens of nearly every pattern are
made for the whole file at once by substitutions and translations done in C; a pattern with
an escape or an unusual class is read one by one (wildmatch_tokens.py), up to MAX_SLOW.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from itertools import accumulate

from lsp_verify.workspace.ignore.tokens import (
    ANY,
    ANYSTAR,
    BYPASS,
    CLASS,
    LIT,
    SEP,
    SLASH,
    STAR,
    read_class,
    tokenize,
)


class TooComplex(Exception):
    """An ignore file this matcher does not take on (git would): it counts as empty."""


def _table(mapping: dict[int, int], default: int | None = None) -> bytes:
    """A translate table: `mapping` for its bytes, the rest to `default` (None: themselves)."""
    return bytes(mapping.get(b, b if default is None else default) for b in range(256))


def _digits(*values: int) -> bytes:
    """A translate table to the digit 1 for `values` (never for 0), to 0 for the rest."""
    return _table({v: 0x31 for v in values if v}, 0x30)


# The fast way in: patterns without escapes, whose classes are plain (nearly all patterns)
# are turned into tokens for all of a file at once, by substitutions and translations done
# in C, with marker bytes that such a pattern cannot hold: \x01 a whole-segment `**`, \x02
# where wildmatch starts (after the literal prefix git compares apart), \x03 a `**/`'s
# slash, \x04 a class. A plain class has no escape, `[:name:]`, leading `]` or `/`, and a `-`
# only between two members: wildmatch's loop and this expression agree on where it ends.
_MEMBER = rb"[^\x00-\x04\n\]\[\\/-]"
_RANGE = _MEMBER + rb"-" + _MEMBER + rb"|" + _MEMBER
_FIRST = rb"[^\x00-\x04\n\]\[\\/!^-]"  # a `!` or `^` first negates
_PLAIN_CLASS_TEXT = (
    rb"\[(?:[!^](?:"
    + _RANGE
    + rb")|"
    + _FIRST
    + rb"-"
    + _MEMBER
    + rb"|"
    + _FIRST
    + rb")(?:"
    + _RANGE
    + rb")*\]"
)
_PLAIN_CLASS = re.compile(_PLAIN_CLASS_TEXT)
_FAST = re.compile(rb"(?:[^\x00-\x04\n[\\]|" + _PLAIN_CLASS_TEXT + rb")*")
_WHOLE_SEGMENT = re.compile(rb"(?:(?<=[/\x02\n])|\A)\*\*+(?=[/\n]|\Z)")
_REPEATED = re.compile(rb"(?:\x01/){2,}")
_STAR_RUN = re.compile(rb"\*\*+")
_FAST_KINDS = _table(
    {0x0A: SEP, 0x2A: STAR, 0x3F: ANY, 0x01: ANYSTAR, 0x03: BYPASS, 0x04: CLASS}, LIT
)
_FAST_LITS = _table({0x0A: 0, 0x2A: 0, 0x3F: 0, 0x01: 0, 0x03: SLASH, 0x04: 0})
_STARS = _digits(STAR, ANYSTAR)
MAX_SLOW = 10_000  # patterns with classes or escapes, read one by one: past that, too complex


class Globs:
    """Glob patterns of one ignore file, in file order, as bit-parallel NFAs: one for the
    patterns read the fast way, one for those read one by one; the last match is the later
    of the two answers."""

    def __init__(self, pathname: bool) -> None:
        self.pathname = pathname  # WM_PATHNAME
        self._fast: list[bytes] = []
        self._fast_info: list[tuple[int, bool]] = []  # (index in the file, directories only)
        self._kinds = bytearray()
        self._lits = bytearray()
        self._class_ids = bytearray()
        self._sets: dict[int, int] = {}  # a class's byte set -> its id (1..255)
        self._slow_info: list[tuple[int, bool]] = []
        self._slow_lasts: list[int] = []
        self._automata: tuple[Automaton, ...] = ()

    def add(self, pattern: bytes, index: int, dir_only: bool, start: int = 0) -> None:
        """A pattern with glob characters. `start`: where wildmatch begins, after the
        literal prefix that git compares apart (a `**` there counts as starting a segment)."""
        if _FAST.fullmatch(pattern) is not None:
            self._fast.append(pattern[:start] + b"\x02" + pattern[start:] if start else pattern)
            self._fast_info.append((index, dir_only))
            return
        if len(self._slow_info) >= MAX_SLOW:
            raise TooComplex(f"more than {MAX_SLOW} patterns with [...] classes or escapes")
        tokens = tokenize(pattern[start:], self.pathname)
        if tokens is None:
            return  # it matches nothing
        kinds, lits, classes = tokens
        if start:
            kinds[:0] = bytes((LIT,)) * start
            lits[:0] = pattern[:start]
        if self._kinds:
            self._kinds.append(SEP)
            self._lits.append(0)
        base = len(self._kinds)
        self._kinds += kinds
        self._lits += lits
        if classes:
            ids = bytearray(len(kinds))
            for j, accept in classes:
                ids[j + start] = self._sets.setdefault(accept, len(self._sets) + 1)
            if len(self._sets) > 255:
                raise TooComplex("more than 255 different [...] classes")
            self._class_ids += bytes(base - len(self._class_ids)) + ids
        self._slow_info.append((index, dir_only))
        self._slow_lasts.append(len(self._kinds) - 1)

    def finish(self) -> None:
        automata = []
        if self._fast:
            automata.append(self._fast_automaton(b"\n".join(self._fast)))
        if self._slow_info:
            automata.append(
                Automaton(
                    self._kinds,
                    self._lits,
                    self._class_ids,
                    tuple(self._sets.items()),
                    self._slow_lasts,
                    self._slow_info,
                    self.pathname,
                )
            )
        self._automata = tuple(automata)
        self._fast = []
        self._kinds = self._lits = self._class_ids = bytearray()

    def _fast_automaton(self, blob: bytes) -> Automaton:
        classes = _PLAIN_CLASS.findall(blob)
        if classes:
            blob = _PLAIN_CLASS.sub(b"\x04", blob)
        if self.pathname:
            blob = _WHOLE_SEGMENT.sub(b"\x01", blob)
            blob = _REPEATED.sub(b"\x01/", blob).replace(b"\x01/", b"\x01\x03")
        blob = _STAR_RUN.sub(b"*", blob).translate(None, b"\x02")
        lasts = [n - 2 for n in accumulate(len(p) + 1 for p in blob.split(b"\n"))]
        class_ids = bytearray()
        sets: dict[int, int] = {}
        if classes:
            class_ids = bytearray(len(blob))
            ids: dict[bytes, int] = {}
            position = -1
            for text in classes:
                position = blob.index(b"\x04", position + 1)
                known = ids.get(text)
                if known is None:
                    accept = read_class(text, 1)[0]
                    if self.pathname:
                        accept &= ~(1 << SLASH)
                    known = ids[text] = sets.setdefault(accept, len(sets) + 1)
                    if known > 255:
                        raise TooComplex("more than 255 different [...] classes")
                class_ids[position] = known
        return Automaton(
            blob.translate(_FAST_KINDS),
            blob.translate(_FAST_LITS),
            class_ids,
            tuple(sets.items()),
            lasts,
            self._fast_info,
            self.pathname,
        )

    def __bool__(self) -> bool:
        return bool(self._automata)

    def run(self, state: tuple[int, ...] | None, text: bytes) -> tuple[int, ...]:
        """The state after reading `text` from `state` (None: the start of the text)."""
        if state is None:
            return tuple(a.run(None, text) for a in self._automata)
        return tuple(a.run(s, text) for a, s in zip(self._automata, state))

    def last_match(self, state: tuple[int, ...], is_dir: bool) -> int:
        """The file index of the last pattern that matched the whole text, or -1."""
        return max((a.last_match(s, is_dir) for a, s in zip(self._automata, state)), default=-1)


class Automaton:
    """Patterns as one bit-parallel NFA over their tokens, patterns apart by a SEP token.
    Bit j set: token j, and all before it in its pattern, have matched the bytes read so far.
    Every pattern is anchored at the start of the text, so once the state is 0 it stays 0.
    Reading a byte costs a few operations on ints of one bit per token."""

    def __init__(
        self,
        kinds: bytes | bytearray,
        lits: bytes | bytearray,
        class_ids: bytes | bytearray,
        sets: tuple[tuple[int, int], ...],
        lasts: list[int],
        info: list[tuple[int, bool]],
        pathname: bool,
    ) -> None:
        """lasts: the index of each pattern's last token, ascending; info: each pattern's
        (index in the file, directories only)."""
        self._pathname = pathname
        self._lits = bytes(lits)
        self._class_ids = bytes(class_ids)
        self._sets = sets
        self._lasts = lasts
        self._indexes = [index for index, _ in info]
        size = len(kinds)
        top = (1 << size) - 1
        first = ((_bits(kinds.translate(_digits(SEP))) << 1) | 1) & top
        self._stars = _bits(kinds.translate(_STARS))
        self._anystar = _bits(kinds.translate(_digits(ANYSTAR)))
        self._noslash = _bits(kinds.translate(_digits(ANY, STAR)))
        bypass = _bits(kinds.translate(_digits(BYPASS)))
        self._skip_inner = self._stars & ~first
        bypass_start = bypass & (first << 1)
        self._bypass_inner = bypass & ~bypass_start
        self._last_any = _bits_at(lasts, size)
        dir_only = [last for last, (_, only) in zip(lasts, info) if only]
        self._last_file = self._last_any & ~_bits_at(dir_only, size) if dir_only else self._last_any
        self._by_byte: dict[int, int] = {}
        # Before any byte: stars and `**/` at the start of a pattern have matched nothing.
        start = bypass_start | (self._stars & first)
        start |= (start << 1) & self._skip_inner
        self.start = start
        self._enter_first = (start << 1) | first | (start & self._stars)

    def _mask(self, byte: int) -> int:
        """The tokens that accept `byte`, worked out when it is first met."""
        mask = self._by_byte.get(byte)
        if mask is None:
            mask = _bits(self._lits.translate(_digits(byte))) | self._anystar
            if byte != SLASH or not self._pathname:
                mask |= self._noslash
            if self._sets:
                ids = [i for accept, i in self._sets if accept >> byte & 1]
                mask |= _bits(self._class_ids.translate(_digits(*ids)))
            self._by_byte[byte] = mask
        return mask

    def run(self, state: int | None, text: bytes) -> int:
        """The state after reading `text` from `state` (None: from the start of the text)."""
        bypass, skip, stars, mask = self._bypass_inner, self._skip_inner, self._stars, self._mask
        if state is None:
            if not text:
                return self.start
            state = self._enter_first & mask(text[0])
            text = text[1:]
            if bypass:
                state |= (state << 2) & bypass
            state |= (state << 1) & skip
        for byte in text:
            if not state:
                return 0
            # A SEP bit is never set, so a shift never carries one pattern into the next.
            state = ((state << 1) | (state & stars)) & mask(byte)
            if bypass:
                state |= (state << 2) & bypass
            state |= (state << 1) & skip
        return state

    def last_match(self, state: int, is_dir: bool) -> int:
        """The file index of the last pattern that matched the whole text, or -1."""
        accepted = state & (self._last_any if is_dir else self._last_file)
        if not accepted:
            return -1
        return self._indexes[bisect.bisect_left(self._lasts, accepted.bit_length() - 1)]


def _bits(flags: bytes | bytearray) -> int:
    """The int whose bit i is set where flags[i] is the digit 1."""
    return int(flags[::-1], 2) if flags else 0


def _bits_at(positions: Iterable[int], size: int) -> int:
    flags = bytearray(b"0" * size)
    for position in positions:
        flags[position] = 0x31
    return _bits(flags)


def wildmatch(pattern: bytes, text: bytes, pathname: bool = True) -> bool:
    """git's wildmatch(pattern, text, WM_PATHNAME if pathname else 0), without backtracking."""
    if not pattern:
        return not text
    globs = Globs(pathname)
    globs.add(pattern, 0, False)
    globs.finish()
    return bool(globs) and globs.last_match(globs.run(None, text), False) == 0

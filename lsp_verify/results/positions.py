"""Tools' columns -> LSP character offsets, in the encoding the server declared (SPEC section 5).

Tools count columns in different units (see `problems.base.ColumnUnit`): UTF-8 bytes (mypy,
clang, go vet, Rust backtrace frames), UTF-16 code units (tsc, pyright, ESLint, V8 stack
frames), code points (rustc's `-->`, ruff, Biome), or display columns (gcc: wide characters
count 2, combining marks 0, tabs to the next multiple of 8; Rust's panic locations: the same
with a tab counting 4). LSP counts in the `positionEncoding` the server declared: UTF-16 code
units unless the client offered another (UTF-8 or UTF-32).

Both directions go through the line's text, and the result always falls on a character
boundary: a column inside a character (a byte in the middle of a UTF-8 sequence, a display
column in the middle of a wide character) rounds down to its start; one past the end of the
line is the end of the line. An ASCII line without tabs needs none of this: every unit counts
it the same, so a save that fails on ASCII code pays one `str.isascii` per position.
"""

from __future__ import annotations

import unicodedata

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
GCC_DISPLAY, RUST_DISPLAY = "gcc-display", "rust-display"
_DISPLAY = (GCC_DISPLAY, RUST_DISPLAY)


def character(text: str | None, column: int, unit: str, encoding: str) -> int:
    """The 0-based `column` (counted in `unit`) of the line `text`, as a character offset in
    `encoding`. Without the line's text nothing can be converted: the column as given."""
    if column <= 0:
        return 0
    if text is None:
        return column
    if text.isascii() and (unit not in _DISPLAY or "\t" not in text):
        return min(column, len(text))
    index = code_point_index(text, column, unit)
    return units(text[:index], encoding)


def line_end(text: str, encoding: str) -> int:
    """The end of the line `text` as a character offset in `encoding`."""
    return len(text) if text.isascii() else units(text, encoding)


def units(text: str, encoding: str) -> int:
    """How many code units of `encoding` `text` takes. A lone surrogate (a document that
    arrived with one) counts as one UTF-16 unit and three UTF-8 bytes, as it was sent."""
    if encoding == UTF16:
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


def code_point_index(text: str, column: int, unit: str) -> int:
    """The index in `text` of the character at 0-based `column` counted in `unit`; a column
    inside a character is that character's start, one past the end is `len(text)`."""
    if unit == UTF32 or unit not in (UTF8, UTF16, *_DISPLAY):
        return min(column, len(text))
    count = 0
    for index, char in enumerate(text):
        width = _width(char, unit, count)
        if count + width > column:
            return index
        count += width
    return len(text)


def _width(char: str, unit: str, count: int) -> int:
    code = ord(char)
    if unit == UTF16:
        return 2 if code > 0xFFFF else 1
    if unit == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if char == "\t":
        return 8 - count % 8 if unit == GCC_DISPLAY else 4
    if code < 0x300:
        return 1
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0  # combining marks, variation selectors, zero-width joiners
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1

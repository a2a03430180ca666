"""Draws the extension's icon, images/icon.png: a white check mark on a green rounded square.

    python3 scripts/make-icon.py      (from vscode-client/; rewrites images/icon.png)

The PNG is committed; tests/unit/test_packaging.py checks it is what this script draws, so
the script stays its source. Standard library only: the shapes are simple enough to render
with 4x4 supersampling and write as an RGBA PNG by hand.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

SIZE = 128
SAMPLES = 4  # per axis, per pixel: the edges' antialiasing
GREEN = (46, 125, 50)
WHITE = (255, 255, 255)
RADIUS = 24.0  # the square's corners
# The check mark: a thick polyline through these points.
CHECK = ((34.0, 66.0), (56.0, 88.0), (96.0, 44.0))
STROKE = 7.5  # half the line's width


def _square_distance(x: float, y: float) -> float:
    """How far outside the rounded square (x, y) is; negative inside, near the corners."""
    dx = max(RADIUS - x, 0.0, x - (SIZE - RADIUS))
    dy = max(RADIUS - y, 0.0, y - (SIZE - RADIUS))
    return math.hypot(dx, dy) - RADIUS


def _segment_distance(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    (ax, ay), (bx, by) = a, b
    vx, vy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * vx + (y - ay) * vy) / (vx * vx + vy * vy)))
    return math.hypot(x - (ax + t * vx), y - (ay + t * vy))


def _check_distance(x: float, y: float) -> float:
    """How far outside the check mark's stroke (x, y) is."""
    return min(_segment_distance(x, y, a, b) for a, b in zip(CHECK, CHECK[1:])) - STROKE


def _coverage(column: int, row: int) -> tuple[int, int]:
    """Of the pixel's samples: how many are in the square, and how many of those on the mark.
    Only pixels within a pixel of an edge are sampled: the others are all in or all out."""
    total = SAMPLES * SAMPLES
    centre = (column + 0.5, row + 0.5)
    square_edge, check_edge = _square_distance(*centre), _check_distance(*centre)
    if abs(square_edge) > 1.0 and abs(check_edge) > 1.0:
        square = total if square_edge < 0 else 0
        return square, square if check_edge < 0 else 0
    square = check = 0
    step = 1.0 / SAMPLES
    for i in range(SAMPLES):
        for j in range(SAMPLES):
            x, y = column + (j + 0.5) * step, row + (i + 0.5) * step
            if _square_distance(x, y) <= 0:
                square += 1
                check += _check_distance(x, y) <= 0
    return square, check


def pixels() -> bytes:
    """The image as rows of RGBA bytes, each row after PNG's filter byte (0: none)."""
    out = bytearray()
    total = SAMPLES * SAMPLES
    for row in range(SIZE):
        out.append(0)
        for column in range(SIZE):
            square, check = _coverage(column, row)
            if square == 0:
                out += bytes(4)
                continue
            # The mark's share of the covered samples mixes white into the green.
            share = check / square
            rgb = (round(g + (w - g) * share) for g, w in zip(GREEN, WHITE))
            out += bytes((*rgb, round(255 * square / total)))
    return bytes(out)


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(pixels(), 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "images" / "icon.png"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(png())
    sys.stdout.write(f"wrote {target}\n")

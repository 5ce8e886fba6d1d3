"""The web app's icons, drawn here: a palace front (pediment, four columns, steps) on a blue
tile, written as one SVG and as PNGs from the same shapes, so nothing is downloaded.

The plain icon is a rounded tile; the maskable one is full-bleed with the palace drawn at
80 %, inside the safe zone (the middle circle of 80 % of the width) that a launcher may cut
to. The output is byte-for-byte the same on every build.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

BACKGROUND = (0x1F, 0x5F, 0xBF)
FOREGROUND = (0xFB, 0xFA, 0xF7)
THEME = "#1f5fbf"
# Polygons on a 100×100 tile, counter-clockwise in screen coordinates (y down). All convex.
SHAPES: list[list[tuple[float, float]]] = [
    [(50, 20), (82, 38), (18, 38)],  # pediment
    [(20, 40), (80, 40), (80, 44), (20, 44)],  # entablature
    *[[(x, 46), (x + 6, 46), (x + 6, 70), (x, 70)] for x in (24, 37, 57, 70)],  # columns
    [(20, 72), (80, 72), (80, 76), (20, 76)],  # first step
    [(16, 78), (84, 78), (84, 82), (16, 82)],  # second step
]
CORNER = 18  # the plain icon's corner radius on the 100 tile
# name: (pixels, rounded corners?, scale of the palace about the centre)
PNGS = {
    "icon-192.png": (192, True, 1.0),
    "icon-512.png": (512, True, 1.0),
    "icon-maskable-512.png": (512, False, 0.8),
}
SVG_NAME = "icon.svg"


def svg() -> str:
    """Return the icon as SVG text (rounded tile)."""
    polys = "".join(
        f'<polygon points="{" ".join(f"{x:g},{y:g}" for x, y in shape)}"/>' for shape in SHAPES
    )
    bg, fg = ("#" + "".join(f"{c:02x}" for c in colour) for colour in (BACKGROUND, FOREGROUND))
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
        f'<rect width="100" height="100" rx="{CORNER}" fill="{bg}"/>'
        f'<g fill="{fg}">{polys}</g></svg>\n'
    )


def _inside(shape, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mask of the points (x, y) inside the convex polygon ``shape`` (any winding)."""
    signs = []
    n = len(shape)
    for i in range(n):
        (x0, y0), (x1, y1) = shape[i], shape[(i + 1) % n]
        signs.append((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0))
    stack = np.stack(signs)
    return np.all(stack >= 0, axis=0) | np.all(stack <= 0, axis=0)


def _in_tile(x: np.ndarray, y: np.ndarray, rounded: bool) -> np.ndarray:
    if not rounded:
        return np.ones(np.broadcast_shapes(x.shape, y.shape), dtype=bool)
    cx = np.clip(x, CORNER, 100 - CORNER)
    cy = np.clip(y, CORNER, 100 - CORNER)
    return (x - cx) ** 2 + (y - cy) ** 2 <= CORNER**2


def rgba(size: int, rounded: bool, scale: float = 1.0, samples: int = 4) -> np.ndarray:
    """Return the icon as a ``size``×``size``×4 uint8 array (``samples``² per pixel), the
    palace scaled by ``scale`` about the tile's centre."""
    n = size * samples
    step = 100.0 / n
    coords = (np.arange(n) + 0.5) * step
    fg = np.zeros((n, n), dtype=bool)
    for shape in SHAPES:
        shape = [(50 + (px - 50) * scale, 50 + (py - 50) * scale) for px, py in shape]
        # Only the shape's bounding box is tested.
        xs, ys = [p[0] for p in shape], [p[1] for p in shape]
        c0, c1 = int(min(xs) / step), min(n, int(max(xs) / step) + 2)
        r0, r1 = int(min(ys) / step), min(n, int(max(ys) / step) + 2)
        x, y = np.meshgrid(coords[c0:c1], coords[r0:r1])
        fg[r0:r1, c0:c1] |= _inside(shape, x, y)
    x, y = np.meshgrid(coords, coords, sparse=True)
    tile = np.broadcast_to(_in_tile(x, y, rounded), (n, n))

    def mean(mask: np.ndarray) -> np.ndarray:
        return mask.reshape(size, samples, size, samples).mean(axis=(1, 3))

    cover, ink = mean(tile), mean(tile & fg)
    out = np.zeros((size, size, 4))
    for c in range(3):
        # Colour where the tile is: the mix of background and foreground within the pixel.
        colour = BACKGROUND[c] * (cover - ink) + FOREGROUND[c] * ink
        out[..., c] = np.divide(colour, cover, out=np.zeros_like(cover), where=cover > 0)
    out[..., 3] = cover * 255
    return np.rint(out).astype(np.uint8)


def png(pixels: np.ndarray) -> bytes:
    """Return ``pixels`` (h×w×4 uint8) as PNG bytes (RGBA, 8 bits, no filter, zlib level 9)."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[row].tobytes() for row in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def write(folder: Path) -> list[str]:
    """Write the SVG and the PNGs into ``folder``; return their file names."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SVG_NAME).write_text(svg(), encoding="utf-8")
    for name, (size, rounded, scale) in PNGS.items():
        (folder / name).write_bytes(png(rgba(size, rounded, scale)))
    return [SVG_NAME, *PNGS]

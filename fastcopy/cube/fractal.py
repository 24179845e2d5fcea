"""Fractal layouts of the cube unit: the geometry, as pure functions (no memory, no state).

A *fractal* is one 512-byte tile. A logical matrix (already padded to whole fractals) is cut into fractals of
``r0 x c0`` elements; a *layout* is a two-letter name, first letter the order of the fractals on the grid, second
letter the order of the elements inside one fractal (the "big Y, small x" naming of the Ascend pages):

    ``Z`` / ``z``  row-major        ``N`` / ``n``  column-major

so ``Zz`` (L0A on most products: fractals row by row, each row-major), ``Zn`` (L0B: fractals row by row, each
column-major), ``Nz`` (L1, and L0A on Atlas 350: fractal columns one after another, each row-major) and ``Nn``.
Names are case-insensitive (``"ZZ"``, ``"zN"`` and ``"Zn"`` are read letter by letter as outer, inner).

The *pitch* is the number of fractals between the starts of consecutive fractal rows (``Z``) or fractal columns
(``N``); the minimum is the number of fractals in one such row / column. For a matrix of ``R x C`` elements
with fractals ``r0 x c0`` (element ``(r, c)``, ``fr = r // r0``, ``fc = c // c0``, ``i = r % r0``, ``j = c % c0``)
the element offset from the start of the image is::

    Zz: ((fr*pitch + fc)*r0 + i)*c0 + j         Zn: ((fr*pitch + fc)*c0 + j)*r0 + i
    Nz: ((fc*pitch + fr)*r0 + i)*c0 + j         Nn: ((fc*pitch + fr)*c0 + j)*r0 + i

Identity used by the transposing loads: ``Zn`` of ``B`` (fractals ``C0 x 16``) is element-for-element ``Nz`` of
``B^T`` (fractals ``16 x C0``) with the same pitch.

Fractal shapes per element width (``C0 = 256 / bits`` elements per 32-byte fractal row; 4-bit types pack two
values per byte):

===========================  =======  =======  =======  =======
buffer / role                 b4       b8       b16      b32
===========================  =======  =======  =======  =======
L1 (Nz), L0A (Zz or Nz)      16x64    16x32    16x16    16x8
L0B (Zn), logical B[K][N]    64x16    32x16    16x16    8x16
===========================  =======  =======  =======  =======

Every function takes plain ints (and the offset functions also numpy integer arrays, elementwise), so planners,
references and the whole-array helpers share one definition. The L0C layout (always 16x16 fractals) is added
beside these by the cube-out modules.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParamError
from ..products import Phys, Product

FRACTAL_BYTES = 512  #: bytes of one fractal
ROWS = 16  #: rows of an L1 / L0A fractal (and columns of an L0B one)
ROW_BYTES = 32  #: bytes of one fractal row (one C0 block)
LAYOUTS = ("Zz", "Zn", "Nz", "Nn")

#: the layout of each cube input buffer: L1 holds Nz, L0B holds Zn, L0A holds Zz (Nz on Atlas 350)
BUFFER_LAYOUT = {Phys.L1: "Nz", Phys.L0A: "Zz", Phys.L0B: "Zn"}
BUFFER_LAYOUT_350 = {**BUFFER_LAYOUT, Phys.L0A: "Nz"}


def buffer_layout(product: Product, phys: Phys) -> str:
    """The layout a cube input buffer holds on a product (the left matrix in L0A, the right one in L0B)."""
    table = BUFFER_LAYOUT_350 if product is Product.ATLAS_350 else BUFFER_LAYOUT
    if phys not in table:
        raise ParamError(f"{phys} is not a cube input buffer (L1, L0A, L0B)")
    return table[phys]


def layout_name(layout: str) -> str:
    """Canonical spelling (``"Zz"``, ``"Zn"``, ``"Nz"``, ``"Nn"``) of a layout name in any letter case."""
    if isinstance(layout, str) and len(layout) == 2:
        name = layout[0].upper() + layout[1].lower()
        if name in LAYOUTS:
            return name
    raise ParamError(f"layout={layout!r} is not a fractal layout; use one of {', '.join(LAYOUTS)} (first letter: "
                     "order of the fractals, second: order inside a fractal; Z row-major, N column-major)")


def c0_of(bits: int) -> int:
    """Elements per 32-byte fractal row for an element width in bits: b4 64, b8 32, b16 16, b32 8."""
    if bits not in (4, 8, 16, 32, 64):
        raise ParamError(f"element width {bits} bits has no fractal shape (4, 8, 16 or 32 bits)")
    return ROW_BYTES * 8 // bits


def fractal_dims(layout: str, bits: int) -> tuple:
    """``(r0, c0)``: the logical rows x columns of one 512-byte fractal of ``layout`` for ``bits``-bit elements.

    Row-major inside (``?z``): ``16 x C0`` (the fractal's 16 rows are its 32-byte rows). Column-major inside
    (``?n``, the L0B ``Zn`` of ``B[K][N]``): ``C0 x 16`` (each of its 16 stored rows is one column of ``C0``)."""
    name = layout_name(layout)
    c0 = c0_of(bits)
    return (ROWS, c0) if name[1] == "z" else (c0, ROWS)


def grid(rows: int, cols: int, dims: tuple) -> tuple:
    """``(fractal rows, fractal columns)`` covering a ``rows x cols`` matrix (partial fractals count)."""
    r0, c0 = dims
    return -(-rows // r0), -(-cols // c0)


def min_pitch(layout: str, rows: int, cols: int, dims: tuple) -> int:
    """The smallest pitch: fractals per fractal row (``Z?``) or per fractal column (``N?``)."""
    gr, gc = grid(rows, cols, dims)
    return gc if layout_name(layout)[0] == "Z" else gr


def _pitch(layout, rows, cols, dims, pitch):
    least = min_pitch(layout, rows, cols, dims)
    if pitch is None:
        return least
    pitch = int(pitch)
    if pitch < least:
        raise ParamError(f"pitch={pitch} fractals is below the {least} fractals one fractal "
                         f"{'row' if layout_name(layout)[0] == 'Z' else 'column'} of a {rows} x {cols} matrix needs")
    return pitch


def offset(layout: str, r, c, dims: tuple, pitch: int):
    """Element offset of element ``(r, c)`` in the ``layout`` image with ``dims = (r0, c0)`` fractals and
    ``pitch`` fractals between fractal rows (Z) / columns (N). ``r``, ``c``: ints or integer arrays."""
    name = layout_name(layout)
    r0, c0 = dims
    fr, i = r // r0, r % r0
    fc, j = c // c0, c % c0
    frac = fr * pitch + fc if name[0] == "Z" else fc * pitch + fr
    inner = i * c0 + j if name[1] == "z" else j * r0 + i
    return frac * (r0 * c0) + inner


def image_fractals(layout: str, rows: int, cols: int, dims: tuple, pitch: int | None = None) -> int:
    """Fractals spanned by the image (from its first fractal to the end of its last one)."""
    gr, gc = grid(rows, cols, dims)
    if gr == 0 or gc == 0:
        return 0
    p = _pitch(layout, rows, cols, dims, pitch)
    outer, inner = (gr, gc) if layout_name(layout)[0] == "Z" else (gc, gr)
    return (outer - 1) * p + inner


def image_shape(layout: str, rows: int, cols: int, dims: tuple, pitch: int | None = None) -> tuple:
    """The 4-d array shape of the image: ``(outer, pitch, a, b)``, indexed ``[outer, inner fractal, stored row,
    element]``. Zz ``(M1, Q, 16, C0)`` (the page's ``(M1, K1, M0, K0)``), Zn ``(K1, Q, 16, K0)`` (the page's
    ``(K1, N1, N0, K0)``), Nz ``(C1, P, 16, C0)`` (what :func:`fastcopy.to_nz` returns), Nn ``(C1, P, c0, r0)``."""
    name = layout_name(layout)
    p = _pitch(name, rows, cols, dims, pitch)
    gr, gc = grid(rows, cols, dims)
    r0, c0 = dims
    outer = gr if name[0] == "Z" else gc
    stored = (r0, c0) if name[1] == "z" else (c0, r0)
    return (outer, p, *stored)


def offsets(layout: str, rows: int, cols: int, dims: tuple, pitch: int | None = None) -> np.ndarray:
    """``(rows, cols)`` int64 array: the element offset of every matrix element in the image."""
    p = _pitch(layout, rows, cols, dims, pitch)
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    return offset(layout, r, c, dims, p)


def transposed(layout: str) -> str:
    """The layout whose image of ``X^T`` (with transposed fractal dims) equals this layout's image of ``X``:
    swap both letters' orders (``Zn`` <-> ``Nz``, ``Zz`` <-> ``Nn``)."""
    name = layout_name(layout)
    flip = {"Z": "N", "N": "Z", "z": "n", "n": "z"}
    return flip[name[0]] + flip[name[1]]


__all__ = ["FRACTAL_BYTES", "ROWS", "ROW_BYTES", "LAYOUTS", "BUFFER_LAYOUT", "BUFFER_LAYOUT_350", "buffer_layout",
           "layout_name", "c0_of",
           "fractal_dims", "grid", "min_pitch", "offset", "image_fractals", "image_shape", "offsets",
           "transposed"]

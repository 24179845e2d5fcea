"""L0C geometry: the matrix-result buffer, always NZ with 16 x 16 fractals (any element type).

Element ``(i, j)`` of a tile with ``M1 = ceil(m / 16)`` fractal rows sits at element offset
``(j // 16) * M1 * 256 + i * 16 + j % 16``: fractal columns one after another (pitch ``M1`` fractals, which is the
``srcStride = 16 * M1`` Fixpipe reads with), rows of 16 elements inside. That is the ``Nz`` layout of
:mod:`fastcopy.cube.fractal` with ``16 x 16`` fractals, so the offsets come from there.
"""

from __future__ import annotations

import functools

import numpy as np

from . import fractal

#: one L0C fractal: 16 rows of 16 elements (1024 bytes for 32-bit results)
DIMS = (16, 16)
FRACTAL_ELEMENTS = 256


def tile_shape(m: int, n: int) -> tuple:
    """``(16*M1, 16*N1)``: the rows and columns of the tile an ``m x n`` Mmad writes (padding included)."""
    return 16 * (-(-m // 16)), 16 * (-(-n // 16))


def offset(i, j, m1: int):
    """Element offset of tile element ``(i, j)`` in L0C for a tile of ``m1`` fractal rows."""
    return fractal.offset("Nz", i, j, DIMS, m1)


@functools.lru_cache(maxsize=64)
def tile_offsets(m: int, n: int) -> np.ndarray:
    """``(16*M1, 16*N1)`` int64 offsets of every element of the tile of an ``m x n`` Mmad (read-only)."""
    rows, cols = tile_shape(m, n)
    out = fractal.offsets("Nz", rows, cols, DIMS, rows // 16)
    out.flags.writeable = False
    return out


def to_l0c(matrix: np.ndarray) -> np.ndarray:
    """A 2-d ``M x N`` array (both multiples of 16) as the flat L0C image (what Mmad leaves in L0C)."""
    rows, cols = matrix.shape
    if rows % 16 or cols % 16:
        raise ValueError(f"to_l0c: shape {matrix.shape} is not made of whole 16 x 16 fractals")
    flat = np.empty(rows * cols, matrix.dtype)
    flat[tile_offsets(rows, cols)] = matrix
    return flat


def from_l0c(flat: np.ndarray, m: int, n: int) -> np.ndarray:
    """The ``m x n`` matrix held at the start of an L0C image (``M1 = ceil(m / 16)``)."""
    return np.asarray(flat)[tile_offsets(m, n)][:m, :n]

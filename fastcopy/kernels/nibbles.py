"""Nibble moves: the 4-bit transposing loads (LoadData 2D V2 with ``ifTranspose``, ``LoadDataWithTranspose``
int4b_t), where every destination byte takes two source nibbles.

Most of such a load is whole 16 x 16 tiles of 4-bit values: 16 source words of 8 bytes (16 values each) 32 bytes
apart, written transposed as 16 destination words 32 bytes apart (``transpose_tiles``, on flat ``uint64``
views: four rounds of masked swaps exchange 8, 4, 2 and 1-value blocks between the words). What is left
(partial tiles, unaligned tensors) runs on the byte gather below.

A plan is a table of runs ``(d, lo, hi, n)`` and one nibble ``step`` (nibble ``q`` is the low half of byte
``q >> 1`` when ``q`` is even, the high half when odd)::

    dst[dbase + d + k] = nibble(lo + k*step) | nibble(hi + k*step) << 4        k < n

(a transposed 64 x 64 square of 4-bit values: runs of 8 destination bytes, each reading one source column
``step`` = 128 nibbles = two 32-byte rows apart). The definedness plane follows the same runs: a destination byte
is defined when both source bytes holding its nibbles are.
"""

import numpy as np
from numba import njit

_M8, _M4 = np.uint64(0x00000000FFFFFFFF), np.uint64(0x0000FFFF0000FFFF)
_M2, _M1 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0F0F0F0F0F0F0F0F)
_S32, _S16, _S8, _S4 = np.uint64(32), np.uint64(16), np.uint64(8), np.uint64(4)


@njit(cache=True, nogil=True, boundscheck=False)
def transpose_tiles(dst, dbase, src, sbase, tiles):  # pragma: no cover (compiled)
    """``tiles``: rows ``(d, s)`` of word offsets: destination word ``d + 4r`` (r < 16) = column ``r`` of the 16 x
    16 matrix of 4-bit values whose row ``k`` is source word ``s + 4k`` (value ``c`` at bits ``4c``). Four rounds
    of masked swaps between the rows exchange blocks of 8, 4, 2 and 1 values (an unrolled version that keeps the
    words in registers measured no faster)."""
    w = np.empty(16, np.uint64)
    for t in range(tiles.shape[0]):
        d = dbase + tiles[t, 0]
        s = sbase + tiles[t, 1]
        for k in range(16):
            w[k] = src[s + 4 * k]
        for i in range(8):  # blocks of 8 values: rows i, i+8
            x = ((w[i] >> _S32) ^ w[i + 8]) & _M8
            w[i + 8] ^= x
            w[i] ^= x << _S32
        for i in (0, 1, 2, 3, 8, 9, 10, 11):  # blocks of 4: rows i, i+4
            x = ((w[i] >> _S16) ^ w[i + 4]) & _M4
            w[i + 4] ^= x
            w[i] ^= x << _S16
        for i in (0, 1, 4, 5, 8, 9, 12, 13):  # blocks of 2: rows i, i+2
            x = ((w[i] >> _S8) ^ w[i + 2]) & _M2
            w[i + 2] ^= x
            w[i] ^= x << _S8
        for i in (0, 2, 4, 6, 8, 10, 12, 14):  # single values: rows i, i+1
            x = ((w[i] >> _S4) ^ w[i + 1]) & _M1
            w[i + 1] ^= x
            w[i] ^= x << _S4
        for k in range(16):
            dst[d + 4 * k] = w[k]


@njit(cache=True, nogil=True, boundscheck=False)
def gather_nibbles(dst, dbase, src, sbase, runs, step, plane):  # pragma: no cover (compiled)
    """The runs byte by byte; ``plane``: ``dst``/``src`` are definedness planes (a byte is defined when both
    source bytes holding its nibbles are)."""
    for r in range(runs.shape[0]):
        d = dbase + runs[r, 0]
        lo = runs[r, 1]
        hi = runs[r, 2]
        for k in range(runs[r, 3]):
            a = lo + k * step
            b = hi + k * step
            if plane:
                dst[d + k] = src[sbase + (a >> 1)] & src[sbase + (b >> 1)]
            else:
                dst[d + k] = ((src[sbase + (a >> 1)] >> ((a & 1) << 2)) & 15) | \
                    (((src[sbase + (b >> 1)] >> ((b & 1) << 2)) & 15) << 4)


@njit(cache=True, nogil=True, boundscheck=False)
def mark_runs(dplane, dbase, runs):  # pragma: no cover (compiled)
    for r in range(runs.shape[0]):
        d = dbase + runs[r, 0]
        for k in range(runs[r, 3]):
            dplane[d + k] = 1


__all__ = ["transpose_tiles", "gather_nibbles", "mark_runs"]

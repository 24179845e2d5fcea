"""DN2NZ: ``DataCopy(dst, src, Dn2NzParams)`` (Atlas 350, GM -> A1/B1).

Matrix ``m`` of the source is ``dValue`` stored GM rows of ``nValue`` contiguous elements (row pitch
``srcDValue``), i.e. the column-major storage of the ``nValue x dValue`` matrix
``Z[r][c] = GM[m*srcDnMatrixStride + c*srcDValue + r]``. The result is ND2NZ's layout of ``Z``::

    element (m, r, c), c < ceil(dValue/C0)*C0, goes to byte
        m*Mst + r*dstNzNStride*32 + (c // C0)*dstNzC0Stride*32 + (c % C0)*es      (Mst = dstNzMatrixStride*es
    floored to 32 bytes); columns dValue.. of the last C0 block are zeros.

Packed 4-bit types (``fp4x2_*``) move as their one-byte containers (every element unit counts bytes, two
values each); ``nValue`` must be even.

``small_c0=True`` (``enableSmallC0``, ``dValue <= 4``): row ``r`` takes ``4*es`` bytes at ``m*Mst + r*4*es``,
columns ``dValue..3`` zero, then zeros up to the next 32-byte boundary.
"""

from __future__ import annotations

from functools import lru_cache

from ..dtypes import ascend_name
from ..errors import RangeError, UnsupportedError
from ..ops.common import check_range, core_of
from ..ops.nz import dst_matrix_pitch
from ..dma.lower import make_plan
from ..dma.steps import Fill, Move, lattice_overlaps
from ..products import DN2NZ_PATHS
from .b4 import is_b4
from .common import overlap_warning, start
from .params import Dn2NzParams

API = "DataCopy(Dn2NzParams)"
BLK = 32
SMALL_C0 = 4


def plan_dn2nz(dst, src, params, small_c0=False):
    """Plan ``DataCopy(dst, src, Dn2NzParams)``; ``small_c0`` is the ``enableSmallC0`` template flag."""
    if not isinstance(params, Dn2NzParams):
        raise UnsupportedError(f"{API}: takes Dn2NzParams, got {type(params).__name__}")
    pipe = core_of(API, dst, src)
    return _plan(params.key(), src._sig, dst._sig, pipe.product, bool(small_c0))


@lru_cache(maxsize=4096)
def _plan(pkey, src, dst, product, small_c0):
    p, call, _ = start(API, Dn2NzParams, pkey, src, dst, product, DN2NZ_PATHS)
    es = src.itemsize
    check_range(API, "dnNum", p.dnNum, 0, 4095, "matrices", product)
    check_range(API, "nValue", p.nValue, 0, 16384, "elements (length of each stored GM row)", product)
    check_range(API, "dValue", p.dValue, 0, 2**21 - 1, "stored GM rows", product)
    check_range(API, "srcDValue", p.srcDValue, 1, 2**40 - 1, "elements (GM row pitch)", product,
                "0 would read every column from one GM row")
    check_range(API, "srcDnMatrixStride", p.srcDnMatrixStride, 0, 2**40 - 1, "elements", product)
    check_range(API, "dstNzMatrixStride", p.dstNzMatrixStride, 0, 16384, "elements", product)
    if is_b4(src.dtype) and p.nValue % 2:
        raise RangeError(f"{API}: nValue={p.nValue} is odd for {ascend_name(src.dtype)} on {product}: each element "
                         "holds two 4-bit values, so a stored row must be an even number of bytes (elements)")
    if small_c0 and p.dValue > SMALL_C0:
        raise RangeError(f"{API}: dValue={p.dValue} is outside [0, {SMALL_C0}] stored GM rows with enableSmallC0 "
                         f"on {product}")
    if not small_c0:
        check_range(API, "dstNzC0Stride", p.dstNzC0Stride, 1, 16384, "C0 blocks (32 bytes)", product)
        check_range(API, "dstNzNStride", p.dstNzNStride, 1, 16384, "C0 blocks (32 bytes)", product)
    warns = []
    if p.dnNum > 1 and p.dstNzMatrixStride * es % BLK:
        pitch = dst_matrix_pitch(p.dstNzMatrixStride, es, product)
        warns.append(f"{API}: dstNzMatrixStride={p.dstNzMatrixStride} ({p.dstNzMatrixStride * es} bytes) is not a "
                     f"multiple of 32 bytes on {product}: matrices are {pitch} bytes apart (rounded down)")
    if small_c0:
        warns.append(f"{API}: enableSmallC0 is experimental in fastcopy: its layout (rows of 4 elements) is "
                     "inferred without a numeric example; check it on hardware")
    nd, n, d = p.dnNum, p.nValue, p.dValue
    if nd == 0 or n == 0 or d == 0:
        return make_plan(API, (), src, dst, warns)
    pitch = dst_matrix_pitch(p.dstNzMatrixStride, es, product)
    sm, sd = p.srcDnMatrixStride * es, p.srcDValue * es
    zero = b"\0" * es
    if small_c0:
        row = SMALL_C0 * es
        steps = [Move((0,), (0,), es, _live(((nd, sm, pitch), (n, es, row), (d, sd, es))))]
        if d < SMALL_C0:
            steps.append(Fill((d * es,), row - d * es, _live(((nd, pitch), (n, row))), zero))
        tail = -(-n * row // BLK) * BLK
        if tail > n * row:
            steps.append(Fill((n * row,), tail - n * row, _live(((nd, pitch),)), zero))
        overlap = lattice_overlaps(tail, ((nd, pitch),))
    else:
        c0 = BLK // es
        nfull, rem = divmod(d, c0)
        ns, cs = p.dstNzNStride * BLK, p.dstNzC0Stride * BLK
        outer = ((nd, sm, pitch), (n, es, ns))
        steps = []
        if nfull:
            steps.append(Move((0,), (0,), es, _live(outer + ((nfull, c0 * sd, cs), (c0, sd, es)))))
        if rem:
            steps.append(Move((nfull * c0 * sd,), (nfull * cs,), es, _live(outer + ((rem, sd, es),))))
            steps.append(Fill((nfull * cs + rem * es,), (c0 - rem) * es, _live(((nd, pitch), (n, ns))), zero))
        overlap = lattice_overlaps(BLK, ((nd, pitch), (n, ns), (nfull + (rem > 0), cs)))
    if overlap:
        warns.append(overlap_warning(API, call))
    return make_plan(API, steps, src, dst, warns, exact=overlap)


def _live(loops) -> tuple:
    return tuple(lp for lp in loops if lp[0] != 1)


__all__ = ["plan_dn2nz"]

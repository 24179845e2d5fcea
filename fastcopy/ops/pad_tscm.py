"""DataCopyPad UB -> TSCM with Nd2NzParams (semantics.md §4.6): two stages through a GM workspace ``W``::

    W[0, F) = undefined                                  # nothing in W counts before stage 1
    W = DataCopyPad(W, srcUB, copyParams)                # stage 1: UB -> GM, semantics.md §4.5 (Normal)
    dstL1 = ND2NZ(W, nd2nzParams)                        # stage 2: GM -> L1, semantics.md §5.2 with ndNum = 1

ND2NZ with ``C0 = 32 / es``: element ``(r, c)`` (source byte ``(r*srcDValue + c)*es``) goes to destination byte
``r*dstNzNStride*32 + (c // C0)*dstNzC0Stride*32 + (c % C0)*es``; the last partial C0 block is padded with 0.
Both stages are planned before anything runs; the workspace is the caller's ``workspace=`` GlobalTensor or a
fresh one, returned by DataCopyPad (and kept on ``pipe.state["pad_workspace"]``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..dtypes import ascend_name
from ..errors import CapacityError, OutOfBoundsError, UnsupportedError
from ..memory import GlobalTensor
from ..params import Nd2NzParams
from ..dma.lower import make_plan
from ..dma.steps import Fill, lattice_overlaps
from ..products import Phys, Product
from .common import Call, check_range, core_of
from .loopmode import loop_mode
from .nz import nd2nz_steps
from .pad import API, BLK, PaddingMode, au, check_copy, copy_key, out_steps

#: largest workspace fastcopy allocates by itself (bytes)
WORKSPACE_LIMIT = 1 << 31


def plan_pad_tscm(dst, src, copy_params, nd2nz_params, mode=PaddingMode.Normal, workspace=None):
    """Plan both stages (cached); returns ``((clear W, stage 1, stage 2) plans, workspace)``."""
    pipe = core_of(API, dst, src)
    kind, key = copy_key(copy_params)
    if not isinstance(nd2nz_params, Nd2NzParams):
        raise UnsupportedError(f"{API}: the UB -> TSCM form takes Nd2NzParams, got "
                               f"{type(nd2nz_params).__name__ if nd2nz_params is not None else 'nothing'}")
    if PaddingMode(mode) is not PaddingMode.Normal:
        raise UnsupportedError(f"{API}: the UB -> TSCM form has no PaddingMode (Compact exists only on the GM <-> "
                               f"local forms), on {pipe.product}")
    looped = loop_mode(pipe, Phys.UB, Phys.GM) is not None if pipe.state else False
    layout = _layout(kind, key, nd2nz_params.key(), src._sig, dst._sig, pipe.product, looped)
    ws_bytes = layout[0]
    if workspace is None:
        if ws_bytes > WORKSPACE_LIMIT:
            raise CapacityError(f"{API}: the two stages need a GM workspace of {ws_bytes} bytes (copyParams GM "
                                f"dstStride / nd2nzParams srcDValue); fastcopy allocates at most "
                                f"{WORKSPACE_LIMIT} bytes itself: pass workspace= a GlobalTensor")
        es = src.itemsize
        data = np.full(au(ws_bytes, es), pipe.poison, np.uint8)
        workspace = GlobalTensor(data, defined=False, dtype=src.dtype)
        workspace.memory.poison = pipe.poison
    else:
        _check_workspace(workspace, src, ws_bytes, pipe.product)
    return _plans(kind, key, nd2nz_params.key(), src._sig, dst._sig, workspace._sig, pipe.product, looped), workspace


def _check_workspace(ws, src, ws_bytes: int, product) -> None:
    if not isinstance(ws, GlobalTensor):
        raise UnsupportedError(f"{API}: workspace must be a GlobalTensor, got {type(ws).__name__}")
    if ws.dtype != src.dtype:
        raise UnsupportedError(f"{API}: workspace is {ascend_name(ws.dtype)} but the copy moves "
                               f"{ascend_name(src.dtype)}; use a workspace of the same type")
    if ws.nbytes < ws_bytes:
        raise OutOfBoundsError(f"{API}: the workspace has {ws.nbytes} bytes but the two stages use bytes "
                               f"[0, {ws_bytes}) of it on {product}")


@lru_cache(maxsize=1024)
def _layout(kind, key, nkey, src, dst, product, looped):
    """Validate; return ``(workspace bytes, stage-1 steps, stage-2 steps, warnings, stage-2 may overlap)``."""
    call = Call(f"{API}({kind}, Nd2NzParams)", product, src, dst)
    if src.phys is not Phys.UB or dst.phys is not Phys.L1:
        raise UnsupportedError(f"{call.api}: path {call.path_text} is not UB -> TSCM (the only local -> local "
                               f"DataCopyPad path) on {product}")
    burst = check_copy(call, kind, key, PaddingMode.Normal, gm_src=False)
    nd_api = f"{API}(Nd2NzParams)"
    nd = Nd2NzParams.checked_key(nd_api, nkey, product)
    if burst is None:
        field = "blockCount" if key[0] == 0 else "blockLen"
        check_range(call.api, field, 0, 1, 4095 if field == "blockCount" else 2097151, "(UB -> TSCM rejects 0)",
                    product)
    bc, bl, ss, ds = burst
    _check_nd_ranges(nd_api, nd, src.itemsize, product)
    es = src.itemsize
    stage1 = out_steps(bc, bl, ss, ds)
    stage2 = nd2nz_steps(nd, es, 0)[0]  # ndNum = 1: the matrix pitch does not matter
    read_end = ((nd.nValue - 1) * nd.srcDValue + nd.dValue) * es
    ws_bytes = max((bc - 1) * (bl + ds) + bl, read_end)
    warns = []
    if looped:
        warns.append(f"{call.api}: loop mode (UB_TO_OUT) is set but does not apply to the UB -> TSCM form (its "
                     f"workspace layout is fixed by copyParams and nd2nzParams) on {product}")
    bad = _unwritten_rows(bc, bl, ds, nd.nValue, nd.srcDValue * es, nd.dValue * es)
    if bad:
        r = bad[0]
        lo = r * nd.srcDValue * es
        warns.append(f"{nd_api}: stage 2 (ND2NZ) reads workspace bytes that stage 1 (UB -> GM) did not write in "
                     f"{len(bad)} of {nd.nValue} rows (first: row {r}, bytes [{lo}, {lo + nd.dValue * es})); they "
                     f"are undefined in the result on {product}")
    # every (row, C0 block) writes one whole 32-byte block: overlap <=> two block starts closer than 32 bytes
    blocks = ((nd.nValue, nd.dstNzNStride * BLK), (_nblk(nd.dValue, es), nd.dstNzC0Stride * BLK))
    overlap = lattice_overlaps(BLK, blocks)
    return ws_bytes, stage1, stage2, tuple(warns), overlap


@lru_cache(maxsize=1024)
def _plans(kind, key, nkey, src, dst, ws, product, looped):
    ws_bytes, stage1, stage2, warns, overlap = _layout(kind, key, nkey, src, dst, product, looped)
    call1 = Call(f"{API}({kind}, Nd2NzParams) stage 1 (UB -> GM workspace)", product, src, ws)
    call2 = Call(f"{API}({kind}, Nd2NzParams) stage 2 (GM workspace -> TSCM, ND2NZ)", product, ws, dst)
    clear = make_plan(call1.api, (Fill((0,), ws_bytes, (), None),), None, ws)
    plan1 = make_plan(call1.api, stage1, src, ws)
    plan2 = make_plan(call2.api, stage2, ws, dst, warns, exact=overlap)
    return clear, plan1, plan2


def _nblk(d_value: int, es: int) -> int:
    return -(-d_value // (BLK // es))


def _check_nd_ranges(api: str, nd, es: int, product) -> None:
    """semantics.md §2.4 / §4.6 / §5.4 ranges of the Nd2NzParams fields that take effect with ``ndNum = 1`` (§11.4)."""
    check_range(api, "ndNum", nd.ndNum, 1, 1, "matrices (UB -> TSCM converts one ND matrix)", product)
    check_range(api, "nValue", nd.nValue, 1, 16384, "rows", product)
    check_range(api, "dValue", nd.dValue, 1, 65535, "elements", product)
    if nd.nValue > 1:
        hi = (2**64 - 1) // es if product is Product.ATLAS_350 else 65535
        check_range(api, "srcDValue", nd.srcDValue, 1, hi, "elements", product)
        check_range(api, "dstNzNStride", nd.dstNzNStride, 1, 16384, "C0 blocks (32 bytes)", product)
    if _nblk(nd.dValue, es) > 1:
        check_range(api, "dstNzC0Stride", nd.dstNzC0Stride, 1, 16384, "C0 blocks (32 bytes)", product)


def _unwritten_rows(bc, bl, ds, n_rows, row_pitch, row_bytes) -> list:
    """Rows ``[r*row_pitch, +row_bytes)`` not inside one stage-1 burst ``[i*(bl + ds), +bl)``, ``i < bc``
    (consecutive bursts touch when ``ds == 0``). Python ints: 350 strides may exceed int64 products."""
    bad = []
    for r in range(n_rows):
        a = r * row_pitch
        if ds == 0:
            ok = a + row_bytes <= bc * bl
        else:
            i = a // (bl + ds)
            ok = i < bc and a - i * (bl + ds) + row_bytes <= bl
        if not ok:
            bad.append(r)
    return bad

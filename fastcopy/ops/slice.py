"""Sliced DataCopy with SliceInfo (semantics.md §7): a strided sub-tensor of up to 8 dimensions in one call.

For an info list ``I`` (dim 0 innermost), ``L = srcSliceInfo[0].burstLen*32 // es`` and
``pitch_d = prod(I[k].shapeValue for k < d)`` (semantics.md §7.1)::

    n0    = (end0 - start0 + 1 + stride0) // (L + stride0)              runs of L elements in dim 0
    n_d   = (end_d - start_d + 1 + stride_d) // (1 + stride_d)          one index per slice above dim 0
    selected(I) = [start0 + j*(L + stride0) + e + sum_d (start_d + t_d*(1 + stride_d)) * pitch_d]

enumerated with dim 0 fastest; the k-th selected source element goes to the k-th selected destination
element (``endIndex`` inclusive). Every rule of semantics.md §7.2 (and §11.8-§11.10) is checked here; remainders are
errors (semantics.md §9 #24). The plan is one Move: outer offsets = the start of every combination of dims >= 1
(dim 1 fastest, as the device builds its offset lists), one inner loop of ``n0`` runs of ``burstLen*32`` bytes;
with two dimensions the offsets (evenly spaced) are one offset and an outer loop over dimension 1, in the same
order.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..errors import AlignmentError, ParamError, ParamTypeError, RangeError
from ..integers import as_int
from ..params import SliceInfo
from ..dma.lower import make_plan
from ..dma.steps import Move, check_span, writes_overlap
from ..products import SLICE_PATHS, Phys, Product
from .common import Call, check_operands, check_range, core_of
from .loopmode import loop_mode, with_loop_mode

API = "DataCopy(SliceInfo)"
BLK = 32
MAX_DIMS = 8  # semantics.md §7.2 rule 1, semantics.md §9 #21
MAX_COMBOS = 1536  # rule 5: the device's fixed-size offset lists
MAX_RUNS = 4095  # rule 5: blockCount of the per-combination copy
MAX_BURST_LEN = 65535  # blockLen (uint16, blocks) of the per-combination copy
MAX_PAD_BYTES = 65535  # rule 7: 16-bit byte length of the GM->UB DataCopyPad engine (A2/A3/350)
MAX_GAP_BLOCKS = 65535  # 16-bit gap fields in 32-byte blocks
MAX_PAD_GAP_BYTES = 2**32 - 1  # uint32 GM stride of DataCopyPad on Atlas A2/A3
_INFERENCE = Product.ATLAS_INFERENCE_AICORE
_A2A3 = (Product.ATLAS_A2, Product.ATLAS_A3)
_SIDES = ("srcSliceInfo", "dstSliceInfo")
START, END, STRIDE, BURST, SHAPE = range(5)  # SliceInfo.key() positions


def plan_slice(dst, src, dst_info, src_info, dimValue=1):  # noqa: N803
    """Plan ``DataCopy(dst, src, dstSliceInfo, srcSliceInfo, dimValue)`` (cached)."""
    pipe = core_of(API, dst, src)
    return _plan(pipe, dst, src, _info_keys(dst_info, "dstSliceInfo"), _info_keys(src_info, "srcSliceInfo"),
                 dimValue)


def plan_slice_keys(dst, src, dkeys: tuple, skeys: tuple, dimValue):  # noqa: N803
    """:func:`plan_slice` with both info lists given as their ``key()`` tuples (what the prepared-call cache of
    ``fastcopy.api`` has already computed)."""
    return _plan(core_of(API, dst, src), dst, src, dkeys, skeys, dimValue)


def _plan(pipe, dst, src, dkeys, skeys, dimValue):  # noqa: N803
    dim_value = dimValue if type(dimValue) is int and 0 <= dimValue <= 2**32 - 1 else _dim_value(dimValue)
    loop = loop_mode(pipe, src.memory.phys, dst.memory.phys) if pipe.state else None
    gm_shape = None
    if not all([k[SHAPE] for k in dkeys]) or not all([k[SHAPE] for k in skeys]):
        gm = src if src.is_global else dst if dst.is_global else None  # None: no GM side (a path error later)
        gm_shape = tuple(gm.shape) if gm is not None else None
    return plan_keys(dkeys, skeys, dim_value, src._sig, dst._sig, pipe.product, loop, gm_shape)


def _info_keys(infos, side: str) -> tuple:
    """The ``key()`` of every entry; entries may be SliceInfo, a tuple in constructor order, or a dict."""
    if not isinstance(infos, (list, tuple)):
        raise ParamTypeError(f"{API}: {side} must be a list of SliceInfo (one per dimension), got "
                             f"{type(infos).__name__}")
    keys = []
    for d, v in enumerate(infos):
        if isinstance(v, SliceInfo):
            keys.append(v.key())
        elif isinstance(v, dict):
            keys.append(SliceInfo(**v).key())
        elif isinstance(v, (tuple, list)):
            keys.append(SliceInfo(*v).key())
        else:
            raise ParamTypeError(f"{API}: {side}[{d}] is a {type(v).__name__}, not a SliceInfo "
                                 "(or a tuple in constructor order {startIndex, endIndex, stride, burstLen, "
                                 "shapeValue})")
    return tuple(keys)


def _dim_value(v) -> int:
    v = as_int(v, API, "dimValue", "uint32_t")
    if not 0 <= v <= 2**32 - 1:
        raise ParamTypeError(f"{API}: dimValue={v} does not fit uint32_t [0, {2**32 - 1}]")
    return v


def run_count(key, run: int) -> int:
    """semantics.md §7.1: the number of runs (dim 0, ``run = L``) or of indices (dims >= 1, ``run = 1``), floored."""
    return (key[END] - key[START] + 1 + key[STRIDE]) // (run + key[STRIDE])


@lru_cache(maxsize=2048)
def plan_keys(dkeys, skeys, dim_value, src, dst, product, loop, gm_shape):
    """Validate (semantics.md §7.2, §11.8-§11.10) and plan; pure function of hashable values. ``gm_shape``: the numpy
    shape of the GlobalTensor, needed only when a shapeValue is 0."""
    call = Call(API, product, src, dst)
    implied = SliceInfo.types_implied(product)
    if not implied:  # (the keys are SliceInfo snapshots: checked when set)
        _check_key_types(skeys, dkeys, product)
    check_operands(call, SLICE_PATHS, "Slice")
    if implied and dim_value == 1 and loop is None and len(skeys) == 1 and len(dkeys) == 1:
        plan = _one_dim(skeys[0], dkeys[0], src, dst, product)
        if plan is not None:
            return plan
    es = src.itemsize
    ub_side = "dstSliceInfo" if dst.phys is Phys.UB else "srcSliceInfo"
    gm_side = "srcSliceInfo" if ub_side == "dstSliceInfo" else "dstSliceInfo"

    # rule 1: dimensions
    check_range(API, "dimValue", dim_value, 1, MAX_DIMS, "dimensions", product)
    for side, keys in zip(_SIDES, (skeys, dkeys)):
        if len(keys) != dim_value:
            raise ParamError(f"{API}: {side} has {len(keys)} entries but dimValue={dim_value}; both lists need "
                             f"exactly dimValue entries on {product}")
    shapes = _resolve_shapes(call, skeys, dkeys, gm_side, ub_side, gm_shape)
    info = {"srcSliceInfo": skeys, "dstSliceInfo": dkeys}

    # rule 2: burstLen
    burst_len = skeys[0][BURST]
    check_range(API, "srcSliceInfo[0].burstLen", burst_len, 1, MAX_BURST_LEN, "32-byte blocks per run", product)
    if dkeys[0][BURST] != burst_len:
        raise ParamError(f"{API}: dstSliceInfo[0].burstLen={dkeys[0][BURST]} must equal "
                         f"srcSliceInfo[0].burstLen={burst_len} on {product} (both sides move the same runs)")
    for side in _SIDES:
        for d in range(1, dim_value):
            if info[side][d][BURST] != 1:
                raise RangeError(f"{API}: {side}[{d}].burstLen={info[side][d][BURST]} must be 1 in dimensions "
                                 f">= 1 on {product} (burstLen applies to dimension 0 only)")
    run = burst_len * BLK // es  # L, elements per run

    # rule 6 (§11.9) and the exact fit (semantics.md §9 #24)
    for side in _SIDES:
        for d in range(dim_value):
            _check_indices(side, d, info[side][d], shapes[side][d], run, es, product)

    # rule 3: equal counts on both sides
    n_runs, d_runs = run_count(skeys[0], run), run_count(dkeys[0], run)
    s_counts, d_counts = [run_count(k, 1) for k in skeys[1:]], [run_count(k, 1) for k in dkeys[1:]]
    n_combos = math.prod(s_counts)  # (exact Python ints)
    if d_runs != n_runs:
        raise ParamError(f"{API}: dstSliceInfo[0] selects {d_runs} run(s) of L={run} elements but "
                         f"srcSliceInfo[0] selects {n_runs}; both sides must select the same number "
                         f"of runs in dimension 0 on {product} (the device sizes every burst group from the source)")
    if math.prod(d_counts) != n_combos:
        raise ParamError(f"{API}: dstSliceInfo selects {_product_text(d_counts)} combinations of "
                         f"dimensions >= 1 but srcSliceInfo selects {_product_text(s_counts)}; they "
                         f"must be equal on {product} (the two offset lists are walked in step)")
    # rule 5: device limits
    if n_runs > MAX_RUNS:
        raise RangeError(f"{API}: srcSliceInfo[0] selects n0={n_runs} runs, outside [1, {MAX_RUNS}] runs per "
                         f"combination (blockCount) on {product}")
    if n_combos > MAX_COMBOS:
        raise RangeError(f"{API}: srcSliceInfo selects {_product_text(s_counts)} combinations of "
                         f"dimensions >= 1, more than {MAX_COMBOS} (the device's fixed-size offset lists) on "
                         f"{product}")

    # rule 4 (§11.8): the UB side stays 32-byte aligned
    _check_ub_alignment(call, info[ub_side], shapes[ub_side], ub_side, dim_value, es)
    # rule 7 and the gap fields
    warns = _check_strides(call, info, gm_side, ub_side, n_runs, burst_len, es)

    # geometry: byte offsets of every combination, one loop of n0 runs
    span = {}
    for side in _SIDES:
        span[side] = _span(info[side], shapes[side], run, n_runs, es)
    check_span(API, "read", span["srcSliceInfo"], src.nbytes, "source")
    check_span(API, "write", span["dstSliceInfo"], dst.nbytes, "destination")
    burst = burst_len * BLK
    runs = (n_runs, (run + skeys[0][STRIDE]) * es, (run + dkeys[0][STRIDE]) * es)
    if dim_value == 2:  # the offsets of dimension 1 step evenly: one loop over them, one offset (cheaper to lower)
        (s0, sd), (d0, dd) = _row_loop(skeys, shapes["srcSliceInfo"], es), _row_loop(dkeys, shapes["dstSliceInfo"], es)
        step = Move((s0,), (d0,), burst, ((n_combos, sd, dd), runs))
    else:
        step = Move(_offsets(skeys, shapes["srcSliceInfo"], es), _offsets(dkeys, shapes["dstSliceInfo"], es), burst,
                    (runs,))
    steps = with_loop_mode((step,), loop)
    # one call never writes a byte twice: every index is < shapeValue and runs are disjoint (mixed radix);
    # only loop-mode repetitions can overlap
    exact = loop is not None and writes_overlap(steps)
    return make_plan(API, steps, src, dst, warns, exact=exact)


def _one_dim(skey, dkey, src, dst, product):
    """The plan of a one-dimensional slice (runs of dimension 0 on both sides, no loop mode) whose every rule
    passes, in one pass of plain arithmetic: what :func:`plan_keys` makes of it (a test holds the two equal, errors
    included). None, having raised nothing, when any rule fails or a warning may be due (a GM-side stride that is
    not whole 32-byte blocks on the Atlas inference AI Core): :func:`plan_keys` then raises or warns as it does. Its rules as pass /
    fail tests: shapes given, burstLen (rule 2), indices and the exact fit (rule 6), equal run counts (rule 3),
    the device limit (rule 5), the UB side's alignment (rule 4), the engine and gap fields (rule 7: as
    :func:`_check_strides`); then the spans, whose errors are :func:`plan_keys`' own."""
    s_start, s_end, s_stride, burst_len, s_shape = skey
    d_start, d_end, d_stride, d_len, d_shape = dkey
    es = src.itemsize
    if not (s_shape and d_shape and 1 <= burst_len <= MAX_BURST_LEN and d_len == burst_len and s_end < s_shape
            and d_end < d_shape):
        return None
    run = burst_len * BLK // es
    s_width, d_width = s_end - s_start + 1, d_end - d_start + 1
    s_period, d_period = run + s_stride, run + d_stride
    if s_width < run or d_width < run or (s_width + s_stride) % s_period or (d_width + d_stride) % d_period:
        return None
    n = (s_width + s_stride) // s_period
    if (d_width + d_stride) // d_period != n or n > MAX_RUNS:
        return None
    ub_start, ub_stride, gm_stride = (d_start, d_stride, s_stride) if dst.phys is Phys.UB else (s_start, s_stride,
                                                                                               d_stride)
    if ub_start * es % BLK or ub_stride * es % BLK:
        return None
    if gm_stride * es % BLK:  # (_check_strides: a GM-side stride that is not whole blocks)
        if product is _INFERENCE or (dst.phys is Phys.UB and burst_len * BLK > MAX_PAD_BYTES) or (
                n > 1 and product in _A2A3 and gm_stride * es > MAX_PAD_GAP_BYTES):
            return None
    elif n > 1 and gm_stride * es // BLK > MAX_GAP_BLOCKS:
        return None
    if n > 1 and ub_stride * es // BLK > MAX_GAP_BLOCKS:
        return None
    read = (s_start * es, (s_start + (n - 1) * s_period + run) * es)  # (_span of one dimension)
    write = (d_start * es, (d_start + (n - 1) * d_period + run) * es)
    check_span(API, "read", read, src.nbytes, "source")
    check_span(API, "write", write, dst.nbytes, "destination")
    step = _new(Move, ((read[0],), (write[0],), burst_len * BLK, ((n, s_period * es, d_period * es),)))
    return make_plan(API, (step,), src, dst, [], exact=False)


_new = tuple.__new__


def _check_key_types(skeys, dkeys, product) -> None:
    """Every entry's values against their C types on ``product``; the message names the entry."""
    for side, keys in zip(_SIDES, (skeys, dkeys)):
        for d, k in enumerate(keys):
            try:  # (the message's name of the entry only when it fails)
                SliceInfo.check_key_types(API, k, product)
            except ParamTypeError:
                SliceInfo.check_key_types(f"{API}: {side}[{d}]", k, product)


def _product_text(counts) -> str:
    total = math.prod(counts)
    return f"{total} ({' * '.join(map(str, counts))})" if len(counts) > 1 else str(total)


def _resolve_shapes(call: Call, skeys, dkeys, gm_side, ub_side, gm_shape) -> dict:
    """shapeValue per side; 0 takes the GlobalTensor's numpy shape (semantics.md §7.2, §11.10), dim 0 = last axis."""
    if gm_shape is None:  # (every shapeValue given: _plan passes the GM shape only when one is 0)
        given = ([k[SHAPE] for k in skeys], [k[SHAPE] for k in dkeys])
        if all(given[0]) and all(given[1]):
            return {"srcSliceInfo": given[0], "dstSliceInfo": given[1]}
    product = call.product
    out = {}
    for side, keys in (("srcSliceInfo", skeys), ("dstSliceInfo", dkeys)):
        given = [k[SHAPE] for k in keys]
        zeros = [d for d, s in enumerate(given) if s == 0]
        if not zeros:
            out[side] = given
            continue
        d = zeros[0]
        where = f"{API}: {side}[{d}].shapeValue=0"
        if side == ub_side:
            pos = (call.dst if side == "dstSliceInfo" else call.src).position
            raise ParamError(f"{where} would take the shape of the {pos} LocalTensor, which has none in fastcopy; "
                             f"give the extent of dimension {d} in elements on {product}")
        if skeys[0][SHAPE] != 0:
            raise ParamError(f"{where}: the device replaces shapeValues by the tensors' shapes only when "
                             f"srcSliceInfo[0].shapeValue == 0 (here {skeys[0][SHAPE]}) and otherwise uses 0; "
                             f"give the extent of dimension {d} in elements on {product}")
        if gm_shape is None or len(gm_shape) != len(keys):
            nd = "?" if gm_shape is None else len(gm_shape)
            raise ParamError(f"{where} takes the GlobalTensor's shape, but its array has {nd} dimension(s) "
                             f"{gm_shape}, not dimValue={len(keys)}; give every shapeValue on {product}")
        real = list(gm_shape[::-1])
        for d, s in enumerate(given):
            if s not in (0, real[d]):
                raise ParamError(f"{API}: {side}[{d}].shapeValue={s} differs from the GlobalTensor's extent "
                                 f"{real[d]} (numpy axis {len(keys) - 1 - d}), which the device uses for every "
                                 f"dimension when srcSliceInfo[0].shapeValue == 0 on {product}")
        out[side] = real
    return out


def _check_indices(side, d, key, shape, run, es, product) -> None:
    """Rule 6 (startIndex <= endIndex < shapeValue, 11.9) and the exact fit of runs / indices (§9 #24)."""
    start, end, stride = key[START], key[END], key[STRIDE]
    name = f"{API}: {side}[{d}]"
    if end >= shape:
        raise RangeError(f"{name}.endIndex={end} must be < shapeValue={shape} on {product} (endIndex is "
                         "inclusive)")
    if d == 0:
        width = end - start + 1
        if width < run:
            raise RangeError(f"{name}: endIndex - startIndex + 1 = {width} elements (startIndex={start}, "
                             f"endIndex={end}) is less than one run of L={run} elements (burstLen*32 bytes / "
                             f"sizeof(T)={es}) on {product}")
        period = run + stride
        if (width + stride) % period:
            n = (width + stride) // period
            used = n * run + (n - 1) * stride
            raise ParamError(f"{name} ends inside a run or gap: endIndex - startIndex + 1 = {width} elements is "
                             f"not N*L + (N-1)*stride for a whole N (L={run}, stride={stride}); the device copies "
                             f"{n} run(s) and silently drops {width - used} element(s): set "
                             f"endIndex={start + used - 1} on {product}")
        return
    if start > end:
        raise RangeError(f"{name}.startIndex={start} must be <= endIndex={end} on {product}")
    if (end - start) % (1 + stride):
        last = start + (end - start) // (1 + stride) * (1 + stride)
        raise ParamError(f"{name}.endIndex={end} is not a selected index (startIndex={start} plus a multiple of "
                         f"1 + stride = {1 + stride}); the device stops at index {last}: set endIndex={last} on "
                         f"{product}")


def _check_ub_alignment(call: Call, keys, shapes, side, dim_value, es) -> None:
    """Rule 4 / 11.8: UB-side dim-0 start, stride and (dimValue >= 2) row length are 32-byte multiples."""
    pos = (call.dst if side == "dstSliceInfo" else call.src).position
    checks = [("startIndex", keys[0][START]), ("stride", keys[0][STRIDE])]
    if dim_value >= 2:
        checks.append(("shapeValue", shapes[0]))
    for field, v in checks:
        if v * es % BLK:
            why = (" (with dimValue >= 2 every row of dimensions >= 1 must start 32-byte aligned)"
                   if field == "shapeValue" else "")
            raise AlignmentError(f"{API}: {side}[0].{field}={v} elements = {v * es} bytes is not a multiple of "
                                 f"32 on the UB side ({pos}) on {call.product}: UB addresses must be 32-byte "
                                 f"aligned{why}")


def _check_strides(call: Call, info, gm_side, ub_side, n_runs, burst_len, es) -> list:
    """Rule 7 (unaligned GM stride: 16-bit run length GM->UB on A2/A3/350, miscomputed on 310P) and the gap
    fields of the per-combination copy; returns the warnings."""
    product = call.product
    gm_stride = info[gm_side][0][STRIDE]
    ub_stride = info[ub_side][0][STRIDE]
    warns = []
    unaligned = gm_stride * es % BLK != 0
    what = f"{gm_side}[0].stride={gm_stride} elements = {gm_stride * es} bytes"
    if unaligned and product is not _INFERENCE and call.path == (Phys.GM, Phys.UB) \
            and burst_len * BLK > MAX_PAD_BYTES:
        raise RangeError(f"{API}: srcSliceInfo[0].burstLen={burst_len} is {burst_len * BLK} bytes per run, more "
                         f"than {MAX_PAD_BYTES}: with a GM-side stride that is not a multiple of 32 ({what}) the "
                         f"runs go through an engine with a 16-bit byte length on {product}; use burstLen <= "
                         f"{MAX_PAD_BYTES // BLK} or a stride of whole 32-byte blocks")
    if unaligned and product is _INFERENCE and (n_runs > 2 or (n_runs > 1 and ub_stride)):
        why = f"n0={n_runs} > 2 runs" if n_runs > 2 else f"the UB-side {ub_side}[0].stride={ub_stride} is not 0"
        warns.append(f"{API}: on {product} a GM-side stride that is not a multiple of 32 bytes ({what}) is "
                     f"miscomputed by the device when there are more than 2 runs or the UB-side stride is non-zero "
                     f"(here {why}); fastcopy computes the documented result (semantics.md §9 #36)")
    if n_runs > 1:  # the gaps take effect: they must fit their fields
        ub_gap = ub_stride * es // BLK
        if ub_gap > MAX_GAP_BLOCKS:
            raise RangeError(f"{API}: {ub_side}[0].stride={ub_stride} elements is a UB-side gap of {ub_gap} "
                             f"blocks, outside [0, {MAX_GAP_BLOCKS}] 32-byte blocks on {product}")
        if not unaligned and gm_stride * es // BLK > MAX_GAP_BLOCKS:
            raise RangeError(f"{API}: {what} is a GM-side gap of {gm_stride * es // BLK} blocks, outside "
                             f"[0, {MAX_GAP_BLOCKS}] 32-byte blocks on {product}")
        if unaligned and product in _A2A3 and gm_stride * es > MAX_PAD_GAP_BYTES:
            raise RangeError(f"{API}: {what} is outside [0, {MAX_PAD_GAP_BYTES}] bytes (uint32 GM stride of the "
                             f"DataCopyPad engine) on {product}")
    return warns


def _span(keys, shapes, run, n_runs, es) -> tuple:
    """(lo, hi) bytes touched by one side, computed with Python ints (no overflow before the bounds check)."""
    lo = keys[0][START]
    hi = lo + (n_runs - 1) * (run + keys[0][STRIDE]) + run
    pitch = 1
    for d in range(1, len(keys)):
        pitch *= shapes[d - 1]
        k = keys[d]
        last = k[START] + (run_count(k, 1) - 1) * (1 + k[STRIDE])
        lo += k[START] * pitch
        hi += last * pitch
    return lo * es, hi * es


def _row_loop(keys, shapes, es) -> tuple:
    """``(first offset, step)`` in bytes of the runs' starts over dimension 1 of a two-dimensional slice: the
    offsets list :func:`_offsets` makes is this arithmetic progression (a test holds them equal)."""
    k = keys[1]
    pitch = shapes[0] * es
    return k[START] * pitch + keys[0][START] * es, (1 + k[STRIDE]) * pitch


def _offsets(keys, shapes, es) -> tuple:
    """Byte offset of the first run of every combination of dims >= 1, dim 1 fastest (semantics.md §7.2)."""
    if len(keys) <= 2:  # (a few combinations: plain Python is cheaper than numpy, and the same ints)
        if len(keys) == 1:
            return (keys[0][START] * es,)
        k, pitch = keys[1], shapes[0]
        step = 1 + k[STRIDE]
        return tuple(((k[START] + t * step) * pitch + keys[0][START]) * es for t in range(run_count(k, 1)))
    offs = np.array([keys[0][START]], np.int64)
    pitch = 1
    for d in range(1, len(keys)):
        pitch *= shapes[d - 1]
        k = keys[d]
        idx = k[START] + np.arange(run_count(k, 1), dtype=np.int64) * (1 + k[STRIDE])
        offs = (idx[:, None] * pitch + offs[None, :]).reshape(-1)
    return tuple((offs * es).tolist())


"""Basic DataCopy (semantics.md §3): ``count`` and ``DataCopyParams`` forms on every GM/UB/L1/BiasTable/Fixpipe path.

Burst ``i`` (§3.2): ``copy(D + i*(blockLen*Lb + dstGap*Gd), S + i*(blockLen*Lb + srcGap*Gs), blockLen*Lb)``;
units ``Lb``, ``Gs``, ``Gd`` per path and product from :data:`UNITS` (semantics.md §3.3). The L1 -> Fixpipe gaps are
head-to-head. ``count`` = ``DataCopyParams(1, floor(count*es / Lc), 0, 0)`` (semantics.md §3.4).
"""

from __future__ import annotations

from functools import lru_cache

from ..dtypes import ASCEND_DTYPES, ascend_name
from ..errors import RangeError, UnsupportedError
from ..integers import as_int
from ..params import DataCopyParams
from ..dma.lower import make_plan, single_burst
from ..dma.steps import Convert, Move, writes_overlap
from ..products import DATACOPY_CONVERT, DATACOPY_PATHS, ZERO_IS_NOOP, Phys, Product
from .loopmode import loop_mode, with_loop_mode
from .common import Call, check_alignment, check_path, check_range, core_of, rules_key

API = "DataCopy"
_INT4 = ASCEND_DTYPES["int4b_t"]
_350 = Product.ATLAS_350

#: (path, is 350) -> (blockLen unit Lb, srcGap unit Gs, dstGap unit Gd, head-to-head, count divisor Lc) in bytes.
UNITS = {
    ((Phys.L1, Phys.BT), False): (64, 32, 64, False, 64),
    ((Phys.L1, Phys.BT), True): (32, 32, 32, False, 32),
    # L1 -> Fixpipe buffer: 128-byte blockLen and dstGap on every product (Atlas 350 included: its implementation
    # doubles both for the 64-byte instruction), head-to-head; see docs/semantics-decisions.md.
    ((Phys.L1, Phys.FB), False): (128, 32, 128, True, 128),
    ((Phys.L1, Phys.FB), True): (128, 32, 128, True, 128),
}
_DEFAULT_UNITS = (32, 32, 32, False, 32)
_UNIT_NAMES = {32: "32-byte blocks", 64: "64-byte units", 128: "128-byte units"}


def units(src_phys: Phys, dst_phys: Phys, product: Product) -> tuple:
    return UNITS.get(((src_phys, dst_phys), product is _350), _DEFAULT_UNITS)


def plan_data_copy(dst, src, arg, pkey=None, cached: bool = True):
    """Plan ``DataCopy(dst, src, count | DataCopyParams)`` (cached; ``pkey``: the DataCopyParams' key, when the
    caller has it; ``cached=False``: the same plan, neither looked up nor kept in the cache, for a caller whose
    parameters are new at every call)."""
    pipe = core_of(API, dst, src)
    loop = loop_mode(pipe, src.memory.phys, dst.memory.phys) if pipe.state else None
    if pkey is not None or isinstance(arg, DataCopyParams):
        planner = _plan_params if cached else _plan_params.__wrapped__
        return planner(arg.key() if pkey is None else pkey, src._sig, dst._sig, pipe.product, loop)
    if type(arg) is not int:  # numpy integers: a Python int before any arithmetic (np.uint8(200) * 4 wraps)
        arg = as_int(arg, f"{API}(count)", "count", "uint32_t")
    return (_plan_count if cached else _plan_count.__wrapped__)(arg, src._sig, dst._sig, pipe.product, loop)


@lru_cache(maxsize=4096)
def _plan_count(count, src, dst, product, loop):
    call = Call(f"{API}(count)", product, src, dst)
    api = call.api
    _check_common(call)
    check_range(api, "count", count, 0, 2**32 - 1, "elements (uint32_t)", product)
    lb, _, _, _, lc = units(src.phys, dst.phys, product)
    es = src.itemsize
    n = count * es // lc
    warns = []
    if count * es % lc:
        warns.append(f"{api}: count*sizeof({ascend_name(src.dtype)}) = {count * es} bytes is not a multiple "
                     f"of {lc}; rounded down to {n * lc} bytes on {product} (the rest is not copied)")
    if n == 0 and product not in ZERO_IS_NOOP:
        raise RangeError(f"{api}: count={count} moves 0 whole {lc}-byte units (count*sizeof(T) = {count * es} "
                         f"bytes); blockLen=0 is outside [1, 65535] on {product}")
    if n > 65535:
        raise RangeError(f"{api}: count={count} gives blockLen={n}, outside [1, 65535] {_UNIT_NAMES[lc]} on "
                         f"{product}; split the copy or use DataCopyParams with blockCount")
    return _build(call, 1, n, 0, 0, warns, loop)


_API_PARAMS = f"{API}(DataCopyParams)"
_new = tuple.__new__
_ZERO = (0,)


@lru_cache(maxsize=4096)
def _plan_params(pkey, src, dst, product, loop):
    call = _new(Call, (_API_PARAMS, product, src, dst))
    api = call.api
    DataCopyParams.check_key_types(api, pkey, product)
    _check_common(call)
    block_count, block_len, src_gap, dst_gap = pkey
    unit = units(src.phys, dst.phys, product)
    lb = unit[0]
    if block_count == 0 or block_len == 0:
        if product in ZERO_IS_NOOP:
            return make_plan(api, (), src, dst)
        field = "blockCount" if block_count == 0 else "blockLen"
        lo_hi = "[1, 4095] bursts" if field == "blockCount" else f"[1, 65535] {_UNIT_NAMES[lb]}"
        raise RangeError(f"{api}: {field}=0 is outside {lo_hi} on {product} (0 is a no-op only on "
                         "Atlas A2, Atlas A3 and Atlas 350)")
    if not (block_count <= 4095 and block_len <= 65535):  # (>= 1 both: above)
        check_range(api, "blockCount", block_count, 1, 4095, "bursts", product)
        check_range(api, "blockLen", block_len, 1, 65535, _UNIT_NAMES[lb], product)
    return _build(call, block_count, block_len, src_gap, dst_gap, [], loop, unit)


#: calls whose path, dtypes and alignment passed (a pure function of rules_key(call); errors raise every time)
_COMMON_OK: set = set()


def _check_common(call: Call) -> None:
    key = rules_key(call)
    if key in _COMMON_OK:
        return
    _check_common_rules(call)
    if len(_COMMON_OK) >= 4096:
        _COMMON_OK.clear()
    _COMMON_OK.add(key)


def _check_common_rules(call: Call) -> None:
    src_dt, dst_dt = call.src.dtype, call.dst.dtype
    if src_dt == _INT4 or dst_dt == _INT4:
        raise UnsupportedError(f"{call.api}: int4b_t is not supported by basic DataCopy (semantics.md §8.4)")
    if src_dt != dst_dt:
        pairs = DATACOPY_CONVERT.get(call.product, frozenset())
        if call.path != (Phys.L1, Phys.BT) or (src_dt, dst_dt) not in pairs:
            have = ", ".join(f"{ascend_name(a)}->{ascend_name(b)}" for a, b in sorted(pairs, key=str)) or "none"
            raise UnsupportedError(f"{call.api}: {ascend_name(src_dt)} -> {ascend_name(dst_dt)} on "
                                   f"{call.path_text} is not supported on {call.product}; DataCopy converts only "
                                   f"on C1->C2 (L1->BiasTable): {have}")
        if "count" in call.api:
            raise UnsupportedError(f"{call.api}: the dtype-changing L1->BiasTable prototype takes DataCopyParams")
        check_path(call, DATACOPY_PATHS)
    else:
        check_path(call, DATACOPY_PATHS, src_dt)
    check_alignment(call, "DataCopy")


def _build(call: Call, block_count, block_len, src_gap, dst_gap, warns, loop=None, unit=None):
    """(``unit``: :func:`units` of the call, when the caller has it)"""
    if call.product is _350 and call.path == (Phys.L1, Phys.BT) and call.src.itemsize == 4 and block_len % 2:
        raise RangeError(f"{call.api}: blockLen={block_len} must be even for 4-byte types on L1->BiasTable on "
                         f"{call.product} (32-byte units of source)")
    lb, gs, gd, head, _ = units(call.src.phys, call.dst.phys, call.product) if unit is None else unit
    burst = block_len * lb
    if block_count == 0 or burst == 0:
        return make_plan(call.api, (), call.src, call.dst, warns)
    src_dt, dst_dt = call.src.dtype, call.dst.dtype
    if src_dt != dst_dt:  # L1 -> BiasTable widening (semantics.md §3.6): bursts counted on the source
        grow = dst_dt.itemsize // src_dt.itemsize
        step = Convert((0,), (0,), burst // src_dt.itemsize,
                       ((block_count, burst + src_gap * gs, grow * burst + dst_gap * gd),), src_dt, dst_dt)
    elif head:
        step = Move((0,), (0,), burst, ((block_count, src_gap * gs, dst_gap * gd),))
    else:  # (a namedtuple made from its fields, without the generated __new__: the same Move)
        step = _new(Move, (_ZERO, _ZERO, burst, ((block_count, burst + src_gap * gs, burst + dst_gap * gd),)))
        if loop is None:  # (make_plan's first builder, without its dispatch: the bursts never overlap)
            steps = (step,)
            plan = single_burst(call.api, steps, call.src, call.dst, warns)
            return plan if plan is not None else make_plan(call.api, steps, call.src, call.dst, warns)
    steps = with_loop_mode((step,), loop)
    # tail-to-head bursts never touch each other (stride >= burst): only loop mode and head-to-head gaps can
    exact = writes_overlap(steps) if loop is not None or head else False
    return make_plan(call.api, steps, call.src, call.dst, warns, exact=exact)

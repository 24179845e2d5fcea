"""DataCopyPad (semantics.md §4): non-aligned copies with padding, the pad register (PADREG), Compact mode, loop mode.

GM -> local, Normal (4.2), ``lp = leftPadding*es``, ``rp = rightPadding*es``, ``P = AU(lp + bl + rp, 32)``::

    s = S + i*(bl + srcStride);  d = D + i*(P + dstStride*32)
    [d, d+lp) LEFT | [d+lp, d+lp+bl) <- [s, s+bl) | [.., +rp) RIGHT | [.., d+P) DUMMY

GM -> local, Compact (4.4, Atlas 350): ``copy(D + i*bl, S + i*(bl + srcStride), bl)``, TAIL up to
``D + AU(n*bl, 32)``. Local -> GM (4.5): ``copy(D + i*(bl + dstStride), S + i*(AU(bl, 32) + srcStride*32), bl)``
(Compact reads ``S + i*bl``). Fill values: the tables of 4.3 (:func:`normal_fills`, :func:`compact_fill`).
Loop mode (4.8) repeats the whole call (:mod:`.loopmode`). UB -> TSCM (4.6) lives in :mod:`.pad_tscm`.
"""

from __future__ import annotations

import enum
from functools import lru_cache

from ..dtypes import as_dtype, ascend_name
from ..errors import ParamTypeError, RangeError, UnsupportedError
from ..params import DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, Nd2NzParams
from ..dma.lower import make_plan, make_tailed_plan, tailed_rows
from ..dma.steps import Fill, Move, writes_overlap
from ..products import DATACOPYPAD_PATHS, PAD_350_ENGINE, SET_PAD_VALUE, ZERO_IS_NOOP, Phys
from .common import Call, check_operands, check_range, core_of
from .loopmode import loop_mode, with_loop_mode
from .padvalue import scalar_from_key, scalar_key, scalar_pattern, show

API = "DataCopyPad"
BLK = 32
#: the "first element of the burst" fill (semantics.md §4.3); other fills are ``bytes`` (defined) or None (undefined)
FIRST = "first"
#: pipe.state key of the pad register: the bit pattern (its length is the element width), ("number", key) for a
#: plain Python number set without a type, or absent (never set)
PADREG = "padreg"


class PaddingMode(enum.Enum):
    """Atlas 350 ``PaddingMode`` template argument (semantics.md §4.4)."""

    __hash__ = object.__hash__  # members are singletons: identity hash, computed in C (plan-cache keys)

    Normal = 0
    Compact = 1


def au(x: int, a: int) -> int:
    """AU(x, a) = ceil(x / a) * a."""
    return -(-x // a) * a


def pad_register(value, product, dtype=None):
    """What ``SetPadValue(value)`` leaves in the pad register (semantics.md §4.3): the bit pattern of a typed value, or
    ``("number", key)`` for a plain Python number (converted to each reading copy's type there)."""
    api = "SetPadValue"
    if product not in SET_PAD_VALUE:
        raise UnsupportedError(f"{api}: does not exist on {product} (the pad register is set only by "
                               "DataCopyPad calls with isPad=true there)")
    if dtype is None and not hasattr(value, "dtype"):
        if isinstance(value, (bool, int, float, complex)):
            return ("number", scalar_key(value))
        raise ParamTypeError(f"{api}: value={show(value)} is not a number (a Python or numpy scalar) on "
                             f"{product}")
    return register_pattern(api, value, as_dtype(dtype if dtype is not None else value.dtype), product)


def register_pattern(api: str, value, dt, product) -> bytes:
    """The register's bit pattern for ``value`` as a ``dt`` (exact; 0 only for 8-byte types)."""
    pattern = scalar_pattern(value, dt, api, "value", product)
    if dt.itemsize == 8 and any(pattern):
        raise RangeError(f"{api}: value={show(value)} must be 0 for 8-byte types ({ascend_name(dt)}) on "
                         f"{product}: the hardware replicates a 32-bit pad value (semantics.md §4.3, §11.12)")
    return pattern


def _register(padreg, dt, product):
    """The register as this copy's fill pattern source: bytes (any width), or None if never set. A number set
    by SetPadValue without a type is converted to ``dt`` here."""
    if isinstance(padreg, tuple):
        return register_pattern("SetPadValue", scalar_from_key(padreg[1]), dt, product)
    return padreg


def parse_extra(args, mode):
    """(padParams, Nd2NzParams, PaddingMode) from the arguments after copyParams."""
    pad = nd = None
    for a in args:
        if isinstance(a, (DataCopyPadExtParams, DataCopyPadParams)) and pad is None:
            pad = a
        elif isinstance(a, Nd2NzParams) and nd is None:
            nd = a
        elif isinstance(a, (PaddingMode, str)):
            mode = a
        else:
            raise UnsupportedError(f"{API}: unexpected argument {a!r}; after copyParams it takes padParams "
                                   "(DataCopyPadExtParams / DataCopyPadParams), Nd2NzParams or a PaddingMode")
    try:
        mode = PaddingMode[mode] if isinstance(mode, str) else PaddingMode(mode)
    except (KeyError, ValueError):
        raise UnsupportedError(f"{API}: mode={mode!r} is not a PaddingMode (Normal, Compact)") from None
    return pad, nd, mode


# ------------------------------------------------------------------------------------------ shared validation
def copy_key(copy_params) -> tuple:
    """``(struct name, (blockCount, blockLen, srcStride, dstStride, rsv))`` of either copy-params struct."""
    if isinstance(copy_params, DataCopyExtParams):
        return "DataCopyExtParams", copy_params.key()
    if isinstance(copy_params, DataCopyParams):
        return "DataCopyParams", copy_params.key() + (0,)
    raise UnsupportedError(f"{API}: copyParams must be DataCopyExtParams or DataCopyParams, got "
                           f"{type(copy_params).__name__}")


def check_copy(call: Call, kind: str, key: tuple, mode: PaddingMode, gm_src: bool):
    """Validate the copy params of a GM <-> local call (semantics.md §2.1, §2.2, §4.7, §8.1); None means a no-op."""
    product, es = call.product, call.src.itemsize
    struct = DataCopyExtParams if kind == "DataCopyExtParams" else DataCopyParams
    struct.check_key_types(call.api, key[:len(struct.FIELDS)], product)
    check_operands(call, DATACOPYPAD_PATHS, "DataCopyPad")
    if mode is PaddingMode.Compact and product not in PAD_350_ENGINE:
        raise UnsupportedError(f"{API}: mode=PaddingMode.Compact exists only on Atlas 350, not on {product}")
    bc, bl, ss, ds, rsv = key
    if rsv:
        check_range(call.api, "rsv", rsv, 0, 0, "(reserved, keep 0)", product)
    if bc == 0 or bl == 0:
        if product in ZERO_IS_NOOP:
            return None
        field = "blockCount" if bc == 0 else "blockLen"
        raise RangeError(f"{call.api}: {field}=0 is outside [1, {4095 if bc == 0 else _max_len(kind)}] "
                         f"{'bursts' if bc == 0 else 'bytes'} on {product} (0 is a no-op only on Atlas A2, "
                         "Atlas A3 and Atlas 350)")
    if bc > 4095 or bl > 65535:  # (the ranges checked only where they can fail: bc, bl >= 1 here)
        check_range(call.api, "blockCount", bc, 1, 4095, "bursts", product)
        check_range(call.api, "blockLen", bl, 1, _max_len(kind), "bytes", product)
    if bl % es:
        raise RangeError(f"{call.api}: blockLen={bl} bytes is not a multiple of sizeof({ascend_name(call.src.dtype)})"
                         f" = {es} on {product}")
    if product in PAD_350_ENGINE and kind == "DataCopyExtParams":
        local_field = "dstStride" if gm_src else "srcStride"
        ignored = mode is PaddingMode.Compact  # Compact ignores the local-side stride (4.4, 11.7)
        if gm_src:
            check_range(call.api, "srcStride", ss, -bl, 2**40 - 1, "bytes (GM side, >= -blockLen)", product)
        else:
            check_range(call.api, "dstStride", ds, 0, 2**40 - 1, "bytes (GM side)", product)
        if not ignored:
            check_range(call.api, local_field, ds if gm_src else ss, 0, 65535, "32-byte blocks (local side)",
                        product)
    return bc, bl, ss, ds


def _max_len(kind: str) -> int:
    return 2097151 if kind == "DataCopyExtParams" else 65535


def _may_overlap(steps, loop) -> bool:
    """Writes of one call never overlap (each burst's period >= its footprint, semantics.md §4.2/§4.4/§4.5); with loop
    mode the repetitions of the call footprint ``[0, F)`` must clear each other, else ask the exact test."""
    if loop is None:
        return False
    n1, n2, _, d1, _, d2 = loop
    return writes_overlap(steps, ((n2, d2), (n1, d1)))


def _finish(call: Call, steps, warns, loop):
    if loop is None:  # (one call's writes never overlap: rows with a dummy tail are one kernel step)
        return (make_tailed_plan if len(steps) > 1 else make_plan)(call.api, steps, call.src, call.dst, warns)
    exact = _may_overlap(steps, loop)
    return make_plan(call.api, with_loop_mode(steps, loop), call.src, call.dst, warns, exact=exact)


# ----------------------------------------------------------------------------------------------- local -> GM
def plan_pad_out(dst, src, copy_params, mode=PaddingMode.Normal):
    """Plan ``DataCopyPad(gm, local, copyParams)`` (cached)."""
    pipe = core_of(API, dst, src)
    kind, key = copy_key(copy_params)
    loop = loop_mode(pipe, src.memory.phys, dst.memory.phys) if pipe.state else None
    return _plan_out(kind, key, PaddingMode(mode), src._sig, dst._sig, pipe.product, loop)


@lru_cache(maxsize=4096)
def _plan_out(kind, key, mode, src, dst, product, loop):
    call = _new(Call, (_APIS[kind], product, src, dst))
    if src.phys is Phys.GM or dst.phys is not Phys.GM:
        raise UnsupportedError(f"{call.api}: path {call.path_text} is not a local -> GM path")
    burst = check_copy(call, kind, key, mode, gm_src=False)
    if burst is None:
        return make_plan(call.api, (), src, dst)
    bc, bl, ss, ds = burst
    warns = []
    if mode is PaddingMode.Compact and ss:
        warns.append(f"{call.api}: srcStride={ss} is ignored in Compact mode (UB bursts are packed back to back, "
                     f"semantics.md §11.7) on {product}")
    return _finish(call, out_steps(bc, bl, ss, ds, mode), warns, loop)


def out_steps(bc, bl, ss, ds, mode=PaddingMode.Normal) -> tuple:
    """Local -> GM bursts (semantics.md §4.5): ``copy(i*(bl + ds), i*(AU(bl, 32) + ss*32), bl)``; Compact reads
    ``i*bl``."""
    src_pitch = bl if mode is PaddingMode.Compact else au(bl, BLK) + ss * BLK
    return (Move((0,), (0,), bl, ((bc, src_pitch, bl + ds),)),)


# ----------------------------------------------------------------------------------------------- GM -> local
def plan_pad_in(dst, src, copy_params, pad_params, mode=PaddingMode.Normal, pipe=None):
    """Plan ``DataCopyPad(local, gm, copyParams, padParams)`` (cached). Returns ``(plan, PADREG after the call
    or None if unchanged)``. ``pipe``: what ``core_of`` returned for these tensors (checked again when None)."""
    if pipe is None:
        pipe = core_of(API, dst, src)
    kind = copy_key(copy_params)[0]  # (checks its type)
    if not isinstance(pad_params, (DataCopyPadExtParams, DataCopyPadParams)):
        raise UnsupportedError(f"{API}: padParams must be DataCopyPadExtParams or DataCopyPadParams, got "
                               f"{type(pad_params).__name__}")
    return plan_pad_in_keys(dst, src, kind, copy_params.key(), type(pad_params).__name__, pad_params.key(),
                            mode if type(mode) is PaddingMode else PaddingMode(mode), pipe)


def plan_pad_in_keys(dst, src, kind: str, key: tuple, pkind: str, pad_key: tuple, mode: PaddingMode, pipe):
    """:func:`plan_pad_in` from the parameters' keys, taken once by the caller (``DataCopyPad`` takes them for its
    repeat cache): ``kind`` / ``pkind`` the two structs' class names, ``key`` / ``pad_key`` their ``key()`` (the
    legacy ``DataCopyParams`` key without the ``rsv`` the Ext struct has), ``pipe`` what ``core_of`` returned."""
    if (pkind == "DataCopyPadParams") != (kind == "DataCopyParams"):
        raise UnsupportedError(f"{API}: {kind} goes with {_PAIR[kind]}, not {pkind} (the two prototypes are "
                               "DataCopyExtParams + DataCopyPadExtParams<T> and DataCopyParams + DataCopyPadParams)")
    if kind == "DataCopyParams":  # (the legacy struct: rsv 0, as copy_key gives it)
        key += (0,)
    is_pad, lp, rp, value = pad_key
    state = pipe.state
    loop = loop_mode(pipe, src.memory.phys, dst.memory.phys) if state else None
    return _plan_in(kind, key, pkind, (is_pad, lp, rp), scalar_key(value), mode, src._sig, dst._sig, pipe.product,
                    state.get(PADREG), loop)


#: a named tuple made from its fields without its generated ``__new__`` (~0.1 us less per object of a new plan)
_new = tuple.__new__
_PAIR = {"DataCopyExtParams": "DataCopyPadExtParams", "DataCopyParams": "DataCopyPadParams"}
#: the API name of a call by its copyParams struct (the messages' ``DataCopyPad(DataCopyExtParams)``)
_APIS = {kind: f"{API}({kind})" for kind in _PAIR}


@lru_cache(maxsize=4096)
def _plan_in(kind, key, pkind, pkey, vkey, mode, src, dst, product, padreg, loop):
    call = _new(Call, (_APIS[kind], product, src, dst))
    if src.phys is not Phys.GM or dst.phys is Phys.GM:
        raise UnsupportedError(f"{call.api}: path {call.path_text} is not a GM -> local path")
    es = src.itemsize
    burst = check_copy(call, kind, key, mode, gm_src=True)
    is_pad, lp_el, rp_el = pkey
    value = _pad_pattern(pkind, vkey, is_pad, src.dtype, product)  # (paddingValue as the element's bit pattern)
    padreg_after = value if is_pad else None
    if burst is None:
        return make_plan(call.api, (), src, dst), padreg_after
    bc, bl, ss, ds = burst
    is350 = product in PAD_350_ENGINE
    if mode is PaddingMode.Normal and not (0 <= lp_el <= BLK // es and 0 <= rp_el <= BLK // es):
        for field, n in (("leftPadding", lp_el), ("rightPadding", rp_el)):  # (Compact ignores them, §4.4)
            check_range(f"{API}({pkind})", field, n, 0, BLK // es,
                        f"elements (at most 32 bytes of {ascend_name(src.dtype)})", product)
    if not is_pad and isinstance(padreg, tuple) and _reads_register(is350, mode, bc * bl, bl, lp_el or rp_el):
        padreg = _register(padreg, src.dtype, product)
    elif isinstance(padreg, tuple):
        padreg = None  # a number set without a type, not read by this call
    warns = []
    if mode is PaddingMode.Compact:
        if ds:
            warns.append(f"{call.api}: dstStride={ds} is ignored in Compact mode (bursts are packed back to back, "
                         f"semantics.md §4.4) on {product}")
        tail = au(bc * bl, BLK) - bc * bl
        fill = compact_fill(is_pad, value, padreg, es)
        _warn_undefined(warns, call, fill is None and tail > 0, padreg, es, "the Compact tail")
        steps = (Move((0,), (0,), bl, ((bc, bl + ss, bl),)),)
        if tail:
            steps += (Fill((bc * bl,), tail, (), fill),)
        return _finish(call, steps, warns, loop), padreg_after
    lp, rp = lp_el * es, rp_el * es
    side, dummy = normal_fills(is350, is_pad, bool(lp or rp), value, padreg, es)
    dummy_bytes = au(lp + bl + rp, BLK) - lp - bl - rp
    if side is None and (lp or rp):
        _warn_undefined(warns, call, True, padreg, es, "the left/right padding")
    if dummy is None and dummy_bytes > 0:
        _warn_undefined(warns, call, True, padreg, es, "the dummy bytes up to 32 bytes")
    if loop is None and not (lp or rp) and dummy_bytes and dummy is not None:  # (a new call's usual form)
        return _rows(call, bc, bl, ss, ds, es, dummy, dummy_bytes, warns), padreg_after
    return _finish(call, in_steps(bc, bl, ss, ds, lp, rp, es, side, dummy), warns, loop), padreg_after


def _rows(call: Call, bc: int, bl: int, ss: int, ds: int, es: int, dummy, dummy_bytes: int, warns):
    """The plan of Normal bursts without padding whose dummy bytes have a value (a fill, or the burst's first
    element), no loop mode: the steps :func:`in_steps` makes (the data, the dummy), as one ``copy_tailed`` kernel
    step made by :func:`fastcopy.dma.lower.tailed_rows` from the fields that :func:`fastcopy.dma.lower.tailed_plan`
    would read back off the steps (a test holds the plans equal, errors included); else (too large for it) as
    :func:`_finish` plans them."""
    outer = ((bc, bl + ss, bl + dummy_bytes + ds * BLK),)
    data = _new(Move, ((0,), (0,), bl, outer))
    tail = _fill_step(bl, dummy_bytes, dummy, outer[0], es)
    if dummy == FIRST:  # (the first element repeated: a Move of source stride 0, its unit the element)
        unit = tail.burst
        plan = tailed_rows(call.api, (data, tail), call.src, call.dst, warns, (), outer, 0, 0, 0, 0, 0, 0, bl, 0, 0,
                           unit * tail.loops[1][0], bl, unit, 0, None)
    else:
        plan = tailed_rows(call.api, (data, tail), call.src, call.dst, warns, (), outer, 0, 0, 0, 0, 0, 0, bl, 0, 0,
                           dummy_bytes, bl, dummy_bytes, None, dummy)
    return plan if plan is not None else make_plan(call.api, (data, tail), call.src, call.dst, warns)


def _reads_register(is350: bool, mode, total: int, bl: int, padded) -> bool:
    """Whether an isPad=false call fills any byte from PADREG (semantics.md §4.3 tables)."""
    if mode is PaddingMode.Compact:
        return total % BLK != 0
    return bool(padded) or (is350 and bl % BLK != 0)


@lru_cache(maxsize=1024)
def _pad_pattern(pkind: str, vkey, is_pad: bool, dt, product) -> bytes:
    """paddingValue as the element bit pattern; 0 for 8-byte types and for the legacy struct (when used)."""
    api = f"{API}({pkind})"
    raw = scalar_from_key(vkey)
    if pkind == "DataCopyPadParams":
        if is_pad and raw != 0:
            raise RangeError(f"{api}: paddingValue={show(raw)} must be 0 on {product} (legacy uint64 paddingValue; use "
                             "DataCopyPadExtParams<T> for a pad value)")
        return bytes(dt.itemsize)
    pattern = scalar_pattern(raw, dt, api, "paddingValue", product)
    if is_pad and dt.itemsize == 8 and any(pattern):
        raise RangeError(f"{api}: paddingValue={show(raw)} must be 0 for 8-byte types ({ascend_name(dt)}) on "
                         f"{product}: the hardware replicates a 32-bit pad value (semantics.md §4.3)")
    return pattern


def _warn_undefined(warns, call: Call, happens: bool, padreg, es: int, what: str) -> None:
    if not happens:
        return
    if padreg is None:
        why = ("the pad register was never set on this core (call SetPadValue, or an earlier DataCopyPad with "
               "isPad=true)")
    else:
        why = (f"the pad register holds a {len(padreg)}-byte value but this copy has {es}-byte elements "
               "(semantics.md §11.12)")
    warns.append(f"{call.api}: isPad=false fills {what} from the pad register, but {why}: those bytes are "
                 f"undefined on {call.product}")


def normal_fills(is350: bool, is_pad: bool, padded: bool, value: bytes, padreg, es: int):
    """(LEFT/RIGHT fill, DUMMY fill) of Normal mode, the tables of semantics.md §4.3.

    A2/A3/310B: left = right = 0 -> DUMMY = first; else paddingValue if isPad, else PADREG.
    350: isPad -> paddingValue; else PADREG if set, otherwise LEFT/RIGHT undefined and DUMMY = first when
    left = right = 0, undefined otherwise. PADREG set with another element width is undefined (§11.12).
    """
    reg = padreg if padreg is not None and len(padreg) == es else None
    if not is350:
        if not padded:
            return None, FIRST
        fill = value if is_pad else reg
        return fill, fill
    if is_pad:
        return value, value
    if padreg is not None:
        return reg, reg
    return None, (None if padded else FIRST)


def compact_fill(is_pad: bool, value: bytes, padreg, es: int):
    """Compact TAIL fill (semantics.md §4.3, the Atlas 350 table): paddingValue if isPad, else PADREG if set (this
    width)."""
    if is_pad:
        return value
    return padreg if padreg is not None and len(padreg) == es else None


def in_steps(bc, bl, ss, ds, lp, rp, es, side, dummy) -> tuple:
    """GM -> local Normal bursts (semantics.md §4.2) as plan steps; burst ``i`` at ``i*(P + ds*32)`` in the
    destination."""
    p = au(lp + bl + rp, BLK)
    outer = (bc, bl + ss, p + ds * BLK)
    dummy_bytes = p - lp - bl - rp
    steps = []
    if lp:
        steps.append(_fill_step(0, lp, side, outer, es))
    steps.append(_new(Move, ((0,), (lp,), bl, (outer,))))
    if rp and side == dummy:
        steps.append(_fill_step(lp + bl, rp + dummy_bytes, side, outer, es))
        return tuple(steps)
    if rp:
        steps.append(_fill_step(lp + bl, rp, side, outer, es))
    if dummy_bytes:
        steps.append(_fill_step(lp + bl + rp, dummy_bytes, dummy, outer, es))
    return tuple(steps)


def _fill_step(off: int, nbytes: int, fill, outer: tuple, es: int):
    """``nbytes`` at ``off`` of every burst: a constant pattern, undefined (None), or FIRST: the burst's first
    source element, repeated by a zero source stride (8-byte types: its first 32-bit word, semantics.md §11.11)."""
    count, _, dst_pitch = outer
    if fill == FIRST:
        w = min(es, 4)
        return _new(Move, ((0,), (off,), w, (outer, (nbytes // w, 0, w))))
    return Fill((off,), nbytes, ((count, dst_pitch),), fill)

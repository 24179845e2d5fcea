"""ND2NZ and NZ2ND: ``DataCopy(dst, src, Nd2NzParams)`` (semantics.md §5), ``DataCopy(gm, ub, Nz2NdParamsFull)`` (§6).

ND2NZ (5.2), ``C0 = 32 / sizeof(T)``, ``nblk = ceil(dValue / C0)``: element ``(m, r, c)`` of the ND source
(``m*srcNdMatrixStride + r*srcDValue + c``) goes to destination element
``m*dstNzMatrixStride + r*dstNzNStride*C0 + (c // C0)*dstNzC0Stride*C0 + c % C0``; columns
``dValue <= c < nblk*C0`` are written with 0; nothing else is written. On Atlas 350 the matrix pitch is
``floor(dstNzMatrixStride*es / 32)*32`` bytes.

NZ2ND (6.1), 16-element fractal columns for every dtype: destination element
``m*dstNdMatrixStride + r*dstDStride + c`` receives source element
``m*srcNdMatrixStride*256 + (c // 16)*srcNStride*16 + r*16 + c % 16`` (``r < nValue``, ``c < dValue``).

Plans: ND2NZ = one Move of the full C0 blocks (loops ndNum, nValue, full blocks; burst 32 bytes), one Move of
the partial last block (burst ``dValue % C0 * es``) and one zero Fill of its tail. NZ2ND = one Move (loops
ndNum, dValue/16, nValue; burst ``16*es``). fastcopy computes the documented mapping on every path; where the
hardware realises a path by a software sequence that agrees only inside a narrower domain (semantics.md §5.5), the plan
carries a FastCopyWarning naming the path, the product and the condition.
"""

from __future__ import annotations

from functools import lru_cache


from ..dtypes import ascend_name
from ..errors import CapacityError, RangeError, UnsupportedError
from ..params import Nd2NzParams, Nz2NdParamsFull
from ..dma.abi import MAX_LOOPS
from ..dma.lower import Effect, make_plan, make_tailed_plan, single_burst, tailed_rows
from ..dma.steps import Fill, Move, lattice_overlaps
from ..products import ND2NZ_PATHS, NZ2ND_PATHS, Phys, Product
from .common import Call, check_operands, check_range, core_of
from .loopmode import loop_mode, with_loop_mode

BLK = 32  # bytes of a C0 block / DataBlock
FRACTAL = 16  # NZ2ND fractal width in elements, every dtype (semantics.md §6, §9 #20)
SMALL_C0 = 4  # elements per row with enableSmallC0 (semantics.md §5.6)
ND2NZ_API = "DataCopy(Nd2NzParams)"
NZ2ND_API = "DataCopy(Nz2NdParamsFull)"

_350 = Product.ATLAS_350
_310P = Product.ATLAS_INFERENCE_AICORE
_A2A3 = (Product.ATLAS_A2, Product.ATLAS_A3)
_GM, _UB, _L1 = Phys.GM, Phys.UB, Phys.L1
#: UB bytes the 310P GM->L1 ND2NZ uses as scratch (semantics.md §5.4): the top 8 KiB of its 256 KiB UB.
SCRATCH_310P = (248 * 1024, 256 * 1024)
#: types whose data pass through a vector add of 0 in the transposing emulations (semantics.md §5.5).
_VECTOR_ADD_FLOATS = frozenset({"half", "float", "bfloat16_t", "complex32"})


# ------------------------------------------------------------------------------------------------------ ND2NZ
def plan_nd2nz(dst, src, params, small_c0=False):
    """Plan ``DataCopy(dst, src, Nd2NzParams)`` on GM->A1/B1 (L1), GM->VECIN (UB) or VECIN/VECCALC/VECOUT->TSCM.

    ``small_c0=True`` is the Atlas 350 ``enableSmallC0`` template flag (GM->L1 only, ``dValue <= 4``). It is
    **experimental**: the layout (semantics.md §5.6: each row 4 elements, rows padded with zeros to a multiple of 4) is
    inferred from the page and has no numeric example.

    On the Atlas inference AI Core the GM->L1 path stages the data through UB bytes 248 KiB..256 KiB (spec
    5.4): a live UB allocation reaching into them is an error, and after the call they hold undefined bytes.
    """
    if not isinstance(params, Nd2NzParams):
        raise UnsupportedError(f"{ND2NZ_API}: takes Nd2NzParams, got {type(params).__name__}")
    pipe = core_of(ND2NZ_API, dst, src)
    product = pipe.product
    loop = None
    if product is _350 and pipe.state and (src.memory.phys, dst.memory.phys) == (_GM, _UB):
        loop = loop_mode(pipe, _GM, _UB)  # semantics.md §4.8: the GM->UB emulation uses the looped instruction
    plan = _plan_nd2nz(params.key(), src._sig, dst._sig, product, bool(small_c0), loop)
    if plan.effects:
        _check_310p_scratch(pipe)
    return plan


def _check_310p_scratch(pipe) -> None:
    """semantics.md §5.4: the 310P GM->L1 ND2NZ overwrites UB bytes [248K, 256K) (the plan's effect, applied by the
    runner): an error if an allocation of this core lives there."""
    lo, hi = SCRATCH_310P
    top = pipe.allocated(_UB)
    if top > lo:
        raise CapacityError(f"{ND2NZ_API}: GM->L1 ND2NZ on {pipe.product} uses UB bytes [{lo}, {hi}) as scratch "
                            f"(semantics.md §5.4), but the UB allocations of this TPipe reach byte {top}; leave "
                            "the top 8 KiB of UB free (allocate below byte 253952)")


@lru_cache(maxsize=4096)
def _plan_nd2nz(pkey, src, dst, product, small_c0, loop):
    call = _new(Call, (ND2NZ_API, product, src, dst))
    api = ND2NZ_API
    p = Nd2NzParams.checked_key(api, pkey, product)
    check_operands(call, ND2NZ_PATHS, "Nd2Nz")
    nd, n, d = p.ndNum, p.nValue, p.dValue
    es = src.itemsize
    tscm = src.phys is _UB and dst.phys is _L1
    if small_c0:
        _check_small_c0(call, p)
    if tscm:
        for field in ("ndNum", "nValue", "dValue"):
            if getattr(p, field) == 0:
                raise RangeError(f"{api}: {field}=0 is not allowed on {call.path_text} on {product} (the UB->TSCM "
                                 "form rejects 0; only the GM forms treat it as a no-op)")
        if nd != 1:
            raise RangeError(f"{api}: ndNum={nd} is outside [1, 1] matrices on {call.path_text} on {product} (the "
                             "UB->TSCM form moves one matrix per call, semantics.md §4.6 / §9 #12)")
    if nd == 0 or n == 0 or d == 0:
        return make_plan(api, (), src, dst)  # no-op: the other fields are only type-checked
    _check_nd2nz_ranges(call, p)
    warns = _nd2nz_warnings(call, p, small_c0)
    # 310P GM->L1 stages through the top 8 KiB of UB (semantics.md §5.4): they hold undefined bytes after the call
    effects = (Effect(_UB, *SCRATCH_310P),) if product is _310P and call.path == (_GM, _L1) else ()
    if not small_c0 and loop is None and nd == 1 and d % (BLK // es):  # (a new call's usual form)
        plan = _tailed_rows(api, p, es, src, dst, warns, effects)
        if plan is not None:
            return plan
    pitch = dst_matrix_pitch(p.dstNzMatrixStride, es, product)
    # loop mode (350 GM->UB, semantics.md §4.8) repeats the whole call: outermost loops (loop2, loop1)
    repeat = () if loop is None else ((loop[1], loop[5]), (loop[0], loop[3]))
    if small_c0:
        steps, overlap = _small_c0_steps(p, es, pitch)
    else:
        steps, overlap = nd2nz_steps(p, es, pitch, repeat)
    if loop is not None:
        steps = tuple(_fit(st) for st in with_loop_mode(steps, loop))
    if overlap:
        return make_plan(api, steps, src, dst, warns, exact=True, effects=effects)
    # (a width that is not a multiple of C0: the three steps as one kernel step of rows with a tail)
    return make_tailed_plan(api, steps, src, dst, warns, effects)


def dst_matrix_pitch(dst_nz_matrix_stride: int, es: int, product: Product) -> int:
    """Bytes between destination matrices: ``dstNzMatrixStride*es``; Atlas 350 floors it to 32-byte units."""
    if product is _350:
        return dst_nz_matrix_stride * es // BLK * BLK
    return dst_nz_matrix_stride * es


def _check_small_c0(call: Call, p) -> None:
    if call.product is not _350:
        raise UnsupportedError(f"{call.api}: enableSmallC0 (small_c0=True) exists only on {_350}, not on "
                               f"{call.product}")
    if call.path != (_GM, _L1):
        raise UnsupportedError(f"{call.api}: enableSmallC0 (small_c0=True) exists only on GM->A1/B1 (GM->L1), not "
                               f"on {call.path_text}")
    if p.dValue > SMALL_C0:
        raise RangeError(f"{call.api}: dValue={p.dValue} is outside [0, {SMALL_C0}] elements with enableSmallC0 "
                         f"on {call.product} (the hardware ignores the flag above 4 columns)")


def _check_nd2nz_ranges(call: Call, p) -> None:
    """semantics.md §2.4 / §5.4 ranges of the fields that take effect (§11.4); the call is not a no-op."""
    api, product, es = call.api, call.product, call.src.itemsize
    wide = product is _350
    nblk = -(-p.dValue // (BLK // es))
    if p.ndNum > 4095 or p.nValue > 16384 or p.dValue > 65535:  # (>= 0: the key's types are checked)
        check_range(api, "ndNum", p.ndNum, 0, 4095, "matrices", product)
        check_range(api, "nValue", p.nValue, 0, 16384, "rows", product)
        check_range(api, "dValue", p.dValue, 0, 65535, "elements", product)
    if p.ndNum > 1:
        hi = (2**64 - 1) // es if wide else 65535
        check_range(api, "srcNdMatrixStride", p.srcNdMatrixStride, 0, hi, "elements", product)
        hi = 65535 * BLK // es if wide else 65535
        why = "the 16-bit count of 32-byte units it is converted to" if wide else ""
        check_range(api, "dstNzMatrixStride", p.dstNzMatrixStride, 0, hi, "elements", product, why)
    if p.nValue > 1 and not (1 <= p.srcDValue <= 65535 and 1 <= p.dstNzNStride <= 16384):
        hi = (2**64 - 1) // es if wide else 65535
        check_range(api, "srcDValue", p.srcDValue, 1, hi, "elements", product)
        check_range(api, "dstNzNStride", p.dstNzNStride, 1, 16384, "C0 blocks (32 bytes)", product)
    if nblk > 1 and not 1 <= p.dstNzC0Stride <= 16384:
        check_range(api, "dstNzC0Stride", p.dstNzC0Stride, 1, 16384, "C0 blocks (32 bytes)", product)


_ZEROS = {es: bytes(es) for es in (1, 2, 4, 8)}
#: a named tuple made from its fields in order, without its generated ``__new__`` (new plans: see dma/lower.py)
_new = tuple.__new__


def nd2nz_steps(p, es: int, pitch: int, repeat=()):
    """Steps of semantics.md §5.2 and whether their writes may overlap (then the exact path runs); ``repeat`` =
    ((count, dst stride), ...) of loop mode around the whole call."""
    c0 = BLK // es
    nd, n, d = p.ndNum, p.nValue, p.dValue
    nfull, rem = divmod(d, c0)
    nblk = nfull + (rem > 0)
    sm, sr = p.srcNdMatrixStride * es, p.srcDValue * es
    ns, cs = p.dstNzNStride * BLK, p.dstNzC0Stride * BLK
    if nd == 1:  # (the usual call: _loops without its list)
        outer = ((n, sr, ns),) if n != 1 else ()
    else:
        outer = _loops(((nd, sm, pitch), (n, sr, ns)))
    steps = []
    if nfull:
        steps.append(_new(Move, ((0,), (0,), BLK, outer + ((nfull, BLK, cs),) if nfull != 1 else outer)))
    if rem:
        steps.append(_new(Move, ((nfull * BLK,), (nfull * cs,), rem * es, outer)))
        steps.append(_new(Fill, ((nfull * cs + rem * es,), BLK - rem * es, tuple([(lp[0], lp[2]) for lp in outer]),
                                 _ZEROS.get(es) or bytes(es))))
    # every (m, r, b) writes one whole 32-byte block: overlap <=> two blocks closer than 32 bytes
    return tuple(steps), lattice_overlaps(BLK, tuple(repeat) + ((nd, pitch), (n, ns), (nblk, cs)))


def _tailed_rows(api: str, p, es: int, src, dst, warns, effects):
    """The plan of one matrix whose width is not a multiple of C0 (no loop mode), made from the parameters: the
    steps :func:`nd2nz_steps` makes (whole blocks, the partial block, its zero tail), their overlap verdict, and
    their ``copy_tailed`` kernel step by :func:`fastcopy.dma.lower.tailed_rows` from the fields that
    :func:`fastcopy.dma.lower.tailed_plan` would read back off the steps (a test holds the plans equal, errors
    included). None, having raised nothing, where the writes may overlap (the general way decides) or the
    kernel step declines (too large for it: the general way's ``make_plan`` takes it)."""
    n, d = p.nValue, p.dValue
    nfull, rem = divmod(d, BLK // es)
    ns, cs = p.dstNzNStride * BLK, p.dstNzC0Stride * BLK
    # overlap: every (r, b) writes one whole 32-byte block; the analytic test of lattice_overlaps (ns, cs >= 0)
    if n > 1 and nfull:  # (blocks per row: nfull + 1 >= 2)
        (s1, c1), (s2, _) = ((ns, n), (cs, nfull + 1)) if ns <= cs else ((cs, nfull + 1), (ns, n))
        if s1 < BLK or s2 < s1 * (c1 - 1) + BLK:
            return None
    elif (n > 1 and ns < BLK) or (nfull and cs < BLK):
        return None
    sr = p.srcDValue * es
    outer = ((n, sr, ns),) if n != 1 else ()
    rb, fd = rem * es, nfull * cs
    part = _new(Move, ((nfull * BLK,), (fd,), rb, outer))
    tail = _new(Fill, ((fd + rb,), BLK - rb, ((n, ns),) if n != 1 else (), _ZEROS.get(es) or bytes(es)))
    if not nfull:
        steps, nb, bs, bd = (part, tail), 0, 0, 0
    elif nfull == 1:
        steps, nb, bs, bd = (_new(Move, ((0,), (0,), BLK, outer)), part, tail), 1, 0, 0
    else:
        steps, nb, bs, bd = (_new(Move, ((0,), (0,), BLK, outer + ((nfull, BLK, cs),))), part, tail), nfull, BLK, cs
    plan = tailed_rows(api, steps, src, dst, warns, effects, outer, nb, BLK if nfull else 0, bs, bd, 0, 0, rb,
                       nfull * BLK, fd, BLK - rb, fd + rb, BLK - rb, None, tail.pattern)
    return plan if plan is not None else make_plan(api, steps, src, dst, warns, effects=effects)


def _small_c0_steps(p, es: int, pitch: int):
    """enableSmallC0 (semantics.md §5.6): row r of matrix m at ``m*pitch + r*4*es``; columns dValue..3 and rows
    nValue..AU(nValue, 4)-1 are zeros."""
    nd, n, d = p.ndNum, p.nValue, p.dValue
    row = SMALL_C0 * es
    rows = -(-n // SMALL_C0) * SMALL_C0
    sm, sr = p.srcNdMatrixStride * es, p.srcDValue * es
    steps = [Move((0,), (0,), d * es, _loops(((nd, sm, pitch), (n, sr, row))))]
    zero = b"\0" * es
    if d < SMALL_C0:
        steps.append(Fill((d * es,), row - d * es, _loops(((nd, pitch), (n, row))), zero))
    if rows > n:
        steps.append(Fill((n * row,), (rows - n) * row, _loops(((nd, pitch),)), zero))
    return tuple(steps), lattice_overlaps(rows * row, ((nd, pitch),))


def _nd2nz_warnings(call: Call, p, small_c0: bool) -> list:
    """The emulation-domain conditions of semantics.md §5.5 and the 350 stride rounding (semantics.md §5.2, §10)."""
    product, es = call.product, call.src.itemsize
    if not small_c0 and product is not _350 and product is not _310P and call.src.phys is _GM \
            and call.dst.phys is _L1:
        return []  # (GM -> L1 on Atlas A2 / A3: the direct instruction, no condition applies)
    on = _On(call)
    c0 = BLK // es
    nd, n, d = p.ndNum, p.nValue, p.dValue
    warns = []
    if product is _350 and nd > 1 and p.dstNzMatrixStride * es % BLK:
        pitch = dst_matrix_pitch(p.dstNzMatrixStride, es, product)
        warns.append(f"{ND2NZ_API}: dstNzMatrixStride={p.dstNzMatrixStride} ({p.dstNzMatrixStride * es} bytes) is "
                     f"not a multiple of 32 bytes; {product} converts it to 32-byte units, so matrices are "
                     f"{pitch} bytes = {pitch // es} elements apart (rounded down)")
    if small_c0:
        warns.append(f"{ND2NZ_API}: enableSmallC0 is experimental in fastcopy: its layout (rows of 4 elements, "
                     "semantics.md §5.6) is inferred without a numeric example; check it on hardware")
    if call.path == (_GM, _L1) and product is _310P:
        if n > 1 and p.dstNzNStride != 1:
            warns.append(f"{ND2NZ_API}: dstNzNStride={p.dstNzNStride} is ignored by {on} (staged through UB); "
                         "the hardware behaves as dstNzNStride=1")
        warns += _vector_add_warning(ND2NZ_API, on, call.src.dtype)
        if (d * es % BLK or p.srcDValue * es % BLK):
            last = ((nd - 1) * p.srcNdMatrixStride + (n - 1) * p.srcDValue) * es
            end = last + -(-d * es // BLK) * BLK
            if end > call.src.nbytes:
                warns.append(f"{ND2NZ_API}: {on} reads each GM row in whole 32-byte blocks "
                             f"(AU(dValue*es, 32) = {end - last} bytes): the last row reads source bytes up to "
                             f"{end}, beyond the {call.src.nbytes}-byte source tensor (must be readable memory)")
    elif call.path == (_GM, _UB):
        warns += _gm_ub_warnings(call, p, on, c0)
    elif call.path == (_UB, _L1):
        warns += _ub_tscm_warnings(call, p, on)
    return warns


class _On:
    """``"<src>-><dst> ND2NZ on <product>"``, formatted only when a warning uses it (most calls have none)."""

    __slots__ = ("call",)

    def __init__(self, call: Call):
        self.call = call

    def __str__(self) -> str:
        c = self.call
        return f"{c.src.position}->{c.dst.position} ND2NZ on {c.product}"


def _vector_add_warning(api: str, on: str, dtype) -> list:
    """Emulations that transpose with a vector add of 0 rewrite float bit patterns (semantics.md §5.5)."""
    name = ascend_name(dtype)
    if name not in _VECTOR_ADD_FLOATS:
        return []
    return [f"{api}: {on} passes {name} data through a vector add of 0: -0.0 becomes +0.0 and NaN payloads and "
            "subnormals are not guaranteed on the hardware; fastcopy returns the values unchanged"]


def _gm_ub_warnings(call: Call, p, on: str, c0: int) -> list:
    """GM->UB is a per-C0-column sequence of DataCopyPad (DataCopy on 310P) moves (semantics.md §5.5)."""
    product, es = call.product, call.src.itemsize
    nd, n, d = p.ndNum, p.nValue, p.dValue
    api = ND2NZ_API
    warns = []
    if nd > 1:
        warns.append(f"{api}: ndNum={nd} is not reproduced by {on}: the emulation does not apply the matrix index "
                     f"(every matrix is read from S + srcNdMatrixStride*es and written to D + dstNzMatrixStride*es)")
    else:
        for field in ("srcNdMatrixStride", "dstNzMatrixStride"):
            v = getattr(p, field)
            if v:
                side = "source" if field.startswith("src") else "destination"
                warns.append(f"{api}: {field}={v} with ndNum=1 shifts the {side} of {on} by {v} elements on the "
                             "hardware; the documented mapping (and fastcopy) ignores it for matrix 0")
    if n > 1 and p.dstNzNStride != 1:
        if p.dstNzNStride < 64:
            warns.append(f"{api}: dstNzNStride={p.dstNzNStride} is ignored by {on}; the hardware behaves as "
                         "dstNzNStride=1")
        else:
            warns.append(f"{api}: dstNzNStride={p.dstNzNStride} is not reproduced by {on} (the emulation only "
                         "handles dstNzNStride=1; values below 64 behave as 1)")
    if d % c0:
        warns.append(f"{api}: dValue={d} is not a multiple of C0={c0}: {on} fills the tail of the last C0 block "
                     "with the burst's first element, not 0 (fastcopy writes the documented 0)")
    if n > 255 and p.srcDValue != d:
        warns.append(f"{api}: nValue={n} > 255 with srcDValue={p.srcDValue} != dValue={d} is not reproduced by "
                     f"{on} (rows are moved in groups of 255)")
    if product in _A2A3 and ascend_name(call.src.dtype) == "float":
        warns.append(f"{api}: float data is not reproduced by {on}: a float-only specialisation moves 16-element "
                     "chunks (int32/uint32 are exact)")
    if product is _310P:
        if d * es % BLK:
            warns.append(f"{api}: dValue*sizeof(T)={d * es} bytes is not a multiple of 32: not reproduced by {on}")
        if n > 1:
            warns.append(f"{api}: nValue={n} > 1 is not reproduced by {on}: its source gap is srcDValue-1 = "
                         f"{p.srcDValue - 1} blocks instead of (srcDValue*es-32)/32 = "
                         f"{(p.srcDValue * es - BLK) / BLK:g} blocks")
    return warns


def _ub_tscm_warnings(call: Call, p, on: str) -> list:
    """UB->TSCM: A2/A3 relay through a flat GM workspace copy; Atlas 350 transposes in UB (semantics.md §5.5)."""
    product, es = call.product, call.src.itemsize
    n, d = p.nValue, p.dValue
    api = ND2NZ_API
    warns = []
    if product is _350:
        conds = []
        if d * es % BLK:
            conds.append(f"dValue*sizeof(T)={d * es} bytes is not a multiple of 32")
        if p.srcDValue != d and n > 1:
            conds.append(f"srcDValue={p.srcDValue} != dValue={d}")
        if p.dstNzNStride != 1 and n > 1:
            conds.append(f"dstNzNStride={p.dstNzNStride} != 1")
        if p.dstNzC0Stride != n and d * es > BLK:
            conds.append(f"dstNzC0Stride={p.dstNzC0Stride} != nValue={n}")
        for c in conds:
            warns.append(f"{api}: {c}: not reproduced by {on} (direct-channel build: transpose in UB, then one "
                         "contiguous UB->L1 copy)")
        warns += _vector_add_warning(api, on, call.src.dtype)
    else:
        flat = n * d * es // BLK * BLK
        need = ((n - 1) * p.srcDValue + d) * es
        if need > flat:
            warns.append(f"{api}: {on} first copies floor(nValue*dValue*es/32)*32 = {flat} bytes of the UB source "
                         f"flat to a GM workspace, but the ND2NZ stage reads {need} bytes (srcDValue={p.srcDValue}, "
                         f"dValue={d}): on the hardware the rest comes from undefined workspace bytes")
    return warns


# ------------------------------------------------------------------------------------------------------ NZ2ND
def plan_nz2nd(dst, src, params):
    """Plan ``DataCopy(gm, ub, Nz2NdParamsFull)`` (VECOUT -> GM; also CO2 -> GM on the Atlas inference AI Core)."""
    if not isinstance(params, Nz2NdParamsFull):
        raise UnsupportedError(f"{NZ2ND_API}: takes Nz2NdParamsFull, got {type(params).__name__}")
    pipe = core_of(NZ2ND_API, dst, src)
    looped = (pipe.product is _350 and pipe.state
              and loop_mode(pipe, src.memory.phys, dst.memory.phys) is not None)
    return _plan_nz2nd(params.key(), src._sig, dst._sig, pipe.product, bool(looped))


@lru_cache(maxsize=4096)
def _plan_nz2nd(pkey, src, dst, product, looped):
    call = _new(Call, (NZ2ND_API, product, src, dst))
    api = NZ2ND_API
    p = Nz2NdParamsFull.checked_key(api, pkey, product)
    check_operands(call, NZ2ND_PATHS, "Nz2Nd")
    nd, n, d = p.ndNum, p.nValue, p.dValue
    if nd == 0:
        return make_plan(api, (), src, dst)  # no-op (semantics.md §11.6): the other fields are only type-checked
    nf = d // FRACTAL
    if not (nd == 1 and 1 <= n <= 8192 and 1 <= d <= 8192 and d % FRACTAL == 0 and (
            nf <= 1 or p.srcNStride <= 4095) and (n <= 1 or 16 <= p.dstDStride <= 65535)):
        _check_nz2nd_ranges(api, p, product)  # (the rules one by one, for the message: only where one can fail)
    es = src.itemsize
    warns = []
    if n > 1 and p.dstDStride < d:
        warns.append(f"{api}: dstDStride={p.dstDStride} < dValue={d} on {product}: destination rows overlap "
                     "(bytes written twice with different values are undefined, semantics.md §8.2)")
    if nd > 1 and product is not _350 and (p.srcNdMatrixStride * 256) % (n * es):
        warns.append(f"{api}: srcNdMatrixStride*256={p.srcNdMatrixStride * 256} elements is not a multiple of "
                     f"nValue*sizeof(T)={n * es}: the {product} debug build asserts here (semantics.md §11.5)")
    if looped:
        warns.append(f"{api}: loop mode (UB_TO_OUT) is set on {product}; NZ2ND is a sequence of UB->GM copies, "
                     "which the hardware may repeat under loop mode; fastcopy does not apply loop mode to NZ2ND")
    f16 = FRACTAL * es
    rd = p.dstDStride * es
    if nd == 1:  # (the usual call: _loops without its list, and the analytic overlap test inline)
        loops = ((nf, p.srcNStride * f16, f16),) if nf != 1 else ()
        if n != 1:
            loops += ((n, f16, rd),)
        step = _new(Move, ((0,), (0,), f16, loops))
        if n == 1 or rd >= nf * f16:  # (the fractal columns of a row touch; rows clear each other: no overlap)
            plan = single_burst(api, (step,), src, dst, warns)
            return plan if plan is not None else make_plan(api, (step,), src, dst, warns)
        loops = ((nd, 0, 0), (nf, p.srcNStride * f16, f16), (n, f16, rd))
    else:
        loops = ((nd, p.srcNdMatrixStride * 256 * es, p.dstNdMatrixStride * es), (nf, p.srcNStride * f16, f16),
                 (n, f16, rd))
        step = Move((0,), (0,), f16, _loops(loops))
    overlap = lattice_overlaps(f16, tuple((c, dd) for c, _, dd in loops))
    return make_plan(api, (step,), src, dst, warns, exact=overlap)


def _check_nz2nd_ranges(api: str, p, product) -> None:
    """semantics.md §6.2 ranges of the fields that take effect (``ndNum`` > 0), in order, with their messages."""
    nd, n, d = p.ndNum, p.nValue, p.dValue
    check_range(api, "ndNum", nd, 0, 4095, "matrices", product)
    check_range(api, "nValue", n, 1, 8192, "rows", product)
    check_range(api, "dValue", d, 1, 8192, "elements", product)
    if d % FRACTAL:
        raise RangeError(f"{api}: dValue={d} is not a multiple of 16 elements on {product} (NZ2ND moves whole "
                         "16-element fractal columns, semantics.md §6.2 / §9 #18)")
    if nd > 1:
        check_range(api, "srcNdMatrixStride", p.srcNdMatrixStride, 1, 512, "fractals (256 elements)", product)
        check_range(api, "dstNdMatrixStride", p.dstNdMatrixStride, 1, 65535, "elements", product)
    if d // FRACTAL > 1:
        check_range(api, "srcNStride", p.srcNStride, 0, 4095, "16-element units", product)
    if n > 1:
        check_range(api, "dstDStride", p.dstDStride, 16, 65535, "elements", product,
                    "the implementations use dstDStride-16 as an unsigned gap")


# ---------------------------------------------------------------------------------------------------- helpers
def _loops(loops) -> tuple:
    """Drop loops of count 1 (they move nothing extra); keep at least the structure the kernels expect."""
    return tuple([lp for lp in loops if lp[0] != 1])


def _fit(step):
    """Fold outer loops into the offset lists until the step has at most MAX_LOOPS loops."""
    while len(step.loops) > MAX_LOOPS:
        lp, rest = step.loops[0], step.loops[1:]
        if isinstance(step, Fill):
            step = step._replace(dst_offs=tuple(o + i * lp[1] for o in step.dst_offs for i in range(lp[0])),
                                 loops=rest)
        else:
            pairs = [(so + i * lp[1], do + i * lp[2]) for so, do in zip(step.src_offs, step.dst_offs)
                     for i in range(lp[0])]
            step = step._replace(src_offs=tuple(a for a, _ in pairs), dst_offs=tuple(b for _, b in pairs),
                                 loops=rest)
    return step


__all__ = ["plan_nd2nz", "plan_nz2nd", "dst_matrix_pitch"]

"""Fixpipe and DataCopy out of L0C: NZ2ND, NZ2NZ (int8 channel merge, float channel split), NZ2DN, quantisation,
ReLU, the Atlas 350 dual UB destination, and the Fixpipe state side effects.

A call is validated completely (every rule raises before anything is written), then planned as index arrays:
source element offsets ``src(h, i, j)``, destination element offsets, and the scale word of every column. The
element conversion is :func:`fastcopy.cube.quant.convert`. Source (per matrix ``h``, row ``i``, column ``j``)::

    src(h, i, j) = h*SND + (j // 16)*srcStride*16 + i*16*RS + j % 16          (elements of the L0C type)

and the destination, per layout::

    ND:  h*dstNdStride + i*dstStride + j                                        (elements of T)
    NZ:  byte g*DS + (i*w + c)*sizeof(T), (g, w, c) from the column (channel merge / split)
    DN:  h*dstDnMatrixStride + j*dstStride + i                                  (elements of T)
"""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

import numpy as np

from ..dtypes import ASCEND_DTYPES, ascend_name
from ..errors import AlignmentError, OutOfBoundsError, ParamError, RangeError, UnsupportedError, warn
from ..dma.lower import make_plan
from ..dma.run import execute
from ..dma.steps import Move, writes_overlap
from ..products import Phys, Product
from . import quant, state, tensorio
from .fpconfig import CFG_ROW_MAJOR, CO2Layout, FixpipeConfig
from .outparams import (DataCopyCO12DstParams, FixpipeParamsArch3510, FixpipeParamsV220, Nz2DnParams,
                        Nz2NdParams)
from .quant import QuantMode_t

P = Product
D = ASCEND_DTYPES
A2A3 = frozenset({P.ATLAS_A2, P.ATLAS_A3})
_F32, _I32 = D["float"], D["int32_t"]
_A2_GM = {_F32: frozenset({D["int8_t"], D["uint8_t"], D["half"], D["bfloat16_t"], _F32}),
          _I32: frozenset({D["int8_t"], D["uint8_t"], D["half"], _I32})}
_A2_L1 = {_F32: frozenset({D["int8_t"], D["uint8_t"], D["half"], D["bfloat16_t"]}),
          _I32: frozenset({D["int8_t"], D["uint8_t"], D["half"]})}
_350 = {_F32: frozenset({D["int8_t"], D["uint8_t"], D["fp8_e4m3fn_t"], D["half"], D["bfloat16_t"], _F32}),
        _I32: frozenset({D["int8_t"], D["uint8_t"], D["half"], D["bfloat16_t"], _I32})}
#: Fixpipe: product -> {destination buffer: {L0C dtype: destination dtypes}}
FIXPIPE_PATHS = {
    P.ATLAS_A2: {Phys.GM: _A2_GM, Phys.L1: _A2_L1},
    P.ATLAS_A3: {Phys.GM: _A2_GM, Phys.L1: _A2_L1},
    P.ATLAS_200I_500_A2: {Phys.GM: _A2_GM, Phys.UB: _A2_GM},
    P.ATLAS_350: {Phys.GM: _350, Phys.L1: _350, Phys.UB: _350},
}
#: DataCopy(DataCopyCO12DstParams): product -> {destination: {L0C dtype: destination dtypes}}
DATACOPY_PATHS = {
    P.ATLAS_A2: {Phys.GM: _A2_GM, Phys.L1: _A2_L1},
    P.ATLAS_A3: {Phys.GM: _A2_GM, Phys.L1: _A2_L1},
    P.ATLAS_200I_500_A2: {Phys.GM: _A2_GM, Phys.L1: _A2_L1},
    P.ATLAS_350: {Phys.GM: _A2_GM, Phys.L1: _A2_GM},
}
#: start alignment of the L0C source, bytes
L0C_ALIGN = 64


class Call(NamedTuple):
    """A Fixpipe / DataCopy call normalised to one form (units resolved per product and struct)."""

    api: str
    layout: CO2Layout
    n: int
    m: int
    src_stride: int  # elements of U between Z columns (srcStride * 16)
    dst_stride: int  # ND: elements per row; DN: elements per column; NZ: bytes between Z columns (DS)
    mode: QuantMode_t
    relu: bool
    num: int  # ndNum / dnNum (1 for NZ)
    snd: int  # elements of U between source matrices
    dnd: int  # elements of T between destination matrices
    rs: int  # source row step (srcNzC0Stride, else 1)
    split: bool
    unit_flag: int
    dual: int
    sub_block: int


def _fail(api, product, exc, msg):
    raise exc(f"{api}: {msg} on {product}")


def _scalar_word(api, product, value, warns) -> int:
    if value is None:
        _fail(api, product, ParamError, "deqScalar is not set; the scalar quantisation modes need it (it has no "
              "default in C++)")
    v = operator.index(value)
    if not -(2**63) <= v < 2**64:
        _fail(api, product, RangeError, f"deqScalar={v} does not fit uint64_t / int64_t")
    if v < 0:
        warns.append(f"{api}: deqScalar={v} is negative; as uint64_t it sets bits 32..63 (shift, MCB, offset, sign "
                     "fields) too")
        v &= 2**64 - 1
    return v


def _check_word(api, product, q: int, warns, where="deqScalar") -> None:
    if q & 0x1FFF:
        warns.append(f"{api}: {where}=0x{q:x}: bits 12:0 of the scale are ignored (the hardware keeps bits 31:13)")
    m1 = quant.scale_of(q)
    if not np.isfinite(m1) or (m1 != 0 and abs(m1) < 2.0**-126):
        _fail(api, product, RangeError, f"{where}=0x{q:x}: the scale M1={m1!r} is inf, NaN or subnormal")


def _layout_rules(api, product, c: Call, dst_phys, u, t, warns, v220_on_350: bool) -> None:
    es_t = t.itemsize
    if c.n > 4095:
        _fail(api, product, RangeError, f"nSize={c.n} is outside [0, 4095] columns")
    if c.unit_flag not in (0, 2, 3):
        _fail(api, product, RangeError, f"unitFlag={c.unit_flag} is not one of 0, 2, 3")
    if c.layout is CO2Layout.NZ:
        step = 8 if c.split else 16
        if c.n % step:
            _fail(api, product, RangeError, f"nSize={c.n} is not a multiple of {step} (NZ output"
                  f"{' with channel split' if c.split else ''})")
    if c.layout is CO2Layout.ROW_MAJOR and dst_phys is not Phys.GM and (c.n * es_t) % 32:
        _fail(api, product, RangeError, f"nSize={c.n}: an ND output to {dst_phys} needs nSize*sizeof(T) to be a "
              "multiple of 32 bytes")
    if c.layout is CO2Layout.COLUMN_MAJOR:
        if dst_phys is not Phys.GM and (c.m * es_t) % 32:
            _fail(api, product, RangeError, f"mSize={c.m}: a DN output to {dst_phys} needs mSize*sizeof(T) to be a "
                  "multiple of 32 bytes")
        if c.m > 32767:
            _fail(api, product, RangeError, f"mSize={c.m} is outside [1, 32767] rows for NZ2DN")
        if c.rs == 0:
            _fail(api, product, RangeError, "Nz2DnParams.srcNzC0Stride=0; it must be at least 1")
        if c.rs != 1 and c.unit_flag:
            _fail(api, product, UnsupportedError, f"srcNzC0Stride={c.rs} with unitFlag={c.unit_flag}")
    if (c.n and c.m) and c.dst_stride == 0:
        _fail(api, product, RangeError, "dstStride=0; it must be non-zero")
    if c.split:
        if not (u == _F32 and t == _F32 and c.layout is CO2Layout.NZ and c.mode is QuantMode_t.NoQuant):
            _fail(api, product, UnsupportedError, "channel split needs float -> float, NoQuant, NZ output")
        if c.unit_flag:
            _fail(api, product, UnsupportedError, f"channel split with unitFlag={c.unit_flag}")
    if c.dual:
        if c.dual == 3:
            _fail(api, product, RangeError, "dualDstCtl=3 is reserved (0 single, 1 split M, 2 split N)")
        if dst_phys is not Phys.UB:
            _fail(api, product, UnsupportedError, f"dualDstCtl={c.dual}: dual destinations exist for UB only")
        if c.mode is not QuantMode_t.NoQuant or c.relu:
            _fail(api, product, UnsupportedError, f"dualDstCtl={c.dual} with quantisation or ReLU")
        if c.layout is CO2Layout.COLUMN_MAJOR:
            _fail(api, product, UnsupportedError, f"dualDstCtl={c.dual} with an NZ2DN output")
        if c.dual == 1 and c.m % 2:
            _fail(api, product, RangeError, f"dualDstCtl=1 splits the rows: mSize={c.m} must be even")
        if c.dual == 2 and c.n % 32:
            _fail(api, product, RangeError, f"dualDstCtl=2 splits the columns: nSize={c.n} must be a multiple of 32")
    if c.m and c.src_stride < 16 * -(-c.m // 16) and c.n > 16:
        warns.append(f"{api}: srcStride={c.src_stride // 16} is below ceil(mSize/16)*16 = {16 * -(-c.m // 16)} "
                     "rows: source Z columns overlap")
    if v220_on_350 and c.layout is CO2Layout.NZ:
        warns.append(f"{api}: FixpipeParamsV220.dstStride for an NZ output means elements of T on {product} (the "
                     "page says 32 B; the shipped code passes it unconverted)")


# --------------------------------------------------------------------------------------------------- planning
class Plan(NamedTuple):
    src_offs: np.ndarray  # (cells,) element offsets of U
    cols: np.ndarray  # (cells,) column j of each cell (scale word index)
    dst_offs: tuple  # per destination tensor: (cells,) element offsets of T (or None when the tensor gets none)
    dst_sel: tuple  # per destination tensor: boolean selection of the cells it receives
    src_span: int  # bytes of the source read from the tensor start
    dst_span: tuple  # bytes written per destination
    overlap: tuple  # per destination: some element is written more than once


def _nz_group(j, n, es_t, split):
    """(g, w, c) arrays of the NZ destination for columns ``j``."""
    if split:
        return j // 8, np.full_like(j, 8), j % 8
    if es_t == 1:
        groups = n // 16
        b = j // 16
        merged = b < 2 * (groups // 2)
        g = np.where(merged, b // 2, groups // 2)
        w = np.where(merged, 32, 16)
        c = np.where(merged, j % 32, j % 16)
        return g, w, c
    return j // 16, np.full_like(j, 16), j % 16


@functools.lru_cache(maxsize=256)
def plan(c: Call, es_u: int, es_t: int) -> Plan:
    """Source and destination offsets of every written element (pure)."""
    h, i, j = np.meshgrid(np.arange(c.num), np.arange(c.m), np.arange(c.n), indexing="ij")
    h, i, j = h.reshape(-1), i.reshape(-1), j.reshape(-1)
    src = h * c.snd + (j // 16) * c.src_stride + i * 16 * c.rs + j % 16
    targets = []
    if c.dual == 1:
        half = c.m // 2
        parts = [(i < half, i, j), (i >= half, i - half, j)]
        n_loc = c.n
    elif c.dual == 2:
        half = c.n // 2
        parts = [(j < half, i, j), (j >= half, i, j - half)]
        n_loc = half
    else:
        parts = [(np.ones(i.shape, bool), i, j)]
        n_loc = c.n
    for sel, il, jl in parts:
        il, jl, hl = il[sel], jl[sel], h[sel]
        if c.layout is CO2Layout.ROW_MAJOR:
            d = hl * c.dnd + il * c.dst_stride + jl
        elif c.layout is CO2Layout.COLUMN_MAJOR:
            d = hl * c.dnd + jl * c.dst_stride + il
        else:
            g, w, cc = _nz_group(jl, n_loc, es_t, c.split)
            byte = g * c.dst_stride + (il * w + cc) * es_t
            d = byte // es_t
        targets.append((sel, d.astype(np.int64)))
    src_span = es_u * (int(src.max()) + 1) if src.size else 0
    for arr in (src, j):
        arr.flags.writeable = False
    return Plan(src.astype(np.int64), j, tuple(t[1] for t in targets), tuple(t[0] for t in targets), src_span,
                tuple(es_t * (int(t[1].max()) + 1) if t[1].size else 0 for t in targets),
                tuple(np.unique(t[1]).size != t[1].size for t in targets))


@functools.lru_cache(maxsize=1024)
def copy_plan(c: Call, es: int, src_sig, dst_sig):
    """NoQuant without ReLU is a pure byte move: the call as Move steps on the shared step IR (run by the
    kernels). Byte offsets relative to the tensor starts; one step per (matrix, column block) family."""
    steps = []
    row_src = 16 * c.rs * es
    if c.layout is CO2Layout.COLUMN_MAJOR:  # one element per burst: column j of matrix h, rows down
        for h in range(c.num):
            soffs = tuple((h * c.snd + (j // 16) * c.src_stride + j % 16) * es for j in range(c.n))
            doffs = tuple((h * c.dnd + j * c.dst_stride) * es for j in range(c.n))
            steps.append(Move(soffs, doffs, es, ((c.m, row_src, es),)))
    elif c.layout is CO2Layout.ROW_MAJOR:
        full, tail = divmod(c.n, 16)
        for width, blocks in ((16, range(full)), (tail, range(full, full + (1 if tail else 0)))):
            if not blocks:
                continue
            soffs = tuple((h * c.snd + g * c.src_stride) * es for h in range(c.num) for g in blocks)
            doffs = tuple((h * c.dnd + 16 * g) * es for h in range(c.num) for g in blocks)
            steps.append(Move(soffs, doffs, width * es, ((c.m, row_src, c.dst_stride * es),)))
    else:  # NZ: 16-wide (or 8-wide split) Z columns, rows w*es bytes apart
        w = 8 if c.split else 16
        groups = c.n // w
        soffs = tuple(((g * w) // 16 * c.src_stride + (g * w) % 16) * es for g in range(groups))
        doffs = tuple(g * c.dst_stride for g in range(groups))
        steps.append(Move(soffs, doffs, w * es, ((c.m, row_src, w * es),)))
    return make_plan(c.api, steps, src_sig, dst_sig, (), exact=writes_overlap(steps))


# ------------------------------------------------------------------------------------------------ execution
def call_key(params, config):
    """The prepared-call key of a Fixpipe (its parameters, nested structs included, and the layout), or None if
    unhashable or not a Fixpipe params struct."""
    if not isinstance(params, (FixpipeParamsV220, FixpipeParamsArch3510)) or not isinstance(config, FixpipeConfig):
        return None
    vals = tuple(v.key() if hasattr(v, "key") and hasattr(v, "FIELDS") else v for v in params.key())
    key = ("Fixpipe", type(params), vals, config.format, config.isToUB)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _run(api, product, pipe, c: Call, dsts, src, words, warns, post=None):
    """Run a validated call; returns the copy plan when a repeat may reuse it (a pure copy that warned of
    nothing and has no unit flag), else None."""
    u, t = src.dtype, dsts[0].dtype
    if not (c.n and c.m and c.num):
        for msg in warns + [f"{api}: nSize={c.n}, mSize={c.m}, count={c.num}: nothing is written"]:
            warn(msg)
        return
    pure = (c.mode is QuantMode_t.NoQuant and not c.relu and len(dsts) == 1 and not c.dual and u == t and post is None
            and not (c.layout is CO2Layout.NZ and t.itemsize == 1))
    pl = plan(c, u.itemsize, t.itemsize)
    if pl.src_span > src.nbytes:
        _fail(api, product, OutOfBoundsError, f"the source span is {pl.src_span} bytes from the L0C tensor start, "
              f"the tensor has {src.nbytes} bytes")
    for dst, span in zip(dsts, pl.dst_span):
        if span > dst.nbytes:
            _fail(api, product, OutOfBoundsError, f"the destination span is {span} bytes from the {dst.position} "
                  f"tensor start, the tensor has {dst.nbytes} bytes")
    dual = len(pl.dst_offs) > 1
    flag_update = state.unit_flag_check(api, pipe, src.offset, src.offset + pl.src_span, c.unit_flag,
                                        producer=False)
    warns = warns + state.padding_warning(api, pipe, src.offset, c.m, c.n, u.itemsize)
    if pure:
        dst = dsts[0]
        if pl.overlap[0]:
            warns.append(f"{api}: destination elements are written more than once (overlapping rows or Z columns); "
                         "bytes written with different values are undefined")
        for msg in warns:
            warn(msg)
        cp = copy_plan(c, t.itemsize, src._sig, dst._sig)
        execute(cp, dst, src)
        state.unit_flag_apply(pipe, flag_update)
        return cp if not warns and not c.unit_flag else None
    q_words, q_def = words(pl.cols) if callable(words) else (words, None)
    x, x_def = tensorio.read(src, pl.src_offs)
    y = quant.convert(x, c.mode, t, q=q_words, relu=c.relu, ctrl48=state.ctrl48(pipe),
                      arch3510=product is P.ATLAS_350)
    ok = tensorio.combine(x_def, q_def)
    if post is not None:  # 310B element-wise / ClipReLU, after quantisation and ReLU
        y, e_def = post(y)
        ok = tensorio.combine(ok, e_def)
    pending = []
    for dst, offs, sel, overlap in zip(dsts, pl.dst_offs, pl.dst_sel, pl.overlap):
        vals = y[sel] if dual else y
        d_ok = None if ok is None or not dual else ok[sel]
        d_ok = ok if not dual else d_ok
        if overlap:
            warns.append(f"{api}: destination elements are written more than once (overlapping rows or Z columns); "
                         "bytes written with different values are undefined")
            vals, d_ok, offs = _resolve_overlap(vals, d_ok, offs)
        if src.memory.shares(dst.memory):
            warns.append(f"{api}: source and destination share memory")
        pending.append((dst, offs, vals, d_ok))
    for msg in warns:
        warn(msg)
    for dst, offs, vals, d_ok in pending:
        tensorio.write(dst, offs, vals, d_ok)
    state.unit_flag_apply(pipe, flag_update)


def _resolve_overlap(vals, ok, offs):
    """Last write wins where the writes agree; elements written with different values become undefined."""
    order = np.argsort(offs, kind="stable")
    so, sv = offs[order], vals[order]
    uniq, first, counts = np.unique(so, return_index=True, return_counts=True)
    bits = sv.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[sv.dtype.itemsize])
    lo = np.minimum.reduceat(bits, first)
    hi = np.maximum.reduceat(bits, first)
    last = first + counts - 1
    out_ok = lo == hi
    if ok is not None:
        out_ok &= np.logical_and.reduceat(ok[order], first)
    return sv[last], out_ok, uniq


# -------------------------------------------------------------------------------------------------- the APIs
def _dst_phys(dst):
    return Phys.GM if dst.is_global else dst.memory.phys


def _common_checks(api, product, paths, dst, src, mode, warns):
    """Path, dtype row, quant mode; returns the destination buffer."""
    if product not in paths:
        _fail(api, product, UnsupportedError, "there is no way out of L0C here")
    if src.is_global or src.memory.phys is not Phys.L0C:
        _fail(api, product, UnsupportedError, f"the source is in {'GM' if src.is_global else src.memory.phys}; it "
              "must be L0C (CO1)")
    dphys = _dst_phys(dst)
    table = paths[product].get(dphys)
    if table is None:
        have = ", ".join(str(p) for p in paths[product])
        _fail(api, product, UnsupportedError, f"L0C -> {dphys} is not a path (destinations: {have})")
    u, t = src.dtype, dst.dtype
    if u not in table or t not in table[u]:
        rows = "; ".join(f"{ascend_name(a)} -> {', '.join(sorted(ascend_name(x) for x in b))}" for a, b in table.items())
        _fail(api, product, UnsupportedError, f"{ascend_name(u)} -> {ascend_name(t)} is not supported L0C -> {dphys} "
              f"(supported: {rows})")
    rule = quant.MODES.get((mode, u))
    if rule is None or t not in rule.dst:
        _fail(api, product, UnsupportedError, f"quantPre={mode} does not convert {ascend_name(u)} -> {ascend_name(t)}")
    if rule.only_350 and product is not P.ATLAS_350:
        _fail(api, product, UnsupportedError, f"quantPre={mode} exists only on Atlas 350")
    if rule.experimental:
        warns.append(f"{api}: quantPre={mode} writes hifloat8_t codes (uint8 bit patterns); HiFloat8 rounding is "
                     "experimental (it follows the vendor's example encoder)")
    if mode is QuantMode_t.NoQuant and dphys is Phys.L1 and product is not P.ATLAS_350:
        _fail(api, product, UnsupportedError, "L0C -> L1 needs a quantisation mode (NoQuant is not available)")
    if src.offset % L0C_ALIGN:
        _fail(api, product, AlignmentError, f"the L0C source starts at byte {src.offset}, not a multiple of 64")
    return dphys, rule


def _dst_align(api, product, dst, dphys, layout):
    need = 1 if (dphys is Phys.GM and layout is CO2Layout.ROW_MAJOR) else 32
    if dst.offset % need:
        _fail(api, product, AlignmentError, f"the destination starts at byte {dst.offset} of {dphys}, not a multiple "
              f"of {need} bytes")


def _workspace_words(api, product, ws, n, warns):
    if ws.is_global or ws.memory.phys is not Phys.L1 or ws.dtype != np.uint64:
        _fail(api, product, UnsupportedError, "cbufWorkspace must be a uint64_t LocalTensor in L1 (C1)")
    if ws.offset % 32:
        _fail(api, product, AlignmentError, f"cbufWorkspace starts at byte {ws.offset} of L1, not a multiple of 32")
    if ws.size < n:
        _fail(api, product, OutOfBoundsError, f"cbufWorkspace has {ws.size} words; nSize={n} columns need {n}")
    q, q_def = tensorio.read(ws, np.arange(n, dtype=np.int64))
    for jj, word in enumerate(q.tolist()):
        if q_def is None or q_def[jj]:
            _check_word(api, product, int(word), warns, where=f"cbufWorkspace[{jj}]")
    return q, q_def


def Fixpipe(dst, src, *args, config: FixpipeConfig = CFG_ROW_MAJOR, dst1=None):  # noqa: N802
    """``Fixpipe<T, U, config>(dst, src, [cbufWorkspace,] params)``: L0C -> GM / L1 / UB with layout conversion,
    quantisation and ReLU. ``config`` is the template argument (``CFG_ROW_MAJOR`` default, ``CFG_NZ``,
    ``CFG_COLUMN_MAJOR``); ``dst1`` is the second vector core's UB tensor for Atlas 350 dual destinations.
    Returns the copy plan of a pure copy that a repeat may reuse (``fastcopy.api.Fixpipe`` keeps it), else None."""
    api = "Fixpipe"
    if len(args) == 1:
        ws, params = None, args[0]
    elif len(args) == 2:
        ws, params = args
    else:
        raise ParamError(f"{api}: takes (dst, src, params) or (dst, src, cbufWorkspace, params)")
    pipe = src.pipe
    product = pipe.product
    warns: list = []
    if isinstance(params, FixpipeParamsArch3510):
        if product is not P.ATLAS_350:
            _fail(api, product, UnsupportedError, f"{type(params).__name__} exists only on Atlas 350")
        arch = True
    elif isinstance(params, FixpipeParamsV220):
        arch = False
    else:
        raise ParamError(f"{api}: params must be FixpipeParamsV220/M300/M310 or FixpipeParamsArch3510/C310, got "
                         f"{type(params).__name__}")
    mode = QuantMode_t.get(params.quantPre)
    dphys, rule = _common_checks(api, product, FIXPIPE_PATHS, dst, src, mode, warns)
    layout = config.format
    if layout is CO2Layout.COLUMN_MAJOR and not arch:
        _fail(api, product, UnsupportedError, "NZ2DN (CFG_COLUMN_MAJOR) needs FixpipeParamsArch3510")
    if layout is CO2Layout.COLUMN_MAJOR and product is not P.ATLAS_350:
        _fail(api, product, UnsupportedError, "NZ2DN exists only on Atlas 350")
    if dphys is Phys.L1 and product in A2A3 and layout is not CO2Layout.NZ:
        _fail(api, product, UnsupportedError, f"L0C -> L1 writes NZ only; config={config.format.name}")
    if arch and dphys is Phys.UB and not config.isToUB:
        _fail(api, product, UnsupportedError, "a UB destination with FixpipeParamsArch3510 needs a FixpipeConfig "
              "with isToUB=true")
    es_t = dst.dtype.itemsize
    num, snd_units, dnd, rs = 1, 0, 0, 1
    if layout is CO2Layout.ROW_MAJOR:
        if arch:
            sub = params.params if params.params is not None else Nz2NdParams()
            if not isinstance(sub, Nz2NdParams):
                _fail(api, product, ParamError, "params.params must be Nz2NdParams for CFG_ROW_MAJOR")
            num, snd_units, dnd = sub.ndNum, sub.srcNdStride, sub.dstNdStride
        else:
            num, snd_units, dnd = params.ndNum, params.srcNdStride, params.dstNdStride
        if num > 1:
            if not arch and product is not P.ATLAS_350 and not 1 <= snd_units <= 512:
                _fail(api, product, RangeError, f"srcNdStride={snd_units} is outside [1, 512] (units of 1024 B) "
                      "with ndNum > 1")
            if dnd == 0:
                _fail(api, product, RangeError, "dstNdStride=0 with ndNum > 1; it must be at least 1")
        snd = snd_units * (256 if (not arch and product is not P.ATLAS_350) else 16)
        state_value = (num, snd_units, dnd)
        if not arch and params.mSize > 8192:
            _fail(api, product, RangeError, f"mSize={params.mSize} is outside [0, 8192] rows for an ND output "
                  "with FixpipeParamsV220")
    elif layout is CO2Layout.COLUMN_MAJOR:
        sub = params.params if params.params is not None else Nz2DnParams()
        if not isinstance(sub, Nz2DnParams):
            _fail(api, product, ParamError, "params.params must be Nz2DnParams for CFG_COLUMN_MAJOR")
        num, snd, dnd, rs = sub.dnNum, 16 * sub.srcNzMatrixStride, sub.dstDnMatrixStride, sub.srcNzC0Stride
        state_value = None
    else:
        snd, state_value = 0, None
    dst_stride = params.dstStride
    if layout is CO2Layout.NZ:
        dst_stride = dst_stride * (es_t if (arch or product is P.ATLAS_350) else 32)
    dual = params.dualDstCtl if arch else 0
    sub_block = int(params.subBlockId) if arch else 0
    if arch:
        for name, default in (("preReluMode", "NO_RELU"), ("preClipReluMode", "NOCLIP_RELU"), ("reluScalar", None),
                              ("vectorRelu", None)):
            v = getattr(params, name)
            if (None if v is None else str(getattr(v, "name", v)).split("::")[-1]) != default:
                warns.append(f"{api}: {name}={v!r} is not used by Fixpipe (ignored)")
    if product is P.ATLAS_200I_500_A2:  # the M300 ranges start at 1
        for name, v in (("nSize", params.nSize), ("mSize", params.mSize), ("ndNum", num)):
            if v == 0:
                _fail(api, product, RangeError, f"{name}=0 is outside its range, which starts at 1 with "
                      "FixpipeParamsM300")
    c = Call(api, layout, params.nSize, params.mSize, 16 * params.srcStride, dst_stride, mode, params.reluEn, num,
             snd, dnd, rs, params.isChannelSplit, params.unitFlag, dual, sub_block)
    _layout_rules(api, product, c, dphys, src.dtype, dst.dtype, warns, v220_on_350=not arch and product is P.ATLAS_350)
    _dst_align(api, product, dst, dphys, layout)
    if rule.vector:
        if ws is None:
            _fail(api, product, ParamError, f"quantPre={mode} is a vector mode: pass cbufWorkspace (one QUANT_PRE "
                  "word per column)")
        words = _workspace_words(api, product, ws, c.n, warns)
        word_fn = (lambda cols: (words[0][cols], None if words[1] is None else words[1][cols]))
    else:
        if ws is not None:
            _fail(api, product, ParamError, f"cbufWorkspace given with quantPre={mode}, which is not a vector mode "
                  "(the shipped code would copy nothing)")
        q = 0
        if rule.scaled:
            q = _scalar_word(api, product, params.deqScalar, warns)
            _check_word(api, product, q, warns)
        word_fn = q
    dsts = [dst]
    if dual:
        if dst1 is None:
            _fail(api, product, ParamError, f"dualDstCtl={dual}: pass dst1= (the UB tensor of vector core 1)")
        dsts.append(dst1)
    elif sub_block and dst1 is not None:
        dsts = [dst1]
    # state side effects (also for calls that write nothing)
    if rule.scaled and not rule.vector:
        pipe.state[state.QUANT_PRE] = word_fn
    if state_value is not None and pipe.state.get(state.ND_PARA) != state_value:  # (unchanged: no version bump)
        pipe.state[state.ND_PARA] = state_value
    if rule.vector:
        pipe.state.pop(state.FPC, None)
    return _run(api, product, pipe, c, dsts, src, word_fn, warns)


def DataCopyCO12(dst, src, params: DataCopyCO12DstParams) -> None:  # noqa: N802
    """``DataCopy(dst, src, DataCopyCO12DstParams)``: L0C -> GM / L1 with the ND / quantisation parameters of the
    per-core state (SetFixpipeNz2ndFlag, SetFixpipePreQuantFlag, SetFixPipeConfig)."""
    api = "DataCopy(DataCopyCO12DstParams)"
    pipe = src.pipe
    product = pipe.product
    warns: list = []
    mode = QuantMode_t.get(params.quantPre)
    if params.sid != 0:
        _fail(api, product, RangeError, f"sid={params.sid}; it must be 0")
    if params.reluPre not in (0, 1):
        _fail(api, product, RangeError, f"reluPre={params.reluPre} is not 0 (none) or 1 (ReLU)")
    dphys, rule = _common_checks(api, product, DATACOPY_PATHS, dst, src, mode, warns)
    extras = _clip_eltwise(api, product, pipe, params, dst.dtype, warns)
    layout = CO2Layout.ROW_MAJOR if params.nz2ndEn else CO2Layout.NZ
    if dphys is Phys.L1 and product is not P.ATLAS_350 and (params.nz2ndEn or params.channelSplit):
        _fail(api, product, UnsupportedError, "L0C -> L1 writes NZ only: nz2ndEn and channelSplit must be false")
    num, snd, dnd = 1, 0, 0
    if layout is CO2Layout.ROW_MAJOR:
        nd = pipe.state.get(state.ND_PARA)
        if nd is None:
            _fail(api, product, ParamError, "nz2ndEn=true reads the ND parameters of SetFixpipeNz2ndFlag, which were "
                  "never set")
        num, snd_units, dnd = nd
        snd = snd_units * (256 if product in A2A3 else 16)
        if product is P.ATLAS_200I_500_A2 and num > 1:
            warns.append(f"{api}: srcNdStride={snd_units} from SetFixpipeNz2ndFlag counts 16 elements on {product} "
                         "(what the shipped code passes; its page says 1024 B)")
    dst_stride = params.dstStride * (32 if layout is CO2Layout.NZ else 1)
    if rule.vector:
        fpc = pipe.state.get(state.FPC)
        if fpc is None:
            _fail(api, product, ParamError, f"quantPre={mode} reads the quantisation table of SetFixPipeConfig, "
                  "which was never set (or a vector-mode Fixpipe since left it undefined)")
        if fpc.size < params.nSize:
            _fail(api, product, OutOfBoundsError, f"the quantisation table has {fpc.size} words; nSize="
                  f"{params.nSize} needs {params.nSize}")
        qtab, qdef = tensorio.read(fpc, np.arange(params.nSize, dtype=np.int64), np.uint64)
        words = (lambda cols: (qtab[cols], None if qdef is None else qdef[cols]))
    elif rule.scaled:
        q = pipe.state.get(state.QUANT_PRE)
        if q is None:
            _fail(api, product, ParamError, f"quantPre={mode} reads QUANT_PRE (SetFixpipePreQuantFlag), which was "
                  "never set")
        _check_word(api, product, q, warns, where="QUANT_PRE")
        words = q
    else:
        words = 0
    c = Call(api, layout, params.nSize, params.mSize, 16 * params.srcStride, dst_stride, mode, bool(params.reluPre),
             num, snd, dnd, 1, params.channelSplit, params.unitFlag, 0, 0)
    if params.channelSplit and dphys is Phys.L1 and product is not P.ATLAS_350:
        _fail(api, product, UnsupportedError, "channelSplit to L1")
    _layout_rules(api, product, c, dphys, src.dtype, dst.dtype, warns, v220_on_350=False)
    _dst_align(api, product, dst, dphys, layout)
    post = None
    if extras is not None:
        post = _post_plan(api, product, c, extras, state.ctrl48(pipe))
    _run(api, product, pipe, c, [dst], src, words, warns, post)


class Extras(NamedTuple):
    """310B DataCopy extras: element-wise operand (tensor, c0ChStride, +1 add / -1 sub) and the ClipReLU limit."""

    elt: tuple | None
    clip: float | None


def _clip_eltwise(api, product, pipe, params, t, warns):
    """Validate ``clipReluPre`` / ``eltWiseOp`` and read their state; None when neither is on."""
    if params.clipReluPre not in (0, 1):
        _fail(api, product, RangeError, f"clipReluPre={params.clipReluPre} is not 0 (off) or 1 (ClipReLU)")
    if params.eltWiseOp not in (0, 1, 2):
        _fail(api, product, RangeError, f"eltWiseOp={params.eltWiseOp} is not 0 (off), 1 (add) or 2 (sub)")
    if not (params.clipReluPre or params.eltWiseOp):
        return None
    what = "clipReluPre" if params.clipReluPre else "eltWiseOp"
    if product is not P.ATLAS_200I_500_A2:
        _fail(api, product, UnsupportedError, f"{what}={getattr(params, what)}: ClipReLU and element-wise add/sub "
              "exist only on Atlas 200I/500 A2")
    if t != D["half"]:
        _fail(api, product, UnsupportedError, f"{what}={getattr(params, what)} with a {ascend_name(t)} output: "
              "fastcopy supports ClipReLU and element-wise add/sub for half outputs only")
    clip = elt = None
    if params.clipReluPre:
        word = pipe.state.get(state.CLIP_RELU)
        if word is None:
            _fail(api, product, ParamError, "clipReluPre=1 reads the CLIP_RELU state (SetFixPipeClipRelu), which "
                  "was never set")
        clip = float(np.uint16(word & 0xFFFF).view(np.float16))
        if not (np.isfinite(clip) and clip > 0):
            _fail(api, product, RangeError, f"the ClipReLU limit (SetFixPipeClipRelu bits 15:0 = 0x{word & 0xFFFF:04x}"
                  f" = {clip!r} as half) must be positive and finite")
    if params.eltWiseOp:
        e = pipe.state.get(state.ELTWISE)
        if e is None:
            _fail(api, product, ParamError, f"eltWiseOp={params.eltWiseOp} reads the element-wise tensor of "
                  "SetFixPipeAddr, which was never set")
        elt = (e[0], e[1], 1.0 if params.eltWiseOp == 1 else -1.0)
    warns.append(f"{api}: ClipReLU / element-wise add-sub on {product} are experimental (their order and types are "
                 "not documented beyond 'after quantisation'; fastcopy applies quant -> ReLU -> element-wise -> "
                 "ClipReLU on half outputs)")
    return Extras(elt, clip)


def _post_plan(api, product, c: Call, extras: Extras, ctrl48: bool):
    """The per-element step after the conversion: ``y = F16(y +- E(i, j))`` then ``y = min(y, CLIP)``."""
    cells = c.num * c.m * c.n
    e_offs = None
    if extras.elt is not None:
        tensor, c0, _ = extras.elt
        idx = np.arange(cells, dtype=np.int64)
        i, j = (idx // c.n) % c.m, idx % c.n
        e_offs = (j // 16) * c0 * 16 + i * 16 + j % 16
        need = int(e_offs.max()) + 1 if cells else 0
        if need > tensor.size:
            _fail(api, product, OutOfBoundsError, f"the element-wise tensor needs {need} halves for mSize={c.m}, "
                  f"nSize={c.n}, c0ChStride={c0}; it has {tensor.size}")
    fmt = quant.FORMATS["F16"]

    def post(y):
        ok = None
        if e_offs is not None:
            tensor, _, sign = extras.elt
            e, ok = tensorio.read(tensor, e_offs)
            y = quant.encode_float(y.astype(np.float64) + sign * e.astype(np.float64), fmt, ctrl48).view(np.float16)
        if extras.clip is not None:
            clip = np.float16(extras.clip)
            y = np.where(y > clip, clip, y)  # NaN (INF_NAN mode only) stays NaN
        return y, ok

    return post

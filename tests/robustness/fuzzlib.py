"""The robustness campaign: randomised calls on every op and path, with guard bands around every memory.

Each call gets a fresh world: a TPipe whose on-chip buffers are filled with random bytes and a random
definedness plane, and GM arrays that sit inside larger random arrays (guard bytes on both sides, odd host
offsets, sometimes ``gm[k]`` sub-tensors). Parameters are drawn mostly valid, sometimes at or past their limits,
sometimes as numpy integers, integral floats, bools, fractions or strings; tensors are sized around what the
call needs (sometimes too small); source and destination sometimes overlap. Then:

* the call raises a ``FastCopyError``: every byte of every memory (data and plane, guards included) must be
  unchanged;
* the call returns: the destination tensor must equal the reference oracle's result (data and definedness) and
  every other byte of every memory must be unchanged;
* anything else (another exception type, a wrong byte, a crash) is an *escape*.

Run as a program, it executes one campaign and prints a JSON summary; before each call it appends the call's
seed to a log file, so a crash (segfault) leaves its reproducer behind::

    python tests/robustness/fuzzlib.py FAMILY CALLS SEED LOG      # a campaign
    python tests/robustness/fuzzlib.py FAMILY --at CALL_SEED      # replay one call, verbosely
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
import warnings

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: dc_util
from dc_util import tensor_bytes  # noqa: E402

from fastcopy import (DataCopy, DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams,
                      DataCopyPadParams, DataCopyParams, FastCopyError, GlobalTensor, LoopModeParams, Nd2NzParams,
                      Nz2NdParamsFull, PaddingMode, SetLoopModePara, SetPadValue, SliceInfo, TPipe, from_nz, to_nz)
from fastcopy.ops.datacopy import units
from fastcopy.ops.padvalue import scalar_pattern
from fastcopy.products import (DATACOPY_CONVERT, DATACOPY_PATHS, DATACOPYPAD_PATHS, ND2NZ_PATHS, NZ2ND_PATHS,
                               POSITIONS, SET_PAD_VALUE, SLICE_PATHS, Phys, Product, TPosition)
from fastcopy.reference.datacopy import count_to_block_len, data_copy
from fastcopy.reference.nz import dst_matrix_pitch_bytes, nd2nz, nz2nd
from fastcopy.reference.pad import pad_gm_to_local, pad_local_to_gm, pad_ub_to_tscm
from fastcopy.reference.slice import slice_copy

FAMILIES = ("datacopy", "pad", "tscm", "nz", "slice", "formats")
CANDIDATES = [np.dtype(t) for t in (np.int8, np.uint8, np.float16, ml_dtypes.bfloat16, np.int16, np.uint16,
                                    np.float32, np.int32, np.uint32, np.float64, np.int64, np.uint64, np.bool_,
                                    ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, np.complex64)]
_NP_INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)
_BAD = (True, False, np.bool_(True), 2.5, "3", None, np.float32(0.5))
#: on-chip capacities of the fuzz worlds (small, so snapshots are cheap)
_SMALL = {Phys.UB: 16 << 10, Phys.L1: 16 << 10}
_PREFERRED = [TPosition.VECIN, TPosition.VECOUT, TPosition.A1, TPosition.TSCM, TPosition.C2, TPosition.C2PIPE2GM,
              TPosition.A2, TPosition.B2, TPosition.CO1]


class Escape(AssertionError):
    """A broken promise: wrong exception type, wrong bytes, a write outside the destination."""


class Bad(Exception):
    """Marks a parameter drawn as a non-integer: the call must raise a FastCopyError."""


# ------------------------------------------------------------------------------------------------ parameters
class Draw:
    """Random parameter values: ``raw`` goes to fastcopy, ``clean`` (a Python int, or BAD) to the oracle."""

    BAD = object()

    def __init__(self, rng):
        self.rng = rng
        self.bad = False  # some value was drawn as a non-integer

    def int(self, lo: int, hi: int, edge=(), noise: float = 0.25):
        """Mostly uniform in [lo, hi]; 4 %: an edge value; numpy / float / bad spellings with ``noise``."""
        rng = self.rng
        v = int(rng.integers(lo, hi + 1)) if rng.random() > 0.04 or not edge else int(rng.choice(list(edge)))
        return self.spell(v, noise)

    def spell(self, v: int, noise: float = 0.25):
        rng = self.rng
        r = rng.random()
        if r < noise * 0.02:
            self.bad = True
            return _BAD[int(rng.integers(len(_BAD)))], Draw.BAD
        if r < noise * 0.1:
            return float(v), v
        if r < noise:
            fits = [t for t in _NP_INTS if np.iinfo(t).min <= v <= np.iinfo(t).max]
            if fits:
                return fits[int(rng.integers(len(fits)))](v), v
        return v, v

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]


def _edges(ctype_max: int):
    return (0, 1, ctype_max, ctype_max + 1, -1, 2**31, 2**32, 2**63)


# ------------------------------------------------------------------------------------------------ the world
class World:
    """A core with random on-chip contents, GM arrays inside guard bands, and snapshots of all of it."""

    def __init__(self, rng, product: Product):
        self.rng, self.product = rng, product
        caps = {p: c for p, c in _SMALL.items() if p in TPipe(product=product).capacities}
        self.pipe = TPipe(product=product, capacities=caps, poison=int(rng.integers(0, 256)))
        for phys in list(self.pipe.capacities):
            if phys is Phys.GM:
                continue
            mem = self.pipe.buffer(phys)
            mem.data[:] = rng.integers(0, 256, mem.data.size, dtype=np.uint8)
            mem.plane[:] = rng.integers(0, 2, mem.plane.size, dtype=np.uint8)
        self.gms = []  # (base array, GlobalTensor memory, byte offset of the memory's byte 0 in base)

    def position(self, phys: Phys) -> TPosition:
        for pos in _PREFERRED:
            if POSITIONS[self.product].get(pos) is phys:
                return pos
        raise LookupError(phys)

    def local(self, phys: Phys, dtype, nbytes: int, near=None):
        """A LocalTensor of about ``nbytes`` at a random aligned address (``near``: overlapping that tensor)."""
        es = np.dtype(dtype).itemsize
        n = max(1, nbytes // es)
        cap = self.pipe.capacities[phys]
        from fastcopy.products import ALIGN

        align = ALIGN[phys]
        room = cap - n * es
        if room < 0:
            raise Bad("tensor larger than the buffer")
        if near is not None and near.memory.phys is phys:
            lo = max(0, near.offset - n * es // 2)
            addr = min(room, lo + int(self.rng.integers(0, max(1, n * es))))
        else:
            addr = int(self.rng.integers(0, room + 1))
        addr = addr // align * align
        return self.pipe.alloc(self.position(phys), dtype, n, addr=addr)

    def gm(self, dtype, nbytes: int, defined=None, shape=None):
        """A GlobalTensor of about ``nbytes`` inside a larger random array; sometimes ``gm[k]``."""
        rng = self.rng
        dt = np.dtype(dtype)
        es = dt.itemsize
        n = max(1, nbytes // es) if shape is None else int(np.prod(shape))
        k = int(rng.integers(1, 5)) if rng.random() < 0.15 and shape is None else 0
        front, back = int(rng.integers(1, 80)), int(rng.integers(1, 80))
        base = rng.integers(0, 256, front + (n + k) * es + back, dtype=np.uint8)
        arr = base[front:front + (n + k) * es].view(dt)
        if shape is not None:
            arr = arr.reshape(shape)
        if defined is None:
            defined = rng.random() < 0.7
        g = GlobalTensor(arr, defined=defined)
        if not defined and rng.random() < 0.7:
            g.set_defined(rng.random(n + k) < 0.8)
        self.gms.append((base, g.memory, front))
        return g[k] if k else g

    def tensor(self, phys: Phys, dtype, nbytes: int, near=None):
        return self.gm(dtype, nbytes) if phys is Phys.GM else self.local(phys, dtype, nbytes, near)

    # -- snapshots ------------------------------------------------------------------------------------------
    def _memories(self):
        for mem in self.pipe._buffers.values():
            yield mem, mem.data, 0
        for base, mem, front in self.gms:
            yield mem, base, front

    def snapshot(self) -> list:
        out = []
        for mem, data, front in self._memories():
            plane = np.ones(mem.data.size, np.uint8) if mem.plane is None else mem.plane.copy()
            out.append((data.copy(), plane))
        return out

    def expect(self, before: list, dst, want, want_def, extra=()) -> list:
        """``before`` with the destination tensor's bytes replaced by the oracle's (and ``extra``:
        ``(tensor, data, defined)`` of other tensors the call writes by design, like a caller's workspace)."""
        out = []
        regions = [(dst, want, want_def), *extra]
        for (mem, data, front), (d, p) in zip(self._memories(), before):
            for t, w, wd in regions:
                if mem is t.memory:
                    d, p = d.copy(), p.copy()
                    d[front + t.offset:front + t.offset + t.nbytes] = w
                    p[t.offset:t.offset + t.nbytes] = wd
            out.append((d, p))
        return out

    def compare(self, want: list, dst, what: str) -> None:
        got = self.snapshot()
        for (mem, data, front), (wd, wp), (gd, gp) in zip(self._memories(), want, got):
            bad_d = np.flatnonzero(wd != gd) - front
            bad_p = np.flatnonzero(wp.astype(bool) != gp.astype(bool))
            if bad_d.size or bad_p.size:
                lo, hi = (dst.offset, dst.offset + dst.nbytes) if dst is not None and mem is dst.memory else (0, 0)
                outside = [int(x) for x in np.concatenate([bad_d, bad_p]) if not lo <= x < hi]
                where = (f"OUTSIDE the destination at memory bytes {outside[:6]}" if outside else
                         f"inside the destination at tensor bytes {sorted(set((np.concatenate([bad_d, bad_p]) - lo).tolist()))[:6]}")
                raise Escape(f"{what}: {mem.phys} differs {where} (data {bad_d.size}, plane {bad_p.size} bytes)")


def check_call(world: World, call, dst, src, oracle, draw: Draw, extra=None) -> str:
    """Run ``call``; classify as "ok" / "rejected"; raise Escape on a broken promise."""
    before = world.snapshot()
    want, want_def = tensor_bytes(dst) if dst is not None else (None, None)
    s, s_def = tensor_bytes(src) if src is not None else (None, None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except FastCopyError as exc:
        world.compare(before, None, f"rejected call ({type(exc).__name__}: {exc})")
        return "rejected"
    except Exception as exc:  # noqa: BLE001 - exactly what we are looking for
        raise Escape(f"wrong exception type {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}") from None
    if draw.bad:
        raise Escape("accepted a bool / fraction / string where an integer belongs")
    try:
        more = oracle(want, want_def, s, s_def)
    except (IndexError, ValueError, AssertionError) as exc:
        raise Escape(f"accepted a call the reference cannot do ({type(exc).__name__}: {exc})") from None
    regions = extra(more) if extra is not None else ()
    world.compare(world.expect(before, dst, want, want_def, regions), dst, "accepted call")
    return "ok"


def _dtype_for(d: Draw, allowed):
    pool = [dt for dt in CANDIDATES if allowed is None or dt in allowed]
    if not pool or d.rng.random() < 0.03:
        pool = CANDIDATES
    return d.choice(pool)


def _size(d: Draw, need: int, es: int) -> int:
    """Around ``need`` bytes: usually enough (with slack), sometimes too small."""
    extra = int(d.rng.integers(-48, 97)) if d.rng.random() < 0.3 else int(d.rng.integers(0, 97))
    return max(es, -(-(need + extra) // es) * es)


def _path(d: Draw, table: dict, product: Product):
    paths = sorted(table.get(product, {}), key=lambda p: (p[0].value, p[1].value))
    if not paths or d.rng.random() < 0.03:
        phys = [p for p in (Phys.GM, Phys.UB, Phys.L1) if p is Phys.GM or p in TPipe(product=product).capacities]
        return (d.choice(phys), d.choice(phys)), None
    path = d.choice(paths)
    return path, table[product][path]


def _cap(world: World, phys: Phys) -> int:
    return 1 << 20 if phys is Phys.GM else world.pipe.capacities[phys]


# ------------------------------------------------------------------------------------------------ families
def fam_datacopy(rng):
    d = Draw(rng)
    product = d.choice(list(Product))
    path, allowed = _path(d, DATACOPY_PATHS, product)
    world = World(rng, product)
    src_dt = dst_dt = _dtype_for(d, allowed)
    pairs = sorted(DATACOPY_CONVERT.get(product, ()), key=str)
    if path == (Phys.L1, Phys.BT) and pairs and rng.random() < 0.3:
        src_dt, dst_dt = (np.dtype(x) for x in d.choice(pairs))
    es = src_dt.itemsize
    lb, gs, gd, head, _ = units(path[0], path[1], product)
    name = f"{path[0].name}->{path[1].name}"
    grow = dst_dt.itemsize // src_dt.itemsize if dst_dt.itemsize >= src_dt.itemsize else 1
    if rng.random() < 0.3:
        raw, count = d.int(0, 4 * 128 // es, _edges(2**32 - 1))
        bc, bl, sg, dg = 1, (0 if count is Draw.BAD or count < 0 else count_to_block_len(count, es, name, product.key)), 0, 0
        arg = (raw,)
    else:
        small = path[1] in (Phys.BT, Phys.FB)
        (rbc, bc), (rbl, bl) = d.int(0, 3 if small else 5, _edges(65535)), d.int(0, 4, _edges(65535))
        (rsg, sg), (rdg, dg) = d.int(0, 4, _edges(65535)), d.int(0, 4, _edges(65535))
        arg = (DataCopyParams(rbc, rbl, rsg, rdg),) if not d.bad else None
    if d.bad and arg is None:  # the struct itself must refuse the value
        return _must_reject(world, lambda: DataCopyParams(rbc, rbl, rsg, rdg))
    vals = [v for v in (bc, bl, sg, dg)]
    ok_vals = all(v is not Draw.BAD and 0 <= v < 2**20 for v in vals)
    n = bl * lb if ok_vals else 64
    if ok_vals and bc > 0:
        s_need = (bc - 1) * sg * gs + n if head else bc * n + (bc - 1) * sg * gs
        d_need = (bc - 1) * dg * gd + grow * n if head else bc * grow * n + (bc - 1) * dg * gd
    else:
        s_need = d_need = 64
    s_need, d_need = min(s_need, _cap(world, path[0])), min(d_need, _cap(world, path[1]))
    src = world.tensor(path[0], src_dt, _size(d, s_need, es))
    near = src if rng.random() < 0.3 else None
    dst = world.tensor(path[1], dst_dt, _size(d, d_need, dst_dt.itemsize), near)

    def oracle(want, want_def, s, s_def):
        data_copy(want, want_def, s, s_def, path=name, product=product.key, blockCount=bc, blockLen=bl,
                  srcGap=sg, dstGap=dg, src_dtype=src_dt, dst_dtype=dst_dt, poison=world.pipe.poison)

    return check_call(world, lambda: DataCopy(dst, src, *arg), dst, src, _aliased(oracle, dst, src), d)


def _aliased(oracle, dst, src):
    """Oracles read the source as it was before the call (fastcopy reads the whole source first)."""
    return oracle


def _must_reject(world, call):
    d = Draw(world.rng)
    d.bad = True
    return check_call(world, call, None, None, lambda *a: None, d)


def _loop(d: Draw, world: World, path):
    """Random loop mode on Atlas 350 GM <-> UB (None otherwise); returns the oracle's dict."""
    if world.product is not Product.ATLAS_350 or Phys.UB not in path or Phys.GM not in path or d.rng.random() > 0.25:
        return None
    gm_in = path[0] is Phys.GM
    ub_dst = gm_in
    v = {"loop1Size": int(d.rng.integers(1, 4)), "loop2Size": int(d.rng.integers(1, 3))}
    for f in ("loop1SrcStride", "loop1DstStride", "loop2SrcStride", "loop2DstStride"):
        ub_side = ("Dst" in f) == ub_dst
        v[f] = 32 * int(d.rng.integers(0, 6)) if ub_side else int(d.rng.integers(0, 200))
    mv = DataCopyMVType.OUT_TO_UB if gm_in else DataCopyMVType.UB_TO_OUT
    spelled = {k: d.spell(x, 0.2)[0] for k, x in v.items()}
    try:
        SetLoopModePara(LoopModeParams(**spelled), mv, pipe=world.pipe)
    except FastCopyError:
        if not d.bad:
            raise Escape(f"SetLoopModePara refused valid values {v}") from None
        d.bad = False
        return None
    if d.bad:
        raise Escape(f"LoopModeParams accepted {spelled}")
    return v


def _loop_extent(loop, col: str) -> int:
    if loop is None:
        return 0
    return (loop["loop1Size"] - 1) * loop[f"loop1{col}Stride"] + (loop["loop2Size"] - 1) * loop[f"loop2{col}Stride"]


def _au(x, a=32):
    return -(-x // a) * a


def fam_pad(rng):
    d = Draw(rng)
    product = d.choice([p for p in Product if p in DATACOPYPAD_PATHS])
    path, allowed = _path(d, DATACOPYPAD_PATHS, product)
    if path[0] is not Phys.GM and path[1] is not Phys.GM:
        path = (Phys.GM, path[1])
    world = World(rng, product)
    dt = _dtype_for(d, allowed)
    es = dt.itemsize
    gm_in = path[0] is Phys.GM
    is350 = product is Product.ATLAS_350
    legacy = rng.random() < 0.25
    compact = is350 and not legacy and rng.random() < 0.3 or rng.random() < 0.01
    mode = PaddingMode.Compact if compact else PaddingMode.Normal
    rbc, bc = d.int(0, 4, _edges(65535))
    rbl, bl = d.spell(es * int(rng.integers(0, 40)) + (int(rng.integers(1, es)) if es > 1 and rng.random() < 0.03 else 0))
    gm_lo = -bl if (is350 and gm_in and not legacy and isinstance(bl, int)) else 0
    if gm_in:
        rss, ss = d.int(max(gm_lo, -64), 64, _edges(2**32 - 1))
        rds, ds = d.int(0, 2, _edges(65535))
    else:
        rss, ss = d.int(0, 2, _edges(65535))
        rds, ds = d.int(0, 64, _edges(2**32 - 1))
    try:
        cp = (DataCopyParams(rbc, rbl, rss, rds) if legacy else DataCopyExtParams(rbc, rbl, rss, rds, 0))
    except FastCopyError:
        cp = None
    if d.bad or cp is None:
        struct = DataCopyParams if legacy else DataCopyExtParams
        args = (rbc, rbl, rss, rds) if legacy else (rbc, rbl, rss, rds, 0)
        if cp is None and not d.bad:
            return "rejected"  # a value outside the struct's C type: refused at construction (tested elsewhere)
        return _must_reject(world, lambda: struct(*args))
    if product in SET_PAD_VALUE and rng.random() < 0.4:
        reg_dt = d.choice([np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.int32), np.dtype(np.float32), dt])
        val = rng.integers(0, 256, reg_dt.itemsize, dtype=np.uint8).view(reg_dt)[0]
        if reg_dt.itemsize == 8:
            val = reg_dt.type(0)
        SetPadValue(val, pipe=world.pipe)
    loop = _loop(d, world, path)
    padreg = world.pipe.state.get("padreg")
    ok = all(isinstance(v, int) and 0 <= abs(v) < 2**21 for v in (bc, bl, ss, ds))
    if gm_in:
        is_pad = bool(rng.random() < 0.5)
        (rlp, lp), (rrp, rp) = d.int(0, 32 // es, (0, 32 // es + 1, 255, 256)), d.int(0, 32 // es, (0, 33, 255, 256))
        if rng.random() < 0.5:
            lp = rlp = 0
            rp = rrp = 0
            d.bad = False  # (only the two paddings could have been drawn bad here)
        if legacy:
            pv = 0
            pad = DataCopyPadParams(is_pad, rlp, rrp, 0)
        else:
            pv = rng.integers(0, 256, es, dtype=np.uint8).view(dt)[0] if rng.random() < 0.6 else dt.type(0)
            if es == 8 and rng.random() < 0.9:
                pv = dt.type(0)
            try:
                pad = DataCopyPadExtParams(is_pad, rlp, rrp, pv)
            except FastCopyError:
                return "rejected"
        if d.bad:
            return _must_reject(world, lambda: DataCopyPadExtParams(is_pad, rlp, rrp, pv))
        if ok and bc > 0:
            p = _au(lp * es + bl + rp * es) if isinstance(lp, int) and isinstance(rp, int) else 64
            d_need = _au(bc * bl) if compact else (bc - 1) * (p + ds * 32) + p
            s_need = (bc - 1) * max(bl + ss, 0) + bl
        else:
            s_need = d_need = 64
        s_need += _loop_extent(loop, "Src")
        d_need += _loop_extent(loop, "Dst")
        src = world.gm(dt, _size(d, min(s_need, 1 << 16), es))
        dst = world.tensor(path[1], dt, _size(d, min(d_need, _cap(world, path[1])), es))
        try:
            pattern = bytes(es) if legacy else scalar_pattern(pv, dt, "fuzz", "paddingValue", product)
        except FastCopyError:
            pattern = bytes(es)

        def oracle(want, want_def, s, s_def):
            pad_gm_to_local(want, want_def, s, s_def, es=es, product=product.key, blockCount=bc, blockLen=bl,
                            srcStride=ss, dstStride=ds, isPad=is_pad, leftPadding=lp, rightPadding=rp,
                            paddingValue=pattern, mode=mode.name, padreg=padreg, loop=loop,
                            poison=world.pipe.poison)

        return check_call(world, lambda: DataCopyPad(dst, src, cp, pad, mode=mode), dst, src, oracle, d)
    if ok and bc > 0:
        s_need = bc * bl if compact else (bc - 1) * (_au(bl) + ss * 32) + bl
        d_need = (bc - 1) * (bl + ds) + bl
    else:
        s_need = d_need = 64
    s_need += _loop_extent(loop, "Src")
    d_need += _loop_extent(loop, "Dst")
    src = world.tensor(path[0], dt, _size(d, min(s_need, _cap(world, path[0])), es))
    dst = world.gm(dt, _size(d, min(d_need, 1 << 16), es))

    def oracle(want, want_def, s, s_def):
        pad_local_to_gm(want, want_def, s, s_def, es=es, product=product.key, blockCount=bc, blockLen=bl,
                        srcStride=ss, dstStride=ds, mode=mode.name, loop=loop, poison=world.pipe.poison)

    return check_call(world, lambda: DataCopyPad(dst, src, cp, mode=mode), dst, src, oracle, d)


def fam_tscm(rng):
    """DataCopyPad UB -> TSCM (L1) with Nd2NzParams, two stages through a GM workspace (the caller's, inside
    guard bands, or fastcopy's own)."""
    d = Draw(rng)
    product = d.choice([p for p in DATACOPYPAD_PATHS if (Phys.UB, Phys.L1) in DATACOPYPAD_PATHS[p]])
    world = World(rng, product)
    dt = _dtype_for(d, DATACOPYPAD_PATHS[product][(Phys.UB, Phys.L1)])
    es = dt.itemsize
    c0 = 32 // es
    legacy = rng.random() < 0.3
    rbc, bc = d.int(1, 4, _edges(65535))
    rbl, bl = d.spell(es * int(rng.integers(1, 96 // es + 1)))
    rss, ss = d.int(0, 2, _edges(65535))
    rds, ds = d.spell(d.choice([0, 0, es, 32, 64, 7]))
    nv = int(rng.integers(1, 6))
    dv = int(rng.integers(1, 3 * c0 + 1))
    nd = dict(ndNum=1, nValue=nv, dValue=dv, srcNdMatrixStride=int(rng.integers(0, 10)),
              srcDValue=d.choice([dv, max(1, bl // es) if isinstance(bl, int) else 1, int(rng.integers(1, 3 * c0 + 1))]),
              dstNzC0Stride=int(rng.integers(1, 7)), dstNzNStride=int(rng.integers(1, 7)),
              dstNzMatrixStride=int(rng.integers(0, 10)))
    spelled = {k: d.spell(v, 0.1) for k, v in nd.items()}
    try:
        cp = DataCopyParams(rbc, rbl, rss, rds) if legacy else DataCopyExtParams(rbc, rbl, rss, rds, 0)
        ndp = Nd2NzParams(**{k: v[0] for k, v in spelled.items()})
    except FastCopyError:
        if d.bad:
            return "rejected"
        return "rejected"  # a value outside its C type, refused by the struct
    if d.bad:
        return _must_reject(world, lambda: DataCopyPad(world.local(Phys.L1, dt, 64), world.local(Phys.UB, dt, 64),
                                                       cp, ndp))
    ok = all(isinstance(v, int) and v < 2**17 for v in (bc, bl, ss, ds))
    nblk = -(-dv // c0)
    d_need = (nv - 1) * nd["dstNzNStride"] * 32 + (nblk - 1) * nd["dstNzC0Stride"] * 32 + 32
    s_need = (bc - 1) * (_au(bl) + ss * 32) + bl if ok else 64
    src = world.local(Phys.UB, dt, _size(d, min(s_need, _cap(world, Phys.UB)), es))
    dst = world.local(Phys.L1, dt, _size(d, min(d_need, _cap(world, Phys.L1)), es))
    ws_need = (bc - 1) * (bl + ds) + bl if ok else 64
    ws = world.gm(dt, _size(d, ws_need, es)) if rng.random() < 0.5 else None
    ws_before = tensor_bytes(ws) if ws is not None else None
    used = {}

    def call():
        used["ws"] = DataCopyPad(dst, src, cp, ndp, workspace=ws)

    def oracle(want, want_def, s, s_def):
        # the bytes the two stages use (a caller's workspace beyond them is left as it was)
        nbytes = max((bc - 1) * (bl + ds) + bl, ((nv - 1) * nd["srcDValue"] + dv) * es)
        if ws is None:
            nbytes = used["ws"].nbytes
        return pad_ub_to_tscm(want, want_def, s, s_def, es=es, product=product.key, blockCount=bc, blockLen=bl,
                              srcStride=ss, dstStride=ds, **nd, workspace_bytes=nbytes, poison=world.pipe.poison)

    def extra(ref_ws):
        if ws is None:
            got, got_def = tensor_bytes(used["ws"])
            want, want_def = ref_ws
            if not (np.array_equal(got, want) and np.array_equal(got_def, want_def)):
                raise Escape("UB -> TSCM: fastcopy's own workspace differs from the reference's")
            return ()
        data, defined = ws_before[0].copy(), ws_before[1].copy()
        data[:ref_ws[0].size], defined[:ref_ws[0].size] = ref_ws
        return ((ws, data, defined),)

    return check_call(world, call, dst, src, oracle, d, extra)


def fam_nz(rng):
    d = Draw(rng)
    if rng.random() < 0.6:
        return _nd2nz(d, rng)
    return _nz2nd(d, rng)


def _struct(d: Draw, world, struct, raws):
    try:
        return struct(*raws)
    except FastCopyError:
        if d.bad:
            return _must_reject(world, lambda: struct(*raws))
        return None


def _nd2nz(d: Draw, rng):
    products = [p for p in ND2NZ_PATHS]
    product = d.choice(products)
    path, allowed = _path(d, ND2NZ_PATHS, product)
    if product is Product.ATLAS_INFERENCE_AICORE and path == (Phys.GM, Phys.L1):
        path = (Phys.GM, Phys.UB)  # (its GM->L1 path stages through UB bytes 248-256 KiB by design)
        allowed = ND2NZ_PATHS[product][path]
    world = World(rng, product)
    dt = _dtype_for(d, allowed)
    es = dt.itemsize
    c0 = 32 // es
    nd, n, dv = d.int(0, 3, _edges(65535)), d.int(0, 6, _edges(65535)), d.int(0, 3 * c0, _edges(65535))
    sdv = d.spell(dv[1] + int(rng.integers(0, 8)) if isinstance(dv[1], int) else 1)
    smat = d.spell((n[1] if isinstance(n[1], int) else 1) * (sdv[1] if isinstance(sdv[1], int) else 1)
                   + int(rng.integers(0, 8)))
    c0s = d.spell((n[1] if isinstance(n[1], int) else 1) + int(rng.integers(0, 4)))
    ns = d.int(1, 2, (0, 65535))
    nblk = -(-(dv[1] if isinstance(dv[1], int) else 1) // c0)
    dmat = d.spell(int(rng.integers(0, 4)) * 16 + (c0s[1] if isinstance(c0s[1], int) else 1) * nblk * c0)
    raws = [v[0] for v in (nd, n, dv, smat, sdv, c0s, ns, dmat)]
    clean = [v[1] for v in (nd, n, dv, smat, sdv, c0s, ns, dmat)]
    params = _struct(d, world, Nd2NzParams, raws)
    if not isinstance(params, Nd2NzParams):
        return params or "rejected"
    if d.bad:
        return check_call(world, lambda: DataCopy(world.local(path[1], dt, 64), world.gm(dt, 64), params), None,
                          None, lambda *a: None, d)
    ndn, nv, dval, smat_, sdv_, c0s_, ns_, dmat_ = clean
    if min(ndn, nv, dval) > 0 and max(clean) < 2**17:
        s_need = ((ndn - 1) * smat_ + (nv - 1) * sdv_ + dval) * es
        pitch = dst_matrix_pitch_bytes(es, product.key, dmat_)
        nb = -(-dval // c0)
        d_need = (ndn - 1) * pitch + (nv - 1) * ns_ * 32 + (nb - 1) * c0s_ * 32 + 32
    else:
        s_need = d_need = 64
    src = world.tensor(path[0], dt, _size(d, min(max(s_need, es), _cap(world, path[0])), es))
    dst = world.tensor(path[1], dt, _size(d, min(max(d_need, 32), _cap(world, path[1])), es),
                      near=src if rng.random() < 0.2 else None)

    def oracle(want, want_def, s, s_def):
        nd2nz(want, want_def, s, s_def, es=es, product=product.key, ndNum=ndn, nValue=nv, dValue=dval,
              srcNdMatrixStride=smat_, srcDValue=sdv_, dstNzC0Stride=c0s_, dstNzNStride=ns_,
              dstNzMatrixStride=dmat_, poison=world.pipe.poison)

    return check_call(world, lambda: DataCopy(dst, src, params), dst, src, oracle, d)


def _nz2nd(d: Draw, rng):
    product = d.choice(list(NZ2ND_PATHS))
    path, allowed = _path(d, NZ2ND_PATHS, product)
    world = World(rng, product)
    dt = _dtype_for(d, allowed)
    es = dt.itemsize
    nd, n = d.int(0, 2, _edges(65535)), d.int(0, 6, _edges(65535))
    dv = d.spell(16 * int(rng.integers(0, 3)) + (int(rng.integers(1, 16)) if rng.random() < 0.05 else 0))
    nv = n[1] if isinstance(n[1], int) else 1
    dval = dv[1] if isinstance(dv[1], int) else 16
    nblk = max(1, -(-dval // 16))
    sns = d.spell(nv + int(rng.integers(0, 3)))
    smat = d.spell(-(-(nblk * (sns[1] if isinstance(sns[1], int) else 1) * 16) // 256) + int(rng.integers(0, 2)))
    dds = d.spell(dval + int(rng.integers(0, 8)))
    dmat = d.spell(nv * (dds[1] if isinstance(dds[1], int) else 1) + int(rng.integers(0, 8)))
    raws = [v[0] for v in (nd, n, dv, smat, sns, dds, dmat)]
    clean = [v[1] for v in (nd, n, dv, smat, sns, dds, dmat)]
    params = _struct(d, world, Nz2NdParamsFull, raws)
    if not isinstance(params, Nz2NdParamsFull):
        return params or "rejected"
    if d.bad:
        return check_call(world, lambda: DataCopy(world.gm(dt, 64), world.local(path[0], dt, 64), params), None,
                          None, lambda *a: None, d)
    ndn, nv, dval, smat_, sns_, dds_, dmat_ = clean
    if min(ndn, nv, dval) > 0 and max(clean) < 2**17:
        s_need = ((ndn - 1) * smat_ * 256 + (-(-dval // 16) - 1) * sns_ * 16 + (nv - 1) * 16 + 16) * es
        d_need = ((ndn - 1) * dmat_ + (nv - 1) * dds_ + dval) * es
    else:
        s_need = d_need = 64
    src = world.tensor(path[0], dt, _size(d, min(s_need, _cap(world, path[0])), es))
    dst = world.gm(dt, _size(d, min(d_need, 1 << 16), es))

    def oracle(want, want_def, s, s_def):
        nz2nd(want, want_def, s, s_def, es=es, product=product.key, ndNum=ndn, nValue=nv, dValue=dval,
              srcNdMatrixStride=smat_, srcNStride=sns_, dstDStride=dds_, dstNdMatrixStride=dmat_,
              poison=world.pipe.poison)

    return check_call(world, lambda: DataCopy(dst, src, params), dst, src, oracle, d)


def fam_slice(rng):
    d = Draw(rng)
    product = d.choice(list(SLICE_PATHS))
    path, allowed = _path(d, SLICE_PATHS, product)
    world = World(rng, product)
    dt = _dtype_for(d, allowed)
    es = dt.itemsize
    dims = int(rng.integers(1, 4))
    burst = int(rng.integers(1, 3))
    run = burst * 32 // es
    counts = [int(rng.integers(1, 4))] + [int(rng.integers(1, 4)) for _ in range(dims - 1)]
    sides = {}
    for side in ("src", "dst"):
        infos, shapes = [], []
        for k in range(dims):
            unit = run if k == 0 else 1
            stride = int(rng.integers(0, 3)) * (run if k == 0 and rng.random() < 0.7 else 1)
            start = int(rng.integers(0, 3)) * (run if k == 0 and rng.random() < 0.7 else 1)
            end = start + counts[k] * (unit + stride) - stride - 1
            shape = end + 1 + int(rng.integers(0, 3)) * (run if k == 0 else 1)
            vals = [start, end, stride, burst if k == 0 else 1, shape]
            if rng.random() < 0.05:  # perturb one field
                j = int(rng.integers(0, 5))
                vals[j] = max(0, vals[j] + int(rng.choice([-1, 1, 32])))
            infos.append(vals)
            shapes.append(vals[4])
        sides[side] = (infos, shapes)
    spelled = {side: [[d.spell(v, 0.1) for v in info] for info in sides[side][0]] for side in sides}
    try:
        raw_infos = {side: [SliceInfo(*[v[0] for v in info]) for info in spelled[side]] for side in spelled}
    except FastCopyError:
        if d.bad:
            return "rejected"
        raise
    dim_raw, dim = d.spell(dims, 0.1)
    if rng.random() < 0.03:
        dim_raw, dim = d.int(0, 9, (0, 9, 2**32))

    def nbytes(shapes):
        return int(np.prod(shapes)) * es

    s_bytes, d_bytes = nbytes(sides["src"][1]), nbytes(sides["dst"][1])
    if max(s_bytes, d_bytes) > 12 << 10:
        return "rejected"  # too big for the small buffers; not a call worth making
    src = world.tensor(path[0], dt, _size(d, s_bytes, es) if rng.random() < 0.1 else s_bytes)
    dst = world.tensor(path[1], dt, _size(d, d_bytes, es) if rng.random() < 0.1 else d_bytes)
    clean = {side: [dict(zip(("startIndex", "endIndex", "stride", "burstLen", "shapeValue"), [v[1] for v in info]))
                    for info in spelled[side]] for side in spelled}

    def oracle(want, want_def, s, s_def):
        slice_copy(want, want_def, s, s_def, es=es, dst_info=clean["dst"], src_info=clean["src"], dimValue=dim,
                   poison=world.pipe.poison)

    return check_call(world, lambda: DataCopy(dst, src, raw_infos["dst"], raw_infos["src"], dim_raw), dst, src,
                      oracle, d)


def fam_formats(rng):
    """to_nz / from_nz: round trip exact, input never modified, bad shapes / c0 a FastCopyError."""
    d = Draw(rng)
    dt = d.choice(CANDIDATES)
    es = dt.itemsize
    batch = () if rng.random() < 0.6 else (int(rng.integers(1, 3)),)
    rows, cols = int(rng.integers(1, 40)), int(rng.integers(1, 70))
    a = rng.integers(0, 256, int(np.prod(batch + (rows, cols))) * es, dtype=np.uint8).view(dt).reshape(batch + (rows, cols))
    keep = a.copy()
    c0 = None if rng.random() < 0.8 else d.spell(d.choice([32 // es, 16, 8, 3, 0, -1]))[0]
    if c0 is None:
        d.bad = False  # None is c0's default, not a bad spelling
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nz = to_nz(a, c0=c0)
            shape = list(a.shape)
            perturbed = rng.random() < 0.05
            if perturbed:
                j = int(rng.integers(len(shape)))
                shape[j] = d.choice([shape[j] + 1, -shape[j], float(shape[j]) + 0.5, 0, True, np.bool_(True)])
                d.bad = not isinstance(shape[j], int) or isinstance(shape[j], bool) or shape[j] < 0
            back = from_nz(nz, tuple(shape), c0=c0)
    except FastCopyError:
        if not np.array_equal(a.view(np.uint8), keep.view(np.uint8)):
            raise Escape("to_nz/from_nz error modified its input") from None
        return "rejected"
    except Exception as exc:  # noqa: BLE001
        raise Escape(f"wrong exception type {type(exc).__name__}: {exc}") from None
    if d.bad:
        raise Escape(f"from_nz accepted shape {tuple(shape)} / c0={c0!r}")
    if perturbed:
        return "ok"  # another valid shape: nothing to compare
    if back.shape != a.shape or not np.array_equal(back.view(np.uint8), keep.view(np.uint8)):
        raise Escape(f"from_nz(to_nz(a)) != a for shape {a.shape} {dt} c0={c0}")
    if not np.array_equal(a.view(np.uint8), keep.view(np.uint8)):
        raise Escape("to_nz modified its input")
    return "ok"


FAMILY_FUNCS = {"datacopy": fam_datacopy, "pad": fam_pad, "tscm": fam_tscm, "nz": fam_nz, "slice": fam_slice,
                "formats": fam_formats}


def call_seed(seed: int, i: int) -> int:
    return (seed * 1_000_003 + i) & 0xFFFFFFFFFFFF


def one(family: str, cs: int) -> str:
    """Run the call with seed ``cs``; returns "ok" / "rejected", raises Escape."""
    rng = np.random.default_rng(cs)
    try:
        return FAMILY_FUNCS[family](rng)
    except Bad:
        return "skipped"
    except Escape:
        raise
    except FastCopyError:
        return "rejected"  # refused while building the world (e.g. an alloc), not by the call under test


def campaign(family: str, calls: int, seed: int, log_path: str | None) -> dict:
    counts = {"ok": 0, "rejected": 0, "skipped": 0, "escapes": 0}
    escapes = []
    log = open(log_path, "a", buffering=1) if log_path else None  # noqa: SIM115
    t0 = time.time()
    for i in range(calls):
        cs = call_seed(seed, i)
        if log:
            log.write(f"{cs}\n")
        try:
            counts[one(family, cs)] += 1
        except Escape as exc:
            counts["escapes"] += 1
            if len(escapes) < 20:
                escapes.append({"call_seed": cs, "what": str(exc)[:1500]})
        except Exception as exc:  # noqa: BLE001 - a bug in the harness is reported, not hidden
            counts["escapes"] += 1
            if len(escapes) < 20:
                escapes.append({"call_seed": cs, "what": f"harness: {type(exc).__name__}: {exc}\n"
                                                        f"{traceback.format_exc(limit=6)}"[:1500]})
    if log:
        log.write("done\n")
        log.close()
    return {"family": family, "calls": calls, "seed": seed, "seconds": round(time.time() - t0, 1), **counts,
            "escape_list": escapes}


def main(argv) -> int:
    family = argv[1]
    if argv[2] == "--at":
        cs = int(argv[3])
        print(one(family, cs))
        return 0
    calls, seed = int(argv[2]), int(argv[3])
    log = argv[4] if len(argv) > 4 else None
    print(json.dumps(campaign(family, calls, seed, log)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Adversarial property tests of the shared execution layer (plan lowering, kernels, execute).

Random plans (Move / Fill steps with offsets lists, up to 4 loops with zero, negative and large strides) are
built directly with ``make_plan`` and run with ``execute`` on tensors at random host alignments, with partly
defined planes, in one or two memories. The result (data AND definedness, every byte of every memory) is
compared with an independent byte-by-byte model of the step semantics:

* every burst byte in program order (offsets, then loops outer -> inner, then the burst);
* all source bytes are read before anything is written (semantics.md §0);
* a byte written once takes the written value and definedness; a byte written more than once with different
  (value, definedness) becomes undefined poison (semantics.md §11.2), else keeps the common value;
* untouched bytes keep contents and definedness; definedness travels with copied bytes; undefined fills write
  the poison byte.

The thresholds of the lowering (PARALLEL_BYTES, TILE, TILE_STRIDE) are lowered per example so threads, burst
splitting and tiling run on small data.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fastcopy import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams, FastCopyError,
                      TPipe)
from fastcopy import config as C
from fastcopy.dma import steps as P
from fastcopy.errors import FastCopyWarning, OutOfBoundsError
from fastcopy.dma.run import execute
from fastcopy.kernels import fill_strided
from fastcopy.memory import GlobalTensor, _Tensor
from fastcopy.dma.lower import make_plan
from fastcopy.dma.steps import Fill, Move
from fastcopy.products import TPosition
from fastcopy.reference import datacopy as ref_dc
from fastcopy.reference import pad as ref_pad

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")


@pytest.fixture(scope="module", autouse=True, params=["numba", "numpy"])
def kernels(request):
    """Every test here runs on both kernel implementations: numba, and the numpy path of first/small calls."""
    from fastcopy.dma import kernels as K

    K.use(request.param)
    yield request.param
    K.use("auto")
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ----------------------------------------------------------------------------------------------- the model
def burst_starts(offs, loops, col):
    """Start byte of every burst, in program order (offsets, then loops outer -> inner)."""
    starts = [int(o) for o in offs]
    for lp in loops:
        starts = [s + i * lp[col] for s in starts for i in range(lp[0])]
    return starts


def model_writes(step, src_data, src_dfd, src_off, poison):
    """[(dst byte, value, defined)] of one step, in program order; reads ``src_*`` (absolute, snapshot)."""
    out = []
    if isinstance(step, Move):
        for s, d in zip(burst_starts(step.src_offs, step.loops, 1), burst_starts(step.dst_offs, step.loops, 2)):
            for k in range(step.burst):
                out.append((d + k, int(src_data[src_off + s + k]), bool(src_dfd[src_off + s + k])))
    else:
        for d in burst_starts(step.dst_offs, step.loops, 1):
            for k in range(step.burst):
                if step.pattern is None:
                    out.append((d + k, poison, False))
                else:
                    out.append((d + k, step.pattern[k % len(step.pattern)], True))
    return out


def model_run(steps, mems, dst_mem, dst_off, src_mem, src_off, poison):
    """Apply ``steps`` to the model memories ``mems`` = {id: (data, dfd)} (numpy arrays, modified)."""
    sdata, sdfd = mems[src_mem] if src_mem is not None else (None, None)
    sdata, sdfd = (sdata.copy(), sdfd.copy()) if sdata is not None else (None, None)
    final = {}
    for step in steps:
        for d, v, f in model_writes(step, sdata, sdfd, src_off, poison):
            prev = final.get(d)
            if prev is None or prev == (v, f):
                final[d] = (v, f)
            else:
                final[d] = (poison, False)  # written twice with different contents: undefined
    data, dfd = mems[dst_mem]
    for d, (v, f) in final.items():
        data[dst_off + d] = v
        dfd[dst_off + d] = f
    return final


def model_overlaps(steps) -> bool:
    seen = set()
    for step in steps:
        col = 2 if isinstance(step, Move) else 1
        for d in burst_starts(step.dst_offs, step.loops, col):
            for k in range(step.burst):
                if d + k in seen:
                    return True
                seen.add(d + k)
    return False


def touched(steps, col_move, col_fill=None):
    """Every byte read (col 1) or written (col 2 / fill col 1) by the steps."""
    out = []
    for step in steps:
        if isinstance(step, Move):
            col = col_move
        elif col_fill is None:
            continue
        else:
            col = col_fill
        offs = step.src_offs if (isinstance(step, Move) and col == 1) else step.dst_offs
        for b in burst_starts(offs, step.loops, col):
            out.extend(range(b, b + step.burst))
    return out


# ------------------------------------------------------------------------------------------ tensors
def aligned_bytes(n: int, residue: int) -> np.ndarray:
    """A fresh uint8 array of ``n`` bytes whose host address is ``residue`` modulo 64."""
    raw = np.zeros(n + 128, np.uint8)
    start = (residue - raw.ctypes.data) % 64
    out = raw[start:start + n]
    assert out.ctypes.data % 64 == residue
    return out


def make_memory(n, residue, plane_kind, rng, poison=0xFF):
    """A GlobalTensor over ``n`` random bytes at host residue ``residue``; plane: None / ones / zeros / random."""
    buf = aligned_bytes(n, residue)
    buf[:] = rng.integers(0, 256, n, dtype=np.uint8)
    g = GlobalTensor(buf)
    mem = g.memory
    mem.poison = poison
    if plane_kind == "ones":
        mem.plane = np.ones(n, np.uint8)
    elif plane_kind == "zeros":
        mem.plane = np.zeros(n, np.uint8)
    elif plane_kind == "random":  # runs of defined / undefined bytes
        runs = rng.integers(1, 40, n)
        vals = rng.integers(0, 2, n)
        mem.plane = np.repeat(vals, runs)[:n].astype(np.uint8)
        if mem.plane.size < n:
            mem.plane = np.concatenate([mem.plane, np.ones(n - mem.plane.size, np.uint8)])
    elif plane_kind == "mostly":  # defined except a few bytes
        mem.plane = np.ones(n, np.uint8)
        mem.plane[rng.integers(0, n, 3)] = 0
    return g


def window(g, offset: int, nbytes: int):
    """A uint8 tensor over bytes ``[offset, offset + nbytes)`` of ``g``'s memory."""
    t = object.__new__(GlobalTensor)
    _Tensor.__init__(t, g.memory, offset, np.dtype(np.uint8), nbytes, TPosition.GM)
    t._shape = (nbytes,)
    return t


def snapshot(mem):
    plane = np.ones(mem.data.size, bool) if mem.plane is None else mem.plane.astype(bool)
    return mem.data.copy(), plane


def assert_same(mem, model, what=""):
    data, dfd = snapshot(mem)
    bad = np.flatnonzero((data != model[0]) | (dfd != model[1]))
    assert bad.size == 0, (f"{what}: {bad.size} bytes differ, first at {bad[:8]}: data {data[bad[:8]]} model "
                           f"{model[0][bad[:8]]}, defined {dfd[bad[:8]]} model {model[1][bad[:8]]}")


@contextlib.contextmanager
def thresholds(parallel=None, tile=None, tile_stride=None):
    """Lower the lowering thresholds (threads, burst splitting, tiling) of fastcopy.config for one example."""
    saved = C.PARALLEL_BYTES, C.TILE, C.TILE_STRIDE
    try:
        if parallel is not None:
            C.PARALLEL_BYTES = parallel
        if tile is not None:
            C.TILE = tile
        if tile_stride is not None:
            C.TILE_STRIDE = tile_stride
        yield
    finally:
        C.PARALLEL_BYTES, C.TILE, C.TILE_STRIDE = saved


# ------------------------------------------------------------------------------------------- strategies
@st.composite
def dst_layout(draw, burst, nloops, grain, overlap):
    """Loop counts and destination strides: injective (strides clear the inner extent, in a random address
    order, optional gaps, random signs) unless ``overlap``, where strides are arbitrary."""
    counts = [draw(st.sampled_from([0, 1, 1, 2, 2, 3, 4, 5, 7, 9]) if k else st.integers(1, 9))
              for k in range(nloops)]
    strides = [0] * nloops
    if overlap:
        for k in range(nloops):
            strides[k] = grain * draw(st.integers(-6, 6))
        return counts, strides, None
    order = draw(st.permutations(range(nloops)))
    extent = burst
    for k in order:  # innermost in address order first
        if counts[k] <= 1 and draw(st.booleans()):
            strides[k] = grain * draw(st.integers(-500, 500))  # unused: any stride
            continue
        gap = grain * draw(st.sampled_from([0, 0, 0, 1, 2, 5, 40]))
        s = extent + gap
        s = -s if draw(st.integers(0, 5)) == 0 else s
        strides[k] = s
        extent = abs(s) * (max(counts[k], 1) - 1) + extent
    return counts, strides, extent


@st.composite
def src_strides(draw, nloops, grain, burst):
    return [draw(st.sampled_from([0, burst, -burst, grain, 3 * grain, 4 * burst, 1024 + grain, 3000,
                                  -2048, 64 * grain])) // grain * grain for _ in range(nloops)]


@st.composite
def steps_strategy(draw, overlap=False, allow_fill=True, max_steps=3):
    """``(grain, steps)``: every offset, stride and burst a multiple of ``grain``; destination writes disjoint
    unless ``overlap``; offsets relative (``normalise`` places them)."""
    grain = draw(st.sampled_from([1, 2, 4, 8]))
    nsteps = draw(st.integers(1, max_steps))
    steps = []
    base = 0
    for _ in range(nsteps):
        is_fill = allow_fill and draw(st.integers(0, 3)) == 0
        burst = grain * draw(st.sampled_from([0, 1, 1, 2, 3, 4, 8, 16, 33, 64, 100]) if overlap
                             else st.sampled_from([1, 1, 2, 3, 4, 8, 16, 33, 64, 100]))
        nloops = draw(st.integers(0, 4))
        counts, dstr, extent = draw(dst_layout(burst, nloops, grain, overlap))
        n_off = draw(st.sampled_from([1, 1, 1, 2, 3, 5]))
        # destination offsets: disjoint copies of the layout (in random order) unless overlapping
        span_lo = sum(min(0, s) * (max(c, 1) - 1) for c, s in zip(counts, dstr))
        if overlap:
            doffs = [grain * draw(st.integers(0, 40)) for _ in range(n_off)]
        else:
            gap = grain * draw(st.sampled_from([0, 0, 1, 7]))
            slots = draw(st.permutations(range(n_off)))
            doffs = [base - span_lo + k * (extent + gap) for k in slots]
            base += n_off * (extent + gap) + grain * draw(st.sampled_from([0, 0, 3]))
        if is_fill:
            es = draw(st.sampled_from([e for e in (1, 2, 4, 8) if grain % e == 0]))
            if draw(st.integers(0, 3)) == 0:
                pattern = None
            else:
                pattern = bytes(draw(st.lists(st.integers(0, 255), min_size=es, max_size=es)))
            steps.append(Fill(tuple(doffs), burst, tuple(zip(counts, dstr)), pattern))
        else:
            sstr = draw(src_strides(nloops, grain, burst))
            soffs = [grain * draw(st.integers(0, 64)) for _ in range(n_off)]
            steps.append(Move(tuple(soffs), tuple(doffs), burst, tuple(zip(counts, sstr, dstr))))
    return grain, steps


def shift_steps(steps, dshift, sshift):
    out = []
    for s in steps:
        if isinstance(s, Move):
            out.append(s._replace(src_offs=tuple(o + sshift for o in s.src_offs),
                                  dst_offs=tuple(o + dshift for o in s.dst_offs)))
        else:
            out.append(s._replace(dst_offs=tuple(o + dshift for o in s.dst_offs)))
    return out


def normalise(steps, grain, draw):
    """Shift offsets so every read / write lies at >= a small pad; return (steps, src bytes, dst bytes)."""
    spans = [P.step_spans(s) for s in steps]
    rlo = min((r[0] for r, _ in spans if r is not None), default=0)
    rhi = max((r[1] for r, _ in spans if r is not None), default=0)
    wlo = min(w[0] for _, w in spans)
    whi = max(w[1] for _, w in spans)
    spad = grain * draw(st.integers(0, 3))
    dpad = grain * draw(st.integers(0, 3))
    steps = shift_steps(steps, dpad - wlo, spad - rlo)
    return steps, max(rhi - rlo + spad + grain * draw(st.integers(0, 2)), 1), whi - wlo + dpad + grain * draw(
        st.integers(0, 2))


PLANES = ["none", "ones", "zeros", "random", "mostly"]


def run_case(data, steps, grain, same_memory, force_exact, parallel, tile, tile_stride):
    """Build tensors, plan, execute, compare with the model."""
    steps, src_n, dst_n = normalise(steps, grain, data.draw)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    poison = data.draw(st.sampled_from([0xFF, 0x00, 0xA5]))
    has_src = any(isinstance(s, Move) for s in steps)
    # non-uniform fill patterns need a view at least one element wide: the destination aligned to them
    es = max([len(s.pattern) for s in steps if isinstance(s, Fill) and s.pattern is not None
              and len(set(s.pattern)) > 1] + [1])

    def place(mem, nbytes):
        """A random tensor offset in ``mem`` whose host address is a multiple of ``es``."""
        off = data.draw(st.integers(0, mem.data.size - nbytes - 8))
        off -= (mem.addr0 + off) % es
        return off + es if off < 0 else off

    if same_memory:
        n = max(src_n, dst_n) + data.draw(st.integers(0, 2 * max(src_n, dst_n))) + 16
        g = make_memory(n, data.draw(st.integers(0, 63)), data.draw(st.sampled_from(PLANES)), rng, poison)
        do, so = place(g.memory, dst_n), place(g.memory, src_n)
        dst, src = window(g, do, dst_n), window(g, so, src_n)
        all_mems = [g.memory]
    else:
        gd = make_memory(dst_n + data.draw(st.integers(0, 40)) + 16, data.draw(st.integers(0, 63)),
                         data.draw(st.sampled_from(PLANES)), rng, poison)
        gs = make_memory(src_n + data.draw(st.integers(0, 40)) + 16, data.draw(st.integers(0, 63)),
                         data.draw(st.sampled_from(PLANES)), rng)
        dst, src = window(gd, place(gd.memory, dst_n), dst_n), window(gs, place(gs.memory, src_n), src_n)
        all_mems = [gd.memory, gs.memory]
    mems = {id(m): snapshot(m) for m in all_mems}
    smem_key = id(src.memory) if has_src else None
    overlap = model_overlaps(steps)
    exact = overlap or force_exact
    with thresholds(parallel, tile, tile_stride):
        plan = make_plan("test", steps, src._sig if has_src else None, dst._sig, exact=exact)
    model_run(steps, mems, id(dst.memory), dst.offset, smem_key, src.offset, poison)
    for flag, on in (("fast", plan.fast is not None), ("dense", plan.dense), ("exact", exact),
                     ("threads", any(len(k.metas) > 1 for k in plan.ksteps)),
                     ("more ksteps than steps", len(plan.ksteps) > len(steps)),
                     ("offsets list", any(len(k.doffs) > 1 for k in plan.ksteps)),
                     ("3+ loops", any(sum(lp[0] != 1 for lp in k.loops) >= 3 for k in plan.ksteps)),
                     ("w=8", any(k.w == 8 for k in plan.ksteps)), ("w=1", any(k.w == 1 for k in plan.ksteps))):
        if on:
            event(flag)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        execute(plan, dst, src if has_src else None)
        # a second run over the result exercises the known-defined cache and the hot path (idempotent unless
        # the source and destination share bytes)
        if not same_memory and data.draw(st.booleans()):
            model_run(steps, mems, id(dst.memory), dst.offset, smem_key, src.offset, poison)
            execute(plan, dst, src if has_src else None)
    for m in all_mems:
        assert_same(m, mems[id(m)], f"plan exact={exact} dense={plan.dense} fast={plan.fast is not None}")
    return plan


# --------------------------------------------------------------------------------------------- the tests
@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_non_overlapping_plans(data):
    """Injective plans: fast path, loop reordering and folding, offsets lists, fills, two memories."""
    grain, steps = data.draw(steps_strategy())
    run_case(data, steps, grain, False, False, None, None, None)


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_threads_tiling_splitting(data):
    """The same with tiny thresholds: per-thread chunks, split bursts, strip-mined inner loops."""
    grain, steps = data.draw(steps_strategy(max_steps=2))
    parallel = data.draw(st.sampled_from([1, 8, 64, 300]))
    tile = data.draw(st.sampled_from([1, 2, 3, 4]))
    tile_stride = data.draw(st.sampled_from([0, 1, 8, 64]))
    run_case(data, steps, grain, False, data.draw(st.integers(0, 5)) == 0, parallel, tile, tile_stride)


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_overlapping_plans_exact(data):
    """Arbitrary strides (zero, negative, repeated offsets): writes overlap, the exact path resolves them."""
    grain, steps = data.draw(steps_strategy(overlap=True))
    run_case(data, steps, grain, False, True, None, None, None)


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_same_memory(data):
    """Source and destination in one memory, disjoint or overlapping (read-before-write on the exact path)."""
    overlap = data.draw(st.booleans())
    grain, steps = data.draw(steps_strategy(overlap=overlap, max_steps=2))
    parallel = data.draw(st.sampled_from([None, 16]))
    run_case(data, steps, grain, True, False, parallel, None, None)


def test_fill_8_byte_pattern_near_uniform():
    """fill_strided's memset shortcut must not take an 8-byte value for uniform because it is close to one
    (a float comparison of uint64 values: 0x7F7F7F7F7F7F7E7F == 0x7F7F7F7F7F7F7F7F as doubles)."""
    for value in (0x7F7F7F7F7F7F7E7F, 0x4040404040404140, 0xFFFFFFFFFFFFFEFF, 0x8080808080807F80,
                  0x7F7F7F7F7F7F7F7F, 0xFFFFFFFFFFFFFFFF):
        pattern = value.to_bytes(8, "little")
        buf = GlobalTensor(np.zeros(256, np.uint64))
        plan = make_plan("fill", [Fill((0,), 2048, (), pattern)], None, buf._sig)
        execute(plan, buf, None)
        assert (buf.numpy() == np.uint64(value)).all(), hex(value)
        # the kernel on its own, every width
        for w, dt in ((2, np.uint16), (4, np.uint32), (8, np.uint64)):
            v = np.uint64(int.from_bytes(pattern[:w], "little"))
            arr = np.zeros(4096 // w, dt)
            meta = np.array([arr.size, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0], np.int64)
            fill_strided(arr, 0, meta, v)
            assert (arr == dt(v)).all(), (hex(value), w)


def test_exact_plan_that_writes_nothing():
    """An exact plan whose loops have a zero count writes nothing (it used to index an empty array)."""
    g = make_memory(16, 0, "random", np.random.default_rng(0))
    before = snapshot(g.memory)
    for steps in ([Fill((0,), 1, ((1, -1), (0, -1)), None)], [Move((0,), (4,), 4, ((0, 4, 0),))]):
        plan = make_plan("test", steps, g._sig, g._sig, exact=True)
        execute(plan, g, g)
        assert_same(g.memory, before, "nothing written")


# ------------------------------------------------------------------- the known-defined cache, in sequences
@st.composite
def small_move(draw, n_src, n_dst):
    """A one-step injective copy inside ``n_src`` / ``n_dst`` bytes: (step, src window, dst window)."""
    burst = draw(st.integers(1, 24))
    count = draw(st.integers(1, 6))
    dstride = burst + draw(st.sampled_from([0, 0, 1, 5]))
    sstride = draw(st.sampled_from([0, burst, burst + 3, dstride]))
    s_need = sstride * (count - 1) + burst
    d_need = dstride * (count - 1) + burst
    so = draw(st.integers(0, n_src - s_need))
    do = draw(st.integers(0, n_dst - d_need))
    return Move((0,), (0,), burst, ((count, sstride, dstride),)), (so, s_need), (do, d_need)


OPS = ["m_to_g", "g_to_m", "h_to_m", "fill_undef", "fill_def", "set_undefined", "set_defined", "set_value",
       "m_to_m", "m_to_h"]


@settings(max_examples=80, **SETTINGS)
@given(data=st.data(), ops=st.lists(st.sampled_from(OPS), min_size=3, max_size=14))
def test_known_defined_cache_sequences(data, ops):
    """Interleave copies out of a memory (which record its defined ranges) with every way of writing undefined
    bytes into it; every copy must carry the current definedness (hot path and strided paths)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = 256
    m = make_memory(n, data.draw(st.sampled_from([0, 8, 16, 3])), data.draw(st.sampled_from(PLANES[1:])), rng,
                    poison=0xA5)
    g = make_memory(n, data.draw(st.integers(0, 63)), "none", rng)
    h = make_memory(n, data.draw(st.integers(0, 63)), data.draw(st.sampled_from(["zeros", "random"])), rng)
    mems = {k: (t, snapshot(t.memory)) for k, t in (("m", m), ("g", g), ("h", h))}
    for op in ops:
        if op in ("m_to_g", "g_to_m", "h_to_m", "m_to_m", "m_to_h"):
            sk, dk = op[0], op[-1]
            step, (so, sn), (do, dn) = data.draw(small_move(n, n))
            src, dst = window(mems[sk][0], so, sn), window(mems[dk][0], do, dn)
            exact = sk == dk and model_overlaps([step])
            plan = make_plan("seq", [step], src._sig, dst._sig, exact=exact)
            model = {id(mems[k][0].memory): mems[k][1] for k in mems}
            model_run([step], model, id(dst.memory), do, id(src.memory), so, dst.memory.poison)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FastCopyWarning)
                execute(plan, dst, src)
        elif op in ("fill_undef", "fill_def"):
            lo = data.draw(st.integers(0, n - 1))
            k = data.draw(st.integers(1, n - lo))
            pattern = None if op == "fill_undef" else bytes([data.draw(st.integers(0, 255))])
            dst = window(m, lo, k)
            step = Fill((0,), k, (), pattern)
            plan = make_plan("seq", [step], None, dst._sig)
            model_run([step], {id(m.memory): mems["m"][1]}, id(m.memory), lo, None, 0, m.memory.poison)
            execute(plan, dst, None)
        else:
            lo = data.draw(st.integers(0, n - 1))
            k = data.draw(st.integers(1, n - lo))
            t = window(m, lo, k)
            mdata, mdfd = mems["m"][1]
            if op == "set_undefined":
                t.set_undefined()
                mdata[lo:lo + k] = m.memory.poison
                mdfd[lo:lo + k] = False
            elif op == "set_defined":
                t.set_defined()
                mdfd[lo:lo + k] = True
            else:
                t.SetValue(0, 7)
                mdata[lo] = 7
                mdfd[lo] = True
        for key, (t, model) in mems.items():
            assert_same(t.memory, model, f"{key} after {op}")


# --------------------------------------------------------------- public API sequences (defined + undefined)
API_OPS = ["copy_in", "copy_out", "pad_in", "pad_out", "ub_undefined", "ub_mask", "gm_mask"]


@settings(max_examples=40, **SETTINGS)
@given(data=st.data(), ops=st.lists(st.sampled_from(API_OPS), min_size=2, max_size=10),
       dtype=st.sampled_from([np.uint8, np.float16, np.float32, np.int64]), xshift=st.integers(0, 7),
       oshift=st.integers(0, 7))
def test_public_api_sequences(data, ops, dtype, xshift, oshift):
    """DataCopy / DataCopyPad in and out of one UB buffer, mixed with (un)defining parts of it, against the
    reference oracles run on the model of every memory (so earlier results feed later calls)."""
    dtype = np.dtype(dtype)
    es = dtype.itemsize
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    pipe = TPipe(product="ATLAS_A2", poison=0x5A)
    nb = 8192
    ub = pipe.alloc("VECIN", dtype, nb // es)
    xraw = rng.integers(0, 256, nb + 16, dtype=np.uint8)
    x = GlobalTensor(xraw[xshift:xshift + nb].view(dtype))  # odd host addresses: narrow views
    x.set_defined()
    oraw = np.zeros(nb + 16, np.uint8)
    out = GlobalTensor(oraw[oshift:oshift + nb].view(dtype), defined=False)
    mems = {"x": x.memory, "u": ub.memory, "o": out.memory}
    model = {k: snapshot(m) for k, m in mems.items()}

    def view(key, t, nbytes):
        return model[key][0][t.offset:t.offset + nbytes], model[key][1][t.offset:t.offset + nbytes]

    blk = 32 // es if es <= 32 else 1
    for op in ops:
        before = {k: (m[0].copy(), m[1].copy()) for k, m in model.items()}
        try:
            if op in ("copy_in", "copy_out", "pad_in", "pad_out"):
                bc, bl = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
                sg, dg = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
                k = blk * data.draw(st.integers(0, 64))
                j = data.draw(st.integers(0, 1000))
                u, g = ub[k], (x if op.endswith("in") else out)[j]
                if op == "copy_in":
                    dd, sd = view("u", u, u.nbytes), view("x", g, g.nbytes)
                    sd = (sd[0].copy(), sd[1].copy())
                    ref_dc.data_copy(*dd, *sd, path="GM->UB", product="A2", blockCount=bc, blockLen=bl,
                                     srcGap=sg, dstGap=dg, poison=0x5A)
                    DataCopy(u, g, DataCopyParams(bc, bl, sg, dg))
                elif op == "copy_out":
                    dd, sd = view("o", g, g.nbytes), view("u", u, u.nbytes)
                    sd = (sd[0].copy(), sd[1].copy())
                    ref_dc.data_copy(*dd, *sd, path="UB->GM", product="A2", blockCount=bc, blockLen=bl,
                                     srcGap=sg, dstGap=dg, poison=0x5A)
                    DataCopy(g, u, DataCopyParams(bc, bl, sg, dg))
                elif op == "pad_in":
                    bl *= 5 * es
                    sg *= 7
                    is_pad = data.draw(st.booleans())
                    lp, rp = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
                    value = np.frombuffer(data.draw(st.binary(min_size=es, max_size=es)), dtype)[0]
                    if es == 8 and is_pad:
                        value = dtype.type(0)
                    dd, sd = view("u", u, u.nbytes), view("x", g, g.nbytes)
                    sd = (sd[0].copy(), sd[1].copy())
                    ref_pad.pad_gm_to_local(*dd, *sd, es=es, product="A2", blockCount=bc, blockLen=bl,
                                            srcStride=sg, dstStride=dg, isPad=is_pad, leftPadding=lp,
                                            rightPadding=rp, paddingValue=np.array(value, dtype).tobytes(),
                                            padreg=pipe.state.get("padreg"), poison=0x5A)
                    DataCopyPad(u, g, DataCopyExtParams(bc, bl, sg, dg, 0),
                                DataCopyPadExtParams(is_pad, lp, rp, value))
                else:
                    bl *= 5 * es
                    sg, dg = sg, dg * 3 * es
                    dd, sd = view("o", g, g.nbytes), view("u", u, u.nbytes)
                    sd = (sd[0].copy(), sd[1].copy())
                    ref_pad.pad_local_to_gm(*dd, *sd, es=es, product="A2", blockCount=bc, blockLen=bl,
                                            srcStride=sg, dstStride=dg, poison=0x5A)
                    DataCopyPad(g, u, DataCopyExtParams(bc, bl, sg, dg, 0))
            elif op == "ub_undefined":
                k = blk * data.draw(st.integers(0, nb // 32 - 1))
                t = ub[k]
                t.set_undefined()
                model["u"][0][t.offset:t.offset + t.nbytes] = 0x5A
                model["u"][1][t.offset:t.offset + t.nbytes] = False
            else:
                t = ub if op == "ub_mask" else out
                key = "u" if op == "ub_mask" else "o"
                mask = rng.random(t.size) < 0.5
                t.set_defined(mask)
                model[key][1][t.offset:t.offset + t.nbytes] |= np.repeat(mask, es)
            event(f"{op} ran")
        except FastCopyError as exc:  # an invalid draw: nothing may have been written
            event(f"{op} {type(exc).__name__}")
            model = before
        except IndexError:  # the oracle read / wrote outside the tensors: the call must fail too
            event(f"{op} out of range")
            model = before
            with pytest.raises(FastCopyError), warnings.catch_warnings():
                warnings.simplefilter("ignore", FastCopyWarning)
                if op == "copy_in":
                    DataCopy(u, g, DataCopyParams(bc, bl, sg, dg))
                elif op == "copy_out":
                    DataCopy(g, u, DataCopyParams(bc, bl, sg, dg))
                elif op == "pad_in":
                    DataCopyPad(u, g, DataCopyExtParams(bc, bl, sg, dg, 0),
                                DataCopyPadExtParams(is_pad, lp, rp, value))
                else:
                    DataCopyPad(g, u, DataCopyExtParams(bc, bl, sg, dg, 0))
        for key, mem in mems.items():
            assert_same(mem, model[key], f"{key} after {op}")


# ------------------------------------------------------------------------------------ out-of-bounds plans
@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_span_check_rejects_every_out_of_range_plan(data):
    """make_plan raises OutOfBoundsError exactly when some byte read or written lies outside its tensor (loops
    with a zero count are excluded: they touch nothing but their offsets still count), and execute writes
    nothing then (nothing to execute); in-range plans are accepted. (Zero bursts are excluded likewise.)"""
    overlap = data.draw(st.booleans())
    grain, steps = data.draw(steps_strategy(overlap=overlap))
    steps = [s._replace(burst=max(s.burst, grain), loops=tuple((max(lp[0], 1),) + tuple(lp[1:]) for lp in s.loops))
             for s in steps]
    steps, src_n, dst_n = normalise(steps, grain, data.draw)
    # (shifts by whole grains: a non-uniform fill pattern cannot start inside an element)
    steps = shift_steps(steps, grain * data.draw(st.integers(-3, 3)), grain * data.draw(st.integers(-3, 3)))
    src_n += data.draw(st.integers(-4, 4))
    dst_n += data.draw(st.integers(-4, 4))
    src_n, dst_n = max(src_n, 1), max(dst_n, 1)
    reads = touched(steps, 1)
    writes = touched(steps, 2, 1)
    bad = any(not 0 <= b < src_n for b in reads) or any(not 0 <= b < dst_n for b in writes)
    has_src = any(isinstance(s, Move) for s in steps)
    rng = np.random.default_rng(0)
    gs, gd = make_memory(src_n, 3, "random", rng), make_memory(dst_n, 8, "random", rng)
    before = snapshot(gd.memory)
    try:
        plan = make_plan("oob", steps, gs._sig if has_src else None, gd._sig, exact=overlap)
    except OutOfBoundsError as exc:
        assert bad, f"rejected an in-range plan: {exc}"
        assert_same(gd.memory, before, "after OutOfBoundsError")
        return
    assert not bad, "accepted a plan touching bytes outside the tensors"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        execute(plan, gd, gs if has_src else None)


# ------------------------------------------------------------------ real thresholds: threads on megabytes
def byte_index(offs, burst, loops, col):
    """Vectorised twin of burst_starts for big injective steps: every burst byte, program order."""
    idx = np.asarray(offs, np.int64)
    for lp in loops:
        idx = (idx[:, None] + np.arange(lp[0], dtype=np.int64) * lp[col]).ravel()
    return (idx[:, None] + np.arange(burst, dtype=np.int64)).ravel()


@pytest.mark.parametrize("plane", ["none", "random"])
@pytest.mark.parametrize("dst_plane", ["none", "zeros"])
@pytest.mark.parametrize("case", ["long burst", "strided", "offsets", "fill"])
def test_megabyte_plans_real_thresholds(case, plane, dst_plane):
    """Plans above PARALLEL_BYTES with the real thresholds (split bursts, threads, tiling, plane marks)."""
    rng = np.random.default_rng(7)
    n = 4 << 20
    gs = make_memory(n, 3, plane, rng)
    gd = make_memory(n, 8, dst_plane, rng, poison=0x77)
    if case == "long burst":
        steps = [Move((5,), (64,), (9 << 18) + 8, ())]
    elif case == "strided":  # outer loop split across threads, scattered inner reads tiled
        steps = [Move((1,), (0,), 40, ((300, 40, 4000), (100, 20000, 40)))]
    elif case == "offsets":
        steps = [Move((0, 1 << 20), (1 << 20, 0), 3 << 18, ()), Fill((2 << 20,), 4096, ((8, 8192),), b"\x01\x02")]
    else:
        steps = [Fill((16,), 9 << 18, (), None), Move((3,), ((9 << 18) + 16,), 4096, ((300, 4096, 4096),))]
    src, dst = window(gs, 0, n), window(gd, 0, n)
    plan = make_plan("big", steps, src._sig, dst._sig, exact=False)
    want, want_def = snapshot(gd.memory)
    sdata, sdfd = snapshot(gs.memory)
    for s in steps:
        if isinstance(s, Move):
            si, di = byte_index(s.src_offs, s.burst, s.loops, 1), byte_index(s.dst_offs, s.burst, s.loops, 2)
            want[di], want_def[di] = sdata[si], sdfd[si]
        else:
            di = byte_index(s.dst_offs, s.burst, s.loops, 1)
            want[di] = 0x77 if s.pattern is None else np.resize(np.frombuffer(s.pattern, np.uint8), di.size)
            want_def[di] = s.pattern is not None
    execute(plan, dst, src)
    assert_same(gd.memory, (want, want_def), case)
    assert_same(gs.memory, (sdata, sdfd), "source untouched")
    if case != "fill":  # again: the source's defined ranges are cached now
        execute(plan, dst, src)
        assert_same(gd.memory, (want, want_def), case + " (second run)")


@settings(max_examples=200, **SETTINGS)
@given(data=st.data())
def test_writes_overlap_is_exact(data):
    """Planners pick the exact path with writes_overlap: it must never miss a byte written twice (a miss would
    run overlapping writes on the threaded kernels, last write wins instead of poison), and below the
    enumeration limit it answers exactly (no needless slow path)."""
    grain, steps = data.draw(steps_strategy(overlap=data.draw(st.booleans())))
    overlaps = model_overlaps(steps)
    assert P.writes_overlap(steps) == overlaps
    for s in steps:
        if overlaps and len(steps) == 1 and len(s.dst_offs) == 1:
            assert not P.injective(s.burst, P.dst_loops(s))
    limit = data.draw(st.sampled_from([1 << 16, 0, 10]))
    saved = C.OVERLAP_ENUM_BURSTS
    C.OVERLAP_ENUM_BURSTS = limit
    try:
        if overlaps:
            assert P.writes_overlap(steps)
    finally:
        C.OVERLAP_ENUM_BURSTS = saved


def test_fill_pattern_on_bytes_no_wide_view_reaches_runs_exactly():
    """A 2-byte pattern at an odd host address (no uint16 view fits) takes the exact path, per burst."""
    from fastcopy import GlobalTensor

    buf = np.zeros(64, np.uint8)
    g = GlobalTensor(buf[1:33])
    plan = make_plan("t", (Fill((0,), 4, ((3, 8),), b"\x01\x02"),), None, g._sig)
    assert plan.exact
    execute(plan, g, None)
    assert buf[1:25].tolist() == [1, 2, 1, 2, 0, 0, 0, 0] * 3 and buf[0] == 0 and not buf[25:].any()

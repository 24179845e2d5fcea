"""The direct plan builders (new plans of small calls) make exactly the plans of the general lowering.

``make_plan`` builds a single-burst plan directly and lowers small steps with ``lower_small``; both must give
the Plan that ``general_plan(..., small=False)`` (every step through ``lower_all`` + ``finalize`` and the
meta-based span checks) gives, field by field, kernel arguments included, and raise the same errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy.dma import abi
from fastcopy.dma.lower import finalize, general_plan, lower_all, lower_small, make_plan
from fastcopy.dma.steps import Fill, Move
from fastcopy.errors import OutOfBoundsError
from fastcopy.memory import TensorSig
from fastcopy.ops.pad import PaddingMode
from fastcopy.params import DataCopyParams, Nd2NzParams
from fastcopy.products import Phys, TPosition

U8 = np.dtype(np.uint8)


def same(a, b) -> bool:
    """Deep equality of plans: numpy arrays by value and dtype, named tuples field by field."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and np.array_equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.generic) or isinstance(b, np.generic):
        return type(a) is type(b) and a == b
    return type(a) is type(b) and a == b


def sig(nbytes: int, host_mod: int) -> TensorSig:
    return TensorSig(TPosition.GM, Phys.GM, U8, nbytes, 0, host_mod)


offsets = st.lists(st.integers(0, 300), min_size=1, max_size=3).map(tuple)
move_loops = st.lists(st.tuples(st.integers(0, 6), st.integers(-96, 600), st.integers(-96, 600)), max_size=5)
fill_loops = st.lists(st.tuples(st.integers(0, 6), st.integers(-96, 600)), max_size=4)  # (planners fold more)
patterns = st.one_of(st.none(), st.sampled_from([b"\0", b"\x01\x01", b"\x01\x02", b"\0\0\0\0", b"\x07\x00\x00\x01",
                                                 bytes(8), bytes(range(8))]))


@st.composite
def moves(draw):
    offs = draw(offsets)
    soffs = tuple(draw(st.integers(0, 300)) for _ in offs)
    return Move(soffs, offs, draw(st.integers(0, 200)), tuple(draw(move_loops)))


@st.composite
def fills(draw):
    return Fill(draw(offsets), draw(st.integers(0, 200)), tuple(draw(fill_loops)), draw(patterns))


@settings(max_examples=300, deadline=None)
@given(step=st.one_of(moves(), fills()), src_res=st.integers(0, 63), dst_res=st.integers(0, 63))
def test_lower_small_is_the_general_lowering(step, src_res, dst_res):
    ks = lower_small(step, src_res, dst_res)
    if ks is None:
        return
    if isinstance(step, Fill) and step.pattern is not None and ks.w < len(step.pattern):
        assert len(set(step.pattern)) == 1
    ref = tuple(finalize(k) for k in lower_all(step, src_res, dst_res, True))
    assert len(ref) == 1 and same(ks, ref[0])


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.one_of(moves(), fills()), min_size=1, max_size=3), src_res=st.integers(0, 63),
       dst_res=st.integers(0, 63), room=st.integers(-64, 1 << 12), warn=st.booleans(), marks=st.booleans())
def test_make_plan_is_the_general_plan(steps, src_res, dst_res, room, warn, marks):
    """Random small programs (and tensors a little too small: the same OutOfBoundsError); ``marks=False``
    (destinations without a definedness plane): the same plan without plane marks."""
    steps = tuple(s for s in steps if not (isinstance(s, Fill) and s.pattern is not None
                                          and len(set(s.pattern)) > 1))  # (narrow patterns go exact)
    if not steps:
        return
    warnings = ("a warning",) if warn else ()
    src, dst = sig(max(0, 4096 + room), src_res), sig(max(0, 4096 + room), dst_res)
    try:
        ref = general_plan("T", steps, src, dst, warnings, small=False, marks=marks)
    except OutOfBoundsError as exc:
        with pytest.raises(OutOfBoundsError) as got:
            make_plan("T", steps, src, dst, warnings, marks=marks)
        assert str(got.value) == str(exc)
        return
    plan = make_plan("T", steps, src, dst, warnings, marks=marks)
    assert same(plan, ref)
    if not marks:
        with_marks = make_plan("T", steps, src, dst, warnings)
        assert all(ks.mark == () for ks in plan.ksteps)
        assert same(plan.ksteps, tuple(ks._replace(mark=()) for ks in with_marks.ksteps))


@settings(max_examples=300, deadline=None)
@given(count=st.integers(0, 5), burst=st.integers(1, 4096), soff=st.integers(-40, 4096), doff=st.integers(0, 4096),
       src_res=st.integers(0, 63), dst_res=st.integers(0, 63), size=st.integers(0, 1 << 14))
def test_single_burst_builder(count, burst, soff, doff, src_res, dst_res, size):
    """Contiguous bursts (loops that fold into one burst), in and out of bounds."""
    step = Move((soff,), (doff,), burst, ((1, 7, 9), (count, burst, burst)))
    src, dst = sig(size, src_res), sig(size, dst_res)
    try:
        ref = general_plan("T", (step,), src, dst, small=False)
    except OutOfBoundsError as exc:
        with pytest.raises(OutOfBoundsError) as got:
            make_plan("T", (step,), src, dst)
        assert str(got.value) == str(exc)
        return
    assert same(make_plan("T", (step,), src, dst), ref)


@settings(max_examples=300, deadline=None)
@given(count=st.integers(0, 9), inner=st.sampled_from([1, 1, 2, 3]), burst=st.integers(1, 600),
       sstride=st.integers(-700, 700), back=st.booleans(), soff=st.integers(-40, 6000), doff=st.integers(0, 6000),
       src_res=st.integers(0, 63), dst_res=st.integers(0, 63), size=st.integers(0, 1 << 13), warn=st.booleans())
def test_one_loop_builder(count, inner, burst, sstride, back, soff, doff, src_res, dst_res, size, warn):
    """Rows gathered into a contiguous destination (one loop after folding: a two-dimensional slice), forwards and
    backwards, in and out of bounds: the plan (and error) of the general lowering."""
    b = inner * burst
    loops = ((1, 7, 9), (count, sstride, -b if back else b))
    if inner > 1:  # (an inner loop that folds into the burst)
        loops += ((inner, burst, burst),)
    step = Move((soff,), (doff,), burst, loops)
    warnings = ("a warning",) if warn else ()
    assert_general_plan(step, sig(size, src_res), sig(size, dst_res), warnings)


@st.composite
def dense_moves(draw):
    """One Move of one offset whose loops write the destination densely (the bursts of a transpose of blocks, an
    NZ2ND of several fractal columns: destination strides the products of the inner counts, in any order, either
    sign), the source strides anything; loops of one pass, loops that fold into the burst, element transposes
    (bursts under 32 bytes), tiled reads and loops of no pass among them."""
    burst = draw(st.sampled_from([1, 2, 4, 8, 16, 24, 32, 64, 96]))
    fold = draw(st.sampled_from([1, 1, 2]))  # (2: an inner loop that folds into the burst)
    counts = draw(st.lists(st.sampled_from([0, 1, 2, 3, 5, 16, 70]), min_size=2, max_size=5))
    order = draw(st.permutations(range(len(counts))))
    strides, extent = [0] * len(counts), burst * fold
    for k in order:  # (innermost of the destination first)
        strides[k] = extent * draw(st.sampled_from([1, 1, 1, -1]))
        extent *= max(counts[k], 1)
    src = [draw(st.sampled_from([0, burst, -burst, 32, 96, 1024, 1100, -700])) for _ in counts]
    loops = tuple(zip(counts, src, strides)) + (((2, burst, burst),) if fold == 2 else ())
    lo = -min(0, sum((max(c, 1) - 1) * d for c, _, d in loops))
    slo = -min(0, sum((max(c, 1) - 1) * s for c, s, _ in loops))
    return Move((slo + draw(st.integers(0, 40)),), (lo + draw(st.integers(0, 40)),), burst, loops)


@settings(max_examples=300, deadline=None)
@given(step=dense_moves(), src_res=st.integers(0, 63), dst_res=st.integers(0, 63), room=st.integers(-200, 1 << 15),
       warn=st.booleans())
def test_dense_loops_builder(step, src_res, dst_res, room, warn):
    """Bursts written densely by two or more loops (after folding), in and out of bounds: the plan (and error) of
    the general lowering."""
    from fastcopy.dma.steps import footprint

    read, write, _ = footprint(step)
    size = max(read[1], write[1]) + room
    assert_general_plan(step, sig(max(size, 0), src_res), sig(max(size, 0), dst_res), ("a warning",) if warn else ())


def test_dense_loops_builder_takes_nz2nd():
    """An NZ2ND of two fractal columns (the report's row) is built by the dense-loops builder."""
    from fastcopy.dma import lower as lower_mod

    step = Move((0,), (0,), 32, ((2, 40 * 32, 32), (40, 32, 64)))
    plan = lower_mod._dense_loops("T", step, sig(1 << 13, 0), sig(1 << 13, 0), (), 32, step.loops[::-1])
    assert plan is not None and plan.dense
    assert same(plan, general_plan("T", (step,), sig(1 << 13, 0), sig(1 << 13, 0), small=False))


def assert_general_plan(step, src, dst, warnings=()) -> None:
    """``make_plan`` of one step gives the general lowering's plan, or raises its OutOfBoundsError."""
    try:
        ref = general_plan("T", (step,), src, dst, warnings, small=False)
    except OutOfBoundsError as exc:
        with pytest.raises(OutOfBoundsError) as got:
            make_plan("T", (step,), src, dst, warnings)
        assert str(got.value) == str(exc)
        return
    assert same(make_plan("T", (step,), src, dst, warnings), ref)


def test_unpack_inverts_pack():
    meta = abi.pack(5, ((2, 3, 4), (1, 0, 0), (6, -7, 8), (1, 0, 0)), (0, 2, 1, 2), (10, 20), (30, 40))
    burst, loops, chunk, doffs, soffs = abi.unpack(meta)
    assert (burst, loops, chunk, doffs, soffs) == (5, ((2, 3, 4), (1, 0, 0), (6, -7, 8), (1, 0, 0)), (0, 2, 1, 2),
                                                   [10, 20], [30, 40])
    assert abi.loops_of(meta) == loops and abi.chunk_of(meta) == chunk
    assert all(type(x) is int for lp in loops for x in lp)


def test_key_view_checks_like_the_struct():
    """Validation from key tuples: the same ParamTypeError as the struct's own check, fields by name."""
    p = Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0)
    k = Nd2NzParams.checked_key("X", p.key(), "ATLAS_A2")
    assert k.nValue == 16 and getattr(k, "dValue") == 32 and tuple(k) == p.key()
    big = DataCopyParams(1, 1).key()[:1] + (2**16,) + (0, 0)
    with pytest.raises(Exception) as a:
        DataCopyParams.checked_key("X", big, "ATLAS_A2")
    with pytest.raises(Exception) as b:
        DataCopyParams.check_key_types("X", big, "ATLAS_A2")
    assert type(a.value) is type(b.value) and str(a.value) == str(b.value)


@pytest.mark.parametrize("steps", [
    (Move((0,), (0,), 64, ()),),  # the single-burst builder
    (Move((0,), (0,), 16, ((2, 32, 64),)),),  # lower_small, a copy (plane marks too: not dense)
    (Move((0,), (0,), 16, ((2, 16, 32),)), Fill((16,), 16, ((2, 32),), b"\0")),  # lower_small, copy + fill
])
def test_a_direct_builder_bug_is_caught_at_planning(monkeypatch, steps):
    """The direct builders check what they lowered like the general path does: a kernel step that strays
    outside the planned span (simulated: offsets shifted by one unit) is refused when the plan is made."""
    from fastcopy.dma import lower as lower_mod

    real = lower_mod._kstep  # (what the direct builders make their kernel steps with)

    def shifted(kind, w, doffs, *rest):  # every kernel step the builders make, one unit further on
        return real(kind, w, tuple(u + 1 for u in doffs), *rest)

    monkeypatch.setattr(lower_mod, "_kstep", shifted)
    with pytest.raises(OutOfBoundsError, match="internal error"):
        make_plan("test", steps, sig(128, 0), sig(128, 0))


def _verdict(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 (the verdict is the error's type and message)
        return type(exc), str(exc)
    return None


_POS = [(TPosition.GM, Phys.GM), (TPosition.VECIN, Phys.UB), (TPosition.VECOUT, Phys.UB), (TPosition.A1, Phys.L1)]
_DTS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint64)]


#: (src, dst) positions of paths the ops take
_PATHS = [(_POS[0], _POS[1]), (_POS[2], _POS[0]), (_POS[0], _POS[3]), (_POS[1], _POS[3])]


def _changed(t: TensorSig):
    """``t`` with one field changed, every way the rules could tell apart (and the ways they must not)."""
    f = {k: getattr(t, k) for k in ("position", "phys", "dtype", "nbytes", "addr_mod", "host_mod")}
    alts = [("nbytes", t.nbytes + 64), ("host_mod", (t.host_mod + 8) % 64)]
    alts += [("addr_mod", m) for m in (1, 2, 4, 16, 32, 64) if m != t.addr_mod]
    alts += [("dtype", d) for d in _DTS if d != t.dtype]
    alts += [("position", p) for p in _POS if p[0] != t.position]
    for field, v in alts:
        g = dict(f)
        if field == "position":
            g["position"], g["phys"] = v
        else:
            g[field] = v
        yield TensorSig(g["position"], g["phys"], g["dtype"], g["nbytes"], g["addr_mod"], g["host_mod"])


@pytest.mark.parametrize("op", ["nd2nz", "nz2nd", "pad", "slice", "datacopy"])
def test_remembered_rule_verdicts_are_the_rules(op):
    """Path, dtype and alignment verdicts are remembered per rules_key (the call without the tensors' extents and
    host residues): a call checked right after one that passed, differing from it in one field of one tensor,
    gets exactly the verdict of a fresh check (the same error, or none); every op, path, side and field."""
    from fastcopy.ops import common, datacopy
    from fastcopy.products import DATACOPYPAD_PATHS, ND2NZ_PATHS, NZ2ND_PATHS, SLICE_PATHS, Product

    product = Product.ATLAS_A2
    table = {"nd2nz": ND2NZ_PATHS, "nz2nd": NZ2ND_PATHS, "pad": DATACOPYPAD_PATHS, "slice": SLICE_PATHS}.get(op)
    rule = {"nd2nz": "Nd2Nz", "nz2nd": "Nz2Nd", "pad": "DataCopyPad", "slice": "Slice"}.get(op)

    def check(src, dst):
        call = common.Call(f"API({op})", product, src, dst)
        if op == "datacopy":
            return _verdict(datacopy._check_common, call)
        return _verdict(common.check_operands, call, table, rule)

    def clear():
        common._OPERANDS_OK.clear()
        datacopy._COMMON_OK.clear()

    checked = 0
    for (sp, dp) in _PATHS:
        for dt in _DTS:
            a = (TensorSig(*sp, dt, 256, 0, 0), TensorSig(*dp, dt, 256, 0, 0))
            clear()
            if check(*a) is not None:
                continue  # (not a path / dtype of this op)
            for side in (0, 1):
                for t in _changed(a[side]):
                    b = (t, a[1]) if side == 0 else (a[0], t)
                    clear()
                    fresh = check(*b)
                    clear()
                    check(*a)
                    assert check(*b) == fresh, (a, b)
                    checked += 1
    assert checked > 0


@settings(max_examples=400, deadline=None)
@given(burst=st.integers(0, 40), loops=st.lists(st.tuples(st.integers(0, 5), st.integers(-60, 60)), max_size=3),
       offs=st.lists(st.integers(0, 100), min_size=1, max_size=3).map(tuple))
def test_lattice_overlaps_is_exact_on_small_lattices(burst, loops, offs):
    """The overlap test (analytic fast paths, then enumeration) against every byte written, counted."""
    from fastcopy.dma.steps import lattice_overlaps

    starts = list(offs)
    for c, s in loops:
        starts = [x + i * s for x in starts for i in range(c)]
    hits = {}
    for x in starts:
        for k in range(burst):
            hits[x + k] = hits.get(x + k, 0) + 1
    assert lattice_overlaps(burst, tuple(loops), offs) == any(n > 1 for n in hits.values())


@settings(max_examples=300, deadline=None)
@given(step=st.one_of(moves(), fills()))
def test_footprint_is_spans_and_size(step):
    """The one-pass footprint of a step (new small plans) is its spans and its written bytes."""
    from fastcopy.dma.steps import footprint, step_spans, written

    assert footprint(step) == (*step_spans(step), written(step))


@pytest.mark.parametrize("n, d, s", [(1, 0, 0), (24, 6, 2), (2047, 12345, 0)])
def test_pack_burst_is_pack(n, d, s):
    assert same(abi.pack_burst(n, d, s), abi.pack(n, abi.NO_LOOPS, (0, 1, 0, 1), (d,), (s,)))


# ------------------------------------------------------------------------------- one-dimensional slices
_SLICE_SIGS = [(TPosition.GM, Phys.GM), (TPosition.VECIN, Phys.UB), (TPosition.VECOUT, Phys.UB)]


@st.composite
def one_dim_slices(draw):
    """Keys of one-dimensional slices, mostly valid, each rule's edge crossed now and then (shapes, burstLen,
    indices and the exact fit, equal run counts, the UB side's alignment, GM strides not whole blocks, gap fields,
    spans), either direction, every element width of the path, every product."""
    from fastcopy.products import SLICE_PATHS, Product

    def odd(usual, *edges):  # (an edge one draw in sixteen)
        return draw(st.sampled_from(edges)) if draw(st.integers(0, 15)) == 0 else usual

    product = draw(st.sampled_from([Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_INFERENCE_AICORE,
                                    Product.ATLAS_350]))
    dt = draw(st.sampled_from(sorted(SLICE_PATHS[product][(Phys.GM, Phys.UB)], key=str)))
    es = dt.itemsize
    q = max(1, 32 // es)
    bl = odd(draw(st.integers(1, 3)), 0, 65536, 2048)
    run = bl * 32 // es
    n = odd(draw(st.integers(1, 5)), 4096, 4095)

    def key(ub):
        start = q * draw(st.integers(0, 3)) if ub else draw(st.integers(0, 40))
        stride = q * draw(st.integers(0, 3)) if ub else draw(st.integers(0, 70))
        start, stride = (odd(start, 1, 3), odd(stride, 1, q * 65536)) if ub else (start, odd(stride, q * 65536,
                                                                                            2**32 - 1))
        end = start + n * run + (n - 1) * stride - 1 + odd(0, 1, -1, -run)
        shape = end + odd(draw(st.integers(1, 9)), 0, -end)
        return (start, max(end, 0), stride, odd(bl, bl + 1), max(shape, 0))

    to_gm = draw(st.booleans())
    gm, ub = (_SLICE_SIGS[0], _SLICE_SIGS[2]) if to_gm else (_SLICE_SIGS[0], _SLICE_SIGS[1])
    skey, dkey = (key(True), key(False)) if to_gm else (key(False), key(True))

    def sig_for(k, where):
        need = (k[0] + max(n - 1, 0) * (run + k[2]) + run) * es
        return TensorSig(*where, dt, max(need + odd(draw(st.integers(0, 64)), -es, -1), 0), 0,
                         draw(st.sampled_from([0, 16, 32])))

    return (dkey,), (skey,), sig_for(skey, ub if to_gm else gm), sig_for(dkey, gm if to_gm else ub), product


@settings(max_examples=400, deadline=None)
@given(case=one_dim_slices())
def test_one_dim_slice_builder(case):
    """A one-dimensional slice planned by ``slice._one_dim`` gets the plan (or the error, or the warnings) of the
    general planner, which it declines to whenever a rule fails."""
    from fastcopy.ops import slice as slice_mod

    dkeys, skeys, src, dst, product = case
    _builder_is_the_general_way(slice_mod, "_one_dim", lambda *a: None, slice_mod.plan_keys.__wrapped__, dkeys, skeys,
                                1, src, dst, product, None, None)


def test_one_dim_slice_builder_takes_the_report_row():
    """The report's slice (rows of 16 halves out of a wider GM row) is built by ``slice._one_dim``."""
    from fastcopy.ops import slice as slice_mod
    from fastcopy.products import Product

    half = np.dtype(np.float16)
    src = TensorSig(TPosition.GM, Phys.GM, half, 8 * 320 * 2, 0, 0)
    dst = TensorSig(TPosition.VECIN, Phys.UB, half, 16384, 0, 0)
    plan = slice_mod._one_dim((16, 2271, 304, 1, 2560), (0, 127, 0, 1, 128), src, dst, Product.ATLAS_A2)
    assert plan is not None and plan.steps[0].loops == ((8, 640, 32),)


def _verdict_or_plan(fn, *args):
    """The plan (its warnings in it), or the error's type and message."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 (the verdict is the error's type and message)
        return type(exc), str(exc)


def _builder_is_the_general_way(module, builder: str, general, planner, *args) -> None:
    """``planner(*args)`` gives the plan (or the error's type and message) it gives with ``module.<builder>``
    replaced by ``general`` (the way the planner took before the builder)."""
    got = _verdict_or_plan(planner, *args)
    real = getattr(module, builder)
    setattr(module, builder, general)
    try:
        ref = _verdict_or_plan(planner, *args)
    finally:
        setattr(module, builder, real)
    assert same(got, ref)


# ------------------------------------------------------------------------------- new ND2NZ calls, from the params
@st.composite
def nd2nz_keys(draw):
    """ND2NZ of one matrix (the form ``nz._tailed_rows`` builds; other forms too, which it must leave alone) on
    every path and product, every width, row and block strides that touch, overlap or leave gaps, tensors that
    fit or not."""
    from fastcopy.products import ND2NZ_PATHS, Product

    product = draw(st.sampled_from([Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_INFERENCE_AICORE,
                                    Product.ATLAS_350]))
    path = draw(st.sampled_from(sorted(ND2NZ_PATHS[product], key=str)))
    dt = draw(st.sampled_from(sorted(ND2NZ_PATHS[product][path], key=str)))
    es = dt.itemsize
    c0 = max(1, 32 // es)
    n = draw(st.sampled_from([1, 1, 2, 3, 16, 17, 0]))
    d = draw(st.sampled_from([1, c0 - 1, c0, c0 + 1, 2 * c0 + 3, 5 * c0 + 1, 0]))
    nblk = -(-d // c0)
    ns = draw(st.sampled_from([1, 1, 2, nblk + 1, 0]))
    cs = draw(st.sampled_from([n, n, n + 1, max(n - 1, 0), 1, 0, 20000]))
    nd = draw(st.sampled_from([1, 1, 1, 1, 2]))
    key = (nd, n, d, draw(st.sampled_from([0, 0, 3])), d + draw(st.sampled_from([0, 0, 1, 7])), cs, ns,
           draw(st.sampled_from([0, 0, 5])))
    src_bytes = ((max(n, 1) - 1) * key[4] + d) * es
    dst_bytes = (max(n, 1) * ns + max(nblk - 1, 0) * cs * max(n, 1)) * 32 + 32 * n
    room = lambda size: draw(st.sampled_from([64, 64, 4096, -1, -es, -(size // 3)]))  # noqa: E731
    phys = {Phys.GM: TPosition.GM, Phys.UB: TPosition.VECIN, Phys.L1: TPosition.A1}
    src = TensorSig(phys[path[0]], path[0], dt, max(src_bytes + room(src_bytes), 0), 0,
                    draw(st.sampled_from([0, 16, 32])))
    dst = TensorSig(phys[path[1]], path[1], dt, max(dst_bytes + room(dst_bytes), 0), 0,
                    draw(st.sampled_from([0, 16, 32])))
    return key, src, dst, product


@settings(max_examples=400, deadline=None)
@given(case=nd2nz_keys())
def test_nd2nz_rows_builder(case):
    """A new ND2NZ call of one matrix whose width is not a multiple of C0 gets, from ``nz._tailed_rows``, the plan
    (or the error) that the steps of ``nd2nz_steps`` get from ``make_tailed_plan`` / ``make_plan``."""
    from fastcopy.ops import nz as nz_mod

    key, src, dst, product = case
    _builder_is_the_general_way(nz_mod, "_tailed_rows", lambda *a: None, nz_mod._plan_nd2nz.__wrapped__, key, src,
                                dst, product, False, None)


def test_nd2nz_rows_builder_takes_the_report_row():
    """The report's ND2NZ (16 rows of 37 halves into L1) is built from its parameters."""
    from fastcopy.ops import nz as nz_mod
    from fastcopy.products import Product

    half = np.dtype(np.float16)
    key = Nd2NzParams(1, 16, 37, 0, 37, 16, 1, 0).key()
    src = TensorSig(TPosition.GM, Phys.GM, half, 4096, 0, 0)
    dst = TensorSig(TPosition.A1, Phys.L1, half, 4096, 0, 0)
    plan = nz_mod._tailed_rows("T", Nd2NzParams.Key._make(key), 2, src, dst, [], ())
    assert plan is not None and [k.kind for k in plan.ksteps] == ["tailed"]
    assert same(plan, nz_mod._plan_nd2nz.__wrapped__(key, src, dst, Product.ATLAS_A2, False, None)._replace(api="T"))


# ------------------------------------------------------------------------------- new NZ2ND calls
@st.composite
def nz2nd_keys(draw):
    """NZ2ND parameters of one or two matrices, rows apart, touching or overlapping (dstDStride < dValue), every
    width, tensors that fit or not, and now and then a field out of its range."""
    from fastcopy.products import Product

    product = draw(st.sampled_from([Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_350]))
    dt = draw(st.sampled_from([np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.int8)]))
    nd, n = draw(st.sampled_from([1, 1, 1, 2, 0, 4096])), draw(st.sampled_from([1, 2, 3, 16, 40, 0, 8193]))
    d = 16 * draw(st.sampled_from([1, 1, 2, 3, 5])) + draw(st.sampled_from([0, 0, 0, 0, 0, 0, 3]))
    dstd = draw(st.sampled_from([d, d, d + 16, 16, 17, max(d - 16, 16), 15, 65536]))
    nstride = draw(st.sampled_from([n, n, n + 1, 0, 1, 4096]))
    key = (nd, n, d, draw(st.sampled_from([1, 2, 0, 513])), nstride, dstd, draw(st.sampled_from([1, 4000, 0])))
    src = TensorSig(TPosition.VECOUT, Phys.UB, dt, draw(st.sampled_from([1 << 16, 1 << 18, 256])), 0, 0)
    dst = TensorSig(TPosition.GM, Phys.GM, dt, draw(st.sampled_from([1 << 18, 1 << 22, 512, 2048])), 0,
                    draw(st.sampled_from([0, 16, 32])))
    return key, src, dst, product, draw(st.booleans())


def _nz2nd_general(key, src, dst, product, looped):
    """The NZ2ND plan as the steps' general way makes it: the Move of every fractal column's rows (loops of one
    pass dropped), ``lattice_overlaps`` for the verdict, ``make_plan``; ranges and warnings as the planner's."""
    from fastcopy.dma.steps import lattice_overlaps
    from fastcopy.ops import nz as nz_mod
    from fastcopy.params import Nz2NdParamsFull

    p = Nz2NdParamsFull.Key._make(key)
    real = nz_mod.single_burst
    nz_mod.single_burst = lambda *a: None  # (the planner's shortcut off: its steps and warnings reach make_plan)
    seen = []
    real_make = nz_mod.make_plan
    nz_mod.make_plan = lambda api, steps, s, d, warns=(), **k: seen.append((api, steps, warns))
    try:
        nz_mod._plan_nz2nd.__wrapped__(key, src, dst, product, looped)
    finally:
        nz_mod.single_burst, nz_mod.make_plan = real, real_make
    api, steps, warns = seen[-1]
    if not steps:  # (ndNum = 0: a no-op)
        return make_plan(api, (), src, dst)
    es, f16 = src.itemsize, 16 * src.itemsize
    loops = ((p.ndNum, p.srcNdMatrixStride * 256 * es, p.dstNdMatrixStride * es),
             (p.dValue // 16, p.srcNStride * f16, f16), (p.nValue, f16, p.dstDStride * es))
    step = Move((0,), (0,), f16, tuple(lp for lp in loops if lp[0] != 1))
    return make_plan(api, (step,), src, dst, warns, exact=lattice_overlaps(f16, tuple((c, d) for c, _, d in loops)))


@settings(max_examples=300, deadline=None)
@given(case=nz2nd_keys())
def test_nz2nd_planner_is_the_general_way(case):
    """The NZ2ND planner's one-matrix shortcut (loops without a list, the overlap test inline, the single-burst
    builders called directly) gives the plan of its Move through ``lattice_overlaps`` and ``make_plan``, and the
    errors of its range checks."""
    from fastcopy.ops import nz as nz_mod

    key, src, dst, product, looped = case
    got = _verdict_or_plan(nz_mod._plan_nz2nd.__wrapped__, key, src, dst, product, looped)
    if isinstance(got, tuple) and not hasattr(got, "steps"):  # (an error: the general way raises it first)
        ref = _verdict_or_plan(_nz2nd_general, key, src, dst, product, looped)
    else:
        ref = _nz2nd_general(key, src, dst, product, looped)
    assert same(got, ref)


# ------------------------------------------------------------------------------- new DataCopyPad GM -> local calls
@st.composite
def pad_in_keys(draw):
    """DataCopyPad GM -> local parameters on every product and path, both structs, both modes, padding or none,
    pad register set (this width, another, a number) or not, tensors that fit or not, fields out of range."""
    from fastcopy.ops.padvalue import scalar_key
    from fastcopy.products import DATACOPYPAD_PATHS, Product

    product = draw(st.sampled_from([Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_200I_500_A2,
                                    Product.ATLAS_350]))
    path = draw(st.sampled_from(sorted([pt for pt in DATACOPYPAD_PATHS[product] if pt[0] is Phys.GM], key=str)))
    dt = draw(st.sampled_from(sorted(DATACOPYPAD_PATHS[product][path], key=str)))
    es = dt.itemsize
    kind = draw(st.sampled_from(["DataCopyExtParams", "DataCopyExtParams", "DataCopyParams"]))
    bc = draw(st.sampled_from([1, 1, 1, 2, 5, 0, 4096]))
    bl = es * draw(st.sampled_from([1, 3, 16, 17, 40])) + draw(st.sampled_from([0] * 9 + [1]))
    key = (bc, bl, draw(st.sampled_from([0, 0, 3, 64])), draw(st.sampled_from([0, 0, 0, 1, 70000])),
           draw(st.sampled_from([0] * 9 + [1])))
    if kind == "DataCopyParams":
        key = key[:4] + (0,)
    pkind = "DataCopyPadParams" if kind == "DataCopyParams" else "DataCopyPadExtParams"
    pkey = (draw(st.booleans()), draw(st.sampled_from([0] * 6 + [1, 40])), draw(st.sampled_from([0] * 6 + [2])))
    vkey = scalar_key(draw(st.sampled_from([0, 0, 0, 1, 3])))
    mode = PaddingMode.Compact if draw(st.integers(0, 5)) == 0 else PaddingMode.Normal
    padreg = draw(st.sampled_from([None, bytes(es), b"\x01" * es, b"\x02" * 4, ("number", scalar_key(7))]))
    phys = {Phys.GM: TPosition.GM, Phys.UB: TPosition.VECIN, Phys.L1: TPosition.A1}
    need = bc * (-(-bl // 32) * 32 + 64) + 64
    src = TensorSig(TPosition.GM, Phys.GM, dt, max(bc * (bl + 64) + draw(st.sampled_from([0, 0, -1])), 0), 0,
                    draw(st.sampled_from([0, 16, 3])))
    dst = TensorSig(phys[path[1]], path[1], dt, draw(st.sampled_from([need, need, need // 3, 1 << 16])), 0,
                    draw(st.sampled_from([0, 16, 32])))
    return kind, key, pkind, pkey, vkey, mode, src, dst, product, padreg, None


@settings(max_examples=400, deadline=None)
@given(case=pad_in_keys())
def test_pad_rows_builder(case):
    """A new DataCopyPad GM -> local call without padding whose dummy bytes have a value gets, from
    ``pad._rows``, the plan (or the error) that the steps of ``in_steps`` get from ``make_tailed_plan``."""
    from fastcopy.ops import pad as pad_mod

    def general(call, bc, bl, ss, ds, es, dummy, dummy_bytes, warns):
        return pad_mod._finish(call, pad_mod.in_steps(bc, bl, ss, ds, 0, 0, es, None, dummy), warns, None)

    _builder_is_the_general_way(pad_mod, "_rows", general, pad_mod._plan_in.__wrapped__, *case)

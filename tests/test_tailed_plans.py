"""Rows with a tail as one kernel step (``copy_tailed``: the plans of new ND2NZ calls whose width is not a multiple
of C0): the same bytes and definedness as the steps' byte-by-byte model and as the general lowering of the same
steps, on both kernel implementations, every view width, aligned and unaligned; the same errors; the public
ND2NZ calls against the reference oracle (first calls and prepared repeats)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_executor_props import assert_same, make_memory, model_run, snapshot, window
from test_nz import check_nd2nz, nd2nz_case

from fastcopy import DataCopy, GlobalTensor, Nd2NzParams, TPipe, TPosition
from fastcopy.dma import lower as lower_mod
from fastcopy.dma.lower import general_plan, make_plan, tailed_plan
from fastcopy.dma.run import execute
from fastcopy.dma.steps import Fill, Move
from fastcopy.errors import FastCopyError, OutOfBoundsError
from fastcopy.ops.nz import plan_nd2nz

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", autouse=True, params=["numba", "numpy"])
def kernels(request):
    """Every test here runs on both kernel implementations: numba, and the numpy path of first/small calls."""
    from fastcopy.dma import kernels as K

    K.use(request.param)
    yield request.param
    K.use("auto")


#: host residues: often aligned (the widest views), else any
residues = st.one_of(st.sampled_from([0, 8, 32]), st.integers(0, 63))


@st.composite
def tailed_programs(draw):
    """``(steps, grain)``: ``(whole blocks,) partial block, its fill`` over one or two row loops, writes never
    overlapping (rows placed apart, in either direction), reads anywhere, offsets and strides multiples of a grain
    of 1-8 bytes (every view width)."""
    g = draw(st.sampled_from([1, 2, 4, 8]))
    unit = lambda lo, hi: draw(st.integers(lo, hi)) * g  # noqa: E731
    nb = draw(st.sampled_from([0, 1, 1, 2, 3]))
    blk = unit(1, 6)
    bd = blk + unit(0, 3)
    bd = -bd if nb > 1 and draw(st.integers(0, 4)) == 0 else bd
    blocks_lo, blocks_hi = min(0, (nb - 1) * bd), max(0, (nb - 1) * bd) + blk
    fd = -blocks_lo
    rem, tail = unit(1, 5), unit(1, 5)
    pd = fd + (blocks_hi if nb else 0) + unit(0, 2)
    td = pd + rem + unit(0, 2)
    extent = td + tail + unit(0, 3)
    loops, d_extent = [], extent
    for _ in range(draw(st.integers(0, 2))):
        c = draw(st.integers(1, 4))
        d = d_extent + unit(0, 3)
        d = -d if draw(st.integers(0, 3)) == 0 else d
        loops.append((c, unit(-20, 60), d))
        d_extent = abs(d) * (c - 1) + d_extent
    if len(loops) == 2 and draw(st.booleans()):
        loops.reverse()  # (the wider row loop inside)
    loops = tuple(loops)
    shift = d_extent + 64  # (rows stepping backwards: the program starts further on)
    base_s, base_d = unit(0, 40) + 1600, shift
    pattern = draw(st.sampled_from([bytes(g), b"\x01" * g, bytes(range(1, g + 1)), b"\x5a"]))
    steps = []
    if nb:
        fs = base_s + unit(0, 10)
        bs = draw(st.sampled_from([blk, blk + g, 0, -blk]))
        full_loops = loops + (((nb, bs, bd),) if nb > 1 else ())
        steps.append(Move((fs,), (base_d + fd,), blk, full_loops))
    steps.append(Move((base_s + unit(0, 10),), (base_d + pd,), rem, loops))
    if draw(st.integers(0, 2)) == 0:  # a tail repeating one source element (a DataCopyPad dummy)
        we = draw(st.sampled_from([x for x in (1, 2, 4) if x <= g]))
        steps.append(Move((base_s + unit(0, 10),), (base_d + td,), we, loops + ((tail // we, 0, we),)))
    else:
        steps.append(Fill((base_d + td,), tail, tuple((c, d) for c, _, d in loops), pattern))
    return tuple(steps)


def _declined_ok(steps, src_res: int, dst_res: int) -> bool:
    """Why tailed_plan may decline a drawn program: a multi-byte fill pattern, or a repeated source element that
    no view as wide can read and write (make_plan takes those)."""
    tail = steps[-1]
    if type(tail) is Fill:
        return len(set(tail.pattern)) > 1
    g = 0
    for s in steps:
        g = math.gcd(g, s.burst, dst_res + s.dst_offs[0], src_res + s.src_offs[0], *(v for lp in s.loops
                                                                                  for v in lp[1:]))
    return g % tail.burst != 0


def _reach(steps) -> int:
    """The end of the furthest byte ``steps`` read or write (their offsets, bursts and forward strides)."""
    end = 0
    for st_ in steps:
        offs = (st_.dst_offs[0],) if type(st_) is Fill else (st_.src_offs[0], st_.dst_offs[0])
        for k, off in enumerate(offs):  # (k: the stride's place in a Move loop after its count, 0 for Fill)
            col = -1 if type(st_) is Fill else k + 1
            end = max(end, off + st_.burst + sum((lp[0] - 1) * max(lp[col], 0) for lp in st_.loops))
    return end


def _run(plan_fn, steps, seed, src_res, dst_res, plane, dst_plane, size=None):
    """(the plan of ``steps`` made by ``plan_fn``, source and destination tensors, the destination's bytes);
    memories of 8 KiB, more when the drawn program reaches further (two row loops of four rows each can)."""
    size = max(8192, -(-_reach(steps) // 64) * 64 + 64) if size is None else size
    rng = np.random.default_rng(seed)
    src = make_memory(size, src_res, plane, rng)
    dst = make_memory(size, dst_res, dst_plane, rng)
    s, d = window(src, 0, size), window(dst, 0, size)
    return plan_fn("T", steps, s._sig, d._sig), s, d, snapshot(dst.memory)


@SETTINGS
@given(steps=tailed_programs(), seed=st.integers(0, 2**32 - 1), src_res=residues, dst_res=residues, plane=st.sampled_from([None, "ones", "random", "mostly"]),
       dst_plane=st.sampled_from([None, "ones", "random"]))
@example(steps=(Move((1600,), (4304,), 48, ((4, 0, 264), (4, 0, 1032), (3, 48, -56))),  # (writes past 8 KiB)
                Move((1600,), (4368,), 8, ((4, 0, 264), (4, 0, 1032))),
                Move((1600,), (4392,), 1, ((4, 0, 264), (4, 0, 1032), (16, 0, 1)))),
         seed=0, src_res=0, dst_res=0, plane=None, dst_plane=None)
def test_tailed_plan_is_the_steps(steps, seed, src_res, dst_res, plane, dst_plane):
    """One ``copy_tailed`` step writes what the steps write (the model) and what their general lowering writes,
    data and definedness, whatever the source's definedness and the destination's plane."""
    plan, s, d, model = _run(tailed_plan, steps, seed, src_res, dst_res, plane, dst_plane)
    if plan is None:
        assert _declined_ok(steps, src_res, dst_res)
        return
    assert [k.kind for k in plan.ksteps] == ["tailed"]
    ref, s2, d2, _ = _run(lambda *a: general_plan(*a, small=False), steps, seed, src_res, dst_res, plane,
                                  dst_plane)
    assert (plan.read, plan.write, plan.nbytes, plan.dense) == (ref.read, ref.write, ref.nbytes, ref.dense)
    execute(plan, d, s)
    execute(ref, d2, s2)
    src_data, src_dfd = snapshot(s.memory)
    model_run(steps, {0: (src_data, src_dfd), 1: model}, 1, 0, 0, 0, d.memory.poison)
    assert_same(d.memory, model, "tailed plan against the model")
    assert_same(d2.memory, model, "general plan against the model")
    assert_same(s.memory, (src_data, src_dfd), "the source is untouched")


@SETTINGS
@given(steps=tailed_programs(), src_res=st.integers(0, 63), dst_res=st.integers(0, 63),
       room=st.integers(-700, 200))
def test_tailed_plan_errors_are_the_general_ones(steps, src_res, dst_res, room):
    """Tensors a little too small: the same OutOfBoundsError, message included, as the general lowering."""
    from fastcopy.memory import TensorSig
    from fastcopy.products import Phys

    u8 = np.dtype(np.uint8)
    hi = max(max(s.dst_offs[0] for s in steps), max(s.src_offs[0] for s in steps if type(s) is Move)) + 600
    src, dst = (TensorSig(TPosition.GM, Phys.GM, u8, max(0, hi + room), 0, r) for r in (src_res, dst_res))
    try:
        ref = general_plan("T", steps, src, dst, small=False)
    except OutOfBoundsError as exc:
        with pytest.raises(OutOfBoundsError) as got:
            tailed_plan("T", steps, src, dst)
        assert str(got.value) == str(exc)
        return
    plan = tailed_plan("T", steps, src, dst)
    assert (plan.read, plan.write) == (ref.read, ref.write) if plan is not None else _declined_ok(steps, src_res, dst_res)


def test_a_tailed_lowering_bug_is_caught_at_planning():
    """The kernel's fields (packed verbatim into its ``meta``) are checked against the spans: fields that stray one
    unit outside on either side (a simulated lowering bug) are refused, before anything runs."""
    from fastcopy.memory import TensorSig
    from fastcopy.products import Phys

    steps = (Move((0,), (0,), 32, ((4, 40, 32), (2, 32, 128))), Move((64,), (256,), 8, ((4, 40, 32),)),
             Fill((264,), 24, ((4, 32),), b"\0\0"))
    sig = TensorSig(TPosition.GM, Phys.GM, np.dtype(np.uint8), 384, 0, 0)
    plan = tailed_plan("T", steps, sig, sig)
    ks = plan.ksteps[0]
    m = ks.metas[0].tolist()
    fields = [tuple(tuple(m[k:k + 3]) for k in (0, 3))] + m[6:17] + [m[18] if m[19] else None]
    lower_mod._check_tailed("T", tuple(fields), ks.w, plan.read, plan.write, 0, 0)  # (as planned: fine)
    for k, delta in ((5, -1), (6, -1), (11, 1), (10, 1), (8, 40)):  # fs, fd, td, tail, ps
        bad = list(fields)
        bad[k] += delta
        with pytest.raises(OutOfBoundsError, match="internal error"):
            lower_mod._check_tailed("T", tuple(bad), ks.w, plan.read, plan.write, 0, 0)


def test_other_programs_are_declined():
    """Programs not of that shape (or large ones) are left to make_plan, which plans them as before."""
    from fastcopy.memory import TensorSig
    from fastcopy.products import Phys

    sig = TensorSig(TPosition.GM, Phys.GM, np.dtype(np.uint8), 1 << 22, 0, 0)
    part = Move((0,), (0,), 8, ((4, 8, 32),))
    declined = [
        (part, Fill((8,), 24, ((4, 32),), None)),  # an undefined tail
        (part, Fill((8,), 24, ((3, 32),), b"\0")),  # not the rows' loops
        (Fill((8,), 24, ((4, 32),), b"\0"), part),
        (Move((0,), (0,), 32, ((4, 8, 64),)), part, Fill((8,), 24, ((4, 32),), b"\0")),  # blocks on other rows
        (Move((0,), (0,), 8, ((1 << 14, 8, 32),)), Fill((8,), 24, ((1 << 14, 32),), b"\0")),  # large
    ]
    for steps in declined:
        assert tailed_plan("T", steps, sig, sig) is None


def _nd2nz_pair(product="ATLAS_A2", d=37, n=16):
    pipe = TPipe(product=product)
    src = GlobalTensor(np.random.default_rng(1).integers(0, 2**16, 1 << 14, dtype=np.uint16).view(np.float16))
    return pipe, src, pipe.alloc(TPosition.A1, "half", 1 << 14), Nd2NzParams(1, n, d, 0, d, n, 1, 0)


def test_new_nd2nz_calls_take_one_kernel_step():
    _, src, dst, p = _nd2nz_pair()
    assert [k.kind for k in plan_nd2nz(dst, src, p).ksteps] == ["tailed"]
    p16 = Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0)  # (a multiple of C0: one Move, as before)
    assert [k.kind for k in plan_nd2nz(dst, src, p16).ksteps] != ["tailed"]


@SETTINGS
@given(case=nd2nz_case(), extra=st.integers(0, 64), seed=st.integers(0, 2**32 - 1))
def test_nd2nz_matches_reference_on_both_kernels(case, extra, seed):
    """The public ND2NZ against the reference oracle (tests/test_nz.py), here on each kernel implementation."""
    check_nd2nz(case, extra, seed)


@pytest.mark.parametrize("d", [1, 5, 15, 17, 37, 40])
def test_repeated_nd2nz_is_the_first_call(d):
    """The prepared repeat (one bound ``copy_tailed`` call) writes what a new call writes, plane included, also
    after the source's bytes change."""
    pipe, src, dst, p = _nd2nz_pair(d=d)
    other = pipe.alloc(TPosition.A1, "half", 1 << 14)
    for k in range(3):
        src.numpy()[: 4096] = np.arange(4096, dtype=np.uint16).view(np.float16) + k
        dst.numpy()[:] = 0
        other.numpy()[:] = 0
        DataCopy(dst, src, p)
        DataCopy(dst, src, p)
        DataCopy(other, src, Nd2NzParams(1, 16, d, 0, d, 16, 1, 0))  # (each call new: tailed_plan again)
        assert np.array_equal(dst.numpy().view(np.uint16), other.numpy().view(np.uint16))
        assert np.array_equal(dst.defined(), other.defined())


def test_errors_leave_destination_and_plane_unchanged():
    """A call whose span does not fit raises what the general lowering raises, and writes nothing."""
    pipe = TPipe(product="ATLAS_A2")
    src = GlobalTensor(np.zeros(1 << 12, np.float16))
    dst = pipe.alloc(TPosition.A1, "half", 512)
    dst.numpy()[:] = 7
    before = dst.numpy().copy(), dst.defined().copy()
    p = Nd2NzParams(1, 16, 37, 0, 37, 16, 1, 0)  # writes 1536 bytes into 1024
    with pytest.raises(OutOfBoundsError) as got:
        DataCopy(dst, src, p)
    steps = (Move((0,), (0,), 32, ((16, 74, 32), (2, 32, 512))), Move((64,), (1024,), 10, ((16, 74, 32),)),
             Fill((1034,), 22, ((16, 32),), b"\0\0"))
    with pytest.raises(OutOfBoundsError) as ref:
        make_plan(got.value.args[0].split(":")[0], steps, src._sig, dst._sig)
    assert str(got.value) == str(ref.value)
    assert np.array_equal(dst.numpy(), before[0]) and np.array_equal(dst.defined(), before[1])
    with pytest.raises(FastCopyError):
        DataCopy(dst, src, Nd2NzParams(1, 16, 37, 0, 37, 0, 1, 0))  # dstNzC0Stride 0: a range error
    assert np.array_equal(dst.numpy(), before[0]) and np.array_equal(dst.defined(), before[1])


def test_stand_in_runs_numpy_early_then_numba(kernels):
    """The stand-in of a process's first calls (numpy for small early calls, numba from then on) writes the same
    bytes and plane either way."""
    from fastcopy import config
    from fastcopy.dma import kernels as K

    K.use("auto")
    try:
        _, src, dst, p = _nd2nz_pair(d=37)
        pipe2, _, other, _ = _nd2nz_pair(d=37)
        DataCopy(dst, src, p)  # (early and small: the numpy twin)
        K._calls = config.CALLS_BEFORE_KERNELS  # (the next call loads and runs the numba kernel)
        DataCopy(other, src, Nd2NzParams(1, 16, 37, 0, 37, 16, 1, 0))
        assert K.loaded()
        assert np.array_equal(dst.numpy().view(np.uint16), other.numpy().view(np.uint16))
        assert np.array_equal(dst.defined(), other.defined())
    finally:
        K.use(kernels)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(steps=tailed_programs(), seed=st.integers(0, 2**32 - 1), shift=st.integers(-300, 300))
def test_tailed_plan_on_one_memory_reads_before_writing(steps, seed, shift):
    """Source and destination windows of one memory (they may share bytes): the runner's aliasing test sends the
    plan to the exact path, which reads every source byte before writing (the model)."""
    rng = np.random.default_rng(seed)
    mem = make_memory(16384, 0, "random", rng)
    s, d = window(mem, 4096, 8192), window(mem, 4096 + shift, 8192)
    plan = tailed_plan("T", steps, s._sig, d._sig)
    if plan is None:
        return
    model = snapshot(mem.memory)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        execute(plan, d, s)
    model_run(steps, {0: model}, 0, 4096 + shift, 0, 4096, mem.memory.poison)
    assert_same(mem.memory, model, "one memory")

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
       dst_res=st.integers(0, 63), room=st.integers(-64, 1 << 12), warn=st.booleans())
def test_make_plan_is_the_general_plan(steps, src_res, dst_res, room, warn):
    """Random small programs (and tensors a little too small: the same OutOfBoundsError)."""
    steps = tuple(s for s in steps if not (isinstance(s, Fill) and s.pattern is not None
                                          and len(set(s.pattern)) > 1))  # (narrow patterns go exact)
    if not steps:
        return
    warnings = ("a warning",) if warn else ()
    src, dst = sig(max(0, 4096 + room), src_res), sig(max(0, 4096 + room), dst_res)
    try:
        ref = general_plan("T", steps, src, dst, warnings, small=False)
    except OutOfBoundsError as exc:
        with pytest.raises(OutOfBoundsError) as got:
            make_plan("T", steps, src, dst, warnings)
        assert str(got.value) == str(exc)
        return
    assert same(make_plan("T", steps, src, dst, warnings), ref)


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

    real = lower_mod.KStep

    def shifted(kind, w, doffs, *rest):  # every kernel step the builders make, one unit further on
        return real(kind, w, tuple(u + 1 for u in doffs), *rest)

    monkeypatch.setattr(lower_mod, "KStep", shifted)
    with pytest.raises(OutOfBoundsError, match="internal error"):
        make_plan("test", steps, sig(128, 0), sig(128, 0))

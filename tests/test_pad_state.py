"""DataCopyPad per-core state and value handling: the pad register (PADREG) set by SetPadValue and isPad=true
calls (semantics.md §4.3, §11.12), one register per core, exact scalar conversion, the 8-byte first fill (11.11), loop
mode (4.8), the plan cache keys, and which calls take the exact (overlap-resolving) path."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from fastcopy import (DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams, FastCopyWarning,
                      GlobalTensor, LoopModeParams, PaddingMode, ResetLoopModePara, SetLoopModePara, SetPadValue,
                      TPipe, current_pipe)
from fastcopy.ops.pad import plan_pad_in, plan_pad_out
from fastcopy.ops.padvalue import scalar_pattern

EXT = DataCopyExtParams
PAD = DataCopyPadExtParams


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _copy_in(pipe, src, cp, pp, dtype, n=64, **kw):
    dst = pipe.alloc("VECIN", dtype, n)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        DataCopyPad(dst, src, cp, pp, **kw)
    return dst


# ------------------------------------------------------------------------------------------------ PADREG
def test_set_pad_value_then_is_pad_false_is_defined():
    """Real kernels: SetPadValue(v) then DataCopyPad(isPad=false) with padding; the golden expects v."""
    pipe = TPipe(product="ATLAS_A2")
    SetPadValue(np.float16(-3.5), pipe=pipe)
    src = GlobalTensor(np.arange(1, 11, dtype=np.float16))
    dst = _copy_in(pipe, src, EXT(1, 20, 0, 0, 0), PAD(False, 1, 2, 0), "half", 16)
    want = np.array([-3.5] + list(range(1, 11)) + [-3.5] * 5, np.float16)
    assert np.array_equal(_bits(dst.numpy()), _bits(want)) and dst.defined().all()


def test_is_pad_true_sets_the_register_for_later_calls():
    pipe = TPipe(product="ATLAS_A3")
    src = GlobalTensor(np.arange(1, 11, dtype=np.int32))
    _copy_in(pipe, src, EXT(1, 40, 0, 0, 0), PAD(True, 0, 1, 77), "int32", 16)
    assert pipe.state["padreg"] == np.int32(77).tobytes()
    dst = _copy_in(pipe, src, EXT(1, 8, 0, 0, 0), PAD(False, 1, 0, 0), "int32", 8)
    assert list(dst.numpy()) == [77, 1, 2, 77, 77, 77, 77, 77] and dst.defined().all()


def test_350_dummy_reads_the_register_when_set():
    """350, isPad=false, left = right = 0: DUMMY = PADREG if set, else the burst's first element."""
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.arange(5, 15, dtype=np.int16))
    dst = _copy_in(pipe, src, EXT(1, 6, 0, 0, 0), PAD(False, 0, 0, 0), "int16", 16)
    assert list(dst.numpy()) == [5, 6, 7] + [5] * 13
    SetPadValue(np.int16(-2), pipe=pipe)
    dst = _copy_in(pipe, src, EXT(1, 6, 0, 0, 0), PAD(False, 0, 0, 0), "int16", 16)
    assert list(dst.numpy()) == [5, 6, 7] + [-2] * 13


def test_a2_dummy_is_first_even_when_register_set():
    pipe = TPipe(product="ATLAS_A2")
    SetPadValue(np.int16(-2), pipe=pipe)
    src = GlobalTensor(np.arange(5, 15, dtype=np.int16))
    dst = _copy_in(pipe, src, EXT(1, 6, 0, 0, 0), PAD(True, 0, 0, 9), "int16", 16)
    assert list(dst.numpy()) == [5, 6, 7] + [5] * 13
    assert pipe.state["padreg"] == np.int16(9).tobytes()  # isPad=true still sets it


def test_untyped_register_converts_to_each_copy():
    """SetPadValue(1) (a plain Python number): each copy converts it to its own element type."""
    pipe = TPipe(product="ATLAS_A2")
    SetPadValue(1, pipe=pipe)
    for dtype in (np.float16, np.int32, np.uint8, ml_dtypes.bfloat16, np.float64):
        src = GlobalTensor(np.zeros(4, dtype))
        n = 32 // np.dtype(dtype).itemsize
        v = 0 if np.dtype(dtype).itemsize == 8 else 1
        if v == 0:
            SetPadValue(0, pipe=pipe)
        dst = _copy_in(pipe, src, EXT(1, np.dtype(dtype).itemsize, 0, 0, 0), PAD(False, 1, 0, 0), dtype, n)
        assert np.array_equal(_bits(dst.numpy()), _bits(np.array([v, 0] + [v] * (n - 2), dtype)))
        assert dst.defined().all()


def test_untyped_register_not_read_is_not_converted():
    """A number the copy's type cannot hold is fine as long as the copy does not read the register."""
    pipe = TPipe(product="ATLAS_A2")
    SetPadValue(0.1, pipe=pipe)
    src = GlobalTensor(np.arange(16, dtype=np.float16))
    dst = _copy_in(pipe, src, EXT(1, 20, 0, 0, 0), PAD(False, 0, 0, 0), "half", 16)  # dummy = first
    assert dst.defined().all()


def test_register_is_per_core():
    a, b = TPipe(product="ATLAS_A2"), TPipe(product="ATLAS_A2")
    SetPadValue(np.float32(1), pipe=a)
    assert "padreg" in a.state and "padreg" not in b.state
    SetPadValue(np.float32(2))  # the current core: the most recently created TPipe
    assert b.state["padreg"] == np.float32(2).tobytes() and a.state["padreg"] == np.float32(1).tobytes()
    with a:
        assert current_pipe() is a
        SetPadValue(np.float32(3))
    assert a.state["padreg"] == np.float32(3).tobytes() and b.state["padreg"] == np.float32(2).tobytes()


def test_register_keeps_exact_bits():
    pipe = TPipe(product="ATLAS_A2")
    nan = np.array([0x7E01], np.uint16).view(np.float16)[0]  # a NaN with a payload
    SetPadValue(nan, pipe=pipe)
    assert pipe.state["padreg"] == b"\x01\x7e"
    SetPadValue(-0.0, pipe=pipe, dtype="half")
    assert pipe.state["padreg"] == b"\x00\x80"
    src = GlobalTensor(np.ones(16, np.float16))
    dst = _copy_in(pipe, src, EXT(1, 2, 0, 0, 0), PAD(False, 1, 0, 0), "half", 16)
    assert list(_bits(dst.numpy())) == [0x8000, 0x3C00] + [0x8000] * 14


def test_plan_cache_keys_on_the_register():
    """Same call, different register: different padding (the register is part of the plan-cache key)."""
    pipe = TPipe(product="ATLAS_A2")
    src = GlobalTensor(np.arange(8, dtype=np.uint8))
    outs = []
    for v in (1, 2):
        SetPadValue(np.uint8(v), pipe=pipe)
        outs.append(list(_copy_in(pipe, src, EXT(1, 4, 0, 0, 0), PAD(False, 2, 0, 0), "uint8", 32).numpy()[:3]))
    assert outs == [[1, 1, 0], [2, 2, 0]]


def test_b64_first_fill_repeats_the_first_word():
    """8-byte types move as pairs of 32-bit elements: DUMMY repeats the burst's first 32-bit word (11.11)."""
    pipe = TPipe(product="ATLAS_A2")
    src = GlobalTensor(np.array([0x1111111122222222, 5], np.uint64))
    dst = _copy_in(pipe, src, EXT(1, 8, 0, 0, 0), PAD(False, 0, 0, 0), "uint64", 4)
    assert list(dst.numpy()) == [0x1111111122222222] + [0x2222222222222222] * 3


# ------------------------------------------------------------------------------------------------ scalars
@pytest.mark.parametrize("value, dtype, want", [
    (1, np.float16, np.float16(1)), (np.int8(-3), np.float32, np.float32(-3)), (2**24, np.float32, 2.0**24),
    (0.5, ml_dtypes.bfloat16, 0.5), (True, np.int32, 1), (1.0, np.bool_, True), (3.0, np.uint8, 3),
    (1 + 2j, np.complex64, np.complex64(1 + 2j)), (float("inf"), np.float16, np.inf),
])
def test_scalar_conversion_exact(value, dtype, want):
    got = scalar_pattern(value, np.dtype(dtype), "t", "v", "p")
    assert got == np.array(want, dtype).tobytes()


def test_scalar_conversion_complex32():
    c32 = np.dtype([("real", np.float16), ("imag", np.float16)])
    assert scalar_pattern(1.5 - 2j, c32, "t", "v", "p") == np.array([1.5, -2], np.float16).tobytes()


@pytest.mark.parametrize("value, dtype", [
    (2**24 + 1, np.float32), (0.1, np.float16), (256, np.uint8), (-1, np.uint16), (1.5, np.int32), (2, np.bool_),
    (1j, np.float32), (float("inf"), ml_dtypes.float8_e4m3fn), (2**70, np.float16), (float("nan"), np.int32),
])
def test_scalar_conversion_rejects_inexact(value, dtype):
    from fastcopy import ParamTypeError

    with pytest.raises(ParamTypeError, match="cannot be represented exactly"):
        scalar_pattern(value, np.dtype(dtype), "DataCopyPad", "paddingValue", "Atlas A2")


# ------------------------------------------------------------------------------------------------ loop mode
def test_loop_mode_repeats_and_resets():
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.arange(64, dtype=np.uint8))
    SetLoopModePara(LoopModeParams(2, 1, 10, 32, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    dst = _copy_in(pipe, src, EXT(1, 4, 0, 0, 0), PAD(True, 0, 0, 0), "uint8", 96)
    assert list(dst.numpy()[:4]) == [0, 1, 2, 3] and list(dst.numpy()[32:36]) == [10, 11, 12, 13]
    assert not dst.defined()[64:].any()
    ResetLoopModePara(pipe=pipe)
    dst = _copy_in(pipe, src, EXT(1, 4, 0, 0, 0), PAD(True, 0, 0, 0), "uint8", 96)
    assert dst.defined()[:32].all() and not dst.defined()[32:].any()


def test_loop_mode_not_on_gm_to_l1():
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.arange(64, dtype=np.uint8))
    SetLoopModePara(LoopModeParams(2, 1, 10, 32, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    dst = pipe.alloc("A1", "uint8", 96)
    DataCopyPad(dst, src, EXT(1, 4, 0, 0, 0), PAD(True, 0, 0, 0))
    assert dst.defined()[:32].all() and not dst.defined()[32:].any()


def test_loop_mode_direction():
    """UB_TO_OUT loop mode repeats UB -> GM moves only."""
    pipe = TPipe(product="ATLAS_350")
    SetLoopModePara(LoopModeParams(3, 1, 32, 5, 0, 0), DataCopyMVType.UB_TO_OUT, pipe=pipe)
    ub = pipe.alloc("VECOUT", "uint8", 96)
    ub.numpy()[:] = np.arange(96)
    ub.set_defined()
    gm = GlobalTensor(np.zeros(16, np.uint8))
    DataCopyPad(gm, ub, EXT(1, 2, 0, 0, 0))
    assert list(gm.numpy()[:12]) == [0, 1, 0, 0, 0, 32, 33, 0, 0, 0, 64, 65]
    src = GlobalTensor(np.arange(64, dtype=np.uint8))
    dst = _copy_in(pipe, src, EXT(1, 4, 0, 0, 0), PAD(True, 0, 0, 0), "uint8", 96)
    assert dst.defined()[:32].all() and not dst.defined()[32:].any()


# ------------------------------------------------------------------------------------------------ plans
def test_large_row_copy_runs_on_the_kernels():
    """Normal parameters never overlap (per-burst period >= footprint): no exact path, even for 64 MiB."""
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": 80 << 20})
    src = GlobalTensor(np.zeros(2048 * 8191, np.float32))
    dst = pipe.alloc("VECIN", "float", 2048 * 8192)
    plan, _ = plan_pad_in(dst, src, EXT(2048, 8191 * 4, 0, 0, 0), PAD(False, 0, 0, 0))
    assert not plan.exact and plan.nbytes == 2048 * 8192 * 4
    plan = plan_pad_out(src, dst, EXT(2048, 8191 * 4, 0, 0, 0))
    assert not plan.exact


def test_loop_mode_exact_only_when_repetitions_overlap():
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.zeros(4096, np.uint8))
    dst = pipe.alloc("VECIN", "uint8", 4096)
    cp, pp = EXT(2, 40, 0, 0, 0), PAD(False, 0, 0, 0)
    SetLoopModePara(LoopModeParams(3, 2, 100, 128, 300, 384), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    assert not plan_pad_in(dst, src, cp, pp)[0].exact  # footprint 128 per repetition, disjoint
    SetLoopModePara(LoopModeParams(3, 1, 100, 96, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    assert plan_pad_in(dst, src, cp, pp)[0].exact  # repetitions overlap


def test_compact_positional_mode():
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor(np.arange(12, dtype=np.uint8))
    dst = _copy_in(pipe, src, EXT(2, 3, 1, 0, 0), PAD(True, 0, 0, 9), "uint8", 32, mode="Compact")
    assert list(dst.numpy()[:8]) == [0, 1, 2, 4, 5, 6, 9, 9]
    dst = pipe.alloc("VECIN", "uint8", 32)
    DataCopyPad(dst, src, EXT(2, 3, 1, 0, 0), PAD(True, 0, 0, 9), PaddingMode.Compact)
    assert list(dst.numpy()[:8]) == [0, 1, 2, 4, 5, 6, 9, 9]

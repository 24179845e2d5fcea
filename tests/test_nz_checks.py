"""ND2NZ / NZ2ND checker: one test per validation rule (exception class, message parts, destination
unchanged) and one per warning condition (semantics.md §5.2, §5.4, §5.5, §6.2, §10, §11)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from fastcopy import (AlignmentError, CapacityError, DataCopy, DataCopyMVType, FastCopyWarning, GlobalTensor,
                      LoopModeParams, Nd2NzParams, Nz2NdParamsFull, OutOfBoundsError, ParamTypeError, RangeError,
                      SetLoopModePara, TPipe, TPosition, UnsupportedError)

GOOD_ND = dict(ndNum=1, nValue=32, dValue=32, srcNdMatrixStride=0, srcDValue=32, dstNzC0Stride=32,
               dstNzNStride=1, dstNzMatrixStride=0)
GOOD_NZ = dict(ndNum=1, nValue=32, dValue=32, srcNdMatrixStride=1, srcNStride=32, dstDStride=32,
               dstNdMatrixStride=1)


def nd(**kw):
    return Nd2NzParams(**{**GOOD_ND, **kw})


def nz(**kw):
    return Nz2NdParamsFull(**{**GOOD_NZ, **kw})


def _fill(t, value=7):
    t.numpy()[:] = value
    t.set_defined()
    return t


class Setup:
    """A core with a GM source / local destination (ND2NZ) or UB source / GM destination (NZ2ND)."""

    def __init__(self, product="A2", dtype=np.float16, dst_pos=TPosition.A1, src_pos=None, n=4096):
        self.pipe = TPipe(product)
        self.gm = (np.arange(n) % 100).astype(dtype)
        self.src = GlobalTensor(self.gm) if src_pos is None else _fill(self.pipe.alloc(src_pos, dtype, n), 3)
        self.dst = _fill(self.pipe.alloc(dst_pos, dtype, n)) if dst_pos is not TPosition.GM else GlobalTensor(
            np.full(n, 7, dtype))
        self.before = self.dst.numpy().copy(), self.dst.defined().copy()

    def unchanged(self):
        data, dfd = self.before
        return (np.array_equal(self.dst.numpy().view(np.uint8), data.view(np.uint8))
                and np.array_equal(self.dst.defined(), dfd))


def raises(setup, exc, params, *parts, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        with pytest.raises(exc) as info:
            DataCopy(setup.dst, setup.src, params, **kwargs)
    msg = str(info.value)
    for part in parts:
        assert part in msg, f"{part!r} not in {msg!r}"
    assert setup.unchanged(), "the destination changed although the call raised"
    return msg


def warns(setup, params, pattern, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the other warnings of the call, re-emitted by pytest.warns
        with pytest.warns(FastCopyWarning, match=pattern):
            DataCopy(setup.dst, setup.src, params, **kwargs)


def no_warning(setup, params, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataCopy(setup.dst, setup.src, params, **kwargs)


# ============================================================================================ ND2NZ errors
def test_nd2nz_field_type_overflow_is_an_error():
    s = Setup("A2")
    p = nd()
    p.dValue = 70000  # fits the widest (Atlas 350) type, not uint16_t
    raises(s, ParamTypeError, p, "dValue=70000", "uint16_t", "Atlas A2")


def test_nd2nz_type_overflow_in_an_unused_field_is_an_error():
    """11.4: a value the struct cannot store is an error even where it takes no effect (ndNum = 1)."""
    s = Setup("A2")
    raises(s, ParamTypeError, nd(srcNdMatrixStride=70000), "srcNdMatrixStride=70000", "Atlas A2")


@pytest.mark.parametrize("field, value, text", [
    ("ndNum", 4096, "[0, 4095] matrices"),
    ("nValue", 16385, "[0, 16384] rows"),
    ("srcDValue", 0, "[1, 65535] elements"),
    ("dstNzNStride", 0, "[1, 16384] C0 blocks"),
    ("dstNzNStride", 16385, "[1, 16384] C0 blocks"),
    ("dstNzC0Stride", 0, "[1, 16384] C0 blocks"),
    ("dstNzC0Stride", 16385, "[1, 16384] C0 blocks"),
])
def test_nd2nz_ranges(field, value, text):
    s = Setup("A2", n=1 << 16)
    kw = {field: value}
    if field == "ndNum":
        kw["srcNdMatrixStride"] = 0
    raises(s, RangeError, nd(**kw), f"{field}={value}", text, "Atlas A2")


def test_nd2nz_dvalue_range_on_350():
    """dValue is uint32_t on Atlas 350 but the documented range stays [0, 65535]."""
    s = Setup("350", n=1 << 16)
    raises(s, RangeError, nd(dValue=65536, srcDValue=65536), "dValue=65536", "[0, 65535] elements", "Atlas 350")


def test_nd2nz_350_matrix_stride_cap():
    """350: the matrix pitch is a 16-bit count of 32-byte units: a stride it cannot express is an error."""
    s = Setup("350", n=1 << 16)
    raises(s, RangeError, nd(ndNum=2, dstNzMatrixStride=65535 * 16 + 16), "dstNzMatrixStride=1048576",
           "[0, 1048560]", "Atlas 350", "32-byte units")


@pytest.mark.parametrize("field", ["srcDValue", "srcNdMatrixStride"])
def test_nd2nz_350_source_stride_byte_limit(field):
    """350: the source strides are byte strides below 2^64 (semantics.md §5.2): value*sizeof(T) must fit."""
    s = Setup("350", dtype=np.int32)
    kw = {field: 2**63, "ndNum": 2} if field == "srcNdMatrixStride" else {field: 2**63}
    raises(s, RangeError, nd(**kw), f"{field}={2**63}", f"[{0 if 'Nd' in field else 1}, {(2**64 - 1) // 4}]",
           "Atlas 350")


def test_nd2nz_350_wide_source_strides_are_accepted():
    """350: srcDValue / srcNdMatrixStride are 64-bit byte strides; above 65535 they are valid."""
    pipe = TPipe("350", capacities={"L1": 1 << 20})
    gm = np.arange(2 * 70000, dtype=np.int16)
    dst = pipe.alloc(TPosition.A1, np.int16, 32)
    DataCopy(dst, GlobalTensor(gm), nd(nValue=2, dValue=16, srcDValue=70000, dstNzC0Stride=2))
    assert list(dst.numpy()[16:18]) == [70000 - 65536, 70001 - 65536]


def test_nd2nz_ranges_only_for_fields_in_effect():
    """11.4: srcDValue=0 with one row, dstNzC0Stride=0 with one C0 block: no effect, no error."""
    s = Setup("A2")
    DataCopy(s.dst, s.src, nd(nValue=1, srcDValue=0, dValue=16, dstNzC0Stride=0, dstNzNStride=0))
    assert list(s.dst.numpy()[:17]) == list(range(16)) + [7]


@pytest.mark.parametrize("field", ["ndNum", "nValue", "dValue"])
def test_nd2nz_zero_is_a_noop(field):
    s = Setup("A2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataCopy(s.dst, s.src, nd(**{field: 0}, srcDValue=0, dstNzC0Stride=0))  # other fields: types only
    assert s.unchanged()


def test_nd2nz_unsupported_product():
    s = Setup("ATLAS_TRAINING")
    raises(s, UnsupportedError, nd(), "path", "not supported on Atlas training series")


def test_nd2nz_unsupported_path():
    s = Setup("A2", dst_pos=TPosition.A2)  # L0A
    raises(s, UnsupportedError, nd(), "GM->A2", "not supported on Atlas A2")


def test_nd2nz_no_ub_to_tscm_on_310p():
    s = Setup("310P", src_pos=TPosition.VECIN, dst_pos=TPosition.A1)
    raises(s, UnsupportedError, nd(), "VECIN->A1", "Atlas inference series AI Core")


@pytest.mark.parametrize("product, dtype, dst_pos, name", [
    ("310P", np.int8, TPosition.A1, "int8_t"),  # 310P GM->L1 has no 1-byte types
    ("A2", np.int64, TPosition.A1, "int64_t"),  # no 8-byte ND2NZ
    ("A2", np.float64, TPosition.VECIN, "double"),
])
def test_nd2nz_unsupported_dtype(product, dtype, dst_pos, name):
    s = Setup(product, dtype=dtype, dst_pos=dst_pos)
    raises(s, UnsupportedError, nd(), f"dtype {name}", "not supported")


def test_nd2nz_mixed_dtypes():
    s = Setup("A2")
    s.src = GlobalTensor(np.zeros(4096, np.int16))
    raises(s, UnsupportedError, nd(), "int16_t", "half")


def test_nd2nz_unaligned_local_destination():
    s = Setup("A2")
    s.dst = s.dst[8]  # 16 bytes into an aligned allocation
    s.before = s.dst.numpy().copy(), s.dst.defined().copy()
    raises(s, AlignmentError, nd(nValue=2), "dst start address", "32-byte aligned", "Atlas A2")


def test_nd2nz_destination_out_of_bounds():
    s = Setup("A2", n=1023)
    s.src = GlobalTensor(np.zeros(4096, np.float16))
    raises(s, OutOfBoundsError, nd(), "write span", "bytes [0, 2048)", "2046 bytes")


def test_nd2nz_source_out_of_bounds():
    s = Setup("A2")
    s.src = GlobalTensor(np.zeros(1000, np.float16))
    raises(s, OutOfBoundsError, nd(), "read span", "source", "2000 bytes")


def test_nd2nz_ub_to_tscm_ndnum_must_be_1():
    s = Setup("A2", src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    raises(s, RangeError, nd(ndNum=2, dstNzMatrixStride=1024), "ndNum=2", "[1, 1]", "Atlas A2")


@pytest.mark.parametrize("field", ["ndNum", "nValue", "dValue"])
def test_nd2nz_ub_to_tscm_rejects_zero(field):
    s = Setup("350", src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    raises(s, RangeError, nd(**{field: 0}), f"{field}=0", "Atlas 350", "rejects 0")


def test_small_c0_only_on_350():
    s = Setup("A2")
    raises(s, UnsupportedError, nd(dValue=4), "enableSmallC0", "Atlas A2", small_c0=True)


def test_small_c0_only_gm_to_l1():
    s = Setup("350", dst_pos=TPosition.VECIN)
    raises(s, UnsupportedError, nd(dValue=4), "enableSmallC0", "GM->VECIN", small_c0=True)


def test_small_c0_needs_dvalue_at_most_4():
    s = Setup("350")
    raises(s, RangeError, nd(dValue=5), "dValue=5", "[0, 4]", "enableSmallC0", small_c0=True)


def test_nd2nz_wrong_params_object():
    s = Setup("A2")
    from fastcopy.ops.nz import plan_nd2nz, plan_nz2nd

    with pytest.raises(UnsupportedError, match="takes Nd2NzParams"):
        plan_nd2nz(s.dst, s.src, nz())
    with pytest.raises(UnsupportedError, match="takes Nz2NdParamsFull"):
        plan_nz2nd(s.dst, s.src, nd())


# ------------------------------------------------------------------------------ 310P UB scratch (semantics.md §5.4)
def test_310p_gm_to_l1_rejects_live_ub_allocation_in_scratch():
    s = Setup("310P", dtype=np.int16)
    ub = s.pipe.alloc(TPosition.VECIN, np.int16, 1, addr=250 * 1024)
    ub.numpy()[:] = 5
    ub.set_defined()
    raises(s, CapacityError, nd(), "[253952, 262144)", "scratch", "Atlas inference series AI Core")
    assert ub.numpy()[0] == 5 and ub.defined()[0]


def test_310p_gm_to_l1_makes_ub_scratch_undefined():
    s = Setup("310P", dtype=np.int16)
    scratch = s.pipe.alloc(TPosition.VECIN, np.int16, 4096, addr=248 * 1024)
    _fill(scratch, 5)
    below = _fill(s.pipe.alloc(TPosition.VECIN, np.int16, 16, addr=248 * 1024 - 32), 6)
    s.pipe.reset()  # the kernel no longer uses them
    DataCopy(s.dst, s.src, nd())
    assert not scratch.defined().any() and (scratch.numpy() == -1).all()
    assert below.defined().all() and (below.numpy() == 6).all()


def test_310p_gm_to_ub_does_not_use_the_scratch():
    s = Setup("310P", dtype=np.int16, dst_pos=TPosition.VECIN)
    top = _fill(s.pipe.alloc(TPosition.VECIN, np.int16, 16, addr=250 * 1024), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FastCopyWarning)
        DataCopy(s.dst, s.src, nd(nValue=1))
    assert top.defined().all() and (top.numpy() == 5).all()


# ============================================================================================ ND2NZ warnings
def test_in_domain_calls_do_not_warn():
    no_warning(Setup("A2"), nd())  # GM->L1 hardware instruction
    no_warning(Setup("A2", dst_pos=TPosition.VECIN), nd())  # GM->UB inside its domain
    no_warning(Setup("350", dst_pos=TPosition.VECIN), nd())
    no_warning(Setup("A2", src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM), nd())
    no_warning(Setup("350", dtype=np.int16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM), nd())
    no_warning(Setup("310P", dtype=np.int16), nd())
    no_warning(Setup("350"), nd(ndNum=2, dstNzMatrixStride=1024, srcNdMatrixStride=1024))


def test_350_matrix_stride_rounding_warns():
    s = Setup("350")
    warns(s, nd(ndNum=2, nValue=1, dValue=16, srcDValue=16, srcNdMatrixStride=16, dstNzMatrixStride=40),
          r"dstNzMatrixStride=40 \(80 bytes\) is not a multiple of 32 bytes; Atlas 350 .* 64 bytes = 32 elements")
    assert list(s.dst.numpy()[32:48]) == list(range(16, 32))


def test_small_c0_warns_experimental():
    warns(Setup("350"), nd(dValue=3), "enableSmallC0 is experimental", small_c0=True)


def test_310p_gm_to_l1_dst_nz_n_stride_warns():
    warns(Setup("310P", dtype=np.int16), nd(dstNzNStride=2, dstNzC0Stride=64),
          re.escape("dstNzNStride=2 is ignored by GM->A1 ND2NZ on Atlas inference series AI Core (staged through "
                    "UB); the hardware behaves as dstNzNStride=1"))


@pytest.mark.parametrize("dtype, name", [(np.float16, "half"), (np.float32, "float")])
def test_310p_gm_to_l1_float_rewrite_warns(dtype, name):
    warns(Setup("310P", dtype=dtype), nd(dValue=16, srcDValue=16),
          f"GM->A1 ND2NZ on Atlas inference series AI Core passes {name} data through a vector add of 0: "
          r"-0.0 becomes \+0.0")


def test_310p_gm_to_l1_over_read_warns():
    s = Setup("310P", dtype=np.int16)
    s.src = GlobalTensor(np.arange(34, dtype=np.int16))  # rows of 12 elements at 0 and 20
    warns(s, nd(nValue=2, dValue=12, srcDValue=20, dstNzC0Stride=2),
          r"reads each GM row in whole 32-byte blocks \(AU\(dValue\*es, 32\) = 32 bytes\): the last row reads "
          "source bytes up to 72, beyond the 68-byte source tensor")


def test_gm_to_ub_ndnum_warns():
    warns(Setup("A2", dst_pos=TPosition.VECIN), nd(ndNum=2, srcNdMatrixStride=1024, dstNzMatrixStride=1024),
          "ndNum=2 is not reproduced by GM->VECIN ND2NZ on Atlas A2: the emulation does not apply the matrix index")


@pytest.mark.parametrize("field", ["srcNdMatrixStride", "dstNzMatrixStride"])
def test_gm_to_ub_matrix_stride_with_one_matrix_warns(field):
    warns(Setup("A3", dst_pos=TPosition.VECIN), nd(**{field: 16}),
          f"{field}=16 with ndNum=1 shifts the .* of GM->VECIN ND2NZ on Atlas A3")


def test_gm_to_ub_dst_nz_n_stride_below_64_warns():
    warns(Setup("A2", dst_pos=TPosition.VECIN, n=8192), nd(dstNzNStride=2, dstNzC0Stride=64),
          re.escape("dstNzNStride=2 is ignored by GM->VECIN ND2NZ on Atlas A2; the hardware behaves as "
                    "dstNzNStride=1"))


def test_gm_to_ub_dst_nz_n_stride_from_64_warns():
    warns(Setup("350", dst_pos=TPosition.VECIN, n=1 << 16), nd(nValue=2, dstNzNStride=64, dstNzC0Stride=1),
          "dstNzNStride=64 is not reproduced by GM->VECIN ND2NZ on Atlas 350")


def test_gm_to_ub_partial_c0_warns():
    warns(Setup("A2", dst_pos=TPosition.VECIN), nd(dValue=24),
          "dValue=24 is not a multiple of C0=16: GM->VECIN ND2NZ on Atlas A2 fills the tail .* first element")


def test_gm_to_ub_many_rows_warns():
    s = Setup("A2", dtype=np.int8, dst_pos=TPosition.VECIN, n=300 * 40)
    warns(s, nd(nValue=256, dValue=32, srcDValue=40, dstNzC0Stride=256),
          r"nValue=256 > 255 with srcDValue=40 != dValue=32 is not reproduced by GM->VECIN ND2NZ on Atlas A2")


def test_gm_to_ub_many_rows_same_width_is_fine():
    no_warning(Setup("A2", dtype=np.int8, dst_pos=TPosition.VECIN, n=300 * 32),
               nd(nValue=256, dValue=32, srcDValue=32, dstNzC0Stride=256))


@pytest.mark.parametrize("product", ["A2", "A3"])
def test_gm_to_ub_float_on_a2_warns(product):
    warns(Setup(product, dtype=np.float32, dst_pos=TPosition.VECIN), nd(dValue=16, srcDValue=16),
          f"float data is not reproduced by GM->VECIN ND2NZ on Atlas {product}")


def test_gm_to_ub_int32_on_a2_is_fine():
    no_warning(Setup("A2", dtype=np.int32, dst_pos=TPosition.VECIN), nd(dValue=16, srcDValue=16))


def test_gm_to_ub_310p_unaligned_row_warns():
    warns(Setup("310P", dtype=np.int16, dst_pos=TPosition.VECIN), nd(nValue=1, dValue=24),
          "dValue\\*sizeof\\(T\\)=48 bytes is not a multiple of 32: not reproduced by GM->VECIN ND2NZ")


def test_gm_to_ub_310p_several_rows_warns():
    warns(Setup("310P", dtype=np.int16, dst_pos=TPosition.VECIN), nd(),
          r"nValue=32 > 1 is not reproduced by GM->VECIN ND2NZ on Atlas inference series AI Core: its source gap "
          r"is srcDValue-1 = 31 blocks instead of \(srcDValue\*es-32\)/32 = 1 blocks")


def test_gm_to_ub_310p_one_aligned_row_is_fine():
    no_warning(Setup("310P", dtype=np.int16, dst_pos=TPosition.VECIN), nd(nValue=1))


def test_ub_to_tscm_a2_workspace_warns():
    s = Setup("A2", dtype=np.int16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    warns(s, nd(nValue=2, dValue=16, srcDValue=20, dstNzC0Stride=2),
          "VECIN->TSCM ND2NZ on Atlas A2 first copies floor.* = 64 bytes .* reads 72 bytes")


def test_ub_to_tscm_a2_unaligned_total_warns():
    s = Setup("A3", dtype=np.int16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    warns(s, nd(nValue=3, dValue=5, srcDValue=5, dstNzC0Stride=3), "= 0 bytes .* reads 30 bytes")


def test_ub_to_tscm_a2_narrow_rows_are_fine():
    """srcDValue < dValue stays inside the flat copy: no warning (the precise condition, not the spec's list)."""
    s = Setup("A2", dtype=np.int16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    no_warning(s, nd(nValue=2, dValue=16, srcDValue=8, dstNzC0Stride=2))


@pytest.mark.parametrize("kw, text", [
    (dict(nValue=2, dValue=8, srcDValue=8, dstNzC0Stride=2),
     "dValue\\*sizeof\\(T\\)=16 bytes is not a multiple of 32"),
    (dict(nValue=2, dValue=16, srcDValue=32, dstNzC0Stride=2), "srcDValue=32 != dValue=16"),
    (dict(nValue=2, dValue=16, srcDValue=16, dstNzNStride=2, dstNzC0Stride=4), "dstNzNStride=2 != 1"),
    (dict(nValue=2, dValue=32, srcDValue=32, dstNzC0Stride=3), "dstNzC0Stride=3 != nValue=2"),
])
def test_ub_to_tscm_350_domain_warns(kw, text):
    s = Setup("350", dtype=np.int16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    warns(s, nd(**kw), text + ": not reproduced by VECIN->TSCM ND2NZ on Atlas 350")


def test_ub_to_tscm_350_float_warns():
    s = Setup("350", dtype=np.float16, src_pos=TPosition.VECIN, dst_pos=TPosition.TSCM)
    warns(s, nd(), "VECIN->TSCM ND2NZ on Atlas 350 passes half data through a vector add of 0")


def test_overlapping_nd2nz_writes_warn():
    s = Setup("A2", dtype=np.int16)
    warns(s, nd(nValue=2, dValue=32, srcDValue=32, dstNzNStride=1, dstNzC0Stride=1), "writes overlap")


# ============================================================================================ NZ2ND errors
def nz_setup(product="A2", dtype=np.float16, n=4096):
    return Setup(product, dtype=dtype, src_pos=TPosition.VECOUT, dst_pos=TPosition.GM, n=n)


@pytest.mark.parametrize("field, value, text", [
    ("ndNum", 4096, "[0, 4095] matrices"),
    ("nValue", 0, "[1, 8192] rows"),
    ("nValue", 8193, "[1, 8192] rows"),
    ("dValue", 0, "[1, 8192] elements"),
    ("dValue", 8208, "[1, 8192] elements"),
    ("srcNStride", 4096, "[0, 4095] 16-element units"),
    ("dstDStride", 15, "[16, 65535] elements"),
])
def test_nz2nd_ranges(field, value, text):
    s = nz_setup()
    raises(s, RangeError, nz(**{field: value}), f"{field}={value}", text, "Atlas A2")


@pytest.mark.parametrize("field, value, text", [
    ("srcNdMatrixStride", 0, "[1, 512] fractals"),
    ("srcNdMatrixStride", 513, "[1, 512] fractals"),
    ("dstNdMatrixStride", 0, "[1, 65535] elements"),
])
def test_nz2nd_matrix_ranges(field, value, text):
    s = nz_setup()
    raises(s, RangeError, nz(ndNum=2, nValue=4, srcNStride=4, **{field: value}), f"{field}={value}", text)


def test_nz2nd_dvalue_multiple_of_16():
    s = nz_setup()
    raises(s, RangeError, nz(dValue=24), "dValue=24", "not a multiple of 16", "Atlas A2")


def test_nz2nd_ranges_only_for_fields_in_effect():
    """11.4: one matrix, one fractal column, one row: the strides take no effect and are not range-checked."""
    s = nz_setup()
    DataCopy(s.dst, s.src, nz(nValue=1, dValue=16, srcNdMatrixStride=0, srcNStride=4095, dstDStride=0,
                               dstNdMatrixStride=0))
    assert (s.dst.numpy()[:16] == 3).all() and (s.dst.numpy()[16:] == 7).all()


def test_nz2nd_ndnum_zero_is_a_noop():
    s = nz_setup()
    DataCopy(s.dst, s.src, nz(ndNum=0, nValue=0, dValue=3, dstDStride=0))
    assert s.unchanged()


def test_nz2nd_type_overflow():
    with pytest.raises(ParamTypeError, match=r"dstDStride=65536 does not fit uint16_t"):
        nz(dstDStride=65536)
    p = nz()
    with pytest.raises(ParamTypeError, match=r"srcNStride=-1 does not fit uint16_t"):
        p.srcNStride = -1


@pytest.mark.parametrize("product", ["ATLAS_TRAINING", "ATLAS_200I_500_A2"])
def test_nz2nd_unsupported_product(product):
    s = nz_setup(product)
    raises(s, UnsupportedError, nz(), "not supported on")


def test_nz2nd_wrong_direction():
    s = Setup("A2", dst_pos=TPosition.VECIN)
    raises(s, UnsupportedError, nz(), "GM->VECIN", "not supported on Atlas A2")


@pytest.mark.parametrize("product, dtype, name", [("A2", np.int8, "int8_t"), ("310P", np.float64, "double"),
                                                  ("A3", np.int64, "int64_t")])
def test_nz2nd_unsupported_dtype(product, dtype, name):
    s = nz_setup(product, dtype)
    raises(s, UnsupportedError, nz(), f"dtype {name}")


def test_nz2nd_350_takes_8_byte_types():
    s = nz_setup("350", np.float64)
    DataCopy(s.dst, s.src, nz())
    assert (s.dst.numpy()[:1024] == 3).all()


def test_nz2nd_out_of_bounds():
    s = nz_setup(n=1000)
    raises(s, OutOfBoundsError, nz(), "read span", "source")
    s = nz_setup()
    s.dst = GlobalTensor(np.full(1000, 7, np.float16))
    s.before = s.dst.numpy().copy(), s.dst.defined().copy()
    raises(s, OutOfBoundsError, nz(), "write span", "destination")


def test_nz2nd_unaligned_ub_source():
    s = nz_setup()
    s.src = s.src[4]
    raises(s, AlignmentError, nz(nValue=4), "src start address", "32-byte aligned")


# ============================================================================================ NZ2ND warnings
def test_nz2nd_row_overlap_warns():
    s = nz_setup()
    with pytest.warns(FastCopyWarning) as rec:
        DataCopy(s.dst, s.src, nz(nValue=4, dValue=32, srcNStride=4, dstDStride=16))
    texts = [str(w.message) for w in rec]
    assert any("dstDStride=16 < dValue=32 on Atlas A2: destination rows overlap" in t for t in texts)


def test_nz2nd_debug_assert_warns():
    s = nz_setup("310P")
    warns(s, nz(ndNum=2, nValue=3, dValue=16, srcNStride=3, dstDStride=16, dstNdMatrixStride=48),
          r"srcNdMatrixStride\*256=256 elements is not a multiple of nValue\*sizeof\(T\)=6: the Atlas inference "
          r"series AI Core debug build asserts")


def test_nz2nd_debug_assert_not_on_350():
    no_warning(nz_setup("350"), nz(ndNum=2, nValue=3, dValue=16, srcNStride=3, dstDStride=16,
                                   dstNdMatrixStride=48))


def test_nz2nd_loop_mode_warns_on_350():
    s = nz_setup("350")
    SetLoopModePara(LoopModeParams(loop1Size=2, loop1SrcStride=64, loop1DstStride=64), DataCopyMVType.UB_TO_OUT,
                    pipe=s.pipe)
    warns(s, nz(), "loop mode \\(UB_TO_OUT\\) is set on Atlas 350; .* does not apply loop mode to NZ2ND")

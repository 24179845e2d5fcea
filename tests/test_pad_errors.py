"""DataCopyPad validation (§2.1-§2.3, §4.1, §4.6, §4.7, §8.1, §10) and warnings: one test per rule, asserting the
exception class, the message parts (field, value, product) and that nothing was written (destination, workspace
and the pad register unchanged)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fastcopy import (AlignmentError, CapacityError, DataCopyExtParams, DataCopyMVType, DataCopyPad,
                      DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, FastCopyWarning, GlobalTensor,
                      LoopModeParams, Nd2NzParams, OutOfBoundsError, PaddingMode, ParamTypeError, RangeError,
                      SetLoopModePara, SetPadValue, TPipe, UnsupportedError)

EXT = DataCopyExtParams
PAD = DataCopyPadExtParams


class Setup:
    """A core with a GM source, a UB destination, a UB source and a GM destination, all with known contents."""

    def __init__(self, product="ATLAS_A2", dtype="half", n=256):
        self.pipe = TPipe(product=product)
        dt = np.dtype(np.float16) if dtype == "half" else np.dtype(dtype)
        self.gm = GlobalTensor(np.arange(n).astype(dt))
        self.gm_out = GlobalTensor(np.full(n, 3, dt))
        self.ub = self.pipe.alloc("VECIN", dt, n)
        self.ub.numpy()[:] = 1
        self.ub.set_defined()
        self.ub_src = self.pipe.alloc("VECOUT", dt, n)
        self.ub_src.numpy()[:] = 2
        self.ub_src.set_defined()
        self.pipe.state["padreg"] = b"\x11" * dt.itemsize
        self._snap = self.snapshot()

    def snapshot(self):
        return [(t.numpy().copy().tobytes(), t.defined().copy().tobytes())
                for t in (self.ub, self.gm_out)] + [self.pipe.state.get("padreg")]

    def unchanged(self):
        return self.snapshot() == self._snap


def _raises(exc, setup, fn, *parts):
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for part in parts:
        assert part in msg, f"{part!r} not in {msg!r}"
    assert setup.unchanged(), "the destination (or PADREG) changed on error"
    return msg


def _in(s, cp, pp=None, **kw):
    return lambda: DataCopyPad(s.ub, s.gm, cp, pp if pp is not None else PAD(), **kw)


def _out(s, cp, **kw):
    return lambda: DataCopyPad(s.gm_out, s.ub_src, cp, **kw)


# ------------------------------------------------------------------------------------ paths, dtypes, prototypes
def test_product_without_datacopypad():
    s = Setup("ATLAS_TRAINING")
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0)), "GM->VECIN", "Atlas training series")


def test_gm_to_l1_only_on_350():
    s = Setup("ATLAS_A2")
    l1 = s.pipe.alloc("A1", "half", 64)
    _raises(UnsupportedError, s, lambda: DataCopyPad(l1, s.gm, EXT(1, 32, 0, 0, 0), PAD()), "GM->A1", "Atlas A2")


def test_dtype_not_supported():
    s = Setup("ATLAS_200I_500_A2", dtype="int64")
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0)), "int64_t", "Atlas 200I/500 A2")


def test_dtype_mismatch():
    s = Setup()
    g = GlobalTensor(np.zeros(64, np.float32))
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.ub, g, EXT(1, 32, 0, 0, 0), PAD()), "float", "half")


def test_local_start_alignment():
    s = Setup()
    _raises(AlignmentError, s, lambda: DataCopyPad(s.ub[1], s.gm, EXT(1, 32, 0, 0, 0), PAD()), "dst",
            "32-byte aligned", "Atlas A2")


def test_gm_start_needs_no_alignment():
    s = Setup()
    DataCopyPad(s.ub, s.gm[3], EXT(1, 6, 0, 0, 0), PAD())
    assert list(s.ub.numpy()[:3]) == [3, 4, 5]


def test_gm_to_gm_is_not_a_path():
    s = Setup()
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.gm_out, s.gm, EXT(1, 32, 0, 0, 0)), "GM -> GM")


def test_compact_only_on_350():
    s = Setup("ATLAS_A3")
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0), mode=PaddingMode.Compact), "Compact", "Atlas A3")
    _raises(UnsupportedError, s, _out(s, EXT(1, 32, 0, 0, 0), mode=PaddingMode.Compact), "Compact", "Atlas A3")


def test_normal_mode_accepted_everywhere():
    for product in ("ATLAS_A2", "ATLAS_A3", "ATLAS_200I_500_A2", "ATLAS_350"):
        s = Setup(product)
        DataCopyPad(s.ub, s.gm, EXT(1, 64, 0, 0, 0), PAD(), mode=PaddingMode.Normal)
        DataCopyPad(s.gm_out, s.ub, EXT(1, 64, 0, 0, 0), mode=PaddingMode.Normal)
        DataCopyPad(s.gm_out, s.ub, EXT(1, 64, 0, 0, 0), PaddingMode.Normal)  # positional, like the template
        assert (s.gm_out.numpy()[:32] == np.arange(32)).all()


def test_pad_params_required_on_the_way_in():
    s = Setup()
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.ub, s.gm, EXT(1, 32, 0, 0, 0)), "padParams")


def test_pad_params_rejected_on_the_way_out():
    s = Setup()
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.gm_out, s.ub_src, EXT(1, 32, 0, 0, 0), PAD()),
            "DataCopyPadExtParams")


def test_mixed_legacy_and_ext_structs():
    s = Setup()
    _raises(UnsupportedError, s, _in(s, DataCopyParams(1, 32, 0, 0), PAD()), "DataCopyParams",
            "DataCopyPadParams")
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0), DataCopyPadParams()), "DataCopyExtParams",
            "DataCopyPadExtParams")


def test_copy_params_type():
    s = Setup()
    _raises(UnsupportedError, s, _in(s, Nd2NzParams()), "copyParams", "Nd2NzParams")


def test_bad_mode():
    s = Setup()
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0), mode="Sparse"), "Sparse", "PaddingMode")


# ------------------------------------------------------------------------------------------------ ranges
def test_rsv_must_be_zero():
    s = Setup()
    _raises(RangeError, s, _in(s, EXT(1, 32, 0, 0, 5)), "rsv=5", "[0, 0]", "Atlas A2")


def test_block_count_zero_invalid_on_310b():
    s = Setup("ATLAS_200I_500_A2")
    _raises(RangeError, s, _in(s, EXT(0, 32, 0, 0, 0)), "blockCount=0", "[1, 4095]", "Atlas 200I/500 A2")
    _raises(RangeError, s, _out(s, EXT(1, 0, 0, 0, 0)), "blockLen=0", "[1, 2097151]", "Atlas 200I/500 A2")


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3", "ATLAS_350"])
def test_zero_is_a_noop(product):
    s = Setup(product)
    DataCopyPad(s.ub, s.gm, EXT(0, 32, 0, 0, 0), PAD())
    DataCopyPad(s.gm_out, s.ub_src, EXT(3, 0, 0, 0, 0))
    assert s.unchanged()


def test_block_count_range():
    s = Setup()
    _raises(RangeError, s, _in(s, EXT(4096, 32, 0, 0, 0)), "blockCount=4096", "[1, 4095]", "Atlas A2")


def test_block_len_range():
    s = Setup()
    _raises(RangeError, s, _in(s, EXT(1, 2097152, 0, 0, 0)), "blockLen=2097152", "[1, 2097151]", "bytes",
            "Atlas A2")


def test_legacy_block_len_is_16_bit():
    with pytest.raises(ParamTypeError, match="blockLen=70000"):
        DataCopyParams(1, 70000, 0, 0)


def test_block_len_multiple_of_element_size():
    s = Setup()
    _raises(RangeError, s, _in(s, EXT(1, 33, 0, 0, 0)), "blockLen=33", "sizeof(half) = 2", "Atlas A2")
    _raises(RangeError, s, _out(s, EXT(1, 7, 0, 0, 0)), "blockLen=7", "Atlas A2")  # UB -> GM too (9 #10)


def test_negative_gm_stride_only_on_350():
    s = Setup("ATLAS_A2")
    _raises(ParamTypeError, s, _in(s, EXT(2, 32, -32, 0, 0)), "srcStride=-32", "uint32_t", "Atlas A2")


def test_350_gm_src_stride_lower_bound():
    s = Setup("ATLAS_350")
    _raises(RangeError, s, _in(s, EXT(2, 32, -34, 0, 0)), "srcStride=-34", "[-32, 1099511627775]", "Atlas 350")


def test_350_gm_src_stride_upper_bound():
    s = Setup("ATLAS_350")
    _raises(RangeError, s, _in(s, EXT(2, 32, 2**40, 0, 0)), f"srcStride={2**40}", "Atlas 350")


def test_350_ub_dst_stride_range():
    s = Setup("ATLAS_350")
    _raises(RangeError, s, _in(s, EXT(2, 32, 0, 65536, 0)), "dstStride=65536", "[0, 65535]", "Atlas 350")


def test_350_ub_src_stride_range():
    s = Setup("ATLAS_350")
    _raises(RangeError, s, _out(s, EXT(2, 32, 65536, 0, 0)), "srcStride=65536", "[0, 65535]", "Atlas 350")
    _raises(RangeError, s, _out(s, EXT(2, 32, -1, 0, 0)), "srcStride=-1", "[0, 65535]", "Atlas 350")


def test_350_gm_dst_stride_range():
    s = Setup("ATLAS_350")
    _raises(RangeError, s, _out(s, EXT(2, 32, 0, 2**40, 0)), f"dstStride={2**40}", "Atlas 350")
    _raises(RangeError, s, _out(s, EXT(2, 32, 0, -1, 0)), "dstStride=-1", "Atlas 350")


def test_int64_strides_do_not_fit_a2():
    s = Setup("ATLAS_A2")
    _raises(ParamTypeError, s, _in(s, EXT(1, 32, 2**33, 0, 0)), f"srcStride={2**33}", "uint32_t", "Atlas A2")


@pytest.mark.parametrize("field", ["leftPadding", "rightPadding"])
def test_padding_at_most_32_bytes(field):
    s = Setup()
    pp = PAD(True, 17, 0, 0) if field == "leftPadding" else PAD(True, 0, 17, 0)
    _raises(RangeError, s, _in(s, EXT(1, 32, 0, 0, 0), pp), f"{field}=17", "[0, 16]", "Atlas A2")


def test_padding_ignored_in_compact():
    """Compact ignores left/right padding (semantics.md §4.4): their 32-byte rule does not apply (11.4)."""
    s = Setup("ATLAS_350", dtype="float32")
    DataCopyPad(s.ub, s.gm, EXT(1, 8, 0, 0, 0), PAD(True, 9, 9, 0), mode=PaddingMode.Compact)
    assert list(s.ub.numpy()[:8]) == [0, 1, 0, 0, 0, 0, 0, 0]


def test_padding_value_zero_for_8_byte_types():
    s = Setup("ATLAS_A2", dtype="int64")
    _raises(RangeError, s, _in(s, EXT(1, 8, 0, 0, 0), PAD(True, 1, 0, 5)), "paddingValue=5", "8-byte", "Atlas A2")
    s = Setup("ATLAS_350", dtype="float64")
    _raises(RangeError, s, _in(s, EXT(1, 8, 0, 0, 0), PAD(True, 0, 0, -0.0)), "paddingValue=-0.0", "Atlas 350")


def test_legacy_padding_value_must_be_zero():
    s = Setup()
    _raises(RangeError, s, _in(s, DataCopyParams(1, 32, 0, 0), DataCopyPadParams(True, 1, 0, 7)),
            "paddingValue=7", "Atlas A2")


def test_padding_value_not_representable():
    s = Setup()
    _raises(ParamTypeError, s, _in(s, EXT(1, 32, 0, 0, 0), PAD(True, 1, 0, 1.1)), "paddingValue=1.1", "half",
            "Atlas A2")
    s = Setup(dtype="int8")
    _raises(ParamTypeError, s, _in(s, EXT(1, 32, 0, 0, 0), PAD(True, 1, 0, 300)), "paddingValue=300", "int8_t")
    _raises(ParamTypeError, s, _in(s, EXT(1, 32, 0, 0, 0), PAD(False, 1, 0, "x")), "paddingValue='x'")


def test_destination_too_small():
    s = Setup()
    _raises(OutOfBoundsError, s, _in(s, EXT(2, 200, 0, 3, 0)), "write", "[0, 544)", "destination", "512 bytes")


def test_source_too_small():
    s = Setup()
    _raises(OutOfBoundsError, s, _in(s, EXT(2, 64, 400, 0, 0)), "read", "source")


def test_gm_destination_too_small():
    s = Setup()
    _raises(OutOfBoundsError, s, _out(s, EXT(2, 64, 0, 500, 0)), "write", "destination")


# ------------------------------------------------------------------------------------------------ SetPadValue
def test_set_pad_value_not_on_310b():
    s = Setup("ATLAS_200I_500_A2")
    _raises(UnsupportedError, s, lambda: SetPadValue(np.float16(1), pipe=s.pipe), "SetPadValue",
            "Atlas 200I/500 A2")


def test_set_pad_value_8_byte_nonzero():
    s = Setup()
    _raises(RangeError, s, lambda: SetPadValue(np.int64(2), pipe=s.pipe), "value=2", "8-byte", "Atlas A2")


def test_set_pad_value_not_a_number():
    s = Setup()
    _raises(ParamTypeError, s, lambda: SetPadValue("1", pipe=s.pipe), "value='1'", "not a number", "Atlas A2")


def test_untyped_register_value_not_representable_at_the_copy():
    """SetPadValue(0.1) keeps the number; a half copy that reads the register cannot hold it exactly."""
    s = Setup()
    SetPadValue(0.1, pipe=s.pipe)
    s._snap = s.snapshot()
    _raises(ParamTypeError, s, _in(s, EXT(1, 20, 0, 0, 0), PAD(False, 1, 0, 0)), "SetPadValue", "value=0.1",
            "half", "Atlas A2")


def test_untyped_register_8_byte_nonzero_at_the_copy():
    s = Setup(dtype="int64")
    SetPadValue(3, pipe=s.pipe)
    s._snap = s.snapshot()
    _raises(RangeError, s, _in(s, EXT(1, 8, 0, 0, 0), PAD(False, 1, 0, 0)), "value=3", "8-byte", "Atlas A2")


def test_set_pad_value_exact():
    s = Setup()
    _raises(ParamTypeError, s, lambda: SetPadValue(70000, pipe=s.pipe, dtype="half"), "value=70000", "half")
    _raises(ParamTypeError, s, lambda: SetPadValue(np.float32(0.1), pipe=s.pipe, dtype="half"), "half")
    _raises(ParamTypeError, s, lambda: SetPadValue(0.5, pipe=s.pipe, dtype="int32"), "int32_t")


# ------------------------------------------------------------------------------------------------ UB -> TSCM
class TscmSetup(Setup):
    def __init__(self, product="ATLAS_A2", dtype="half"):
        super().__init__(product, dtype)
        self.l1 = self.pipe.alloc("TSCM", self.ub.dtype, 512)
        self.l1.numpy()[:] = 4
        self.l1.set_defined()
        self.ws = GlobalTensor(np.full(256, 9, self.ub.dtype))
        self._snap = self.snapshot()

    def snapshot(self):
        if not hasattr(self, "ws"):
            return super().snapshot()
        return super().snapshot() + [(t.numpy().tobytes(), t.defined().tobytes()) for t in (self.l1, self.ws)]

    def call(self, cp, nd, **kw):
        return lambda: DataCopyPad(self.l1, self.ub_src, cp, nd, **kw)


ND = dict(ndNum=1, nValue=2, dValue=16, srcNdMatrixStride=0, srcDValue=16, dstNzC0Stride=2, dstNzNStride=1,
          dstNzMatrixStride=0)


def test_tscm_nd_num_must_be_1():
    s = TscmSetup()
    _raises(RangeError, s, s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**{**ND, "ndNum": 2}), workspace=s.ws),
            "ndNum=2", "[1, 1]", "Atlas A2")


@pytest.mark.parametrize("field", ["nValue", "dValue", "srcDValue", "dstNzC0Stride", "dstNzNStride"])
def test_tscm_nd_fields_nonzero(field):
    s = TscmSetup()
    nd = Nd2NzParams(**{**ND, "dValue": 32, "srcDValue": 32, field: 0})  # 2 rows, 2 C0 blocks: all take effect
    _raises(RangeError, s, s.call(EXT(2, 64, 0, 0, 0), nd, workspace=s.ws), f"{field}=0", "Atlas A2")


def test_tscm_strides_that_take_no_effect_are_not_range_checked():
    """One row: srcDValue / dstNzNStride unused; one C0 block: dstNzC0Stride unused (semantics.md §11.4)."""
    s = TscmSetup()
    nd = Nd2NzParams(**{**ND, "nValue": 1, "srcDValue": 0, "dstNzNStride": 0, "dstNzC0Stride": 0})
    DataCopyPad(s.l1, s.ub_src, EXT(1, 32, 0, 0, 0), nd, workspace=s.ws)
    assert (s.l1.numpy()[:16] == 2).all() and (s.l1.numpy()[16:] == 4).all()


def test_tscm_internal_workspace_limit():
    s = TscmSetup()
    _raises(CapacityError, s, s.call(EXT(2, 32, 0, 2**31, 0), Nd2NzParams(**ND)), "workspace", "workspace=")


def test_tscm_nd_stride_upper_bound():
    s = TscmSetup()
    _raises(RangeError, s, s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**{**ND, "dstNzNStride": 16385}),
                                  workspace=s.ws), "dstNzNStride=16385", "[1, 16384]")


@pytest.mark.parametrize("cp, field", [(EXT(0, 32, 0, 0, 0), "blockCount=0"), (EXT(2, 0, 0, 0, 0), "blockLen=0")])
def test_tscm_rejects_zero_counts(cp, field):
    s = TscmSetup("ATLAS_350")
    _raises(RangeError, s, s.call(cp, Nd2NzParams(**ND), workspace=s.ws), field, "rejects 0", "Atlas 350")


def test_tscm_no_8_byte_types():
    s = TscmSetup("ATLAS_350", dtype="int64")
    _raises(UnsupportedError, s, s.call(EXT(1, 32, 0, 0, 0), Nd2NzParams(**ND), workspace=s.ws), "int64_t",
            "Atlas 350")


def test_tscm_not_on_310b():
    s = Setup("ATLAS_200I_500_A2")
    l1 = s.pipe.alloc("TSCM", "half", 64)
    _raises(UnsupportedError, s, lambda: DataCopyPad(l1, s.ub_src, EXT(1, 32, 0, 0, 0), Nd2NzParams(**ND)),
            "VECOUT->TSCM", "Atlas 200I/500 A2")


def test_tscm_no_compact():
    s = TscmSetup("ATLAS_350")
    _raises(UnsupportedError, s, s.call(EXT(1, 32, 0, 0, 0), Nd2NzParams(**ND), mode=PaddingMode.Compact),
            "PaddingMode", "Atlas 350")


def test_tscm_needs_nd2nz_params():
    s = TscmSetup()
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.l1, s.ub_src, EXT(1, 32, 0, 0, 0), PAD()), "Nd2NzParams")
    _raises(UnsupportedError, s, lambda: DataCopyPad(s.l1, s.ub_src, EXT(1, 32, 0, 0, 0)), "Nd2NzParams")


def test_tscm_workspace_too_small():
    s = TscmSetup()
    small = GlobalTensor(np.full(8, 9, np.float16))
    _raises(OutOfBoundsError, s, s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**ND), workspace=small), "workspace",
            "16 bytes", "[0, 64)")
    assert (small.numpy() == 9).all()


def test_tscm_workspace_dtype():
    s = TscmSetup()
    ws = GlobalTensor(np.zeros(64, np.float32))
    _raises(UnsupportedError, s, s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**ND), workspace=ws), "workspace",
            "float", "half")


def test_tscm_error_in_stage_2_writes_nothing():
    """Stage 2 does not fit the L1 tensor: stage 1 must not have run (both stages planned first)."""
    s = TscmSetup()
    _raises(OutOfBoundsError, s, s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**{**ND, "dstNzNStride": 40}),
                                        workspace=s.ws), "destination")


def test_workspace_only_for_tscm():
    s = Setup()
    _raises(UnsupportedError, s, _in(s, EXT(1, 32, 0, 0, 0), workspace=GlobalTensor(np.zeros(8, np.float16))),
            "workspace")


# ------------------------------------------------------------------------------------------------ warnings
def _warns(fn, match):
    with pytest.warns(FastCopyWarning, match=match):
        fn()


def _no_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        fn()


def test_warn_padreg_never_set_a2():
    s = Setup()
    s.pipe.state.pop("padreg")
    _warns(_in(s, EXT(1, 20, 0, 0, 0), PAD(False, 2, 0, 0)), "never set.*undefined on Atlas A2")
    assert not s.ub.defined()[:2].any() and s.ub.defined()[2:12].all() and not s.ub.defined()[12:16].any()


def test_warn_padreg_never_set_350_padded():
    s = Setup("ATLAS_350")
    s.pipe.state.pop("padreg")
    _warns(_in(s, EXT(1, 20, 0, 0, 0), PAD(False, 0, 1, 0)), "never set.*Atlas 350")


def test_no_warning_350_dummy_is_first_when_unset():
    s = Setup("ATLAS_350")
    s.pipe.state.pop("padreg")
    _no_warning(_in(s, EXT(1, 20, 0, 0, 0), PAD(False, 0, 0, 0)))
    assert (s.ub.numpy()[10:16] == 0).all() and s.ub.defined()[:16].all()  # dummy = first element (0)


def test_warn_padreg_width_mismatch():
    s = Setup("ATLAS_A2", dtype="float32")
    SetPadValue(np.float16(2), pipe=s.pipe)
    _warns(_in(s, EXT(1, 20, 0, 0, 0), PAD(False, 0, 1, 0)), "2-byte value.*4-byte elements")
    assert s.ub.defined()[:5].all() and not s.ub.defined()[5:8].any()


def test_warn_compact_tail_unset():
    s = Setup("ATLAS_350")
    s.pipe.state.pop("padreg")
    _warns(_in(s, EXT(3, 6, 0, 0, 0), PAD(False, 0, 0, 0), mode=PaddingMode.Compact), "Compact tail")


def test_warn_compact_ub_src_stride_ignored():
    s = Setup("ATLAS_350")
    _warns(_out(s, EXT(2, 6, 4, 0, 0), mode=PaddingMode.Compact), "srcStride=4 is ignored")
    assert list(s.gm_out.numpy()[:7]) == [2, 2, 2, 2, 2, 2, 3]


def test_warn_compact_dst_stride_ignored():
    s = Setup("ATLAS_350")
    _warns(_in(s, EXT(2, 6, 0, 3, 0), PAD(True, 0, 0, 0), mode=PaddingMode.Compact), "dstStride=3 is ignored")


def test_warn_loop_mode_overlapping_writes():
    s = Setup("ATLAS_350", dtype="uint8")
    SetLoopModePara(LoopModeParams(2, 1, 1, 0, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=s.pipe)
    _warns(_in(s, EXT(1, 32, 0, 0, 0)), "writes overlap")
    assert s.ub.numpy()[0] == 255 and not s.ub.defined()[:32].any()  # two values per byte: undefined


def test_tscm_warn_unwritten_workspace_read():
    s = TscmSetup()
    _warns(s.call(EXT(1, 32, 0, 0, 0), Nd2NzParams(**ND)), "did not write in 1 of 2 rows.*row 1")
    assert s.l1.defined()[:16].all() and not s.l1.defined()[16:32].any()


def test_tscm_warn_loop_mode_not_applied():
    s = TscmSetup("ATLAS_350")
    SetLoopModePara(LoopModeParams(2, 1, 32, 64, 0, 0), DataCopyMVType.UB_TO_OUT, pipe=s.pipe)
    _warns(s.call(EXT(2, 32, 0, 0, 0), Nd2NzParams(**ND)), "loop mode.*does not apply")


def test_tscm_warn_overlapping_nz_writes():
    s = TscmSetup()
    nd = Nd2NzParams(**{**ND, "dstNzC0Stride": 1, "dValue": 32, "srcDValue": 32})
    _warns(s.call(EXT(2, 64, 0, 0, 0), nd), "writes overlap")

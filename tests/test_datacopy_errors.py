"""One test per basic-DataCopy validation rule: exception class, message content, destination unchanged;
and one per warning condition."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fastcopy import (AlignmentError, CapacityError, DataCopy, DataCopyParams, FastCopyError, FastCopyWarning,
                      GlobalTensor, OutOfBoundsError, ParamTypeError, RangeError, TPipe, TPosition,
                      UnsupportedError)


def _snapshot(t):
    mem = t.memory
    plane = None if mem.plane is None else mem.plane.copy()
    return mem.data.copy(), plane


def _unchanged(t, snap):
    data, plane = snap
    assert np.array_equal(t.memory.data, data), "destination data changed on error"
    if plane is None:
        assert t.memory.plane is None
    else:
        assert np.array_equal(t.memory.plane, plane), "destination definedness changed on error"


def _expect(exc, match, dst, src, arg):
    snap = _snapshot(dst)
    with pytest.raises(exc, match=match):
        DataCopy(dst, src, arg)
    _unchanged(dst, snap)


@pytest.fixture
def a2():
    pipe = TPipe(product="ATLAS_A2")
    gm = GlobalTensor(np.arange(4096, dtype=np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 2048)
    return pipe, gm, ub


# --- C++ types ------------------------------------------------------------------------------------------------
def test_field_type_overflow_is_an_error_not_a_wrap():
    with pytest.raises(ParamTypeError, match=r"blockCount=70000 does not fit uint16_t \[0, 65535\]"):
        DataCopyParams(70000, 1)
    p = DataCopyParams()
    with pytest.raises(ParamTypeError, match=r"dstGap=-1 does not fit uint16_t"):
        p.dstStride = -1
    with pytest.raises(ParamTypeError, match=r"blockLen=1.5 is not an integer"):
        DataCopyParams(1, 1.5)
    with pytest.raises(ParamTypeError, match="unknown field 'blocklen'"):
        DataCopyParams(blocklen=1)
    with pytest.raises(ParamTypeError, match="takes at most 4 values"):
        DataCopyParams(1, 2, 3, 4, 5)


def test_aliases_and_defaults():
    p = DataCopyParams(srcStride=2, dstStride=3)
    assert p.key() == (1, 0, 2, 3) and p.srcGap == 2 and p.dstStride == 3
    with pytest.raises(ParamTypeError, match="given twice"):
        DataCopyParams(1, 1, 0, srcStride=2)


# --- ranges ---------------------------------------------------------------------------------------------------
def test_block_count_range(a2):
    _, gm, ub = a2
    _expect(RangeError, r"DataCopy\(DataCopyParams\): blockCount=5000 is outside \[1, 4095\] bursts on Atlas A2",
            ub, gm, DataCopyParams(5000, 1))


@pytest.mark.parametrize("product", ["ATLAS_TRAINING", "ATLAS_INFERENCE_AICORE", "ATLAS_200I_500_A2"])
def test_zero_block_len_is_an_error_where_not_documented(product):
    pipe = TPipe(product=product)
    gm = GlobalTensor(np.zeros(64, np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 64)
    _expect(RangeError, rf"blockLen=0 is outside \[1, 65535\] 32-byte blocks on {pipe.product.display_name}",
            ub, gm, DataCopyParams(1, 0))
    _expect(RangeError, rf"blockCount=0 is outside \[1, 4095\] bursts on {pipe.product.display_name}",
            ub, gm, DataCopyParams(0, 1))
    _expect(RangeError, r"count=8 moves 0 whole 32-byte units", ub, gm, 8)


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3", "ATLAS_350"])
def test_zero_is_a_noop_where_documented(product):
    pipe = TPipe(product=product)
    gm = GlobalTensor(np.ones(64, np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 64)
    snap = _snapshot(ub)
    DataCopy(ub, gm, DataCopyParams(0, 4))
    DataCopy(ub, gm, DataCopyParams(3, 0))
    with pytest.warns(FastCopyWarning, match="rounded down to 0 bytes"):
        DataCopy(ub, gm, 15)
    _unchanged(ub, snap)


def test_count_type_and_block_limit(a2):
    _, gm, ub = a2
    _expect(RangeError, r"count=4294967296 is outside \[0, 4294967295\] elements \(uint32_t\) on Atlas A2",
            ub, gm, 2**32)
    _expect(RangeError, r"count=1048576 gives blockLen=65536, outside \[1, 65535\] 32-byte blocks", ub, gm,
            2**20)


def test_bias_table_block_len_even_on_350():
    pipe = TPipe(product="ATLAS_350")
    l1 = pipe.alloc(TPosition.C1, "float", 256)
    bt = pipe.alloc(TPosition.C2, "float", 256)
    _expect(RangeError, r"blockLen=3 must be even for 4-byte types on L1->BiasTable on Atlas 350", bt, l1,
            DataCopyParams(1, 3))


# --- alignment ------------------------------------------------------------------------------------------------
def test_local_start_must_be_32_byte_aligned(a2):
    _, gm, ub = a2
    _expect(AlignmentError, r"dst start address \(VECIN, UB\) is not 32-byte aligned on Atlas A2", ub[3], gm, 16)
    _expect(AlignmentError, r"src start address \(VECIN, UB\) is not 32-byte aligned", GlobalTensor(
        np.zeros(64, np.float16)), ub[1], 16)


def test_bias_table_and_fixpipe_alignment():
    pipe = TPipe(product="ATLAS_A2")
    l1 = pipe.alloc(TPosition.C1, "float", 1024)
    bt = pipe.alloc(TPosition.C2, "float", 256)
    fb = pipe.alloc(TPosition.C2PIPE2GM, "float", 256)
    _expect(AlignmentError, r"dst start address \(C2, BiasTable\) is not 64-byte aligned", bt[8], l1,
            DataCopyParams(1, 1))
    _expect(AlignmentError, r"dst start address \(C2PIPE2GM, Fixpipe buffer\) is not 128-byte aligned", fb[16], l1,
            DataCopyParams(1, 1))


def test_alloc_alignment_and_capacity():
    pipe = TPipe(product="ATLAS_A2")
    with pytest.raises(AlignmentError, match="addr=16 is not a multiple of 512 bytes"):
        pipe.alloc(TPosition.A2, "half", 16, addr=16)
    with pytest.raises(CapacityError, match=r"UB holds 196608 bytes on Atlas A2"):
        pipe.alloc(TPosition.VECIN, "float", 50_000)
    big = TPipe(product="ATLAS_A2", capacities={"UB": 1 << 20})
    assert big.alloc(TPosition.VECIN, "float", 50_000).size == 50_000
    with pytest.raises(UnsupportedError, match="position C2PIPE2GM is not a local position on Atlas training"):
        TPipe(product="ATLAS_TRAINING").alloc(TPosition.C2PIPE2GM, "float", 8)


# --- unsupported ----------------------------------------------------------------------------------------------
def test_unsupported_paths():
    pipe = TPipe(product="ATLAS_INFERENCE_VECTORCORE")
    with pytest.raises(UnsupportedError, match="position A1 is not a local position"):
        pipe.alloc(TPosition.A1, "half", 16)
    p350 = TPipe(product="ATLAS_350")
    l1 = p350.alloc(TPosition.A1, "half", 256)
    gm = GlobalTensor(np.zeros(256, np.float16))
    _expect(UnsupportedError, r"path A1->GM \(L1->GM\) is not supported on Atlas 350; supported there: .*GM->UB",
            gm, l1, 256)
    p910 = TPipe(product="ATLAS_TRAINING")
    ub = p910.alloc(TPosition.VECIN, "half", 256)
    a1 = p910.alloc(TPosition.A1, "half", 256)
    _expect(UnsupportedError, r"path VECIN->A1 \(UB->L1\) is not supported on Atlas training series", a1, ub, 256)


def test_unsupported_dtypes(a2):
    p910 = TPipe(product="ATLAS_TRAINING")
    ub = p910.alloc(TPosition.VECIN, "bfloat16_t", 256)
    gm = GlobalTensor(np.zeros(256, np.uint16), dtype="bfloat16_t")
    _expect(UnsupportedError, r"dtype bfloat16_t is not supported on GM->VECIN \(GM->UB\) on Atlas training "
            r"series; supported: double, float, half", ub, gm, 256)
    pipe = TPipe(product="ATLAS_A2")
    l1 = pipe.alloc(TPosition.C1, "int8_t", 256)
    bt = pipe.alloc(TPosition.C2, "int8_t", 256)
    _expect(UnsupportedError, r"dtype int8_t is not supported on C1->C2 \(L1->BiasTable\) on Atlas A2; supported: "
            r"float, int32_t", bt, l1, DataCopyParams(1, 1))


def test_dtype_change_only_on_bias_table():
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "half", 256)
    gm = GlobalTensor(np.zeros(256, np.float32))
    _expect(UnsupportedError, r"half -> float on VECIN->GM \(UB->GM\) is not supported on Atlas A2; DataCopy "
            r"converts only on C1->C2", gm, ub, DataCopyParams(1, 1))
    l1 = pipe.alloc(TPosition.C1, "bfloat16_t", 256)
    bt = pipe.alloc(TPosition.C2, "float", 64)
    _expect(UnsupportedError, r"bfloat16_t -> float on C1->C2 \(L1->BiasTable\) is not supported on Atlas A2; "
            r"DataCopy converts only on C1->C2 \(L1->BiasTable\): half->float", bt, l1, DataCopyParams(1, 1))
    p310b = TPipe(product="ATLAS_200I_500_A2")
    ub = p310b.alloc(TPosition.VECIN, "half", 64)
    with pytest.raises(UnsupportedError, match="not supported on Atlas 200I/500 A2"):
        DataCopy(p310b.alloc(TPosition.VECOUT, "float", 64), ub, DataCopyParams(1, 1))


def test_operands_and_cores():
    pipe, other = TPipe(), TPipe()
    a = pipe.alloc(TPosition.VECIN, "half", 64)
    b = other.alloc(TPosition.VECOUT, "half", 64)
    _expect(UnsupportedError, "belong to different TPipes", b, a, 64)
    g1, g2 = GlobalTensor(np.zeros(64, np.float16)), GlobalTensor(np.zeros(64, np.float16))
    _expect(UnsupportedError, "GM -> GM is not a path", g1, g2, 64)
    with pytest.raises(FastCopyError, match="src must be a GlobalTensor or LocalTensor, got ndarray"):
        DataCopy(a, np.zeros(64), 64)
    with pytest.raises(FastCopyError, match="no form takes a str"):
        DataCopy(a, g1, "64")


# --- spans ----------------------------------------------------------------------------------------------------
def test_out_of_bounds_spans(a2):
    pipe, gm, ub = a2
    small = pipe.alloc(TPosition.VECOUT, "half", 64)  # 128 bytes
    _expect(OutOfBoundsError, r"write span is bytes \[0, 160\) of the destination tensor, which has 128 bytes: "
            r"needs 160 bytes, 128 available", small, gm, DataCopyParams(1, 5))
    short = GlobalTensor(np.zeros(40, np.float16))  # 80 bytes
    _expect(OutOfBoundsError, r"read span is bytes \[0, 96\) of the source tensor, which has 80 bytes",
            ub, short, DataCopyParams(3, 1))
    _expect(OutOfBoundsError, r"write span is bytes \[0, 3072\) of the destination tensor, which has 192 bytes", gm[4000], ub, DataCopyParams(2, 32, 0, 32))


# --- warnings -------------------------------------------------------------------------------------------------
def test_count_rounding_warns_and_leaves_the_rest_undefined(a2):
    _, gm, ub = a2
    with pytest.warns(FastCopyWarning, match=r"count\*sizeof\(half\) = 40 bytes is not a multiple of 32; rounded "
                      r"down to 32 bytes on Atlas A2"):
        DataCopy(ub, gm, 20)
    d = ub.defined()
    assert d[:16].all() and not d[16:].any()
    assert np.array_equal(ub.numpy()[:16], np.arange(16, dtype=np.float16))
    assert (ub.numpy()[16:].view(np.uint16) == 0xFFFF).all()  # poison


def test_fresh_local_memory_is_undefined_then_defined_where_written(a2):
    _, gm, ub = a2
    assert not ub.defined().any()
    DataCopy(ub, gm, DataCopyParams(2, 1, 1, 1))  # blocks 0 and 2
    d = ub.defined()
    assert d[:16].all() and not d[16:32].any() and d[32:48].all() and not d[48:].any()


def test_undefined_bytes_reach_gm_as_undefined(a2):
    pipe, _, ub = a2
    out = np.zeros(64, np.float16)
    gm = GlobalTensor(out)
    ub.numpy()[:16] = 7
    ub.set_defined(np.arange(ub.size) < 16)
    DataCopy(gm, ub, 64)
    assert gm.defined()[:16].all() and not gm.defined()[16:].any()
    assert (out[:16] == 7).all()


def test_overlapping_fixpipe_writes_warn_and_conflicts_are_undefined():
    pipe = TPipe(product="ATLAS_A2")
    l1 = pipe.alloc(TPosition.A1, "uint8", 256)
    l1.numpy()[:] = np.arange(256) % 251
    l1.set_defined()
    fb = pipe.alloc(TPosition.C2PIPE2GM, "uint8", 512)
    with pytest.warns(FastCopyWarning, match=r"writes overlap: 128 destination bytes are written more than once"):
        DataCopy(fb, l1, DataCopyParams(2, 1, 1, 0))  # head-to-head dstGap=0: both bursts land on block 0
    assert not fb.defined()[:128].any()
    with pytest.warns(FastCopyWarning, match=r"writes overlap: 128 destination bytes .* 0 of them with different"):
        DataCopy(fb, l1, DataCopyParams(2, 1, 0, 0))  # srcGap=0 too: same values
    assert fb.defined()[:128].all() and np.array_equal(fb.numpy()[:128], l1.numpy()[:128])


def test_source_destination_aliasing_warns_and_reads_first():
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "int32", 64)
    ub.numpy()[:] = np.arange(64)
    ub.set_defined()
    with pytest.warns(FastCopyWarning, match="source and destination share 192 bytes"):
        DataCopy(ub[8], ub, DataCopyParams(1, 7))  # shift right by one block
    assert np.array_equal(ub.numpy()[8:64], np.arange(56))


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3", "ATLAS_350"])
def test_fixpipe_count_form_moves_128_byte_units_without_warning(product):
    """L1 -> Fixpipe buffer count form: floor(count*es/128) units of 128 bytes on every product, no warning."""
    pipe = TPipe(product=product)
    l1 = pipe.alloc(TPosition.A1, "float", 256)
    l1.numpy()[:] = np.arange(256, dtype=np.float32)
    l1.set_defined()
    fb = pipe.alloc(TPosition.C2PIPE2GM, "float", 256)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataCopy(fb, l1, 128)  # 512 bytes: 4 units of 128 bytes
    assert fb.defined()[:128].all() and not fb.defined()[128:].any()
    assert np.array_equal(fb.numpy()[:128], np.arange(128, dtype=np.float32))


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_350"])
def test_fixpipe_2kib_of_quant_words_in_16_blocks_fills_the_buffer(product):
    """256 quant words (uint64, 2 KiB) uploaded as CeilAlign(n*8, 128)/128 = 16 blocks fill all 2 KiB."""
    pipe = TPipe(product=product)
    words = np.arange(1, 257, dtype=np.uint64) * np.uint64(0x0000_0001_0001_0001)
    l1 = pipe.alloc(TPosition.A1, "uint64", 256)
    l1.numpy()[:] = words
    l1.set_defined()
    fb = pipe.alloc(TPosition.C2PIPE2GM, "uint64", 256)
    DataCopy(fb, l1, DataCopyParams(1, 16, 0, 0))
    assert fb.defined().all()
    assert np.array_equal(fb.numpy(), words)


def test_fixpipe_gaps_are_128_byte_units_on_350():
    """dstGap counts 128-byte units head to head, srcGap 32-byte units head to head (Atlas 350 as elsewhere)."""
    pipe = TPipe(product="ATLAS_350")
    l1 = pipe.alloc(TPosition.A1, "uint8", 1024)
    l1.numpy()[:] = np.arange(1024) % 251
    l1.set_defined()
    fb = pipe.alloc(TPosition.C2PIPE2GM, "uint8", 1024)
    DataCopy(fb, l1, DataCopyParams(2, 1, 8, 3))  # burst 1 reads l1[256:384] into fb[384:512]
    d = fb.defined()
    assert d[:128].all() and not d[128:384].any() and d[384:512].all() and not d[512:].any()
    assert np.array_equal(fb.numpy()[384:512], l1.numpy()[256:384])
    with pytest.raises(OutOfBoundsError, match="write span"):
        DataCopy(fb, l1, DataCopyParams(2, 1, 0, 8))  # second burst at 1024: outside the 1 KiB tensor
    assert np.array_equal(fb.defined(), d)


def test_aliasing_across_memories_over_one_host_array():
    """A GlobalTensor over a local tensor's numpy view is a different memory over the same bytes: still seen."""
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "int32", 64)
    ub.numpy()[:] = np.arange(64)
    ub.set_defined()
    gm = GlobalTensor(ub.numpy())  # GM over the very UB bytes
    with pytest.warns(FastCopyWarning, match="source and destination share 192 bytes"):
        DataCopy(ub[8], gm, DataCopyParams(1, 7))  # shift right by one block, through "GM"
    assert np.array_equal(ub.numpy()[8:64], np.arange(56))

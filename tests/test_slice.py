"""Sliced DataCopy with SliceInfo (semantics.md §7): the page's worked example through the public API, one test per
validation rule (exception class, message parts, destination unchanged), the warnings, shapeValue = 0, loop
mode, and what is left untouched."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from fastcopy import (AlignmentError, DataCopy, DataCopyMVType, FastCopyWarning, GlobalTensor, LoopModeParams,
                      OutOfBoundsError, ParamError, ParamTypeError, RangeError, ResetLoopModePara, SetLoopModePara,
                      SliceInfo, TPipe, TPosition, UnsupportedError)
from fastcopy.ops.slice import plan_slice
from fastcopy.products import Product
from fastcopy.reference import slice as ref
from vectors import PRODUCTS, check_elements, init_values, vector

SLICE_PRODUCTS = ["ATLAS_A2", "ATLAS_A3", "ATLAS_INFERENCE_AICORE", "ATLAS_350"]
PAGE_SRC = [(16, 70, 7, 3, 87), (0, 2, 1, 1, 3)]
PAGE_DST = [(0, 47, 0, 3, 48), (0, 1, 0, 1, 2)]


def infos(rows):
    return [SliceInfo(*r) for r in rows]


def page_expected():
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    return np.concatenate([np.r_[a[r, 16:40], a[r, 47:71]] for r in (0, 2)])


def tensor_bytes(t):
    data = t.memory.data[t.offset:t.offset + t.nbytes]
    plane = t.memory.plane
    defined = np.ones(t.nbytes, bool) if plane is None else plane[t.offset:t.offset + t.nbytes].astype(bool)
    return data, defined


# ---------------------------------------------------------------------------------------------------------------
# the worked example (vectors.json: slice_int32_2d_example), GM -> UB and back, every product with the path

@pytest.mark.parametrize("key", vector("slice_int32_2d_example")["products"])
def test_page_example(key):
    v = vector("slice_int32_2d_example")
    p = v["params"]
    pipe = TPipe(PRODUCTS[key])
    src = GlobalTensor(init_values(v["src"]["init"], v["src"]["length"], np.int32).reshape(3, 87))
    src_info = [SliceInfo(**d) for d in p["srcSliceInfo"]]
    dst_info = [SliceInfo(**d) for d in p["dstSliceInfo"]]
    step1, step2 = v["steps"]
    local = pipe.alloc(TPosition.VECIN, "int32_t", step1["dst"]["length"])
    local.numpy()[:] = init_values(step1["dst"]["init"], step1["dst"]["length"], np.int32)
    local.set_defined()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)  # n0 = 2 and UB stride 0: no 310P warning either
        DataCopy(local, src, dst_info, src_info, p["dimValue"])
        check_elements(*tensor_bytes(local), step1["expected"], np.int32, what=step1["step"])
        out = init_values(step2["dst"]["init"], step2["dst"]["length"], np.int32)
        DataCopy(GlobalTensor(out), local, dst_info, dst_info, dimValue=p["dimValue"])
    check_elements(out.view(np.uint8), np.ones(out.nbytes, bool), step2["expected"], np.int32, what=step2["step"])
    assert np.array_equal(out, page_expected())


def test_page_example_matches_reference():
    """The oracle and the public API agree on the page example with partly undefined bytes around it."""
    pipe = TPipe("ATLAS_A2")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    local = pipe.alloc(TPosition.VECIN, "int32_t", 100)
    local.numpy()[:50] = 7
    local.set_defined(np.arange(100) < 50)
    data, defined = (x.copy() for x in tensor_bytes(local))
    ref.slice_copy(data, defined, a.view(np.uint8).ravel().copy(), np.ones(a.nbytes, bool), es=4,
                   dst_info=[SliceInfo(*r).as_dict() for r in PAGE_DST],
                   src_info=[SliceInfo(*r).as_dict() for r in PAGE_SRC], dimValue=2)
    DataCopy(local, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    got_data, got_defined = tensor_bytes(local)
    assert np.array_equal(got_data, data) and np.array_equal(got_defined, defined)
    assert not got_defined[96 * 4:].any()  # elements 96..99: untouched, still undefined poison
    assert (got_data[96 * 4:] == pipe.poison).all()


def test_untouched_destination_keeps_contents_and_definedness():
    """Scatter into GM: only the selected elements change; an output declared undefined stays so elsewhere."""
    pipe = TPipe("ATLAS_A2")
    local = pipe.alloc(TPosition.VECOUT, "int32_t", 96)
    local.numpy()[:] = np.arange(96) + 1000
    local.set_defined()
    out = np.full((3, 87), -5, np.int32)
    gm = GlobalTensor(out, defined=False)
    DataCopy(gm, local, infos(PAGE_SRC), infos(PAGE_DST), 2)
    want = np.full((3, 87), -5, np.int32)
    sel = np.zeros((3, 87), bool)
    for k, r in enumerate((0, 2)):
        want[r, 16:40] = 1000 + 48 * k + np.arange(24)
        want[r, 47:71] = 1000 + 48 * k + 24 + np.arange(24)
        sel[r, 16:40] = sel[r, 47:71] = True
    assert np.array_equal(out, want)
    assert np.array_equal(gm.defined(), sel)


def test_sliceinfo_defaults_are_not_neutral():
    s = SliceInfo()
    assert s.key() == (0, 31, 0, 32, 0)
    assert "NOT neutral" in SliceInfo.__doc__


def test_entries_as_tuples_and_dicts():
    pipe = TPipe("ATLAS_A2")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 96)
    DataCopy(x, GlobalTensor(a), PAGE_DST, [SliceInfo(*PAGE_SRC[0]).as_dict(), PAGE_SRC[1]], 2)
    assert np.array_equal(x.numpy(), page_expected())


def test_one_index_in_higher_dimension_and_dimvalue_one():
    """11.9: startIndex == endIndex is allowed above dim 0; dimValue = 1 allows a UB row of any length."""
    pipe = TPipe("ATLAS_A2")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 48)
    DataCopy(x, GlobalTensor(a), [(0, 47, 0, 3, 48), (0, 0, 0, 1, 1)], [(16, 70, 7, 3, 87), (1, 1, 0, 1, 3)], 2)
    assert np.array_equal(x.numpy(), np.r_[a[1, 16:40], a[1, 47:71]])
    y = pipe.alloc(TPosition.VECIN, "int32_t", 30)  # shapeValue 30 elements = 120 bytes: fine in 1 dimension
    DataCopy(y, GlobalTensor(a), [SliceInfo(0, 23, 0, 3, 30)], [SliceInfo(5, 28, 0, 3, 261)])
    assert np.array_equal(y.numpy()[:24], a.ravel()[5:29])


def test_eight_dimensions():
    pipe = TPipe("ATLAS_A2")
    shape = (2, 1, 2, 1, 2, 1, 2, 16)  # numpy order; dim 0 = 16 int16 = 32 bytes
    a = np.arange(np.prod(shape), dtype=np.int16).reshape(shape)
    x = pipe.alloc(TPosition.VECIN, "int16_t", a.size)
    extents = shape[::-1]
    src = [SliceInfo(0, 15, 0, 1, 16)] + [SliceInfo(0, e - 1, 0, 1, e) for e in extents[1:]]
    DataCopy(x, GlobalTensor(a), src, src, 8)
    assert np.array_equal(x.numpy(), a.ravel())


def test_plan_is_cached_and_warnings_repeat():
    pipe = TPipe("ATLAS_INFERENCE_AICORE")
    a = np.arange(300, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 24)
    src = [SliceInfo(0, 8 * 3 + 2 * 1 - 1, 1, 1, 300)]  # three 8-element runs, GM gap 1 element = 4 bytes
    dst = [SliceInfo(0, 23, 0, 1, 24)]
    p1 = plan_slice(x, GlobalTensor(a), dst, src)
    p2 = plan_slice(x, GlobalTensor(a), dst, src)
    assert p1 is p2
    for _ in range(2):
        with pytest.warns(FastCopyWarning, match="n0=3 > 2 runs"):
            DataCopy(x, GlobalTensor(a), dst, src)
    assert np.array_equal(x.numpy(), np.r_[a[0:8], a[9:17], a[18:26]])


# ---------------------------------------------------------------------------------------------------------------
# validation: one test per rule; nothing is written on error

def _setup(product, direction, dtype, gm_shape, ub_count, ub_addr=None):
    pipe = TPipe(product)
    rng = np.random.default_rng(0)
    gm_arr = rng.integers(0, 100, size=gm_shape).astype(dtype)
    if direction == "GM->UB":
        ub = pipe.alloc(TPosition.VECIN, dtype, ub_count, addr=ub_addr)
    else:
        ub = pipe.alloc(TPosition.VECOUT, dtype, ub_count, addr=ub_addr)
    ub.numpy()[:] = np.arange(ub_count) % 50
    ub.set_defined(np.arange(ub_count) % 3 > 0)
    return pipe, GlobalTensor(gm_arr), ub


def rejected(exc, parts, dst_info, src_info, dim=2, product="ATLAS_A2", direction="GM->UB", dtype=np.int32,
             gm_shape=(3, 87), ub_count=96, ub_addr=None, gm=None, names_product=True):
    """Assert the call raises ``exc`` with every part (and the product name) in its message, writing nothing."""
    pipe, g, ub = _setup(product, direction, dtype, gm_shape, ub_count, ub_addr)
    g = gm if gm is not None else g
    dst, src = (ub, g) if direction == "GM->UB" else (g, ub)
    before = [x.copy() for x in tensor_bytes(dst)]
    with pytest.raises(exc) as info:
        DataCopy(dst, src, dst_info, src_info, dim)
    msg = str(info.value)
    for part in list(parts) + ([str(Product.get(product))] if names_product else []):
        assert part in msg, (part, msg)
    after = tensor_bytes(dst)
    assert np.array_equal(after[0], before[0]) and np.array_equal(after[1], before[1])
    return msg


def rows(base, d, **fields):
    out = [list(r) for r in base]
    names = ["startIndex", "endIndex", "stride", "burstLen", "shapeValue"]
    for k, v in fields.items():
        out[d][names.index(k)] = v
    return [SliceInfo(*r) for r in out]


@pytest.mark.parametrize("dim", [0, 9])
def test_rule1_dimvalue_range(dim):
    rejected(RangeError, [f"dimValue={dim}", "[1, 8]"], infos(PAGE_DST), infos(PAGE_SRC), dim=dim)


@pytest.mark.parametrize("side", ["src", "dst"])
def test_rule1_list_length_equals_dimvalue(side):
    src, dst = infos(PAGE_SRC), infos(PAGE_DST)
    if side == "src":
        src = src + [SliceInfo(0, 0, 0, 1, 1)]
    else:
        dst = dst[:1]
    name = "srcSliceInfo has 3 entries" if side == "src" else "dstSliceInfo has 1 entries"
    rejected(ParamError, [name, "dimValue=2"], dst, src)


@pytest.mark.parametrize("value", [0, 65536])
def test_rule2_burstlen_range(value):
    rejected(RangeError, [f"srcSliceInfo[0].burstLen={value}", "[1, 65535]"], rows(PAGE_DST, 0, burstLen=value),
             rows(PAGE_SRC, 0, burstLen=value))


def test_rule2_burstlen_equal_on_both_sides():
    rejected(ParamError, ["dstSliceInfo[0].burstLen=6", "srcSliceInfo[0].burstLen=3"],
             rows(PAGE_DST, 0, burstLen=6), infos(PAGE_SRC))


@pytest.mark.parametrize("side", ["srcSliceInfo", "dstSliceInfo"])
def test_rule2_burstlen_one_above_dim0(side):
    src = rows(PAGE_SRC, 1, burstLen=2) if side == "srcSliceInfo" else infos(PAGE_SRC)
    dst = rows(PAGE_DST, 1, burstLen=2) if side == "dstSliceInfo" else infos(PAGE_DST)
    rejected(RangeError, [f"{side}[1].burstLen=2", "must be 1"], dst, src)


def test_rule3_equal_run_counts():
    # destination asks for 3 runs of 24 (endIndex 71, shapeValue 72), the source has 2
    rejected(ParamError, ["dstSliceInfo[0] selects 3 run(s)", "srcSliceInfo[0] selects 2"],
             rows(PAGE_DST, 0, endIndex=71, shapeValue=72), infos(PAGE_SRC), ub_count=144)


def test_rule3_equal_combination_counts():
    rejected(ParamError, ["dstSliceInfo selects 3", "srcSliceInfo selects 2"],
             rows(PAGE_DST, 1, endIndex=2, shapeValue=3), infos(PAGE_SRC), ub_count=144)


def test_rule3_per_dimension_counts_may_differ():
    """2 x 2 rows on the source pair with 4 x 1 on the destination (enumeration order, semantics.md §7.2 rule 3)."""
    pipe = TPipe("ATLAS_A2")
    a = np.arange(4 * 3 * 16, dtype=np.float32).reshape(4, 3, 16)
    x = pipe.alloc(TPosition.VECIN, "float", 64)
    src = [SliceInfo(0, 7, 0, 1, 16), SliceInfo(0, 2, 1, 1, 3), SliceInfo(1, 3, 1, 1, 4)]
    dst = [SliceInfo(0, 7, 0, 1, 16), SliceInfo(0, 3, 0, 1, 4), SliceInfo(0, 0, 0, 1, 1)]
    DataCopy(x, GlobalTensor(a), dst, src, 3)
    got = x.numpy().reshape(4, 16)[:, :8]
    assert np.array_equal(got, a[1::2, ::2, :8].reshape(4, 8))


@pytest.mark.parametrize("direction", ["GM->UB", "UB->GM"])
def test_rule4_ub_start_alignment(direction):
    ub_rows = rows(PAGE_DST, 0, startIndex=4, endIndex=51, shapeValue=56)  # 16 bytes
    if direction == "GM->UB":
        rejected(AlignmentError, ["dstSliceInfo[0].startIndex=4", "16 bytes", "UB side (VECIN)"], ub_rows,
                 infos(PAGE_SRC), ub_count=112)
    else:
        rejected(AlignmentError, ["srcSliceInfo[0].startIndex=4", "UB side (VECOUT)"], infos(PAGE_SRC), ub_rows,
                 direction=direction, ub_count=112)


def test_rule4_ub_stride_alignment():
    rejected(AlignmentError, ["dstSliceInfo[0].stride=2", "8 bytes", "not a multiple of 32"],
             rows(PAGE_DST, 0, endIndex=49, stride=2, shapeValue=50), infos(PAGE_SRC), ub_count=100)


def test_rule4_ub_row_alignment_with_two_dimensions():
    rejected(AlignmentError, ["dstSliceInfo[0].shapeValue=50", "200 bytes", "dimValue >= 2"],
             rows(PAGE_DST, 0, shapeValue=50), infos(PAGE_SRC), ub_count=100)


def test_rule4_ub_tensor_start_alignment():
    pipe, g, ub = _setup("ATLAS_A2", "GM->UB", np.int32, (3, 87), 100)
    with pytest.raises(AlignmentError, match=r"dst start address \(VECIN, UB\) is not 32-byte aligned on Atlas A2"):
        DataCopy(ub[1], g, infos(PAGE_DST), infos(PAGE_SRC), 2)


def test_rule5_run_count_limit():
    n = 4096  # runs of 8 int32 with stride 0
    rejected(RangeError, ["n0=4096", "[1, 4095]"], [SliceInfo(0, 8 * n - 1, 0, 1, 8 * n)],
             [SliceInfo(0, 8 * n - 1, 0, 1, 8 * n)], dim=1, gm_shape=(8 * n,), ub_count=8 * n,
             product="ATLAS_A2")


def test_rule5_combination_limit():
    info = [SliceInfo(0, 7, 0, 1, 8), SliceInfo(0, 1536, 0, 1, 1537)]  # 1537 rows of 8 int32
    rejected(RangeError, ["srcSliceInfo selects 1537", "more than 1536"], info, info, gm_shape=(1537, 8),
             ub_count=8 * 1537)


def test_rule5_combination_count_is_the_product():
    info = [SliceInfo(0, 7, 0, 1, 8), SliceInfo(0, 39, 0, 1, 40), SliceInfo(0, 39, 0, 1, 40)]
    rejected(RangeError, ["1600 (40 * 40)", "more than 1536"], info, info, dim=3, gm_shape=(40, 40, 8),
             ub_count=40 * 40 * 8, product="ATLAS_350")


@pytest.mark.parametrize("side, d", [("srcSliceInfo", 1), ("dstSliceInfo", 0), ("srcSliceInfo", 0)])
def test_rule6_end_below_shape(side, d):
    base = PAGE_SRC if side == "srcSliceInfo" else PAGE_DST
    shape = base[d][1]  # shapeValue == endIndex
    bad = rows(base, d, shapeValue=shape)
    src, dst = (bad, infos(PAGE_DST)) if side == "srcSliceInfo" else (infos(PAGE_SRC), bad)
    rejected(RangeError, [f"{side}[{d}].endIndex={shape} must be < shapeValue={shape}"], dst, src)


def test_rule6_message_as_documented():
    msg = rejected(RangeError, [], infos(PAGE_DST), rows(PAGE_SRC, 1, endIndex=3, shapeValue=3))
    assert msg == ("DataCopy(SliceInfo): srcSliceInfo[1].endIndex=3 must be < shapeValue=3 on Atlas A2 "
                   "(endIndex is inclusive)")


def test_rule6_start_not_after_end():
    rejected(RangeError, ["srcSliceInfo[1].startIndex=2 must be <= endIndex=1"], infos(PAGE_DST),
             rows(PAGE_SRC, 1, startIndex=2, endIndex=1))


def test_rule6_dim0_holds_one_run():
    rejected(RangeError, ["srcSliceInfo[0]", "= 10 elements", "less than one run of L=24"], infos(PAGE_DST),
             rows(PAGE_SRC, 0, startIndex=16, endIndex=25))


def test_remainder_dim0_is_an_error():
    # 16..72: two runs (16..39, 47..70) and 2 elements of a third: the device would drop them
    msg = rejected(ParamError, ["srcSliceInfo[0]", "= 57 elements", "copies 2 run(s)", "drops 2 element(s)",
                                "set endIndex=70"], infos(PAGE_DST), rows(PAGE_SRC, 0, endIndex=72))
    assert "L=24, stride=7" in msg


def test_remainder_higher_dimension_is_an_error():
    # indices 0, 2, 4 with stride 1: endIndex 3 lies in a gap, the device stops at 2
    rejected(ParamError, ["dstSliceInfo[1].endIndex=3 is not a selected index", "1 + stride = 2",
                          "set endIndex=2"], rows(PAGE_DST, 1, endIndex=3, stride=1, shapeValue=4), infos(PAGE_SRC),
             ub_count=192)


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3", "ATLAS_350"])
def test_rule7_unaligned_gm_stride_limits_the_run_gm_to_ub(product):
    q = 8  # int32 per block
    bl = 2048  # 65536 bytes per run
    n = 2
    src = [SliceInfo(0, n * bl * q + 1 - 1, 1, bl, n * bl * q + 1)]
    dst = [SliceInfo(0, n * bl * q - 1, 0, bl, n * bl * q)]
    pipe = TPipe(product, capacities={"UB": 1 << 20})
    g = GlobalTensor(np.zeros(n * bl * q + 1, np.int32))
    x = pipe.alloc(TPosition.VECIN, "int32_t", n * bl * q)
    with pytest.raises(RangeError, match=rf"burstLen=2048 is 65536 bytes.*stride=1 elements = 4 bytes.*{pipe.product}"):
        DataCopy(x, g, dst, src)
    assert not tensor_bytes(x)[1].any()
    # a 32-byte multiple stride, or the UB -> GM direction, or burstLen 2047, are fine
    DataCopy(x, g, [SliceInfo(0, 2 * 2047 * q - 1, 0, 2047, 2 * 2047 * q)],
             [SliceInfo(0, 2 * 2047 * q, 1, 2047, n * bl * q + 1)])
    out = np.zeros(n * bl * q + 1, np.int32)
    DataCopy(GlobalTensor(out), x, src, dst)


def test_rule7_inference_core_warns_for_more_than_two_runs():
    pipe = TPipe("ATLAS_INFERENCE_AICORE")
    a = np.arange(100, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 24)
    with pytest.warns(FastCopyWarning, match=r"Atlas inference series AI Core.*srcSliceInfo\[0\]\.stride=3 "
                                             r"elements = 12 bytes.*n0=3 > 2 runs"):
        DataCopy(x, GlobalTensor(a), [SliceInfo(0, 23, 0, 1, 24)], [SliceInfo(2, 2 + 24 + 6 - 1, 3, 1, 100)])
    assert np.array_equal(x.numpy(), np.r_[a[2:10], a[13:21], a[24:32]])


def test_rule7_inference_core_warns_for_a_ub_stride():
    pipe = TPipe("ATLAS_INFERENCE_AICORE")
    a = np.arange(100, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 24)
    with pytest.warns(FastCopyWarning, match=r"UB-side dstSliceInfo\[0\]\.stride=8 is not 0"):
        DataCopy(x, GlobalTensor(a), [SliceInfo(0, 23, 8, 1, 24)], [SliceInfo(0, 16, 1, 1, 100)])
    assert np.array_equal(x.numpy()[:8], a[0:8]) and np.array_equal(x.numpy()[16:24], a[9:17])


def test_rule7_inference_core_no_warning_when_exact():
    """Two runs, UB stride 0 (the page example), or a 32-byte GM stride: the device computes it right."""
    pipe = TPipe("ATLAS_INFERENCE_AICORE")
    a = np.arange(100, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 24)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        DataCopy(x, GlobalTensor(a), [SliceInfo(0, 15, 0, 1, 16)], [SliceInfo(0, 16, 1, 1, 100)])
        DataCopy(x, GlobalTensor(a), [SliceInfo(0, 23, 0, 1, 24)], [SliceInfo(0, 39, 8, 1, 100)])
    a2 = TPipe("ATLAS_A2").alloc(TPosition.VECIN, "int32_t", 24)  # three runs, GM gap 4 bytes: fine on A2
    with warnings.catch_warnings():
        warnings.simplefilter("error", FastCopyWarning)
        DataCopy(a2, GlobalTensor(a), [SliceInfo(0, 23, 0, 1, 24)], [SliceInfo(0, 25, 1, 1, 100)])


def test_gap_fields_ub_side():
    n_gap = 65536 * 8  # int32: 65536 blocks
    dst = [SliceInfo(0, 16 + n_gap - 1, n_gap, 1, 16 + n_gap)]
    rejected(RangeError, ["dstSliceInfo[0].stride=524288", "65536 blocks", "[0, 65535]"], dst,
             [SliceInfo(0, 15, 0, 1, 16)], dim=1)


def test_gap_fields_gm_side_aligned():
    n_gap = 65536 * 8
    src = [SliceInfo(0, 16 + n_gap - 1, n_gap, 1, 16 + n_gap)]
    rejected(RangeError, ["srcSliceInfo[0].stride=524288", "65536 blocks"], [SliceInfo(0, 15, 0, 1, 16)], src,
             dim=1)


def test_gap_fields_gm_side_bytes_on_a2():
    gap = 2**30 + 1  # int32: 4 GiB + 4 bytes, not a 32-byte multiple
    src = [SliceInfo(0, 16 + gap - 1, gap, 1, 16 + gap)]
    rejected(RangeError, ["srcSliceInfo[0].stride=1073741825", "4294967300 bytes", "[0, 4294967295] bytes"],
             [SliceInfo(0, 15, 0, 1, 16)], src, dim=1)


def test_single_run_ignores_gap_limits():
    """With one run the gap takes no effect (nothing to wrap): accepted."""
    pipe = TPipe("ATLAS_A2")
    a = np.arange(64, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 8)
    DataCopy(x, GlobalTensor(a), [SliceInfo(0, 7, 0, 1, 8)], [SliceInfo(3, 10, 2**30 + 1, 1, 64)])
    assert np.array_equal(x.numpy(), a[3:11])


# ---- paths, dtypes, types, bounds

@pytest.mark.parametrize("product", ["ATLAS_TRAINING", "ATLAS_200I_500_A2", "ATLAS_INFERENCE_VECTORCORE"])
def test_unsupported_products(product):
    rejected(UnsupportedError, ["GM->VECIN (GM->UB) is not supported", "supported there: none"], infos(PAGE_DST),
             infos(PAGE_SRC), product=product)


def test_unsupported_dtype_on_inference_core():
    import ml_dtypes

    rejected(UnsupportedError, ["dtype bfloat16_t is not supported"], [SliceInfo(0, 15, 0, 1, 16)],
             [SliceInfo(0, 15, 0, 1, 16)], dim=1, product="ATLAS_INFERENCE_AICORE", dtype=ml_dtypes.bfloat16,
             gm_shape=(16,), ub_count=16)


@pytest.mark.parametrize("product", ["ATLAS_A2", "ATLAS_A3", "ATLAS_INFERENCE_AICORE"])
def test_eight_byte_types_only_on_350(product):
    rejected(UnsupportedError, ["dtype double is not supported"], [SliceInfo(0, 3, 0, 1, 4)],
             [SliceInfo(0, 3, 0, 1, 4)], dim=1, product=product, dtype=np.float64, gm_shape=(4,), ub_count=4)


def test_eight_byte_types_on_350():
    pipe = TPipe("ATLAS_350")
    a = np.arange(40, dtype=np.float64)
    x = pipe.alloc(TPosition.VECIN, "double", 8)
    DataCopy(x, GlobalTensor(a), [SliceInfo(0, 7, 0, 1, 8)], [SliceInfo(1, 12, 4, 1, 40)])
    assert np.array_equal(x.numpy(), np.r_[a[1:5], a[9:13]])


def test_dtype_mismatch():
    pipe = TPipe("ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "float", 96)
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    with pytest.raises(UnsupportedError, match="source is int32_t but destination is float"):
        DataCopy(x, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)


def test_l1_and_ub_to_ub_are_not_slice_paths():
    pipe = TPipe("ATLAS_A2")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    l1 = pipe.alloc(TPosition.A1, "int32_t", 96)
    with pytest.raises(UnsupportedError, match=r"GM->A1 \(GM->L1\) is not supported on Atlas A2"):
        DataCopy(l1, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 96)
    y = pipe.alloc(TPosition.VECOUT, "int32_t", 96)
    with pytest.raises(UnsupportedError, match="UB->UB"):
        DataCopy(y, x, infos(PAGE_DST), infos(PAGE_DST), 2)


def test_co2_to_gm_on_inference_core():
    """CO2 maps to UB on the inference AI Core: CO2 -> GM is a slice path there."""
    pipe = TPipe("ATLAS_INFERENCE_AICORE")
    c = pipe.alloc(TPosition.CO2, "half", 32)
    c.numpy()[:] = np.arange(32)
    c.set_defined()
    out = np.zeros((2, 40), np.float16)
    DataCopy(GlobalTensor(out), c, [(4, 19, 0, 1, 40), (0, 1, 0, 1, 2)], [(0, 15, 0, 1, 16), (0, 1, 0, 1, 2)], 2)
    assert np.array_equal(out[:, 4:20], np.arange(32, dtype=np.float16).reshape(2, 16))


def test_entry_types():
    rejected(ParamTypeError, ["srcSliceInfo[1] is a int"], infos(PAGE_DST), [SliceInfo(*PAGE_SRC[0]), 5],
             names_product=False)
    with pytest.raises(ParamTypeError, match="endIndex=-1 does not fit uint32_t"):
        SliceInfo(0, -1)
    rejected(ParamTypeError, ["dimValue='2' is not an integer"], infos(PAGE_DST), infos(PAGE_SRC), dim="2",
             names_product=False)
    pipe, g, ub = _setup("ATLAS_A2", "GM->UB", np.int32, (3, 87), 96)
    with pytest.raises(ParamTypeError, match="srcSliceInfo must be a list of SliceInfo"):
        plan_slice(ub, g, infos(PAGE_DST), SliceInfo(*PAGE_SRC[0]), 1)


def test_source_too_small():
    rejected(OutOfBoundsError, ["read span", "source tensor"], infos(PAGE_DST), infos(PAGE_SRC),
             gm_shape=(3, 80), names_product=False)


def test_destination_too_small():
    rejected(OutOfBoundsError, ["write span", "destination tensor", "384 bytes", "380 available"],
             infos(PAGE_DST), infos(PAGE_SRC), ub_count=95, names_product=False)


# ---- shapeValue = 0 (semantics.md §7.2, §11.10)

def test_shape_zero_takes_the_global_tensor_shape():
    pipe = TPipe("ATLAS_A2")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 96)
    DataCopy(x, GlobalTensor(a), infos(PAGE_DST), [(16, 70, 7, 3, 0), (0, 2, 1, 1, 0)], 2)
    assert np.array_equal(x.numpy(), page_expected())
    y = pipe.alloc(TPosition.VECIN, "int32_t", 96)  # given values equal to the array's shape may stay
    DataCopy(y, GlobalTensor(a), infos(PAGE_DST), [(16, 70, 7, 3, 0), (0, 2, 1, 1, 3)], 2)
    assert np.array_equal(y.numpy(), page_expected())


def test_shape_zero_needs_ndim_equal_dimvalue():
    rejected(ParamError, ["srcSliceInfo[0].shapeValue=0", "has 1 dimension(s) (261,)", "dimValue=2"],
             infos(PAGE_DST), [(16, 70, 7, 3, 0), (0, 2, 1, 1, 0)], gm_shape=(261,))


def test_shape_zero_on_the_local_side():
    rejected(ParamError, ["dstSliceInfo[1].shapeValue=0", "VECIN LocalTensor, which has none"],
             rows(PAGE_DST, 1, shapeValue=0), infos(PAGE_SRC))


def test_shape_zero_only_when_source_dim0_is_zero():
    rejected(ParamError, ["srcSliceInfo[1].shapeValue=0", "only when srcSliceInfo[0].shapeValue == 0 (here 87)"],
             infos(PAGE_DST), rows(PAGE_SRC, 1, shapeValue=0))
    rejected(ParamError, ["dstSliceInfo[0].shapeValue=0", "only when srcSliceInfo[0].shapeValue == 0 (here 48)"],
             rows(PAGE_SRC, 0, shapeValue=0), infos(PAGE_DST), direction="UB->GM")


def test_shape_zero_given_values_must_agree():
    rejected(ParamError, ["srcSliceInfo[1].shapeValue=4 differs from the GlobalTensor's extent 3"],
             infos(PAGE_DST), [(16, 70, 7, 3, 0), (0, 2, 1, 1, 4)])


# ---- loop mode (Atlas 350, semantics.md §4.8)

def test_loop_mode_repeats_the_slice():
    pipe = TPipe("ATLAS_350")
    a = np.arange(4 * 87, dtype=np.int32).reshape(4, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 2 * 96 + 8)
    x.numpy()[:] = -1
    x.set_defined()
    SetLoopModePara(LoopModeParams(2, 1, 87 * 4, 96 * 4 + 32, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    try:
        DataCopy(x, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    finally:
        ResetLoopModePara(pipe=pipe)
    got = x.numpy()
    first = page_expected()
    second = np.concatenate([np.r_[a[r, 16:40], a[r, 47:71]] for r in (1, 3)])
    assert np.array_equal(got[:96], first) and np.array_equal(got[104:200], second)
    assert (got[96:104] == -1).all()
    # after the reset the same call (cached plan) is a single copy again
    x.numpy()[:] = -1
    DataCopy(x, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    assert np.array_equal(x.numpy()[:96], first) and (x.numpy()[96:] == -1).all()


def test_loop_mode_other_direction_does_not_apply():
    pipe = TPipe("ATLAS_350")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 200)
    x.numpy()[:] = -1
    x.set_defined()
    SetLoopModePara(LoopModeParams(2, 1, 0, 0, 0, 0), DataCopyMVType.UB_TO_OUT, pipe=pipe)
    try:
        DataCopy(x, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    finally:
        ResetLoopModePara(pipe=pipe)
    assert np.array_equal(x.numpy()[:96], page_expected()) and (x.numpy()[96:] == -1).all()


def test_loop_mode_overlapping_repetitions_resolve_exactly():
    """Repetitions writing the same UB bytes with different data: those bytes become undefined (11.2)."""
    pipe = TPipe("ATLAS_350")
    a = np.arange(64, dtype=np.int32)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 16)
    SetLoopModePara(LoopModeParams(2, 1, 32, 0, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    try:
        with pytest.warns(FastCopyWarning, match="writes overlap"):
            DataCopy(x, GlobalTensor(a), [SliceInfo(0, 7, 0, 1, 8)], [SliceInfo(0, 7, 0, 1, 64)])
    finally:
        ResetLoopModePara(pipe=pipe)
    assert not x.defined()[:8].any()


def test_loop_mode_out_of_bounds():
    pipe = TPipe("ATLAS_350")
    a = np.arange(261, dtype=np.int32).reshape(3, 87)
    x = pipe.alloc(TPosition.VECIN, "int32_t", 96)
    SetLoopModePara(LoopModeParams(2, 1, 0, 96 * 4, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    try:
        with pytest.raises(OutOfBoundsError, match="write span"):
            DataCopy(x, GlobalTensor(a), infos(PAGE_DST), infos(PAGE_SRC), 2)
    finally:
        ResetLoopModePara(pipe=pipe)

"""Basic DataCopy: the public API (plans + numba kernels) against the numpy oracle, bit for bit, data and
definedness, over random valid parameters on every path, product and element width."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from dc_util import make_tensor, tensor_bytes
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fastcopy import DataCopy, DataCopyParams, TPipe
from fastcopy.ops.datacopy import units
from fastcopy.products import DATACOPY_CONVERT, DATACOPY_PATHS, Phys, Product
from fastcopy.reference.datacopy import count_to_block_len, data_copy

CANDIDATES = [np.dtype(t) for t in (np.int8, np.uint8, np.float16, ml_dtypes.bfloat16, np.int16, np.float32,
                                    np.int32, np.uint32, np.float64, np.int64, np.uint64)]


def _dtypes(allowed):
    by_width = {}
    for dt in CANDIDATES:
        if allowed is None or dt in allowed:
            by_width.setdefault(dt.itemsize, []).append(dt)
    return by_width


#: every (product, path, width) combination the hardware has, with the dtypes of that width
COMBOS = [(p, path, w, dts) for p in Product for path, allowed in DATACOPY_PATHS[p].items()
          for w, dts in sorted(_dtypes(allowed).items())]
CONVERTS = [(p, pair) for p, pairs in DATACOPY_CONVERT.items() for pair in sorted(pairs, key=str)]


def _name(path):
    return f"{path[0].name}->{path[1].name}"


def _footprints(product, path, bc, bl, sg, dg, grow=1):
    lb, gs, gd, head, _ = units(path[0], path[1], product)
    n = bl * lb
    if head:
        return (bc - 1) * sg * gs + n, (bc - 1) * dg * gd + grow * n
    return bc * n + (bc - 1) * sg * gs, bc * grow * n + (bc - 1) * dg * gd


def _capacity(product, phys, shared):
    from fastcopy.products import CAPACITIES

    return 1 << 30 if phys is Phys.GM else CAPACITIES[product][phys] // (2 if shared else 1)


def _run_case(data, product, path, dtype, src_dtype=None):
    src_dtype = src_dtype or dtype
    grow = dtype.itemsize // src_dtype.itemsize
    small = path[1] in (Phys.BT, Phys.FB)  # 1-7 KiB buffers
    bc = data.draw(st.integers(1, 3 if small else 6), label="blockCount")
    bl = data.draw(st.integers(1, 3), label="blockLen")
    if product is Product.ATLAS_350 and path == (Phys.L1, Phys.BT) and src_dtype.itemsize == 4:
        bl = 2 * bl  # must be even for 4-byte types there (semantics.md §3.3)
    sg = data.draw(st.integers(0, 3), label="srcGap")
    dg = data.draw(st.integers(0, 3), label="dstGap")
    s_need, d_need = _footprints(product, path, bc, bl, sg, dg, grow)
    s_extra = data.draw(st.integers(0, 2), label="src_extra_elems") * 32
    d_extra = data.draw(st.integers(0, 2), label="dst_extra_elems") * 32
    s_bytes, d_bytes = s_need + s_extra, d_need + d_extra
    shared = path[0] is path[1]
    assume(s_bytes <= _capacity(product, path[0], shared) and d_bytes <= _capacity(product, path[1], shared))
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    pipe = TPipe(product=product)
    defined_fraction = data.draw(st.sampled_from([1.0, 0.5, 0.0]), label="src_defined")
    src = make_tensor(pipe, path[0], src_dtype, s_bytes // src_dtype.itemsize, rng, defined_fraction)
    dst = make_tensor(pipe, path[1], dtype, d_bytes // dtype.itemsize, rng,
                      data.draw(st.sampled_from([1.0, 0.3, 0.0]), label="dst_defined"), avoid=src.position)
    want, want_def = tensor_bytes(dst)
    s_data, s_def = tensor_bytes(src)
    data_copy(want, want_def, s_data, s_def, path=f"{path[0].name}->{path[1].name}", product=product.key,
              blockCount=bc, blockLen=bl, srcGap=sg, dstGap=dg, src_dtype=src_dtype, dst_dtype=dtype,
              poison=pipe.poison)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overlap warnings are tested elsewhere
        DataCopy(dst, src, DataCopyParams(bc, bl, sg, dg))
    got, got_def = tensor_bytes(dst)
    assert np.array_equal(got, want)
    assert np.array_equal(got_def, want_def)


@pytest.mark.parametrize("product,path,width,dtypes", COMBOS,
                         ids=[f"{p.name}-{_name(path)}-b{w}" for p, path, w, _ in COMBOS])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_params_form_matches_reference(product, path, width, dtypes, data):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    _run_case(data, product, path, dtype)


@pytest.mark.parametrize("product,pair", CONVERTS, ids=[f"{p.name}-{a}->{b}" for p, (a, b) in CONVERTS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_bias_table_widening_matches_reference(product, pair, data):
    _run_case(data, product, (Phys.L1, Phys.BT), pair[1], src_dtype=pair[0])


@pytest.mark.parametrize("product", list(Product), ids=[p.name for p in Product])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_count_form_matches_reference(product, data):
    path = data.draw(st.sampled_from(sorted(DATACOPY_PATHS[product], key=str)), label="path")
    allowed = _dtypes(DATACOPY_PATHS[product][path])
    dtype = data.draw(st.sampled_from([d for ds in allowed.values() for d in ds]), label="dtype")
    es = dtype.itemsize
    lb, _, _, _, lc = units(path[0], path[1], product)
    count = data.draw(st.integers(1, 3 * 128 // es), label="count")
    bl = count_to_block_len(count, es, f"{path[0].name}->{path[1].name}", product.key)
    assume(bl > 0 or product in (Product.ATLAS_A2, Product.ATLAS_A3, Product.ATLAS_350))
    assume(not (product is Product.ATLAS_350 and path == (Phys.L1, Phys.BT) and es == 4 and bl % 2))
    rng = np.random.default_rng(count)
    pipe = TPipe(product=product)
    n = max(count, 512 // es)
    src = make_tensor(pipe, path[0], dtype, n, rng)
    dst = make_tensor(pipe, path[1], dtype, n, rng, 0.0, avoid=src.position)
    want, want_def = tensor_bytes(dst)
    s_data, s_def = tensor_bytes(src)
    data_copy(want, want_def, s_data, s_def, path=f"{path[0].name}->{path[1].name}", product=product.key,
              blockCount=1, blockLen=bl, srcGap=0, dstGap=0, poison=pipe.poison)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DataCopy(dst, src, count)
    got, got_def = tensor_bytes(dst)
    assert np.array_equal(got, want) and np.array_equal(got_def, want_def)

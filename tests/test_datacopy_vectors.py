"""Basic DataCopy worked examples (vectors.json) through the public API, on every product and path listed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from vectors import PRODUCTS, UINT, init_values, vector

from fastcopy import DataCopy, DataCopyParams, FastCopyWarning, GlobalTensor, Phys, Product, TPipe, TPosition
from fastcopy.products import DATACOPY_PATHS

BASIC = ["datacopy_half_512_count", "datacopy_half_512_DataCopyParams", "datacopy_params_figure_example",
         "datacopy_count_rounds_down"]
# the three legs of the page's example, as (src position, dst position); None = GM
LEGS = {"GM->VECIN": (None, TPosition.VECIN), "VECIN->VECOUT": (TPosition.VECIN, TPosition.VECOUT),
        "VECOUT->GM": (TPosition.VECOUT, None)}


def _arg(v):
    p = v["params"]
    return p["count"] if "count" in p else DataCopyParams(**p["DataCopyParams"])


def _run(v, product, leg):
    dt = np.float16
    pipe = TPipe(product=PRODUCTS[product])
    src_vals = init_values(v["src"]["init"], v["src"]["length"], dt)
    dst_vals = init_values(v["dst"]["init"], v["dst"]["length"], dt)
    src_pos, dst_pos = LEGS[leg]
    if src_pos is None:
        src = GlobalTensor(src_vals)
    else:
        src = pipe.alloc(src_pos, dt, src_vals.size)
        src.numpy()[:] = src_vals
        src.set_defined()
    if dst_pos is None:
        dst = GlobalTensor(dst_vals.copy())
    else:
        dst = pipe.alloc(dst_pos, dt, dst_vals.size)
        dst.numpy()[:] = dst_vals
        dst.set_defined()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DataCopy(dst, src, _arg(v))
    return dst, caught


@pytest.mark.parametrize("leg", list(LEGS))
@pytest.mark.parametrize("vid", BASIC)
def test_basic_vector(vid, leg):
    v = vector(vid)
    for product in v["products"]:
        if leg == "VECIN->VECOUT" and (Phys.UB, Phys.UB) not in DATACOPY_PATHS[Product.get(product)]:
            continue  # no UB -> UB path on 310P-VEC and 310B (semantics.md §3.1)
        dst, caught = _run(v, product, leg)
        want = np.array(v["expected"], np.float16).view(UINT[2])
        got = dst.numpy().reshape(-1).view(UINT[2])
        assert np.array_equal(got, want), (vid, product, leg)
        assert dst.defined().all()
        rounding = [w for w in caught if issubclass(w.category, FastCopyWarning) and "rounded down" in str(w.message)]
        assert bool(rounding) == (vid == "datacopy_count_rounds_down")


def test_printed_segments_of_the_page():
    v = vector("datacopy_half_512_count")
    dst, _ = _run(v, "A2", "GM->VECIN")
    for start, values in v["printed_segments"]:
        assert np.array_equal(dst.numpy()[start:start + len(values)], np.array(values, np.float16))

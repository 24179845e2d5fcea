"""DataCopyPad worked examples (vectors.json: the page's calling example, its diagram parameter sets, Normal vs
Compact, UB -> TSCM) through the public API, on every product each vector lists; bit-exact, definedness checked."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from vectors import DTYPES, PRODUCTS, VECTORS, check_elements, init_values

from fastcopy import (DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, FastCopyWarning, GlobalTensor,
                      Nd2NzParams, PaddingMode, TPipe)

PAD_VECTORS = [v for v in VECTORS if v["operation"].startswith("DataCopyPad")]
CASES = [pytest.param(v, p, id=f"{v['id']}-{p}") for v in PAD_VECTORS for p in v["products"]]


def _tensor(pipe, desc, dtype):
    values = init_values(desc["init"], desc["length"], dtype)
    if desc["position"] == "GM":
        return GlobalTensor(values.copy())
    t = pipe.alloc(desc["position"], dtype, values.size)
    t.numpy()[:] = values
    t.set_defined()
    return t


def _bytes(t):
    data = t.memory.data[t.offset:t.offset + t.nbytes]
    plane = t.memory.plane
    defined = np.ones(t.nbytes, bool) if plane is None else plane[t.offset:t.offset + t.nbytes].astype(bool)
    return data, defined


def _call(dst, src, params):
    cp = DataCopyExtParams(**params["DataCopyExtParams"])
    mode = PaddingMode[params.get("mode", "Normal")]
    if dst.is_global:
        DataCopyPad(dst, src, cp, mode=mode)
    else:
        DataCopyPad(dst, src, cp, DataCopyPadExtParams(**params["DataCopyPadExtParams"]), mode=mode)


@pytest.mark.parametrize("v, product", CASES)
def test_pad_vector(v, product):
    dtype = DTYPES[v["dtype"]]
    pipe = TPipe(product=PRODUCTS[product])
    src = _tensor(pipe, v["src"], dtype)
    params = v["params"]
    if "Nd2NzParams" in params:
        _check_tscm(v, pipe, src, dtype)
        return
    steps = v.get("steps") or [{"step": v["path"], "dst": v["dst"], "expected": v["expected"],
                                "undefined_indices": v.get("undefined_indices", ())}]
    for step in steps:
        dst = _tensor(pipe, step["dst"], dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FastCopyWarning)
            _call(dst, src, params)
        data, defined = _bytes(dst)
        check_elements(data, defined, step["expected"], dtype, step.get("undefined_indices", ()), what=step["step"],
                       poison=pipe.poison)
        src = dst  # the next leg reads what this one wrote


def _check_tscm(v, pipe, src, dtype):
    params = v["params"]
    cp = DataCopyExtParams(**params["DataCopyExtParams"])
    nd = Nd2NzParams(**params["Nd2NzParams"])
    ws_expected = v["workspace"]["expected"]
    # the vector prints never-written workspace halves as 0; the spec (4.6) makes them undefined
    ws_want = [None if x == 0 else x for x in ws_expected]
    for user_ws in (False, True):
        dst = _tensor(pipe, v["dst"], dtype)
        given = GlobalTensor(np.full(len(ws_expected), 7, dtype)) if user_ws else None
        ws = DataCopyPad(dst, src, cp, nd, workspace=given)
        data, defined = _bytes(dst)
        check_elements(data, defined, v["expected"], dtype, v.get("undefined_indices", ()), poison=pipe.poison)
        assert pipe.state["pad_workspace"] is ws
        if user_ws:
            assert ws is given
        n = (nd.nValue - 1) * nd.srcDValue + nd.dValue  # elements the two stages use (= 352)
        assert ws.size == (n if not user_ws else len(ws_expected))
        wdata, wdef = _bytes(ws)
        es = np.dtype(dtype).itemsize
        check_elements(wdata[:n * es], wdef[:n * es], ws_want[:n], dtype, what="workspace",
                       poison=ws.memory.poison)
        if user_ws:  # bytes beyond the two stages' range are untouched
            assert (ws.numpy()[n:] == 7).all() and ws.defined()[n:].all()


def test_vectors_found():
    ids = {v["id"] for v in PAD_VECTORS}
    assert {"datacopypad_half_calling_example", "datacopypad_gm2ub_example1", "datacopypad_gm2ub_example2",
            "datacopypad_gm2ub_example3", "datacopypad_ub2gm_example1", "datacopypad_ub2gm_example2",
            "datacopypad_ub2tscm_nd2nz_example", "datacopypad_int8_normal_mode",
            "datacopypad_int8_compact_mode"} <= ids


def test_normal_vs_compact_sizes():
    """Page: 3 x 48 bytes, rightPadding 16 -> 192 bytes in Normal, 160 in Compact (144 + 16 tail)."""
    pipe = TPipe(product="ATLAS_350")
    src = GlobalTensor((np.arange(144) - 72).astype(np.int8))
    cp = DataCopyExtParams(3, 48, 0, 0, 0)
    pp = DataCopyPadExtParams(True, 0, 16, 5)
    for mode, size in ((PaddingMode.Normal, 192), (PaddingMode.Compact, 160)):
        dst = pipe.alloc("VECIN", "int8_t", 256)
        dst.numpy()[:] = 99
        dst.set_defined()
        DataCopyPad(dst, src, cp, pp, mode=mode)
        out = dst.numpy()
        assert (out[size:] == 99).all() and out[size - 1] == 5
        assert dst.defined().all()

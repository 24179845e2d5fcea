"""The 15 worked examples of the cube-in pages (tests/data/cube_in_vectors.json), bit for bit through the public
API, on every product each one lists."""

from __future__ import annotations

import json
import pathlib
import re
import warnings

import numpy as np
import pytest

import fastcopy as fc
from fastcopy.products import SET_LOAD_DATA_REPEAT

DATA = json.loads((pathlib.Path(__file__).resolve().parent / "data" / "cube_in_vectors.json").read_text())
VECTORS = DATA["vectors"]
DTYPES = {"half": np.float16, "float": np.float32, "uint8_t": np.uint8}
PRODUCTS = {"910": "ATLAS_TRAINING", "310P": "ATLAS_INFERENCE_AICORE", "A2": "ATLAS_A2", "A3": "ATLAS_A3",
            "310B": "ATLAS_200I_500_A2", "350": "ATLAS_350"}


def _init(text: str, length: int, dt):
    m = re.match(r"NZ image of (A\^T|B|arange\(0,\s*\d+\)\.reshape\((\d+),\s*(\d+)\))", text)
    if text.startswith("NZ image of"):
        rows, cols = {"A^T": (16, 16), "B": (32, 32)}.get(m[1], (None, None))
        if rows is None:
            rows, cols = int(m[2]), int(m[3])
        a = np.arange(rows * cols).reshape(rows, cols)  # "A^T = arange(...)": the stored matrix is the arange
        return fc.to_nz(a.astype(dt)).reshape(-1)
    m = re.match(r"arange\((\d+),\s*(\d+)\)(?:\s*%\s*(\d+))?", text)
    if m:
        v = np.arange(int(m[1]), int(m[2]))
        if m[3]:
            v = v % int(m[3])
        return v.astype(dt)
    m = re.match(r"fill\((-?\d+)\)", text)
    return np.full(length, int(m[1])).astype(dt)


def _params(api_params: dict):
    (name, fields), = api_params.items()
    fields = dict(fields)
    cls = getattr(fc, name)
    if name.startswith("LoadData3D") and "padList" in fields:
        fields["padList"] = tuple(fields["padList"])
    return cls(**fields)


def _tensor(pipe, spec, dt):
    values = _init(spec["init"], spec["length"], dt)
    assert values.size == spec["length"]
    if spec["position"] == "GM":
        return fc.GlobalTensor(values.copy())
    t = pipe.alloc(spec["position"], dt, spec["length"])
    t.numpy()[:] = values
    t.set_defined()
    return t


def _state(pipe, state, dt):
    if pipe.product is fc.Product.ATLAS_350 and not any(k.startswith("LoadDataRepeat") for k in state or {}):
        # These vectors assume one repeat; on Atlas 350 the repeat register has no default (fastcopy refuses a 3D
        # load before SetLoadDataRepeat, docs/cube-in.md), so the kernel sets it as a real 350 kernel must.
        fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(), pipe=pipe)
    for key, value in (state or {}).items():
        if key == "LoadDataRepeat":
            if pipe.product not in SET_LOAD_DATA_REPEAT:  # 310P: no setter, the register is always repeat 1
                assert value == {"repeatTime": 1, "repeatStride": 0, "repeatMode": 0}
                continue
            fc.SetLoadDataRepeat(fc.LoadDataRepeatParam(**value), pipe=pipe)
        elif key == "LoadDataRepeatWithStride":
            fc.SetLoadDataRepeatWithStride(fc.LoadDataRepeatParamWithStride(**value), pipe=pipe)
        elif key == "SetLoadDataPaddingValue":
            fc.SetLoadDataPaddingValue(dt(value), pipe=pipe)


def _run(v, product):
    dt = DTYPES[v["dtype"]]
    pipe = fc.TPipe(product=PRODUCTS[product])
    src, dst = _tensor(pipe, v["src"], dt), _tensor(pipe, v["dst"], dt)
    state = v.get("state") or {}
    _state(pipe, state, dt)
    config = state.get("defaultConfig")
    kwargs = {"config": fc.IsResetLoad3dConfig(**config)} if config else {}
    api = v["api"].split("(")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fc.FastCopyWarning)
        if "calls" in v:
            for call in v["calls"]:
                fc.LoadData(dst[call["dst_offset"]], src[call["src_offset"]], _params(
                    {k: c for k, c in call.items() if k.startswith("LoadData")}))
            return dst
        params = _params({k: p for k, p in v["params"].items() if not k.startswith("equivalent")})
        if api == "DataCopy":
            fc.DataCopy(dst, src, params)
        else:
            getattr(fc, api)(dst, src, params, **kwargs)
        if "equivalent_LoadData2dTransposeParamsV2" in v["params"] and product == "350":
            dst2 = _tensor(pipe, v["dst"], dt)
            fc.LoadDataWithTranspose(dst2, src, fc.LoadData2dTransposeParamsV2(
                **v["params"]["equivalent_LoadData2dTransposeParamsV2"]))
            assert np.array_equal(dst2.numpy().view(np.uint8), dst.numpy().view(np.uint8))
    return dst


CASES = [(v, p) for v in VECTORS for p in v["products"]]


@pytest.mark.parametrize("v,product", CASES, ids=[f"{v['name']}-{p}" for v, p in CASES])
def test_vector(v, product):
    dt = DTYPES[v["dtype"]]
    dst = _run(v, product)
    want = np.array(v["expected"]["dst"]).astype(dt)
    got = dst.numpy()
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    assert dst.defined().all() if callable(getattr(dst, "defined", None)) else True


def test_all_fifteen_vectors_present():
    assert len(VECTORS) == 15

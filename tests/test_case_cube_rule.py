"""The ``mmad`` compare rule's options from a case file: bias, a K loop (k_chunks), transposed operands, and
its errors at verify time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.cube.bound import check_mmad, conversion_allowance, mmad_tolerance
from fastcopy.golden import case_from_dict, run_program, write_result
from fastcopy.golden.verify import CompareError, compare


def _matmul_doc(bias: bool, k_loop: bool, compare_rule: dict) -> dict:
    """16 x 32 x 16 half matmul; B given transposed (N x K); optional bias (GM -> L1 -> BiasTable); the K loop
    as two Mmads of k = 16 (the second accumulates)."""
    bufs = {
        "aGm": {"dtype": "half", "shape": [16, 32], "init": {"kind": "uniform", "low": -1.0, "high": 1.0}},
        "btGm": {"dtype": "half", "shape": [16, 32], "init": {"kind": "uniform", "low": -1.0, "high": 1.0}},
        "cGm": {"dtype": "half", "shape": [16, 16]},
        "a1": {"position": "A1", "dtype": "half", "count": 512},
        "b1": {"position": "B1", "dtype": "half", "count": 512},
        "a2": {"position": "A2", "dtype": "half", "count": 512},
        "b2": {"position": "B2", "dtype": "half", "count": 512},
        "c1": {"position": "CO1", "dtype": "float", "count": 256},
    }
    nd = {"ndNum": 1, "nValue": 16, "dValue": 32, "srcNdMatrixStride": 0, "srcDValue": 32, "dstNzC0Stride": 16,
          "dstNzNStride": 1, "dstNzMatrixStride": 0}
    ops = [{"api": "DataCopy", "dst": "a1", "src": "aGm", "params": {"Nd2NzParams": nd}},
           {"api": "DataCopy", "dst": "b1", "src": "btGm", "params": {"Nd2NzParams": nd}},
           # A: 1 x 2 fractals, Zz = Nz here (one fractal row); B^T's Nz fractals are B's Zn fractals transposed
           {"api": "LoadData", "dst": "a2", "src": "a1", "params": {"LoadData2DParams": {"repeatTimes": 2, "srcStride": 1}}},
           {"api": "LoadData", "dst": "b2", "src": "b1", "params": {"LoadData2DParams": {"repeatTimes": 2, "srcStride": 1}}}]
    first = {"m": 16, "n": 16, "k": 16 if k_loop else 32}
    if bias:
        bufs["biasGm"] = {"dtype": "float", "shape": [16], "init": {"kind": "uniform", "low": -4.0, "high": 4.0}}
        bufs["bias1"] = {"position": "C1", "dtype": "float", "count": 16}
        bufs["bt"] = {"position": "C2", "dtype": "float", "count": 16}
        ops += [{"api": "DataCopy", "dst": "bias1", "src": "biasGm", "params": {"count": 16}},
                {"api": "DataCopy", "dst": "bt", "src": "bias1", "params": {"count": 16}},
                {"api": "Mmad", "dst": "c1", "a": "a2", "b": "b2", "bias": "bt",
                 "params": {"MmadParams": {**first, "cmatrixInitVal": False}}}]
    else:
        ops.append({"api": "Mmad", "dst": "c1", "a": "a2", "b": "b2", "params": {"MmadParams": first}})
    if k_loop:
        ops.append({"api": "Mmad", "dst": "c1", "a": "a2[256]", "b": "b2[256]", "params": {"MmadParams": {
            "m": 16, "n": 16, "k": 16, "cmatrixInitVal": False}}})
    ops.append({"api": "Fixpipe", "dst": "cGm", "src": "c1", "params": {"FixpipeParamsV220": {
        "nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16, "quantPre": "F322F16"}}})
    return {"product": "ATLAS_A2", "seed": 3, "buffers": bufs, "ops": ops,
            "outputs": [{"buffer": "cGm", "compare": compare_rule}]}


def _golden(tmp_path, doc):
    res = run_program(case_from_dict(doc).point(0))
    write_result(res, str(tmp_path))
    return json.loads((tmp_path / "manifest.json").read_text())


def _inputs(folder, bias):
    a = np.fromfile(folder / "input/aGm.bin", np.float16).reshape(16, 32)
    b = np.fromfile(folder / "input/btGm.bin", np.float16).reshape(16, 32).T
    c0 = np.fromfile(folder / "input/biasGm.bin", np.float32) if bias else np.zeros(16, np.float32)
    return a, b, np.broadcast_to(c0.astype(np.float64), (16, 16))


@pytest.mark.parametrize("bias,k_loop", [(True, False), (False, True), (True, True)])
def test_rule_options_match_the_independent_bound(tmp_path, bias, k_loop, capsys):
    rule = {"rule": "mmad", "a": "aGm", "b": "btGm", "transpose_b": True}
    if bias:
        rule["bias"] = "biasGm"
    if k_loop:
        rule["k_chunks"] = [16, 16]
    _golden(tmp_path, _matmul_doc(bias, k_loop, rule))
    a, b, c0 = _inputs(tmp_path, bias)
    c = np.fromfile(tmp_path / "output/golden.bin", np.float16).reshape(16, 16)
    ref = a.astype(np.float64) @ b.astype(np.float64) + c0  # numpy, independent of fastcopy
    tol = mmad_tolerance(a, b, 16, c0=c0, k_chunks=[16, 16] if k_loop else None)
    assert check_mmad(c, ref, tol + conversion_allowance(ref, np.float16)).ok
    hw = (a.astype(np.float32) @ b.astype(np.float32) + c0.astype(np.float32)).astype(np.float16)
    f = tmp_path / "hw.bin"
    hw.tofile(f)
    assert main(["verify", str(f), str(tmp_path)]) == 0
    worst = np.unravel_index(int(np.argmax(np.abs(ref))), ref.shape)
    hw[worst] = np.float16(float(hw[worst]) * 1.01)  # a 1 % error on the largest element: far outside the bound
    hw.tofile(f)
    assert main(["verify", str(f), str(tmp_path)]) == 1


def test_rule_without_transpose_sees_k_mismatch(tmp_path):
    man = _golden(tmp_path, _matmul_doc(False, False, {"rule": "mmad", "a": "aGm", "b": "btGm"}))
    entry = next(b for b in man["buffers"] if b["name"] == "cGm")
    golden = np.fromfile(tmp_path / "output/golden.bin", np.float16)
    with pytest.raises(CompareError, match="k differs"):
        compare(golden, golden, np.float16, rule="mmad",
                context={"entry": entry, "folder": str(tmp_path), "manifest": man})


def test_rule_without_options_says_what_it_needs():
    x = np.zeros(4, np.float16)
    with pytest.raises(CompareError, match=r"needs the matmul's operands"):
        compare(x, x, np.float16, rule="mmad", context={"entry": {"compare": "mmad"}})

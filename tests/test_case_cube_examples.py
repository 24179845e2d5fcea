"""The matmul case files of examples/ run through ``fastcopy run`` and compared with independent numpy
computations (the Python-API examples' checks), and ``fastcopy verify`` with the case's ``mmad`` compare rule."""

from __future__ import annotations

import json
import pathlib

import numpy as np

from fastcopy.cli import main
from fastcopy.cube.bound import check_mmad, conversion_allowance, mmad_tolerance

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def _run(name, folder):
    assert main(["run", str(EXAMPLES / f"{name}.toml"), "-o", str(folder), "-q"]) == 0
    return json.loads((folder / "manifest.json").read_text())


def _read(folder, name, dtype, shape):
    return np.fromfile(folder / name, dtype).reshape(shape)


def test_half_matmul_relu_case_against_numpy(tmp_path):
    man = _run("matmul_kernel", tmp_path)
    a = _read(tmp_path, "input/aGm.bin", np.float16, (64, 96))
    b = _read(tmp_path, "input/bGm.bin", np.float16, (96, 80))
    c = _read(tmp_path, "output/golden.bin", np.float16, (64, 80))
    assert np.fromfile(tmp_path / "output/golden.mask.bin", np.uint8).all()
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0)  # independent of fastcopy
    tol = mmad_tolerance(a, b, 16) + conversion_allowance(ref, np.float16)
    verdict = check_mmad(c, ref, tol)
    assert verdict.ok, verdict
    assert (c >= 0).all() and (c == 0).any() and (c > 0).any()
    out = next(x for x in man["buffers"] if x["name"] == "cGm")
    assert out["compare"] == "mmad" and out["compare_options"] == {"a": "aGm", "b": "bGm"}
    ops = [o["api"] for o in man["ops"]]
    assert ops[-2:] == ["Mmad", "Fixpipe"] and man["ops"][-2]["b"] == "b2"


def test_int8_requant_case_against_numpy(tmp_path):
    _run("matmul_int8_kernel", tmp_path)
    a = _read(tmp_path, "input/aGm.bin", np.int8, (48, 64))
    bt = _read(tmp_path, "input/btGm.bin", np.int8, (32, 64))
    c = _read(tmp_path, "output/golden.bin", np.int8, (48, 32))
    acc = a.astype(np.int64) @ bt.T.astype(np.int64)  # exact
    ref = np.clip(np.rint(np.clip(acc / 1024, -256, 255)) - 3, -128, 127)
    verdict = check_mmad(c, ref, conversion_allowance(ref, np.int8))
    assert verdict.ok, verdict
    assert np.array_equal(c, ref.astype(np.int8))  # 2^-10 is exact in the scale word: bit-exact here


def test_verify_uses_the_case_mmad_rule(tmp_path, capsys):
    """A float32-accumulated (reordered) result passes the case's rule where bit-exactness fails; a wrong one
    fails it."""
    gold = tmp_path / "g"
    _run("matmul_kernel", gold)
    a = _read(gold, "input/aGm.bin", np.float16, (64, 96))
    b = _read(gold, "input/bGm.bin", np.float16, (96, 80))
    golden = _read(gold, "output/golden.bin", np.float16, (64, 80))
    acc = np.zeros((64, 80), np.float32)  # the hardware's way: float32 partial sums of 16-deep fractals
    for s in range(0, 96, 16):
        acc = (acc + a[:, s:s + 16].astype(np.float32) @ b[s:s + 16].astype(np.float32)).astype(np.float32)
    hw = np.maximum(acc, 0).astype(np.float16)
    hw_file = tmp_path / "hw.bin"
    hw.tofile(hw_file)
    assert main(["verify", str(hw_file), str(gold)]) == 0
    assert "by rule mmad" in capsys.readouterr().out
    if not np.array_equal(hw, golden):  # the bound is what makes it pass
        assert main(["verify", str(hw_file), str(gold), "--compare", "exact"]) == 1
    bad = golden.copy()
    bad[3, 7] = np.float16(float(bad[3, 7]) + 0.25)
    bad.tofile(hw_file)
    capsys.readouterr()
    assert main(["verify", str(hw_file), str(gold)]) == 1
    assert "(3, 7)" in capsys.readouterr().out


def test_verify_int8_rule_allows_one_step(tmp_path):
    gold = tmp_path / "g"
    _run("matmul_int8_kernel", gold)
    golden = _read(gold, "output/golden.bin", np.int8, (48, 32))
    off = golden.astype(np.int16)
    off[0, 0] += 1 if off[0, 0] < 127 else -1
    f = tmp_path / "hw.bin"
    off.astype(np.int8).tofile(f)
    assert main(["verify", str(f), str(gold)]) == 0
    off[1, 1] += 2 if off[1, 1] < 126 else -2
    off.astype(np.int8).tofile(f)
    assert main(["verify", str(f), str(gold)]) == 1


def test_check_lists_the_cube_steps(capsys):
    assert main(["check", str(EXAMPLES / "matmul_kernel.toml")]) == 0
    out = capsys.readouterr().out
    assert "ops[4] Mmad(c1, a2, b2)" in out and "ops[5] Fixpipe(cGm, c1)" in out

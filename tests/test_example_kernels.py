"""The kernel examples (a multi-core tiled kernel with a loop, a vector kernel with a compute step, a matmul-style
ND2NZ kernel), run as a user would, checked bit for bit against an independent numpy computation; and their
Python-API gen_data.py equivalents."""

from __future__ import annotations

import json
import pathlib
import runpy

import numpy as np
import pytest

from fastcopy.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
EX = ROOT / "examples"


def load(folder, rel, dtype):
    m = json.loads((folder / "manifest.json").read_text())
    entry = next(b for b in m["buffers"] if b.get("file") == rel)
    return np.fromfile(folder / rel, dtype).reshape(entry["shape"])


def all_defined(folder, rel):
    return bool(np.fromfile(folder / rel.replace(".bin", ".mask.bin"), np.uint8).all())


def same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def run_example(name, tmp_path, *extra):
    out = tmp_path / name
    assert main(["run", str(EX / f"{name}.toml"), "-o", str(out), "-q", "--strict", *extra]) == 0
    return out


def test_multicore_tiles(tmp_path):
    out = run_example("multicore_tiles", tmp_path)
    x = load(out, "input/xGm.bin", np.float16)
    assert same_bits(load(out, "output/yGm.bin", np.float16), x)
    padded = np.concatenate([x, np.zeros((64, 11), np.float16)], axis=1)
    assert same_bits(load(out, "output/tileGm.bin", np.float16), padded)
    assert all_defined(out, "output/yGm.bin") and all_defined(out, "output/tileGm.bin")
    m = json.loads((out / "manifest.json").read_text())
    assert m["blocks"] == 4 and len(m["ops"]) == 4 * 4 * 3
    assert m["ops"][-1]["env"] == {"block_idx": 3, "i": 3} and m["ops"][-1]["at"] == "ops[0].body[2]"


def test_vector_add_with_a_compute_step(tmp_path, capsys):
    assert main(["run", str(EX / "vector_add.toml"), "-o", str(tmp_path / "no"), "-q"]) == 1
    assert "--allow-python" in capsys.readouterr().err and not (tmp_path / "no").exists()
    out = run_example("vector_add", tmp_path, "--allow-python")
    x, y = load(out, "input/xGm.bin", np.float16), load(out, "input/yGm.bin", np.float16)
    expected = (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16)
    assert same_bits(load(out, "output/golden.bin", np.float16), expected)
    assert all_defined(out, "output/golden.bin")


def test_matmul_nd2nz(tmp_path):
    out = run_example("matmul_nd2nz", tmp_path, "--allow-python")
    a, b = load(out, "input/aGm.bin", np.float16), load(out, "input/bGm.bin", np.float16)
    # NZ: [C0 block][row][16 elements]
    a_nz = np.stack([a[k * 32:(k + 1) * 32].reshape(32, 4, 16).transpose(1, 0, 2) for k in range(2)])
    b_nz = b.reshape(64, 2, 16).transpose(1, 0, 2)  # both cores wrote it with the same values
    assert same_bits(load(out, "output/aNzGm.bin", np.float16), a_nz)
    assert same_bits(load(out, "output/bNzGm.bin", np.float16), b_nz)
    c = np.concatenate([a[k * 32:(k + 1) * 32].astype(np.float32) @ b.astype(np.float32) for k in range(2)])
    assert same_bits(load(out, "output/cGm.bin", np.float32), c)
    m = json.loads((out / "manifest.json").read_text())
    assert next(e for e in m["buffers"] if e["name"] == "cGm")["rtol"] == 1e-6


def test_gen_data_vector_add(tmp_path):
    mod = runpy.run_path(str(EX / "gen_data_vector_add.py"))
    mod["main"](str(tmp_path / "py"))
    out = tmp_path / "py"
    x, y = np.fromfile(out / "input/x.bin", np.float16), np.fromfile(out / "input/y.bin", np.float16)
    z = np.fromfile(out / "output/golden.bin", np.float16)
    assert same_bits(z, (x.astype(np.float32) + y.astype(np.float32)).astype(np.float16))
    assert all_defined(out, "output/golden.bin")


def test_gen_data_matmul_nd2nz(tmp_path):
    mod = runpy.run_path(str(EX / "gen_data_matmul_nd2nz.py"))
    mod["main"](str(tmp_path / "py"))
    out = tmp_path / "py"
    a = np.fromfile(out / "input/a.bin", np.float16).reshape(64, 64)
    b = np.fromfile(out / "input/b.bin", np.float16).reshape(64, 32)
    a_nz = np.stack([a[k * 32:(k + 1) * 32].reshape(32, 4, 16).transpose(1, 0, 2) for k in range(2)])
    assert same_bits(np.fromfile(out / "output/aNz.bin", np.float16).reshape(a_nz.shape), a_nz)
    b_nz = b.reshape(64, 2, 16).transpose(1, 0, 2)
    assert same_bits(np.fromfile(out / "output/bNz.bin", np.float16).reshape(b_nz.shape), b_nz)
    c = np.concatenate([a[k * 32:(k + 1) * 32].astype(np.float32) @ b.astype(np.float32) for k in range(2)])
    assert same_bits(np.fromfile(out / "output/c.bin", np.float32).reshape(c.shape), c)
    for f in ("aNz", "bNz", "c"):
        assert all_defined(out, f"output/{f}.bin")


@pytest.mark.parametrize("name", ["vector_add", "matmul_nd2nz"])
def test_the_case_file_and_the_python_script_compute_the_same(tmp_path, name):
    """The case file run with the script's inputs gives the script's outputs (same program, two spellings)."""
    mod = runpy.run_path(str(EX / f"gen_data_{name}.py"))
    mod["main"](str(tmp_path / "py"))
    text = (EX / f"{name}.toml").read_text()
    names = {"vector_add": {"xGm": "x", "yGm": "y"}, "matmul_nd2nz": {"aGm": "a", "bGm": "b"}}[name]
    for buf, f in names.items():
        text = text.replace(f"[buffers.{buf}]\n", f"[buffers.{buf}]\n#\n", 1)
        start = text.index(f"[buffers.{buf}]")
        init = text.index("init = ", start)
        end = text.index("\n", init)
        text = text[:init] + f'init = {{kind = "file", path = "{tmp_path / "py" / "input" / (f + ".bin")}"}}' + \
            text[end:]
    case = tmp_path / f"{name}.toml"
    case.write_text(text)
    for extra in EX.glob(f"{name}_compute.py"):
        (tmp_path / extra.name).write_text(extra.read_text())
    assert main(["run", str(case), "-o", str(tmp_path / "case"), "-q", "--allow-python"]) == 0
    outs = {"vector_add": [("golden", "golden")], "matmul_nd2nz": [("aNzGm", "aNz"), ("cGm", "c")]}[name]
    for mine, theirs in outs:
        assert (tmp_path / "case" / "output" / f"{mine}.bin").read_bytes() == \
            (tmp_path / "py" / "output" / f"{theirs}.bin").read_bytes()

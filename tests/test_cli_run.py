"""``fastcopy run``, ``fastcopy demo`` and the command entry points."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np

import fastcopy
from fastcopy.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_run_prints_what_it_wrote(tmp_path, capsys):
    assert main(["run", str(ROOT / "examples" / "slice_rows.toml"), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "slice_rows (Atlas A2, seed 0 (default))" in out
    assert "input/xGm.bin" in out and "int32_t[3, 87]" in out and "96/96 defined" in out
    assert "output/golden.mask.bin" in out and "manifest.json" in out
    y = np.fromfile(tmp_path / "output" / "golden.bin", np.int32).reshape(2, 48)
    x = np.arange(261, dtype=np.int32).reshape(3, 87)
    assert np.array_equal(y, np.concatenate([x[[0, 2], 16:40], x[[0, 2], 47:71]], axis=1))


def test_run_sweep_writes_a_folder_per_point_and_point_selects_one(tmp_path, capsys):
    sweep = ROOT / "examples" / "matmul_a_nd2nz_sweep.toml"
    assert main(["run", str(sweep), "-o", str(tmp_path / "all"), "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [f"{i:04d}" for i in range(18)]
    assert main(["run", str(sweep), "-o", str(tmp_path / "one"), "--point", "5"]) == 0
    out = capsys.readouterr().out
    assert [p.name for p in (tmp_path / "one").iterdir()] == ["0005"]
    assert "matmul_a_nd2nz_sweep#5 (dt=half, m=20, k=64)" in out
    same = [(tmp_path / d / "0005" / "output" / "golden.bin").read_bytes() for d in ("all", "one")]
    assert same[0] == same[1]
    assert main(["run", str(sweep), "-o", str(tmp_path / "x"), "--point", "18"]) == 1
    assert "--point 18 outside [0, 18)" in capsys.readouterr().err


def test_default_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(ROOT / "examples" / "slice_rows.toml"), "-q"]) == 0
    assert (tmp_path / "out" / "slice_rows" / "manifest.json").is_file()


def test_demo_writes_nd2nz_golden_data(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "ND2NZ of a 20 x 40 half matrix" in out and "576 of 1536 elements" in out
    assert "fastcopy verify" in out
    a = np.fromfile(tmp_path / "input" / "aGm.bin", np.float16).reshape(20, 40)
    z = np.fromfile(tmp_path / "output" / "golden.bin", np.float16).reshape(3, 32, 16)
    mask = np.fromfile(tmp_path / "output" / "golden.mask.bin", np.uint8).reshape(3, 32, 16)
    padded = np.zeros((20, 48), np.float16)
    padded[:, :40] = a
    assert np.array_equal(z[:, :20], padded.reshape(20, 3, 16).transpose(1, 0, 2))
    assert mask[:, :20].all() and not mask[:, 20:].any()


def test_demo_falls_back_to_basic_datacopy_without_nd2nz(tmp_path, capsys, monkeypatch):
    def not_there(*args, **kwargs):
        raise NotImplementedError("DataCopy(Nd2NzParams) is not implemented yet")

    monkeypatch.setattr(fastcopy.ops.nz, "plan_nd2nz", not_there)
    assert main(["demo", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "basic DataCopy" in out and "ND2NZ is not available" in out
    y = np.fromfile(tmp_path / "output" / "golden.bin", np.float16)
    mask = np.fromfile(tmp_path / "output" / "golden.mask.bin", np.uint8)
    assert np.array_equal(y[:128], np.arange(1, 129, dtype=np.float16)) and mask[:128].all()
    assert not mask[128:144].any() and mask[144:272].all() and not mask[272:].any()


def test_demo_into_a_temporary_folder_cleans_up(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    folder = next(ln.split()[1].rstrip(":") for ln in out.splitlines() if ln.startswith("wrote "))
    assert not pathlib.Path(folder).exists() and "fastcopy demo -o DIR keeps it" in out


def test_demo_with_o_keeps_the_folder(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "manifest.json").is_file()
    assert f"fastcopy verify <output.bin> {tmp_path / 'd'}" in capsys.readouterr().out


def test_python_dash_m_fastcopy(tmp_path):
    res = subprocess.run([sys.executable, "-m", "fastcopy", "run", str(ROOT / "examples" / "slice_rows.toml"),
                          "-o", str(tmp_path), "-q"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "output" / "golden.bin").is_file()
    res = subprocess.run([sys.executable, "-m", "fastcopy", "--version"], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0 and fastcopy.__version__ in res.stdout


def test_usage_errors_exit_2(capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        main(["run"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["nosuchcommand"])
    assert info.value.code == 2
    capsys.readouterr()

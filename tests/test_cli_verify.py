"""``fastcopy verify``: bit-exact over defined positions, exit 0/1, mismatch reports."""

from __future__ import annotations

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.golden.verify import compare


def _files(tmp_path, golden, actual, mask=None):
    g, a = tmp_path / "golden.bin", tmp_path / "out.bin"
    np.asarray(golden).tofile(g)
    np.asarray(actual).tofile(a)
    if mask is not None:
        np.asarray(mask, np.uint8).tofile(tmp_path / "golden.mask.bin")
    return str(a), str(g)


def test_equal_files_pass(tmp_path, capsys):
    x = np.arange(1024, dtype=np.float16)
    a, g = _files(tmp_path, x, x)
    assert main(["verify", a, g, "--dtype", "half"]) == 0
    out = capsys.readouterr().out
    assert "PASS: 1024 of 1024 half elements bit-exact" in out and "no mask" in out


def test_unequal_files_fail_with_index_coordinate_block_and_values(tmp_path, capsys):
    x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    y = x.copy()
    y[3, 5] = 1.5
    y[40, 31] = -0.0 if x[40, 31] == 0 else x[40, 31] + 1
    a, g = _files(tmp_path, x, y)
    assert main(["verify", a, g, "--dtype", "float", "--shape", "64", "32"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 2 of 2048 defined float elements differ" in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("101 "))
    flat = 3 * 32 + 5
    assert line.split()[:4] == [str(flat), "(3,", "5)", str(flat * 4)]
    assert f"{flat * 4 // 32}" in line.split() and "101.0 (0x42ca0000)" in line and "1.5 (0x3fc00000)" in line
    assert "(40, 31)" in out


def test_mismatch_only_at_undefined_positions_passes(tmp_path, capsys):
    x = np.arange(256, dtype=np.int16)
    y = x.copy()
    y[10:20] = -1
    mask = np.ones(256, np.uint8)
    mask[10:20] = 0
    a, g = _files(tmp_path, x, y, mask)
    assert main(["verify", a, g, "--dtype", "int16_t"]) == 0  # the sibling golden.mask.bin is found
    out = capsys.readouterr().out
    assert "PASS: 246 of 256" in out and "10 undefined positions skipped" in out and "golden.mask.bin" in out
    assert main(["verify", a, g, "--dtype", "int16_t", "--no-mask"]) == 1
    assert "FAIL: 10 of 256 defined" in capsys.readouterr().out
    mask[12] = 1
    mask.tofile(tmp_path / "m2.bin")
    assert main(["verify", a, g, "--dtype", "int16_t", "--mask", str(tmp_path / "m2.bin")]) == 1
    assert "FAIL: 1 of 247 defined" in capsys.readouterr().out


def test_bits_not_values_are_compared():
    nan_a = np.array([0x7E00], np.uint16).view(np.float16)
    nan_b = np.array([0x7E01], np.uint16).view(np.float16)
    assert not compare(nan_b, nan_a, np.float16).ok  # another NaN payload
    assert compare(nan_a, nan_a.copy(), np.float16).ok  # NaN == NaN bitwise
    assert not compare(np.array([-0.0], np.float32), np.array([0.0], np.float32), np.float32).ok
    bf = np.array([1.0, 2.0]).astype("bfloat16")
    assert compare(bf, bf.copy(), bf.dtype).ok


@pytest.mark.parametrize("golden_n, actual_n, words", [(100, 99, "the output has 99 elements, the golden 100"),
                                                        (100, 100, None)])
def test_size_mismatch_fails(tmp_path, capsys, golden_n, actual_n, words):
    a, g = _files(tmp_path, np.zeros(golden_n, np.float32), np.zeros(actual_n, np.float32))
    rc = main(["verify", a, g, "--dtype", "float"])
    assert rc == (1 if words else 0)
    if words:
        assert words in capsys.readouterr().out


def test_bad_inputs_fail_cleanly(tmp_path, capsys):
    a, g = _files(tmp_path, np.zeros(8, np.float32), np.zeros(8, np.float32))
    # trouble (not a verdict on the data) exits 2, like cmp, and goes to stderr
    assert main(["verify", a, g]) == 2  # no dtype and no manifest
    assert "give --dtype" in capsys.readouterr().err
    assert main(["verify", a, str(tmp_path / "nope.bin"), "--dtype", "float"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["verify", a, g, "--dtype", "float", "--shape", "3", "3"]) == 2
    assert "shape (3, 3) has 9 elements" in capsys.readouterr().err
    assert main(["verify", a, g, "--dtype", "float128x"]) == 2
    assert main(["verify", a, g, "--dtype", "flaot"]) == 2
    assert "did you mean 'float'?" in capsys.readouterr().err


def test_golden_folder_gives_dtype_shape_and_mask(tmp_path, capsys):
    """Against a fastcopy golden folder only the two paths are needed."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    assert main(["demo", "-o", str(tmp_path / "g")]) == 0
    capsys.readouterr()
    golden = tmp_path / "g" / "output" / "golden.bin"
    mask = np.fromfile(tmp_path / "g" / "output" / "golden.mask.bin", np.uint8)
    data = np.fromfile(golden, np.uint16)
    kernel = data.copy()
    kernel[mask == 0] = 0  # what a kernel leaves in undefined places does not matter
    kernel.tofile(tmp_path / "k.bin")
    assert main(["verify", str(tmp_path / "k.bin"), str(golden)]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "undefined positions skipped" in out and "shape (" in out
    kernel[np.flatnonzero(mask)[7]] ^= 1
    kernel.tofile(tmp_path / "k.bin")
    assert main(["verify", str(tmp_path / "k.bin"), str(golden)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 of" in out
    del root


def test_max_report_limits_the_table(tmp_path, capsys):
    a, g = _files(tmp_path, np.zeros(100, np.int32), np.ones(100, np.int32))
    assert main(["verify", a, g, "--dtype", "int32_t", "--max-report", "3"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 100 of 100" in out and "... 97 more" in out

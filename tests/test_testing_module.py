"""fastcopy.testing (issue 12 item 12) and tolerances (item 5): assert_golden_equal with verify's report, a
Comparison that is truthy on PASS, tolerances from arguments or from the case, undefined elements skipped,
pluggable compare rules."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.golden import write_golden
from fastcopy.golden.verify import RULES, compare, register_rule
from fastcopy.testing import GoldenMismatch, assert_golden_equal, compare_golden

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def golden(tmp_path):
    c = np.linspace(-2, 2, 64, dtype=np.float32).reshape(8, 8)
    mask = np.ones((8, 8), bool)
    mask[7] = False  # the last row undefined
    data = c.copy()
    data[7] = np.nan
    write_golden(str(tmp_path / "g"), {}, {"c": (data, mask)}, allow_undefined=True)
    return tmp_path / "g", c


def test_pass_is_truthy_and_undefined_elements_are_skipped(golden):
    folder, c = golden
    out = c.copy()
    out[7] = 123.0  # what a kernel leaves in undefined places does not matter
    cmp = assert_golden_equal(out, folder)
    assert cmp and cmp.defined == 56 and "PASS: 56 of 64 float elements bit-exact, 8 undefined" in str(cmp)
    assert compare_golden(out, folder / "output" / "golden.bin")


def test_failure_message_is_verifys_report(golden):
    folder, c = golden
    out = c.copy()
    out[2, 3] += 1
    with pytest.raises(GoldenMismatch) as info:
        assert_golden_equal(out, folder)
    text = str(info.value)
    assert "FAIL: 1 of 56 defined float elements differ" in text and "(2, 3)" in text
    assert not info.value.comparison and isinstance(info.value, AssertionError)


def test_tolerances_report_the_worst_mismatches(golden):
    folder, c = golden
    out = c + np.float32(1e-4)
    out[1, 1] += np.float32(0.5)
    assert not compare_golden(out, folder)
    cmp = compare_golden(out, folder, atol=1e-3)
    assert not cmp and cmp.mismatches == 1 and cmp.first[0].coord == (1, 1)
    out[1, 1] = c[1, 1]
    assert assert_golden_equal(out, folder, atol=1e-3)
    assert assert_golden_equal(out * np.float32(1 + 1e-6), folder, rtol=1e-4, atol=1e-3)
    text = compare_golden(out + (np.float32(0.01) * np.arange(64, dtype=np.float32)).reshape(8, 8), folder, atol=1e-3).report(3)
    assert "worst mismatches" in text and "|error|" in text
    lines = [ln.split() for ln in text.splitlines()[3:6]]
    assert [ln[1] for ln in lines] == ["(6,", "(6,", "(6,"]  # row 7 is undefined: the worst defined ones


def test_tolerances_from_the_case_file(tmp_path, capsys):
    assert main(["run", str(ROOT / "examples" / "matmul_nd2nz.toml"), "-o", str(tmp_path / "mm"), "-q",
                 "--allow-python"]) == 0
    c = np.fromfile(tmp_path / "mm" / "output" / "cGm.bin", np.float32)
    near = c * np.float32(1 + 5e-7)
    near.tofile(tmp_path / "k.bin")
    assert compare_golden(near, tmp_path / "mm", buffer="cGm")  # rtol = 1e-6 from the case
    assert not compare_golden(near, tmp_path / "mm", buffer="cGm", rtol=0, rule="exact")
    assert main(["verify", str(tmp_path / "k.bin"), str(tmp_path / "mm"), "--buffer", "cGm"]) == 0
    assert "within rtol=1e-06" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "k.bin"), str(tmp_path / "mm"), "--buffer", "cGm",
                 "--compare", "exact"]) == 1
    assert main(["verify", str(tmp_path / "k.bin"), str(tmp_path / "mm")]) == 2  # three outputs: which?
    assert "--buffer" in capsys.readouterr().err


def test_a_plugged_in_compare_rule(golden):
    folder, c = golden

    def within_ulps(actual, expected, *, rtol=0.0, atol=0.0, context=None):
        """at most 2 units in the last place"""
        d = np.abs(actual.view(np.int32).astype(np.int64) - expected.view(np.int32).astype(np.int64))
        return np.maximum(d - 2, 0).astype(np.float64)

    register_rule("ulp2", within_ulps, tolerant=False)
    try:
        out = (c.view(np.int32) + 2).view(np.float32)
        assert compare_golden(out, folder, rule="ulp2")
        assert not compare_golden((c.view(np.int32) + 3).view(np.float32), folder, rule="ulp2")
        with pytest.raises(Exception, match="takes no rtol/atol"):
            compare_golden(out, folder, rule="ulp2", rtol=1e-3)
    finally:
        RULES.pop("ulp2")
    with pytest.raises(Exception, match="unknown compare rule 'ulp3'"):
        compare(np.zeros(4, np.float32), np.zeros(4, np.float32), np.float32, rule="ulp3")


def test_old_verify_scripts_with_poison_zero_or_the_mask(tmp_path):
    """README: keep an old verify_result.py by applying the mask (or by running the case with poison = 0)."""
    text = (ROOT / "examples" / "matmul_a_nd2nz_sweep.toml").read_text().replace('product = "ATLAS_A2"',
                                                                                  'product = "ATLAS_A2"\npoison = 0')
    p = tmp_path / "c.toml"
    p.write_text(text)
    assert main(["run", str(p), "-o", str(tmp_path / "o"), "--point", "4", "-q"]) == 0
    g = np.fromfile(tmp_path / "o" / "0004" / "output" / "golden.bin", np.float16)
    mask = np.fromfile(tmp_path / "o" / "0004" / "output" / "golden.mask.bin", np.uint8).astype(bool)
    assert not mask.all() and (g[~mask] == 0).all() and not np.isnan(g).any()
    kernel = g.copy()
    kernel[~mask] = 7  # garbage where the hardware leaves bytes undefined
    assert np.allclose(kernel[mask], g[mask])  # the mask way


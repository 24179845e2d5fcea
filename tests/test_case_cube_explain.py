"""``fastcopy check`` and ``fastcopy explain`` on the cube-out steps of a case."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.errors import FastCopyError
from fastcopy.explain.case import explain_case

ROOT = pathlib.Path(__file__).resolve().parents[1]
MATMUL = ROOT / "examples" / "matmul_kernel.toml"
INT8 = ROOT / "examples" / "matmul_int8_kernel.toml"


def test_check_shows_what_mmad_and_fixpipe_wrote(capsys):
    assert main(["check", str(MATMUL)]) == 0
    out = capsys.readouterr().out
    mmad = out[out.index("ops[4] Mmad(c1, a2, b2)"):out.index("ops[5] Fixpipe")]
    assert "reads  a2" in mmad and "(a)" in mmad and "reads  b2" in mmad and "(b)" in mmad
    assert "writes c1           bytes [0, 20480)" in mmad  # the 64 x 80 float tile
    fix = out[out.index("ops[5] Fixpipe(cGm, c1)"):]
    assert "writes cGm          bytes [0, 10240)" in fix


def test_explain_describes_an_mmad_step():
    ex = explain_case(MATMUL, op=12)
    text = str(ex)
    assert text.startswith("op 12 = ops[4]: Mmad(c1, a2, b2, MmadParams(m=64, n=80, k=96))")
    assert "A as Zz, 4 x 6 fractals of 16 x 16" in text and "reads bytes [0, 12288)" in text
    assert "B as Zn, 6 x 5 fractals of 16 x 16" in text
    assert "writes the whole 64 x 80 tile, bytes [0, 20480)" in text
    assert "initial value C0: 0 (cmatrixInitVal=true)" in text and "binary64" in text


def test_explain_int8_mmad_numerics_and_fixpipe_picture():
    text = str(explain_case(INT8, op=7))
    assert "fractals of 16 x 32" in text and "exact integer products" in text
    pic = explain_case(INT8, op=8)  # the REQ8 Fixpipe: a picture, every element computed
    assert pic.counts()["copied"] == 48 * 32 and "REQ8: values are converted" in str(pic)
    # each output element is drawn with the L0C element it comes from: (i, j) <- (j//16)*48*16 + i*16 + j%16
    i, j = np.divmod(np.arange(48 * 32), 32)
    assert np.array_equal(pic.trace.origin, (j // 16) * 768 + i * 16 + j % 16)
    assert pic.read_span == (0, 1536)


def test_explain_cli_mmad_text_and_refuses_a_picture(tmp_path, capsys):
    assert main(["explain", str(MATMUL), "--op", "12"]) == 0
    assert "Mmad(c1, a2, b2" in capsys.readouterr().out
    txt = tmp_path / "mmad.txt"
    assert main(["explain", str(MATMUL), "--op", "12", "-o", str(txt)]) == 0
    assert "C[64 x 80]" in txt.read_text()
    assert main(["explain", str(MATMUL), "--op", "12", "-o", str(tmp_path / "mmad.png")]) == 1
    assert "text only" in capsys.readouterr().err


def test_explain_mmad_reports_a_parameter_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(MATMUL.read_text().replace("params.MmadParams = {m = 64, n = 80, k = 96}",
                                              "params.MmadParams = {m = 64, n = 80, k = 960}"))
    with pytest.raises(FastCopyError, match="Mmad"):
        explain_case(bad, op=12)

"""fastcopy.explain / ``fastcopy explain``: the picture agrees with the emulation, in text, PNG and SVG."""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np
import pytest

import fastcopy as fc
from fastcopy.cli import main
from fastcopy.explain import explain
from fastcopy.explain.trace import COMPUTED, COPY, FILL, UNDEFINED, UNTOUCHED

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _pipe(product="ATLAS_A2"):
    return fc.TPipe(product=product)


def _run_real(op, dst, src, *args, **kwargs):
    """Run the call for real on a copy-free setup and return (values, defined) of dst."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op(dst, src, *args, **kwargs)
    return np.array(dst.numpy(), copy=True).reshape(-1), np.asarray(dst.defined()).reshape(-1)


def _check_against_real(ex, dst_values, dst_defined, src_values):
    """Every copied element holds its origin's value in a real run; undefined ones are undefined there."""
    tr = ex.trace
    cp = tr.kind == COPY
    assert np.array_equal(dst_values[cp].view(f"u{dst_values.itemsize}"),
                          src_values[tr.origin[cp]].view(f"u{src_values.itemsize}"))
    assert not dst_defined[tr.kind == UNDEFINED].any()
    assert dst_defined[cp | (tr.kind == FILL)].all()


@pytest.mark.parametrize("dtype", ["int8", "half", "float32", "int64"])
def test_datacopy_params_origins_are_exact(dtype):
    pipe = _pipe()
    es = np.dtype(fc.as_dtype(dtype)).itemsize
    n = 4096 // es * 2
    src_arr = (np.arange(n) * 7 % 251).astype(fc.as_dtype(dtype))
    g = fc.GlobalTensor(src_arr)
    ub = pipe.alloc("VECIN", dtype, 2048 // es)
    p = fc.DataCopyParams(3, 2, 1, 4)
    ex = explain(fc.DataCopy, ub, g[32 // es], p)
    blk = 32 // es
    # burst i: source elements [i*3*blk, i*3*blk + 2*blk) go to destination [i*6*blk, ...)
    for i in range(3):
        d0, s0 = i * 6 * blk, i * 3 * blk
        assert (ex.trace.kind[d0:d0 + 2 * blk] == COPY).all()
        assert np.array_equal(ex.trace.origin[d0:d0 + 2 * blk], np.arange(s0, s0 + 2 * blk))
        assert (ex.trace.kind[d0 + 2 * blk:d0 + 6 * blk] == UNTOUCHED).all()
    vals, defined = _run_real(fc.DataCopy, ub, g[32 // es], p)
    _check_against_real(ex, vals, defined, src_arr[32 // es:])


def test_large_int8_source_needs_several_digits():
    pipe = _pipe()
    g = fc.GlobalTensor(np.zeros(4096, np.int8))
    ub = pipe.alloc("VECIN", "int8", 4096)
    ex = explain(fc.DataCopy, ub, g, 4096)
    assert np.array_equal(ex.trace.origin, np.arange(4096))


def test_pad_marks_padding_dummy_and_undefined():
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(512, dtype=np.float16))
    row = pipe.alloc("VECIN", "half", 64)
    ex = explain(fc.DataCopyPad, row, g, fc.DataCopyExtParams(2, 20, 4, 0, 0), fc.DataCopyPadExtParams(False, 1, 2, 0))
    k = ex.trace.kind[:32].reshape(2, 16)
    assert (k[:, 0] == UNDEFINED).all() and (k[:, 1:11] == COPY).all() and (k[:, 11:] == UNDEFINED).all()
    assert np.array_equal(ex.trace.origin[1:11], np.arange(10)) and np.array_equal(ex.trace.origin[17:27],
                                                                                   np.arange(12, 22))
    role = ex.role[:32].reshape(2, 16)
    assert (role[:, 0] == 1).all() and (role[:, 11:13] == 1).all() and (role[:, 13:] == 2).all()
    assert any("pad register was never set" in w for w in ex.trace.warnings)
    text = str(ex)
    assert "?" in text and "undefined" in text
    fc.SetPadValue(np.float16(3), pipe=pipe)
    ex = explain(fc.DataCopyPad, row, g, fc.DataCopyExtParams(2, 20, 4, 0, 0), fc.DataCopyPadExtParams(False, 1, 2, 0))
    assert (ex.trace.kind[[0, 11, 12, 13, 16]] == FILL).all() and ex.fill_values() == [3.0]
    assert "P" in str(ex) and " d" in str(ex)


def test_nd2nz_zero_pad_and_untouched_rows():
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(512, dtype=np.float16))
    a1 = pipe.alloc("A1", "half", 512)
    ex = explain(fc.DataCopy, a1, g, fc.Nd2NzParams(1, 12, 20, 0, 20, 16, 1, 0))
    nz = ex.trace.kind.reshape(-1, 16)
    assert (nz[:12] == COPY).all() and (nz[12:16] == UNTOUCHED).all()
    assert (nz[16:28, :4] == COPY).all() and (nz[16:28, 4:] == FILL).all()
    assert ex.fill_values() == [0.0]
    assert np.array_equal(ex.trace.origin.reshape(-1, 16)[16, :4], [16, 17, 18, 19])
    vals, defined = _run_real(fc.DataCopy, a1, g, fc.Nd2NzParams(1, 12, 20, 0, 20, 16, 1, 0))
    _check_against_real(ex, vals, defined, g.numpy())


def test_nz2nd_and_slice_and_bias_table_widening():
    pipe = _pipe()
    ub = pipe.alloc("VECOUT", "half", 256)
    gm = fc.GlobalTensor(np.zeros(320, np.float16), defined=False)
    ex = explain(fc.DataCopy, gm, ub, fc.Nz2NdParamsFull(1, 8, 32, 1, 8, 40, 1))
    o = ex.trace.origin.reshape(8, 40)
    assert np.array_equal(o[:, :16], np.arange(128).reshape(8, 16))
    assert np.array_equal(o[:, 16:32], 128 + np.arange(128).reshape(8, 16)) and (o[:, 32:] == -1).all()
    m = fc.GlobalTensor(np.arange(4 * 32, dtype=np.int32).reshape(4, 32))
    s = pipe.alloc("VECIN", "int32", 32)
    ex = explain(fc.DataCopy, s, m, [fc.SliceInfo(0, 15, 0, 1, 16), fc.SliceInfo(0, 1, 0, 1, 2)],
                 [fc.SliceInfo(0, 23, 8, 1, 32), fc.SliceInfo(0, 2, 1, 1, 4)], 2)
    want = np.arange(128).reshape(4, 32)[[0, 2]][:, list(range(8)) + list(range(16, 24))].reshape(-1)
    assert np.array_equal(ex.trace.origin, want)
    l1 = pipe.alloc("C1", "half", 128)
    bt = pipe.alloc("C2", "float", 64)
    ex = explain(fc.DataCopy, bt, l1, fc.DataCopyParams(1, 1, 0, 0))
    assert np.array_equal(ex.trace.origin[:32], np.arange(32)) and (ex.trace.kind[:32] == COPY).all()


def test_cube_ops_loaddata_transpose_and_fixpipe_relu_is_computed():
    pipe = _pipe()
    l1 = pipe.alloc("A1", "half", 512)
    a2 = pipe.alloc("A2", "half", 256)
    ex = explain(fc.LoadData, a2, l1, fc.LoadData2DParams(0, 1, 1, 0, 0, True, 0))
    assert np.array_equal(ex.trace.origin.reshape(16, 16), np.arange(256).reshape(16, 16).T)
    co1 = pipe.alloc("CO1", "int32", 512)
    gm = fc.GlobalTensor(np.zeros(16 * 32, np.int32), defined=False)
    plain = explain(fc.Fixpipe, gm, co1, fc.FixpipeParamsV220(nSize=32, mSize=16, srcStride=16, dstStride=32))
    o = plain.trace.origin.reshape(16, 32)
    assert np.array_equal(o[:, :16], np.arange(256).reshape(16, 16)) and (o[:, 16:] >= 256).all()
    relu = explain(fc.Fixpipe, gm, co1, fc.FixpipeParamsV220(nSize=32, mSize=16, srcStride=16, dstStride=32,
                                                            reluEn=True))
    assert (relu.trace.kind == COMPUTED).all() and relu.counts()["computed"] == 512
    assert "c" in str(relu).split("dst:")[1]


def test_explain_has_no_side_effects_and_raises_the_ops_errors():
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(64, dtype=np.float16))
    ub = pipe.alloc("VECIN", "half", 64)
    before = ub.numpy().copy(), ub.defined().copy()
    explain(fc.DataCopy, ub, g, 64)
    assert np.array_equal(ub.numpy().view(np.uint16), before[0].view(np.uint16))
    assert np.array_equal(ub.defined(), before[1])
    assert fc.current_pipe() is pipe  # the scratch cores do not become current
    with pytest.raises(fc.RangeError):
        explain("DataCopy", ub, g, fc.DataCopyParams(5000, 1, 0, 0))


def test_text_colour_and_plain():
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(64, dtype=np.float16))
    ub = pipe.alloc("VECIN", "half", 64)
    ex = explain(fc.DataCopy, ub, g, fc.DataCopyParams(2, 1, 1, 0))
    plain, colour = ex.text(color=False), ex.text(color=True)
    assert "\x1b[" not in plain and "\x1b[48;5;" in colour
    assert "src: GM half[64]" in plain and "dst: VECIN (UB) half[64]" in plain
    assert "32 copied" in plain
    assert "DataCopyParams(blockCount=2, blockLen=1, srcGap=1, dstGap=0)" in plain


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".txt", b"DataCopy")])
def test_picture_files(tmp_path, suffix, magic):
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(512, dtype=np.float16))
    a1 = pipe.alloc("A1", "half", 512)
    ex = explain(fc.DataCopy, a1, g, fc.Nd2NzParams(1, 12, 20, 0, 20, 16, 1, 0))
    path = ex.save(tmp_path / f"x{suffix}")
    data = pathlib.Path(path).read_bytes()
    assert data.startswith(magic) and len(data) > 500
    if suffix == ".svg":
        assert b"source" in data and b"destination" in data


def test_png_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    pipe = _pipe()
    g = fc.GlobalTensor(np.arange(64, dtype=np.float16))
    ub = pipe.alloc("VECIN", "half", 64)
    with pytest.raises(fc.FastCopyError, match=r"fastcopy\[plot\]"):
        explain(fc.DataCopy, ub, g, 64).save(tmp_path / "x.png")
    assert "copied" in str(explain(fc.DataCopy, ub, g, 64))  # text needs nothing


def test_cli_explain_text_and_png(tmp_path, capsys):
    case = str(ROOT / "examples" / "pad_row_copy.toml")
    assert main(["explain", case, "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "DataCopyPad(xLocal, xGm, " in out and "src xGm: GM" in out
    assert main(["explain", case, "--op", "1", "-o", str(tmp_path / "o.png")]) == 0
    assert (tmp_path / "o.png").read_bytes().startswith(b"\x89PNG")
    assert main(["explain", case, "--op", "99"]) == 1
    err = capsys.readouterr().err
    assert "not an op that moves data" in err and "fastcopy explain: explain:" not in err


def test_cli_explain_counts_ops_through_loops_and_cores(capsys):
    case = str(ROOT / "examples" / "multicore_tiles.toml")
    assert main(["explain", case, "--op", "13", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("op 13 = ops[0].body[1] (block_idx=1, i=0): DataCopy(tileGm[768], tile, 192)")
    assert "src tile: VECIN (UB) half[192]" in out and "dst tileGm[768]: GM half[2304] at byte 1536" in out
    assert "192 copied" in out


def test_readme_pictures_are_generated_by_the_script(tmp_path):
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import make_pictures
    finally:
        sys.path.pop(0)
    assert make_pictures.main([str(tmp_path)]) == 0
    stems = {"datacopy", "datacopypad", "nd2nz", "nz2nd", "slice", "loaddata", "fixpipe"}
    assert {p.stem for p in tmp_path.glob("*.png")} == stems
    for stem in stems:  # the committed text pictures are what the script draws today
        assert (tmp_path / f"{stem}.txt").read_text() == (ROOT / "docs" / "img" / f"{stem}.txt").read_text()
        assert (ROOT / "docs" / "img" / f"{stem}.png").exists()
    readme = (ROOT / "README.md").read_text()
    for stem in stems:
        assert f"docs/img/{stem}.png" in readme

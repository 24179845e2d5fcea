"""Packed 4-bit buffers in case files (inputs as 4-bit values or as packed bytes, golden outputs, ``fastcopy
verify``) and ``fastcopy explain`` pictures of 4-bit buffers, one cell per 4-bit value."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import fastcopy as fc
from fastcopy.cli import main
from fastcopy.explain.trace import COPY

F = 512


def nibbles(b: np.ndarray) -> np.ndarray:
    """Codes of packed bytes, low nibble first."""
    out = np.empty(2 * b.size, np.uint8)
    out[0::2], out[1::2] = b & 0xF, b >> 4
    return out


def pack(codes: np.ndarray) -> np.ndarray:
    return (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)


CASE = """
name = "fp4_transposed_operand"
product = "ATLAS_350"
outputs = ["b2"]

[buffers.gm]
dtype = "fp4x2_e2m1_t"
shape = [2048]
init = {init}

[buffers.l1]
position = "B1"
dtype = "fp4x2_e2m1_t"
count = 2048

[buffers.b2]
position = "B2"
dtype = "fp4x2_e2m1_t"
count = 2048

[[ops]]
api = "DataCopy"
dst = "l1"
src = "gm"
params = {{count = 2048}}

[[ops]]
api = "LoadData"
dst = "b2"
src = "l1"
params.LoadData2DParamsV2 = {{mStep = 4, kStep = 1, srcStride = 4, dstStride = 1, ifTranspose = true}}
"""


def run_case(tmp_path, init: str, name: str = "case") -> np.ndarray:
    path = tmp_path / f"{name}.toml"
    path.write_text(CASE.format(init=init))
    out = tmp_path / f"{name}_out"
    assert main(["run", str(path), "-o", str(out), "-q"]) == 0
    return out


def test_fp4_case_values_and_packed_inputs_give_the_transposed_golden(tmp_path):
    """The 4096 fp4 values given as values (a .npy of float4_e2m1fn), as their packed bytes (values with
    packed = true, a .bin file, a uint8 .npy): one input, one golden, the values of the 64 x 64 square
    transposed (the L0B image of four stacked Nz fractals)."""
    rng = np.random.default_rng(4)
    vals = rng.integers(0, 16, 4096, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn)
    codes = vals.view(np.uint8)
    packed = pack(codes)
    np.save(tmp_path / "vals.npy", vals)
    np.save(tmp_path / "bytes.npy", packed)
    packed.tofile(tmp_path / "bytes.bin")
    inits = ['{kind = "file", path = "vals.npy"}', '{kind = "file", path = "bytes.npy"}',
             '{kind = "file", path = "bytes.bin"}',
             '{kind = "values", packed = true, values = [' + ", ".join(map(str, packed.tolist())) + "]}",
             '{kind = "values", values = [' + ", ".join(repr(float(v)) for v in vals.astype(np.float32)) + "]}"]
    want = pack(codes.reshape(64, 64).T.reshape(-1))
    for k, init in enumerate(inits):
        out = run_case(tmp_path, init, f"c{k}")
        assert np.array_equal(np.fromfile(out / "input" / "gm.bin", np.uint8), packed), init
        assert np.array_equal(np.fromfile(out / "output" / "golden.bin", np.uint8), want), init


def test_fp4_generated_inputs_fill_both_nibbles(tmp_path):
    """Generated inputs give 4-bit values, two per byte (not one value per byte)."""
    for init, check in (('{kind = "constant", value = 1.5}', lambda c: (c == 3).all()),  # 1.5 = code 3
                        ('{kind = "integers", low = -6, high = 7}', lambda c: (c >> 3 == 1).any()),
                        ('{kind = "uniform", low = -6.0, high = 6.0}', lambda c: len(np.unique(c[1::2])) > 8),
                        ('{kind = "arange"}', lambda c: c[:4].tolist() == [0, 2, 4, 5])):  # 0, 1, 2, 3 in fp4
        out = run_case(tmp_path, init, "g")
        c = nibbles(np.fromfile(out / "input" / "gm.bin", np.uint8))
        assert check(c), (init, c[:16])


def test_fp4_golden_verifies_and_a_changed_value_fails(tmp_path, capsys):
    out = run_case(tmp_path, '"bits"')
    golden = np.fromfile(out / "output" / "golden.bin", np.uint8)
    good, bad = tmp_path / "good.bin", tmp_path / "bad.bin"
    golden.tofile(good)
    changed = golden.copy()
    changed[5] ^= 0x10  # the high value of byte 5 only
    changed.tofile(bad)
    assert main(["verify", str(good), str(out)]) == 0
    assert main(["verify", str(bad), str(out)]) == 1
    text = capsys.readouterr().out
    lo, hi = (float(x) for x in nibbles(golden[5:6]).view(ml_dtypes.float4_e2m1fn).astype(np.float32))
    assert "1 of 2048 defined fp4x2_e2m1_t elements differ" in text and f"({lo}, {hi})" in text


def test_fp4_tolerances_compare_each_value(tmp_path, capsys):
    """A tolerance compares both 4-bit values of a byte (not only the low one)."""
    out = run_case(tmp_path, '{kind = "constant", value = 1.0}')  # every value 1.0 (code 2)
    golden = np.fromfile(out / "output" / "golden.bin", np.uint8)
    near, far = golden.copy(), golden.copy()
    near[7] = (near[7] & 0x0F) | (3 << 4)  # high value 1.5: |error| 0.5
    far[7] = (far[7] & 0x0F) | (6 << 4)  # high value 4.0: |error| 3
    near.tofile(tmp_path / "near.bin")
    far.tofile(tmp_path / "far.bin")
    assert main(["verify", str(tmp_path / "near.bin"), str(out), "--atol", "0.5"]) == 0
    assert main(["verify", str(tmp_path / "far.bin"), str(out), "--atol", "0.5"]) == 1
    assert main(["verify", str(tmp_path / "near.bin"), str(out), "--atol", "0.25"]) == 1
    assert "|error|" in capsys.readouterr().out


def test_e1m2_outputs_compare_bit_for_bit_only(tmp_path, capsys):
    g = tmp_path / "g.bin"
    np.arange(64, dtype=np.uint8).tofile(g)
    assert main(["verify", str(g), str(g), "--dtype", "fp4x2_e1m2_t"]) == 0
    assert main(["verify", str(g), str(g), "--dtype", "fp4x2_e1m2_t", "--atol", "1"]) == 2
    got = capsys.readouterr()
    assert "fp4x2_e1m2_t outputs compare bit for bit only" in got.out + got.err


INT4_CASE = """
name = "int4_ldwt"
product = "ATLAS_A2"
outputs = ["b2"]

[buffers.gm]
dtype = "int4b_t"
shape = [64]
init = {kind = "integers"}

[buffers.b1]
position = "B1"
dtype = "int4b_t"
count = 2048
init = {kind = "file", path = "b1.bin"}

[buffers.b2]
position = "B2"
dtype = "int4b_t"
count = 2048

[[ops]]
api = "LoadDataWithTranspose"
dst = "b2"
src = "b1"
params.LoadData2dTransposeParams = {repeatTimes = 1, srcStride = 1, dstGap = 3}
"""


def test_int4_case_with_load_data_with_transpose(tmp_path):
    """An int4b_t square in L1 (its packed bytes from a file) transposed into L0B; an int4b_t input drawn by
    "integers" covers the whole int4 range in both nibbles. (Basic DataCopy takes no int4b_t: data reach L1 as
    bytes, or as here from the case.)"""
    path = tmp_path / "i4.toml"
    path.write_text(INT4_CASE)
    b1 = np.random.default_rng(9).integers(0, 256, 2048, dtype=np.uint8)
    b1.tofile(tmp_path / "b1.bin")
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out), "-q"]) == 0
    drawn = nibbles(np.fromfile(out / "input" / "gm.bin", np.uint8))
    assert len(np.unique(drawn[0::2])) == len(np.unique(drawn[1::2])) == 16
    got = nibbles(np.fromfile(out / "output" / "golden.bin", np.uint8))
    assert np.array_equal(got, nibbles(b1).reshape(64, 64).T.reshape(-1))
    assert main(["verify", str(out / "output" / "golden.bin"), str(out)]) == 0


@pytest.mark.parametrize("dtype, init, message", [
    ("int4b_t", '{kind = "integers", low = -9}', "integers: values [-9, 7] do not fit the int4b_t values [-8, 7]"),
    ("int4b_t", "8", "constant: values [8, 8] do not fit the int4b_t values [-8, 7]"),
    ("int4b_t", '{kind = "uniform"}', "'uniform' needs a floating-point dtype, the buffer is int4b_t"),
    ("fp4x2_e1m2_t", '{kind = "normal"}', "the buffer is fp4x2_e1m2_t (4-bit codes of fp4x2_e1m2_t)"),
    ("fp4x2_e1m2_t", '{kind = "values", values = [16, 0]}', "2 values for a buffer of 4 elements; give exactly 4"),
    ("fp4x2_e1m2_t", '{kind = "values", values = [16, 0, 0, 0]}',
     "values: values [0, 16] do not fit the 4-bit codes of fp4x2_e1m2_t [0, 15]"),
    ("int4b_t", '{kind = "values", values = [0.5, 0, 0, 0]}', "0.5 is not an integer (int4b_t buffer)"),
    ("int4b_t", '{kind = "values", packed = true, values = [256, 0]}',
     "values: values [0, 256] do not fit the bytes [0, 255]"),
    ("int4b_t", '{kind = "values", packed = 1, values = [1, 0]}', "packed: expected true or false"),
    ("half", '{kind = "values", packed = true, values = [1, 0]}', "packed is for the 4-bit types"),
])
def test_4bit_input_errors(tmp_path, capsys, dtype, init, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'name = "bad"\nproduct = "ATLAS_A2"\noutputs = ["x"]\n[buffers.x]\nposition = "A1"\n'
                    f'dtype = "{dtype}"\ncount = 2\ninit = {init}\n[[ops]]\napi = "DataCopy"\ndst = "x"\n'
                    f'src = "x"\nparams = {{count = 0}}\n')
    assert main(["check", str(path), "-q"]) != 0
    assert message in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- explain
def test_explain_draws_4bit_values_one_cell_each():
    """The transposing fp4 load as a picture: one cell per 4-bit value, every destination value the source value
    of the transposed square (a byte-level picture would call these bytes "computed")."""
    pipe = fc.TPipe(product="ATLAS_350")
    src, dst = pipe.alloc("B1", "fp4x2_e2m1_t", 4 * F), pipe.alloc("B2", "fp4x2_e2m1_t", 4 * F)
    src.set_defined()
    ex = fc.explain(fc.LoadData, dst, src, fc.LoadData2DParamsV2(0, 0, 4, 1, 4, 1, True))
    tr = ex.trace
    assert tr.src.size == tr.dst.size == 4096 and tr.kind.size == 4096
    assert (tr.kind == COPY).all()
    assert np.array_equal(tr.origin.reshape(64, 64), np.arange(4096).reshape(64, 64).T)
    assert ex.src_grid.cols == ex.dst_grid.cols == 64  # one 32-byte fractal row = 64 values per grid row
    text = ex.text(color=False)
    assert "fp4x2_e2m1_t[4096] (4-bit values, two per byte)" in text
    assert "written: elements [0, 4096) = bytes [0, 2048) of the buffer" in text
    assert text.splitlines()[-1] == "4096 copied"


def test_explain_4bit_partial_bytes_and_fills():
    """An int4 load of whole fractals from an offset: values map one to one; the bytes of the span name the
    right buffer bytes; a half-byte span rounds outwards."""
    pipe = fc.TPipe(product="ATLAS_A2")
    src, dst = pipe.alloc("A1", "int4b_t", 4 * F), pipe.alloc("A2", "int4b_t", 2 * F)
    src.set_defined()
    ex = fc.explain(fc.LoadData, dst, src, fc.LoadData2DParams(1, 1))
    assert np.array_equal(ex.trace.origin[:1024], np.arange(1024, 2048))
    assert ex.read_span == (1024, 2048) and "bytes [512, 1024)" in ex.span_text("src")
    assert ex.trace.src.byte_span(3, 6) == (src.offset + 1, src.offset + 3)


def test_check_reports_each_written_4bit_byte_once(tmp_path, capsys):
    """``fastcopy check`` of the transposing fp4 load: the bytes read and written, each written byte counted once
    (a byte takes two values, but it is one byte written)."""
    path = tmp_path / "c.toml"
    path.write_text(CASE.format(init='"bits"'))
    assert main(["check", str(path)]) == 0
    lines = [ln.split() for ln in capsys.readouterr().out.splitlines() if "b2" in ln and "writes" in ln]
    assert lines and lines[-1][-2:] == ["2048", "B"] and "[0," in lines[-1] and "2048)" in lines[-1]

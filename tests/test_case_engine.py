"""The case engine: inputs, seeds and reproducibility, sweeps, outputs and manifest, the Python path."""

from __future__ import annotations

import hashlib
import json
import pathlib
import warnings

import numpy as np
import pytest

import fastcopy
from fastcopy import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition
from fastcopy.cli import main
from fastcopy.golden import (DEFAULT_SEED, CaseRunError, case_from_dict, load_case, load_case_text, run_case,
                             run_program, write_golden, write_result)

ROOT = pathlib.Path(__file__).resolve().parents[1]

COPY = """\
product = "{product}"
outputs = ["yGm"]
{top}

[buffers.xGm]
dtype = "{dtype}"
shape = {shape}
init = {init}

[buffers.yGm]
dtype = "{dtype}"
shape = {shape}

[buffers.u]
position = "VECIN"
dtype = "{dtype}"
count = {count}

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params = {{count = {count}}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {{count = {count}}}
"""


def copy_case(dtype="half", shape="[256]", count=256, init='"arange"', top="", product=None):
    product = product or ("ATLAS_350" if dtype.startswith("fp8") else "ATLAS_A2")
    return COPY.format(dtype=dtype, shape=shape, count=count, init=init, top=top, product=product)


def run_text(text, seed=None):
    return run_program(load_case_text(text, seed=seed).point(0))


def files_of(folder: pathlib.Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------ inputs
@pytest.mark.parametrize("dtype", ["half", "float", "bfloat16_t", "double", "fp8_e4m3fn_t"])
def test_uniform_and_normal_floats(dtype):
    x = run_text(copy_case(dtype, init='{kind = "uniform", low = -2.0, high = 3.0}')).inputs["xGm"]
    v = x.astype(np.float64)
    assert x.dtype == fastcopy.as_dtype(dtype) and v.min() >= -2.0 and v.max() <= 3.0 and np.unique(v).size > 4
    x = run_text(copy_case(dtype, init='{kind = "normal", mean = 1.0, std = 0.5}')).inputs["xGm"]
    assert abs(x.astype(np.float64).mean() - 1.0) < 0.2


@pytest.mark.parametrize("dtype, lo, hi", [("int8_t", -128, 127), ("uint8_t", 0, 255), ("int16_t", -32768, 32767),
                                           ("uint64_t", 0, 2**64 - 1), ("int32_t", -(2**31), 2**31 - 1)])
def test_integers_default_to_the_full_range(dtype, lo, hi):
    count = 64 * 32 // fastcopy.as_dtype(dtype).itemsize
    x = run_text(copy_case(dtype, shape=f"[{count}]", count=count, init='"integers"')).inputs["xGm"]
    assert x.min() >= lo and x.max() <= hi and np.unique(x).size > min(count // 4, 200)
    x = run_text(copy_case(dtype, shape=f"[{count}]", count=count,
                           init='{kind = "integers", low = 3, high = 5}')).inputs["xGm"]
    assert set(np.unique(x).tolist()) == {3, 4}


def test_arange_constant_zeros_bits():
    x = run_text(copy_case("int8_t", shape="[512]", count=512, init='{kind = "arange", start = 100, step = 1}'))
    assert np.array_equal(x.inputs["xGm"], (np.arange(512) + 100).astype(np.int8))  # wraps like C
    x = run_text(copy_case("half", init='{kind = "arange", start = 0.5, step = 0.25}')).inputs["xGm"]
    assert np.array_equal(x, (0.5 + 0.25 * np.arange(256)).astype(np.float16))
    assert np.all(run_text(copy_case("float", shape="[64]", count=64, init="-1.5")).inputs["xGm"] == -1.5)
    assert not run_text(copy_case("float", shape="[64]", count=64, init='"zeros"')).inputs["xGm"].any()
    bits = run_text(copy_case("half", init='"bits"')).inputs["xGm"]
    assert np.isnan(bits).any() or np.unique(bits.view(np.uint16)).size > 200  # raw bit patterns


def test_file_inputs(tmp_path):
    arr = np.arange(256, dtype=np.float16)[::-1].copy()
    np.save(tmp_path / "x.npy", arr)
    arr.tofile(tmp_path / "x.bin")
    for name in ("x.npy", "x.bin"):
        text = copy_case(init=f'{{kind = "file", path = "{name}"}}')
        (tmp_path / "c.toml").write_text(text)
        got = run_program(load_case(tmp_path / "c.toml").point(0)).inputs["xGm"]
        assert np.array_equal(got.view(np.uint16), arr.view(np.uint16))
    np.save(tmp_path / "x.npy", arr.astype(np.float32))
    text = copy_case(init='{kind = "file", path = "x.npy"}')
    (tmp_path / "c.toml").write_text(text)
    with pytest.raises(fastcopy.golden.CaseError, match=r"buffers\.xGm\.init\.path: .*float32.*half"):
        run_program(load_case(tmp_path / "c.toml").point(0))


def test_overflowing_inputs_are_errors():
    with pytest.raises(fastcopy.golden.CaseError, match=r"buffers\.xGm\.init: value .* overflows half"):
        run_text(copy_case("half", init='{kind = "uniform", low = 1e5, high = 2e5}'))


# ------------------------------------------------------------------------------------------------ seeds
def test_same_case_same_seed_gives_identical_folders(tmp_path):
    path = ROOT / "examples" / "pad_row_copy.toml"
    assert main(["run", str(path), "-o", str(tmp_path / "a"), "-q"]) == 0
    assert main(["run", str(path), "-o", str(tmp_path / "b"), "-q"]) == 0
    a, b = files_of(tmp_path / "a"), files_of(tmp_path / "b")
    assert a == b and "manifest.json" in a and "output/yGm.mask.bin" in a


def test_seed_recorded_default_case_and_command_line(tmp_path):
    text = copy_case(init='{kind = "uniform"}')
    (tmp_path / "c.toml").write_text(text)
    assert main(["run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "d"), "-q"]) == 0
    m = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert (m["seed"], m["seed_source"]) == (DEFAULT_SEED, "default")
    assert main(["run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "s"), "-q", "--seed", "99"]) == 0
    m2 = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert (m2["seed"], m2["seed_source"]) == (99, "command line")
    assert m2["buffers"][0]["sha256"] != m["buffers"][0]["sha256"]
    (tmp_path / "c.toml").write_text(copy_case(init='{kind = "uniform"}', top="seed = 99"))
    assert main(["run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "c"), "-q"]) == 0
    m3 = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert (m3["seed"], m3["seed_source"]) == (99, "case")
    assert m3["buffers"][0]["sha256"] == m2["buffers"][0]["sha256"]


def test_each_buffer_has_its_own_stream():
    one = run_text(copy_case(init='{kind = "uniform"}'))
    text = copy_case(init='{kind = "uniform"}').replace("[buffers.yGm]", "[buffers.aaa]\ndtype = \"half\"\n"
                                                       "shape = [64]\ninit = {kind = \"uniform\"}\n\n[buffers.yGm]")
    two = run_text(text)
    assert np.array_equal(one.inputs["xGm"].view(np.uint16), two.inputs["xGm"].view(np.uint16))
    assert not np.array_equal(two.inputs["aaa"].view(np.uint16), two.inputs["xGm"][:64].view(np.uint16))


def test_input_sha_is_stable():
    """The generator is part of the file format: this pins PCG64(SeedSequence([seed, crc32(name)]))."""
    x = run_text(copy_case("uint32_t", shape="[4]", count=8, init='"bits"', top="seed = 5").replace(
        "count = 8}", "count = 8}").replace("shape = [4]", "shape = [8]")).inputs["xGm"]
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([5, __import__("zlib").crc32(b"xGm")])))
    assert x.tobytes() == rng.bytes(32)


# ------------------------------------------------------------------------------------------------ outputs
def test_one_output_is_golden_bin_and_mask(tmp_path):
    text = copy_case(count=200)  # 200 halves = 400 bytes: 12 whole blocks are copied (count rounds down)
    res = run_text(text)
    m = write_result(res, str(tmp_path))
    data = np.fromfile(tmp_path / "output" / "golden.bin", np.float16)
    mask = np.fromfile(tmp_path / "output" / "golden.mask.bin", np.uint8)
    assert mask.tolist() == [1] * 192 + [0] * 64
    assert np.array_equal(data[:192], np.arange(192, dtype=np.float16))
    assert np.all(data[192:].view(np.uint16) == 0xFFFF)  # undefined: the poison byte
    out = next(b for b in m["buffers"] if b["role"] == "output")
    assert out["sha256"] == hashlib.sha256(data.tobytes()).hexdigest()
    assert (out["elements"], out["defined"]) == (256, 192)
    assert m["ops"][0]["warnings"] and "rounded down" in m["ops"][0]["warnings"][0]
    assert m["files"] == ["input/xGm.bin", "output/golden.bin", "output/golden.mask.bin", "manifest.json"]


def test_several_outputs_custom_file_names_and_local_outputs(tmp_path):
    text = copy_case().replace('outputs = ["yGm"]', 'outputs = ["yGm", {buffer = "u", file = "ub_tile"}]')
    m = write_result(run_text(text), str(tmp_path))
    names = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.bin"))
    assert names == ["input/xGm.bin", "output/ub_tile.bin", "output/ub_tile.mask.bin", "output/yGm.bin",
                     "output/yGm.mask.bin"]
    local = next(b for b in m["buffers"] if b["name"] == "u")
    assert (local["role"], local["buffer"], local["addr"], local["position"]) == ("output", "UB", 0, "VECIN")


def test_strict_turns_warnings_into_failures(tmp_path):
    (tmp_path / "c.toml").write_text(copy_case(count=200))
    assert main(["run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "a"), "-q"]) == 0
    assert main(["run", str(tmp_path / "c.toml"), "-o", str(tmp_path / "b"), "-q", "--strict"]) == 1
    assert not (tmp_path / "b").exists()


def test_manifest_records_everything(tmp_path):
    path = ROOT / "examples" / "datacopy_tiles.toml"
    assert main(["run", str(path), "-o", str(tmp_path), "-q"]) == 0
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["fastcopy"] == fastcopy.__version__ and m["numpy"] == np.__version__
    assert (m["product"], m["product_name"], m["seed"], m["seed_source"]) == ("ATLAS_A2", "Atlas A2", 1, "case")
    assert m["case"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    for b in m["buffers"]:
        if "file" in b:
            assert hashlib.sha256((tmp_path / b["file"]).read_bytes()).hexdigest() == b["sha256"]
            assert b["bytes"] == int(np.prod(b["shape"])) * fastcopy.as_dtype(b["dtype"]).itemsize
    op = m["ops"][6]
    assert op["params"] == {"DataCopyParams": {"blockCount": 4, "blockLen": 1, "srcGap": 15, "dstGap": 0}}
    assert (op["dst"], op["src"]) == ("zLocal", "xGm") and m["ops"][3]["src"] == "xGm[512]"


# ------------------------------------------------------------------------------------------------ sweeps
def test_implicit_sweeps_expand_into_the_product(tmp_path):
    text = copy_case(dtype='float').replace(
        'params = {count = 256}\n\n[[ops]]', 'params = {count = [64, 128, 256]}\n\n[[ops]]', 1).replace(
        'dtype = "float"\nshape = [256]\ninit', 'dtype = "float"\nshape = [256]\ninit', 1)
    text = text.replace('init = "arange"', 'init = ["arange", "zeros"]')
    case = load_case_text(text)
    assert len(case) == 6 and [a[0] for a in case.axes] == ["init", "count"]
    progs = list(case.points())
    assert [(p.values["init"], p.values["count"]) for p in progs] == [
        ("arange", 64), ("arange", 128), ("arange", 256), ("zeros", 64), ("zeros", 128), ("zeros", 256)]
    defined = [int(run_program(p).outputs["yGm"][1].sum()) for p in progs]
    assert defined == [64, 128, 256] * 2
    m = run_case(case, str(tmp_path))
    assert len(m) == 6 and (tmp_path / "0005" / "manifest.json").is_file()
    assert json.loads((tmp_path / "0004" / "manifest.json").read_text())["case"]["values"] == {"init": "zeros",
                                                                                              "count": 128}


def test_named_sweeps_expressions_and_shape_lists():
    text = """\
product = "ATLAS_A2"
outputs = ["y"]
[sweep]
dt = ["half", "float"]
n = [1, 3]
[buffers.x]
dtype = "=dt"
shape = [[2, 32], [4, 32]]
init = "arange"
[buffers.y]
dtype = "=dt"
shape = ["=n * 32 // sizeof(dt)"]
[buffers.u]
position = "VECIN"
dtype = "=dt"
count = "=au(n * 32 // sizeof(dt), 8)"
[[ops]]
api = "DataCopy"
dst = "u"
src = "x[=n * 0 + 1]"
params.DataCopyParams = {blockCount = 1, blockLen = "=n"}
[[ops]]
api = "DataCopy"
dst = "y"
src = "u"
params = {count = "=n * 32 // sizeof(dt)"}
"""
    case = load_case_text(text.replace('src = "x[=n * 0 + 1]"', 'src = "x[n * 0 + 1]"'))
    assert len(case) == 8
    p = case.point(7)
    assert p.values == {"dt": "float", "n": 3, "shape": [4, 32]}
    assert p.buffer("x").shape == (4, 32) and p.buffer("y").shape == (24,) and p.buffer("u").shape == (24,)
    assert p.ops[0].src.offset == 1
    res = run_program(p)
    assert np.array_equal(res.outputs["y"][0], np.arange(1, 25, dtype=np.float32))


def test_batch_sweep_file_has_1000_points():
    case = load_case(ROOT / "bench" / "cases" / "datacopy_sweep_1000.toml")
    assert len(case) == 1000
    p = case.point(999)
    assert p.values == {"bc": 10, "bl": 10, "gap": 9}
    assert p.ops[0].args[0].value == {"blockCount": 10, "blockLen": 10, "srcGap": 9, "dstGap": 0}


# ------------------------------------------------------------------------------------------------ Python path
def test_python_tensor_program_writes_the_same_files(tmp_path):
    """The same program through the case engine and written by hand with the tensor API + write_golden."""
    path = ROOT / "examples" / "datacopy_tiles.toml"
    assert main(["run", str(path), "-o", str(tmp_path / "case"), "-q"]) == 0
    x = np.fromfile(tmp_path / "case" / "input" / "xGm.bin", np.float16).reshape(4, 256)
    pipe = TPipe(product="ATLAS_A2")
    x_local = pipe.alloc(TPosition.VECIN, "half", 512)
    y_local = pipe.alloc(TPosition.VECOUT, "half", 512)
    z_local = pipe.alloc(TPosition.VECIN, "half", 64)
    xg = GlobalTensor(x.copy())
    y, z = np.zeros((4, 256), np.float16), np.zeros((4, 16), np.float16)
    yg, zg = GlobalTensor(y, defined=False), GlobalTensor(z, defined=False)
    for i in range(2):
        DataCopy(x_local, xg[i * 512], 512)
        DataCopy(y_local, x_local, 512)
        DataCopy(yg[i * 512], y_local, 512)
    DataCopy(z_local, xg, DataCopyParams(4, 1, 15, 0))
    DataCopy(zg, z_local, 64)
    write_golden(str(tmp_path / "py"), {"xGm": x}, {"yGm": yg, "zGm": zg}, product="ATLAS_A2", seed=1)
    a, b = files_of(tmp_path / "case"), files_of(tmp_path / "py")
    for name in ("input/xGm.bin", "output/yGm.bin", "output/yGm.mask.bin", "output/zGm.bin",
                 "output/zGm.mask.bin"):
        assert a[name] == b[name], name


def test_case_from_dict_runs_like_a_file():
    doc = {"product": "ATLAS_A2", "outputs": ["y"], "seed": 3,
           "buffers": {"x": {"dtype": "float", "shape": [8, 8], "init": {"kind": "normal"}},
                       "y": {"dtype": "float", "shape": [8, 8]},
                       "u": {"position": "VECIN", "dtype": "float", "count": 64}},
           "ops": [{"api": "DataCopy", "dst": "u", "src": "x", "params": {"count": 64}},
                   {"api": "DataCopy", "dst": "y", "src": "u", "params": {"DataCopyParams": {"blockLen": 8}}}]}
    res = run_program(case_from_dict(doc, name="mine").point(0))
    assert np.array_equal(res.outputs["y"][0].view(np.uint32), res.inputs["x"].view(np.uint32))
    assert res.program.name == "mine"


# ------------------------------------------------------------------------------------------------ other APIs
def test_pad_compact_mode_and_loop_mode_on_atlas_350():
    """PaddingMode and SetLoopModePara through a case equal the same calls written in Python."""
    text = """\
product = "ATLAS_350"
outputs = ["u"]
[buffers.x]
dtype = "int8_t"
shape = [288]
init = "arange"
[buffers.u]
position = "VECIN"
dtype = "int8_t"
count = 320
[[ops]]
api = "SetLoopModePara"
params.LoopModeParams = {loop1Size = 2, loop1SrcStride = 144, loop1DstStride = 160}
params.type = "DataCopyMVType::OUT_TO_UB"
[[ops]]
api = "DataCopyPad"
dst = "u"
src = "x"
params.DataCopyExtParams = {blockCount = 3, blockLen = 48}
params.DataCopyPadExtParams = {isPad = true, paddingValue = 7}
params.mode = "PaddingMode::Compact"
[[ops]]
api = "ResetLoopModePara"
"""
    res = run_text(text)
    data, mask = res.outputs["u"]
    from fastcopy import (DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams, LoopModeParams,
                          PaddingMode, ResetLoopModePara, SetLoopModePara)

    pipe = TPipe(product="ATLAS_350")
    u = pipe.alloc(TPosition.VECIN, "int8_t", 320)
    with pipe:
        SetLoopModePara(LoopModeParams(loop1Size=2, loop1SrcStride=144, loop1DstStride=160),
                        DataCopyMVType.OUT_TO_UB)
        DataCopyPad(u, GlobalTensor(np.arange(288).astype(np.int8)), DataCopyExtParams(3, 48),
                    DataCopyPadExtParams(isPad=True, paddingValue=7), mode=PaddingMode.Compact)
        ResetLoopModePara()
    assert np.array_equal(data, u.numpy()) and np.array_equal(mask.astype(bool), u.defined())
    assert data[144:160].tolist() == [7] * 16 and mask.all()


def test_op_failure_is_wrapped_with_its_cause():
    text = copy_case().replace('params = {count = 256}', 'params.DataCopyParams = {blockCount = 5000, '
                                                         'blockLen = 1}', 1)
    with pytest.raises(CaseRunError) as info:
        with warnings.catch_warnings():
            run_text(text)
    assert isinstance(info.value.cause, fastcopy.RangeError)
    assert "blockCount=5000" in str(info.value) and info.value.key == "ops[0].params.DataCopyParams.blockCount"

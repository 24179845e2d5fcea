"""Case files describe whole kernels (issue 12 items 1-4, 8): loops, cores, literal data, compute steps, and the
messages of the weak spots."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.golden import CaseError, case_from_dict, load_case, load_case_text, run_program
from fastcopy.golden.engine import CaseRunError


def doc(ops, blocks=1, outputs=("yGm",), n=4096, **extra):
    d = {"product": "ATLAS_A2", "outputs": list(outputs),
         "buffers": {"xGm": {"dtype": "half", "shape": [n], "init": "arange"},
                     "yGm": {"dtype": "half", "shape": [n]},
                     "u": {"position": "VECIN", "dtype": "half", "count": 512}},
         "ops": ops}
    if blocks != 1:
        d["blocks"] = blocks
    d.update(extra)
    return d


def copy_tile(src, dst, count=512):
    return [{"api": "DataCopy", "dst": "u", "src": src, "params": {"count": count}},
            {"api": "DataCopy", "dst": dst, "src": "u", "params": {"count": count}}]


def y_of(d, **kw):
    res = run_program(case_from_dict(d, **kw).point(0))
    data, mask = res.outputs["yGm"]
    return data, mask, res


# ------------------------------------------------------------------------------------------------ loops
def test_a_loop_with_the_variable_in_offsets():
    d = doc([{"for": "i", "range": 8, "body": copy_tile("xGm[i * 512]", "yGm[i * 512]")}])
    y, mask, res = y_of(d)
    assert np.array_equal(y, np.arange(4096, dtype=np.float16)) and mask.all()
    assert len(res.program.ops) == 16 and res.program.ops[5].env == (("i", 2),)


def test_nested_loops_ranges_and_loop_variables_in_struct_fields_and_counts():
    body = [{"api": "DataCopy", "dst": "u", "src": "xGm[(2 * i + j) * 512]",
             "params": {"DataCopyParams": {"blockCount": "=1 + j", "blockLen": "=32 // (1 + j)", "srcGap": 0,
                                           "dstGap": 0}}},
            {"api": "DataCopy", "dst": "yGm[(2 * i + j) * 512]", "src": "u", "params": {"count": "=256 * (2 - j)"}}]
    d = doc([{"for": "i", "range": [1, 4, 2], "body": [{"for": "j", "range": 2, "body": body}]}])
    y, mask, res = y_of(d, name="nest")
    envs = [dict(op.env) for op in res.program.ops]
    assert envs[::2] == [{"i": 1, "j": 0}, {"i": 1, "j": 1}, {"i": 3, "j": 0}, {"i": 3, "j": 1}]
    x = np.arange(4096, dtype=np.float16)
    for i in (1, 3):
        for j in (0, 1):
            k = (2 * i + j) * 512
            n = 256 * (2 - j)
            assert np.array_equal(y[k:k + n], x[k:k + n]) and mask[k:k + n].all()


def test_loop_errors_name_the_key_and_the_iteration():
    with pytest.raises(CaseError, match=r"ops\[0\].body\[0\].src: .*outside.*\(at i=9\)"):
        case_from_dict(doc([{"for": "i", "range": 10, "body": copy_tile("xGm[i * 512]", "yGm")}]))
    with pytest.raises(CaseError, match="ops\\[0\\].for: expected a loop variable name"):
        case_from_dict(doc([{"for": "block_idx", "range": 2, "body": copy_tile("xGm", "yGm")}]))
    with pytest.raises(CaseError, match="already the variable of an enclosing loop"):
        case_from_dict(doc([{"for": "i", "range": 2, "body": [{"for": "i", "range": 2,
                                                               "body": copy_tile("xGm", "yGm")}]}]))
    with pytest.raises(CaseError, match="not a sweep"):
        case_from_dict(doc([{"for": "i", "range": [1, 2, 3, 4], "body": copy_tile("xGm", "yGm")}]))
    with pytest.raises(CaseError, match=r"ops\[0\].repeat: unknown key"):
        case_from_dict(doc([{"for": "i", "range": 2, "repeat": 4, "body": copy_tile("xGm", "yGm")}]))
    with pytest.raises(CaseError, match="more than 200000 ops"):
        case_from_dict(doc([{"for": "i", "range": 150000, "body": copy_tile("xGm", "yGm")}]))


def test_a_loop_in_toml_with_ops_body_tables(tmp_path):
    text = """
product = "ATLAS_A2"
outputs = ["yGm"]
[sweep]
tiles = [2, 4]
[buffers.xGm]
dtype = "half"
shape = [2048]
init = "arange"
[buffers.yGm]
dtype = "half"
shape = [2048]
[buffers.u]
position = "VECIN"
dtype = "half"
count = "=2048 // tiles"
[[ops]]
for = "i"
range = "=tiles"
[[ops.body]]
api = "DataCopy"
dst = "u"
src = "xGm[i * (2048 // tiles)]"
params = {count = "=2048 // tiles"}
[[ops.body]]
api = "DataCopy"
dst = "yGm[i * (2048 // tiles)]"
src = "u"
params = {count = "=2048 // tiles"}
"""
    case = load_case_text(text)
    assert len(case) == 2
    for k in range(2):
        y = run_program(case.point(k)).outputs["yGm"][0]
        assert np.array_equal(y, np.arange(2048, dtype=np.float16))


# ------------------------------------------------------------------------------------------------ cores
def test_blocks_run_per_core_with_block_idx_and_their_own_pipe():
    d = doc(copy_tile("xGm[block_idx * 512]", "yGm[block_idx * 512]"), blocks=8)
    y, mask, res = y_of(d)
    assert np.array_equal(y, np.arange(4096, dtype=np.float16)) and mask.all() and not res.notes
    assert [op.block for op in res.program.ops] == [b for b in range(8) for _ in range(2)]


def test_each_core_has_its_own_local_memory():
    # core 1 never fills u: its CopyOut of u copies undefined bytes (another core's UB is not its UB)
    ops = [{"api": "DataCopy", "dst": "u", "src": "xGm", "params": {"count": "=512 * (1 - block_idx)"}},
           {"api": "DataCopy", "dst": "yGm[block_idx * 512]", "src": "u", "params": {"count": 512}}]
    y, mask, res = y_of(doc(ops, blocks=2, outputs=[{"buffer": "yGm", "allow_undefined": True}]))
    assert mask[:512].all() and not mask[512:1024].any()


def test_conflicting_writes_between_cores_are_undefined_and_warned():
    # both cores write yGm[0:512]: core 0 the first tile, core 1 the second tile (different values)
    d = doc(copy_tile("xGm[block_idx * 512]", "yGm"), blocks=2, outputs=[{"buffer": "yGm", "allow_undefined": True}])
    y, mask, res = y_of(d)
    x = np.arange(4096, dtype=np.float16)
    differ = x[:512].view(np.uint16) != x[512:1024].view(np.uint16)
    assert not mask[:512][differ].any() and mask[:512][~differ].all()
    assert any("block 1 wrote" in n and "yGm" in n for n in res.notes)
    # the same values from every core: no conflict
    d = doc(copy_tile("xGm", "yGm"), blocks=3, outputs=[{"buffer": "yGm", "allow_undefined": True}])
    y, mask, res = y_of(d)
    assert mask[:512].all() and not any("cores" in n for n in res.notes)


def test_blocks_errors():
    with pytest.raises(CaseError, match="blocks: 0 is outside"):
        case_from_dict(doc(copy_tile("xGm", "yGm"), blocks=0))
    with pytest.raises(CaseError, match="local buffer"):
        case_from_dict(doc(copy_tile("xGm", "yGm"), blocks=2, outputs=["u"]))
    with pytest.raises(CaseError, match="sweep variable must be an identifier and not"):
        case_from_dict(doc(copy_tile("xGm", "yGm"), sweep={"block_idx": [1, 2]}))


# ------------------------------------------------------------------------------------------ literal init
def test_literal_values_init():
    d = doc(copy_tile("xGm", "yGm", 16), n=16)
    d["buffers"]["xGm"]["init"] = {"kind": "values", "values": [[1599, 13, 123, 0] * 2] * 2}
    d["buffers"]["xGm"]["dtype"] = d["buffers"]["yGm"]["dtype"] = "int32_t"
    d["buffers"]["u"]["dtype"] = "int32_t"
    y, mask, res = y_of(d)
    assert y.tolist() == [1599, 13, 123, 0] * 4 and len(case_from_dict(d)) == 1
    d["buffers"]["xGm"]["init"] = {"kind": "values", "values": [1, 2, 3]}
    with pytest.raises(CaseError, match="3 values for a buffer of 16 elements"):
        case_from_dict(d)
    d["buffers"]["xGm"]["init"] = {"kind": "values", "values": [2**40] * 16}
    with pytest.raises(CaseError, match="do not fit int32_t"):
        case_from_dict(d)


def test_a_list_of_numbers_as_init_is_ambiguous():
    d = doc(copy_tile("xGm", "yGm"))
    d["buffers"]["xGm"]["init"] = [1599, 13, 123]
    with pytest.raises(CaseError, match='ambiguous: for literal contents write init = {kind = "values"'):
        case_from_dict(d)
    d["buffers"]["xGm"]["init"] = ["arange", "bits"]  # a list of kinds is a sweep, unambiguously
    assert len(case_from_dict(d)) == 2


# ------------------------------------------------------------------------------------------ compute steps
def compute_case(tmp_path, code, buffers=("u",), func="f", **extra):
    (tmp_path / "k.py").write_text(code)
    ops = [{"api": "DataCopy", "dst": "u", "src": "xGm", "params": {"count": 512}},
           {"compute": f"k.py:{func}", "buffers": list(buffers)},
           {"api": "DataCopy", "dst": "yGm", "src": "u", "params": {"count": 512}}]
    d = doc(ops, outputs=[{"buffer": "yGm", "allow_undefined": True}], **extra)
    return case_from_dict(d, base_dir=str(tmp_path), allow_python=True)


def test_compute_step_writes_and_marks_defined(tmp_path):
    case = compute_case(tmp_path, "def f(u, block_idx, scale=2):\n    u[...] = u.numpy() * scale + block_idx\n")
    y = run_program(case.point(0)).outputs["yGm"][0]
    assert np.array_equal(y[:512], np.arange(512, dtype=np.float16) * 2)


def test_compute_step_needs_allow_python(tmp_path):
    case = compute_case(tmp_path, "def f(u):\n    raise SystemExit\n")
    case.allow_python = False
    with pytest.raises(CaseRunError, match="--allow-python"):
        run_program(case.point(0))


def test_compute_step_errors(tmp_path):
    with pytest.raises(CaseError, match="defines no function 'add2' \\(did you mean 'add'"):
        compute_case(tmp_path, "def add(u):\n    pass\n", func="add2")
    (tmp_path / "sub").mkdir()
    with pytest.raises(CaseError, match="inside the case file's folder"):
        case_from_dict(doc([{"compute": "../k.py:f", "buffers": ["u"]}]), base_dir=str(tmp_path / "sub"))
    with pytest.raises(CaseError, match="unknown buffer 'v'"):
        compute_case(tmp_path, "def f(u):\n    pass\n", buffers=("v",))
    case = compute_case(tmp_path, "def f(u):\n    u[...] = 1 / 0\n")
    with pytest.raises(CaseRunError, match=r"ops\[1\] compute k.py:f\(u\): ZeroDivisionError"):
        run_program(case.point(0))


def test_compute_file_is_never_executed_when_loading(tmp_path):
    (tmp_path / "mark").unlink(missing_ok=True)
    code = f"open({str(tmp_path / 'mark')!r}, 'w').close()\ndef f(u):\n    pass\n"
    case = compute_case(tmp_path, code)
    case.allow_python = False
    assert not (tmp_path / "mark").exists()
    path = tmp_path / "c.json"
    d = json.loads(case.source)
    path.write_text(json.dumps(d))
    assert main(["check", str(path)]) == 0  # a dry run validates without running Python
    assert not (tmp_path / "mark").exists()


# ------------------------------------------------------------------------------------------ messages
def test_src_with_an_equals_sign_says_drop_it():
    with pytest.raises(CaseError, match="drop the '='"):
        case_from_dict(doc(copy_tile("=xGm[512]", "yGm")))


def test_a_misspelt_key_is_named_not_the_missing_one():
    d = doc(copy_tile("xGm", "yGm"))
    d["buffers"]["xGm"]["dtpye"] = d["buffers"]["xGm"].pop("dtype")
    with pytest.raises(CaseError, match="xGm.dtpye: unknown key \\(did you mean 'dtype'"):
        case_from_dict(d)
    d = doc(copy_tile("xGm", "yGm"))
    d["buffers"]["xGm"]["init"] = {"knd": "uniform"}
    with pytest.raises(CaseError, match="init.knd: unknown key \\(did you mean 'kind'"):
        case_from_dict(d)


def test_capacity_error_names_the_case_key():
    d = doc(copy_tile("xGm", "yGm"))
    d["buffers"]["u"]["count"] = 10**6
    with pytest.raises(CaseRunError, match="capacities") as info:
        run_program(case_from_dict(d).point(0))
    assert "TPipe(capacities" not in str(info.value)


def test_verify_did_you_mean_for_dtypes(tmp_path, capsys):
    a = tmp_path / "a.bin"
    np.zeros(4, np.float32).tofile(a)
    assert main(["verify", str(a), str(a), "--dtype", "bfloat16_tt"]) == 2
    assert "did you mean 'bfloat16_t'" in capsys.readouterr().err


def test_load_case_keeps_allow_python_off_by_default(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc(copy_tile("xGm", "yGm"))))
    assert load_case(p).allow_python is False


# ------------------------------------------------------------------------------------------------ check
def test_check_prints_bytes_per_op_and_writes_nothing(tmp_path, capsys, monkeypatch):
    import pathlib

    monkeypatch.chdir(tmp_path)
    root = pathlib.Path(__file__).resolve().parents[1]
    assert main(["check", str(root / "examples" / "pad_row_copy.toml")]) == 0
    out = capsys.readouterr().out
    assert "ops[1] DataCopyPad(xLocal, xGm)" in out
    assert "reads  xGm          bytes [0, 444)" in out and "writes yGm          bytes [0, 444)" in out
    assert "nothing written" in out and list(tmp_path.iterdir()) == []
    assert main(["check", str(root / "examples" / "matmul_a_nd2nz_sweep.toml")]) == 0
    assert "18 of 18 point(s) valid" in capsys.readouterr().out


def test_check_reports_failures_and_warnings(tmp_path, capsys):
    d = doc(copy_tile("xGm", "yGm", 500))  # 500 halves: rounded down to 992 bytes, a warning
    p = tmp_path / "w.json"
    p.write_text(json.dumps(d))
    assert main(["check", str(p)]) == 0
    captured = capsys.readouterr()
    assert "warning" in captured.err and "OK" in captured.out
    assert main(["check", str(p), "--strict"]) == 1
    d = doc(copy_tile("xGm", "yGm", 99999))
    p.write_text(json.dumps(d))
    assert main(["check", str(p)]) == 1
    assert "FAILED" in capsys.readouterr().err


def test_alloc_with_an_unknown_position_names_the_valid_ones():
    from fastcopy import TPipe
    from fastcopy.errors import FastCopyError

    with pytest.raises(FastCopyError, match="unknown position 'VECINN' \\(did you mean 'VECIN'\\?\\); local positions"):
        TPipe().alloc("VECINN", "half", 16)


def test_explain_works_on_looped_multicore_cases_with_compute_steps(capsys):
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    # flat op 3 of vector_add.toml: the first CopyOut, after a compute step (not run without --allow-python)
    assert main(["explain", str(root / "examples" / "vector_add.toml"), "--op", "3", "--color", "never"]) == 0
    assert "DataCopy(zGm, zLocal, 128)" in capsys.readouterr().out

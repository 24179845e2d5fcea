"""Malformed case files: each error names the file, the key path, and what was expected; nothing is written."""

from __future__ import annotations

import json

import pytest

from fastcopy.cli import main
from fastcopy.golden import CaseError, CaseRunError, load_case, load_case_text, run_program

BASE = """\
product = "ATLAS_A2"
outputs = ["yGm"]

[buffers.xGm]
dtype = "half"
shape = [512]
init = "arange"

[buffers.yGm]
dtype = "half"
shape = [512]

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = 512

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params = {count = 512}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params.DataCopyParams = {blockCount = 1, blockLen = 32}
"""


def _case_file(tmp_path, text, name="bad.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _load_error(tmp_path, old, new, name="bad.toml") -> CaseError:
    assert old in BASE
    path = _case_file(tmp_path, BASE.replace(old, new, 1), name)
    with pytest.raises(CaseError) as info:
        load_case(path)
    assert str(path) in str(info.value)
    return info.value


def test_base_case_is_valid(tmp_path):
    prog = load_case(_case_file(tmp_path, BASE)).point(0)
    assert [op.api for op in prog.ops] == ["DataCopy", "DataCopy"]


@pytest.mark.parametrize("old, new, path, words", [
    # unknown op
    ('api = "DataCopy"', 'api = "DataCopyy"', "ops[0].api", ["unknown op 'DataCopyy'", "did you mean 'DataCopy'",
                                                            "DataCopyPad"]),
    # unknown product
    ('product = "ATLAS_A2"', 'product = "ATLAS_A9"', "product", ["unknown product 'ATLAS_A9'", "ATLAS_350"]),
    # missing product / field / outputs
    ('product = "ATLAS_A2"\n', "", "product", ["missing key", "ATLAS_A2"]),
    ('dtype = "half"\nshape = [512]\ninit', 'shape = [512]\ninit', "buffers.xGm.dtype", ["missing key", "dtype"]),
    ('outputs = ["yGm"]\n', "", "outputs", ["missing key", "buffer names"]),
    ('src = "xGm"\n', "", "ops[0].src", ["missing key", "source buffer"]),
    ('count = 512\n', "", "buffers.xLocal.count", ["missing key", "number of elements"]),
    # wrong types
    ("blockLen = 32}", 'blockLen = "32"}', "ops[1].params.DataCopyParams.blockLen",
     ["expected a number (uint16_t)", "string '32'"]),
    ("blockLen = 32}", "blockLen = 32.5}", "ops[1].params.DataCopyParams.blockLen", ["not an integer"]),
    ("blockLen = 32}", "blockLen = 70000}", "ops[1].params.DataCopyParams.blockLen", ["70000", "uint16_t"]),
    ("params = {count = 512}", 'params = {count = "512"}', "ops[0].params.count", ["expected an integer"]),
    ("params = {count = 512}", "params = {count = -1}", "ops[0].params.count", ["outside [0, 4294967295]"]),
    ("shape = [512]\ninit", 'shape = [512, "a"]\ninit', "buffers.xGm.shape[1]", ["positive integer"]),
    ('count = 512\n', 'count = true\n', "buffers.xLocal.count", ["number of elements", "boolean"]),
    # unknown names
    ("blockLen = 32}", "blockLn = 32}", "ops[1].params.DataCopyParams.blockLn",
     ["no field 'blockLn'", "did you mean 'blockLen'", "srcGap"]),
    ("params = {count = 512}", "params = {Nd2NzParam = {ndNum = 1}}", "ops[0].params.Nd2NzParam",
     ["Nd2NzParams"]),
    ('src = "xGm"', 'src = "xGM"', "ops[0].src", ["unknown buffer 'xGM'", "did you mean 'xGm'"]),
    ('outputs = ["yGm"]', 'outputs = ["y"]', "outputs[0]", ["unknown buffer 'y'"]),
    ('position = "VECIN"', 'position = "VECIN2"', "buffers.xLocal.position", ["unknown position", "VECOUT"]),
    ('dtype = "half"\ncount', 'dtype = "hlaf"\ncount', "buffers.xLocal.dtype", ["unknown dtype 'hlaf'",
                                                                               "did you mean 'half'"]),
    ('init = "arange"', 'init = {kind = "uniformm"}', "buffers.xGm.init.kind", ["unknown input kind",
                                                                                "did you mean 'uniform'"]),
    ('init = "arange"', 'init = {kind = "uniform", lo = 0}', "buffers.xGm.init.lo", ["unknown key", "low"]),
    ('init = "arange"', 'init = {kind = "file", path = "nope.npy"}', "buffers.xGm.init.path", ["no such file"]),
    ('[buffers.yGm]\ndtype = "half"', '[buffers.yGm]\ndtype = "int8_t"\ninit = {kind = "uniform"}',
     "buffers.yGm.init.kind", ["floating-point dtype", "integers"]),
    ('[buffers.yGm]\ndtype = "half"', '[buffers.yGm]\ndtype = "int8_t"\ninit = {kind = "constant", value = 300}',
     "buffers.yGm.init", ["do not fit int8_t"]),
    ('shape = [512]\ninit = "arange"', 'count = 512\ninit = "arange"', "buffers.xGm.count",
     ["GM buffer takes a shape"]),
    ('count = 512\n', 'shape = [512]\n', "buffers.xLocal.shape", ["takes a count"]),
    # form of the call
    ("params = {count = 512}", "params = {count = 512, DataCopyParams = {blockLen = 1}}", "ops[0].params",
     ["got count, DataCopyParams", "{count} or {DataCopyParams}"]),
    ("params = {count = 512}", "params = {DataCopyPadExtParams = {isPad = true}}", "ops[0].params.DataCopyPadExtParams",
     ["DataCopy takes no struct"]),
    # product-specific C++ type
    ("params = {count = 512}", "params = {Nd2NzParams = {ndNum = 1, nValue = 16, dValue = 70000}}",
     "ops[0].params.Nd2NzParams.dValue", ["uint16_t", "Atlas A2"]),
    # a top-level key written after a table
    ("blockLen = 32}", "blockLen = 32}\nseed = 3", "ops[1].seed", ["unknown key", "top-level key"]),
    ("blockLen = 32}", "blockLen = 32}\nfoo = 1", "ops[1].foo", ["unknown key", "api, dst, src, params"]),
])
def test_bad_case_names_file_key_and_expectation(tmp_path, old, new, path, words):
    err = _load_error(tmp_path, old, new)
    assert err.path == path, str(err)
    for w in words:
        assert w in str(err), (w, str(err))


def test_error_gives_the_line_when_the_key_is_unique(tmp_path):
    err = _load_error(tmp_path, 'position = "VECIN"', 'position = "VECIN2"')
    assert err.line == BASE.splitlines().index('position = "VECIN"') + 1
    assert f"(line {err.line})" in str(err)


def test_missing_key_has_no_line(tmp_path):
    err = _load_error(tmp_path, 'dtype = "half"\nshape = [512]\ninit', 'shape = [512]\ninit')
    assert err.line is None  # "dtype" is written elsewhere: no line would be right


def test_toml_syntax_error_has_line(tmp_path):
    err = _load_error(tmp_path, "params = {count = 512}", "params = {count = 512")
    assert "TOML syntax error" in str(err) and "line 22" in str(err)


def test_json_case_and_json_syntax_error(tmp_path):
    doc = {"product": "ATLAS_A2", "outputs": ["y"], "buffers": {
        "x": {"dtype": "float", "shape": [64], "init": "arange"}, "y": {"dtype": "float", "shape": [64]},
        "u": {"position": "VECIN", "dtype": "float", "count": 64}},
        "ops": [{"api": "DataCopy", "dst": "u", "src": "x", "params": {"count": 64}},
                {"api": "DataCopy", "dst": "y", "src": "u", "params": {"count": 64}}]}
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc, indent=1))
    assert load_case(good).point(0).ops[1].api == "DataCopy"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=1).replace('"api": "DataCopy",', '"api": "DataCopy"', 1))
    with pytest.raises(CaseError, match=r"bad\.json \(line \d+\): JSON syntax error"):
        load_case(bad)
    doc["ops"][0]["params"] = {"count": "x"}
    bad.write_text(json.dumps(doc))
    with pytest.raises(CaseError, match=r"ops\[0\]\.params\.count: expected an integer"):
        load_case(bad)


def test_runtime_error_names_the_op_and_the_field(tmp_path):
    text = BASE.replace("params = {count = 512}", "params.Nd2NzParams = {ndNum = 1, nValue = 16, dValue = 32, "
                        "srcDValue = 32, dstNzC0Stride = 0, dstNzNStride = 1}").replace('"VECIN"', '"A1"')
    path = _case_file(tmp_path, text)
    with pytest.raises(CaseRunError) as info:
        run_program(load_case(path).point(0))
    msg = str(info.value)
    assert str(path) in msg and "ops[0] DataCopy(xLocal, xGm): RangeError" in msg
    assert "dstNzC0Stride=0" in msg and info.value.key == "ops[0].params.Nd2NzParams.dstNzC0Stride"


def test_failed_run_writes_nothing(tmp_path, capsys):
    path = _case_file(tmp_path, BASE.replace("blockLen = 32}", "blockLen = 64}"))
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "ops[1] DataCopy(yGm, xLocal): OutOfBoundsError" in err
    assert not out.exists()


def test_cli_run_reports_load_errors(tmp_path, capsys):
    path = _case_file(tmp_path, BASE.replace('api = "DataCopy"', 'api = "Copy"', 1))
    assert main(["run", str(path), "-o", str(tmp_path / "out")]) == 1
    assert "ops[0].api: unknown op 'Copy'" in capsys.readouterr().err


def test_unknown_case_file(tmp_path):
    with pytest.raises(CaseError, match="cannot read the case file"):
        load_case(tmp_path / "missing.toml")


def test_sweep_errors(tmp_path):
    with pytest.raises(CaseError, match=r"sweep\.n: expected a non-empty list"):
        load_case_text(BASE.replace('[buffers.xGm]', '[sweep]\nn = []\n\n[buffers.xGm]'))
    with pytest.raises(CaseError, match=r"ops\[0\]\.params\.count: expression 'q \* 2': unknown name 'q'"):
        load_case_text(BASE.replace("count = 512}", 'count = "=q * 2"}'))
    with pytest.raises(CaseError, match=r"only arithmetic"):
        load_case_text(BASE.replace("count = 512}", 'count = "=__import__(1)"}'))
    with pytest.raises(CaseError, match=r"ops\[1\]\.params\.DataCopyParams\.blockLen: empty list"):
        load_case_text(BASE.replace("blockLen = 32}", "blockLen = []}"))

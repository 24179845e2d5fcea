"""Golden files and the CLI under hostile input (issue 10 items 9-15): safe folder names, file collisions,
symlinks, atomic whole-folder writes, bounded case expressions and sizes, outputs nobody wrote, bad shapes."""

from __future__ import annotations

import json
import os
import pathlib

import numpy as np
import pytest

from fastcopy import FastCopyWarning, GlobalTensor, TPipe, TPosition, from_nz, to_nz
from fastcopy.cli import main
from fastcopy.golden import CaseError, load_case, load_case_text, run_program, write_golden, write_result
from fastcopy.golden.files import write_point
from fastcopy.golden.engine import CaseRunError
from fastcopy.golden.store import GoldenWriteError, safe_component

ROOT = pathlib.Path(__file__).resolve().parents[1]

COPY = """
name = "{name}"
product = "ATLAS_A2"
outputs = {outputs}

[buffers.xGm]
dtype = "half"
shape = [256]
init = {{kind = "arange"}}

[buffers.yGm]
dtype = "half"
shape = [256]

[buffers.u]
position = "VECIN"
dtype = "half"
count = 256

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params = {{count = 256}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {{count = {count}}}
"""


def case_text(name="c", outputs='["yGm"]', count=256):
    return COPY.format(name=name, outputs=outputs, count=count)


def write_case(tmp_path, text, fname="case.toml"):
    p = tmp_path / fname
    p.write_text(text)
    return str(p)


def tree(path) -> dict:
    """Every file under ``path`` -> its bytes (symlinks as their target text)."""
    out = {}
    for root, dirs, files in os.walk(path):
        for f in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            p = os.path.join(root, f)
            rel = os.path.relpath(p, path)
            out[rel] = ("link:" + os.readlink(p)) if os.path.islink(p) else open(p, "rb").read()
    return out


# ---------------------------------------------------------------------------------------- item 9: case names
@pytest.mark.parametrize("name", ["../../../../tmp/x", "/etc/passwd", "..", ".hidden", "a/b", "a\\b", "", "~"])
def test_case_name_becomes_one_safe_folder_under_out(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "work").mkdir()
    path = write_case(tmp_path / "work", case_text(name=name))
    monkeypatch.chdir(tmp_path / "work")
    assert main(["run", path, "-q"]) == 0
    made = os.listdir(tmp_path / "work" / "out")
    assert made == [safe_component(load_case(path).name)] and not made[0].startswith(".")
    assert sorted(os.listdir(tmp_path)) == ["work"]  # nothing outside the working folder


def test_safe_component():
    assert safe_component("../../x") == "_.._x"
    assert safe_component("..") == "case" and safe_component("") == "case"
    assert safe_component("ok-name_1.v2") == "ok-name_1.v2"
    assert safe_component("naïve") == "na_ve"


# ------------------------------------------------------------------------------------- item 10: collisions
def test_output_data_and_mask_files_cannot_collide(tmp_path):
    outs = '[{buffer = "yGm", file = "x"}, {buffer = "xGm", file = "x.mask"}]'
    with pytest.raises(CaseError, match="two files would be written to 'output/x.mask.bin'"):
        load_case_text(case_text(outputs=outs))
    path = write_case(tmp_path, case_text(outputs=outs))
    assert main(["run", path, "-o", str(tmp_path / "o"), "-q"]) == 1
    assert not (tmp_path / "o").exists()


def test_a_collision_at_one_sweep_point_is_refused_at_that_point():
    """The file list is checked at every point (apart from the outputs section the sweep template reuses)."""
    outs = '[{buffer = "yGm", file = ["a", "x"]}, {buffer = "xGm", file = "x.mask"}]'
    case = load_case_text(case_text(outputs=outs))
    assert len(case) == 2
    for _ in range(2):  # (a point compiled again, the template warm)
        case.point(0)
        with pytest.raises(CaseError, match="two files would be written to 'output/x.mask.bin'"):
            case.point(1)


def test_collisions_on_a_case_insensitive_disk_are_refused():
    outs = '[{buffer = "yGm", file = "Res"}, {buffer = "xGm", file = "res"}]'
    with pytest.raises(CaseError, match="case-insensitive"):
        load_case_text(case_text(outputs=outs))


def test_write_golden_checks_names_and_collisions(tmp_path):
    y = np.ones(4, np.float32)
    with pytest.raises(GoldenWriteError, match="not a plain file name"):
        write_golden(str(tmp_path / "g"), {"../x": y}, {"y": y})
    with pytest.raises(GoldenWriteError, match="two files"):
        write_golden(str(tmp_path / "g"), {}, {"a.mask": y, "a": y})
    assert not (tmp_path / "g").exists()


# ---------------------------------------------------------------------------------------- item 11: symlinks
def test_symlink_inside_an_existing_golden_folder_is_never_written_through(tmp_path):
    path = write_case(tmp_path, case_text())
    s = tmp_path / "S"
    assert main(["run", path, "-o", str(s), "-q"]) == 0
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"precious")
    (s / "output" / "golden.bin").unlink()
    (s / "output" / "golden.bin").symlink_to(victim)
    assert main(["run", path, "-o", str(s), "-q"]) == 0
    assert victim.read_bytes() == b"precious"
    assert not (s / "output" / "golden.bin").is_symlink()  # the folder was replaced as a whole


def test_a_symlinked_target_folder_is_refused(tmp_path, capsys):
    path = write_case(tmp_path, case_text())
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "S").symlink_to(real)
    assert main(["run", path, "-o", str(tmp_path / "S"), "-q"]) == 1
    assert "symbolic link" in capsys.readouterr().err
    assert os.listdir(real) == []


def test_a_folder_that_is_not_a_golden_folder_is_never_replaced(tmp_path, capsys):
    path = write_case(tmp_path, case_text())
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    assert main(["run", path, "-o", str(home), "-q"]) == 1
    assert "not a fastcopy golden folder" in capsys.readouterr().err
    assert tree(home) == {"notes.txt": b"mine"}


def test_summary_json_symlink_is_not_followed(tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "summary.json").symlink_to(victim)
    assert main(["batch", str(ROOT / "examples" / "slice_rows.toml"), "-o", str(out), "-q"]) == 0
    assert victim.read_text() == "precious"
    assert not (out / "summary.json").is_symlink() and json.loads((out / "summary.json").read_text())["ok"]


# ------------------------------------------------------------------------- item 12: atomic, stale, sha256
def test_a_different_case_into_the_same_folder_leaves_no_stale_files(tmp_path):
    two = write_case(tmp_path, case_text(outputs='["yGm", "xGm"]'), "two.toml")
    one = write_case(tmp_path, case_text(), "one.toml")
    d = tmp_path / "d"
    assert main(["run", two, "-o", str(d), "-q"]) == 0
    assert (d / "output" / "xGm.bin").exists()
    assert main(["run", one, "-o", str(d), "-q"]) == 0
    manifest = json.loads((d / "manifest.json").read_text())
    on_disk = {k.replace(os.sep, "/") for k in tree(d)}
    assert on_disk == set(manifest["files"])


def test_a_failing_run_leaves_the_previous_folder_untouched(tmp_path):
    good = write_case(tmp_path, case_text(), "good.toml")
    bad = write_case(tmp_path, case_text(count=99999), "bad.toml")
    d = tmp_path / "d"
    assert main(["run", good, "-o", str(d), "-q"]) == 0
    before = tree(d)
    assert main(["run", bad, "-o", str(d), "-q"]) == 1
    assert tree(d) == before
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []  # no temporary leftovers


def test_an_exception_while_writing_discards_the_new_folder(tmp_path, monkeypatch):
    from fastcopy.golden import store

    prog = load_case_text(case_text()).point(0)
    res = run_program(prog)
    write_result(res, str(tmp_path / "d"))
    before = tree(tmp_path / "d")
    calls = []
    real = store._write_new

    def failing(path, data):
        calls.append(path)
        if path.endswith(os.path.join("output", "golden.mask.bin")):
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(store, "_write_new", failing)
    for write in (write_result, write_point):
        calls.clear()
        with pytest.raises(KeyboardInterrupt):
            write(res, str(tmp_path / "d"))
        assert len(calls) == 3  # (the input, the golden, then the mask raised)
        assert tree(tmp_path / "d") == before
        assert sorted(os.listdir(tmp_path)) == ["d"]


def test_verify_detects_a_golden_that_does_not_match_its_manifest(tmp_path, capsys):
    path = write_case(tmp_path, case_text())
    d = tmp_path / "d"
    assert main(["run", path, "-o", str(d), "-q"]) == 0
    golden = d / "output" / "golden.bin"
    out = tmp_path / "k.bin"
    data = bytearray(golden.read_bytes())
    out.write_bytes(bytes(data))
    assert main(["verify", str(out), str(golden)]) == 0
    assert main(["verify", str(out), str(d)]) == 0  # the folder works too
    data[0] ^= 1
    golden.write_bytes(bytes(data))  # a changed golden, e.g. new data beside an old manifest
    out.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["verify", str(out), str(golden)]) == 2
    assert "does not match its manifest" in capsys.readouterr().err


def test_stale_temporary_folders_of_dead_writers_are_cleaned(tmp_path):
    path = write_case(tmp_path, case_text())
    dead = tmp_path / ".d.fastcopy-new-999999999-abc"
    dead.mkdir()
    (dead / "junk").write_text("x")
    assert main(["run", path, "-o", str(tmp_path / "d"), "-q"]) == 0
    assert not dead.exists()


# ------------------------------------------------------------------ item 13: bounded expressions and sizes
@pytest.mark.parametrize("key, value, words", [
    ("count", '"=9**9**9**9"', "too large"),
    ("count", "\"='a' * 10**10\"", "at most 256"),
    ("count", '"=2**200"', r"2\*\*128"),
])
def test_hostile_expressions_fail_fast(key, value, words):
    text = case_text().replace("count = 256\n", f"{key} = {value}\n", 1)
    with pytest.raises(CaseError, match=words):
        load_case_text(text)


def test_dtype_expression_string_bomb():
    text = case_text().replace('dtype = "half"\nshape = [256]\ninit', "dtype = \"='a' * 10**10\"\nshape = [256]\ninit", 1)
    with pytest.raises(CaseError, match="at most 256"):
        load_case_text(text)


def test_buffer_size_limit_is_checked_before_allocating(tmp_path, capsys):
    text = case_text().replace("shape = [256]\ninit", "shape = [1000000, 1000000, 1000]\ninit", 1)
    with pytest.raises(CaseError, match=r"buffers.xGm.shape: 2000000000000000 bytes .* more than the limit"):
        load_case_text(text)
    with pytest.raises(CaseError, match="limit of 256 bytes"):
        load_case_text(case_text(), max_bytes=256)
    load_case_text(case_text(), max_bytes=512)
    path = write_case(tmp_path, case_text())
    assert main(["run", path, "-o", str(tmp_path / "o"), "--max-bytes", "256", "-q"]) == 1
    assert "--max-bytes" in capsys.readouterr().err
    assert main(["run", path, "-o", str(tmp_path / "o"), "--max-bytes", "1K", "-q"]) == 0


def test_deeply_nested_json_is_one_line(tmp_path, capsys):
    path = write_case(tmp_path, '{"name": ' + "[" * 100000 + "]" * 100000 + "}", "deep.json")
    assert main(["run", path, "-q"]) == 1
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_duplicate_json_keys_are_an_error():
    with pytest.raises(CaseError, match="product: key given twice"):
        load_case_text('{"product": "ATLAS_A2", "product": "ATLAS_350"}', "c.json", fmt="json")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_inf_where_a_finite_number_is_needed(value):
    doc = {"product": "ATLAS_A2", "outputs": ["y"],
           "buffers": {"x": {"dtype": "float", "shape": [8], "init": {"kind": "uniform", "low": 0, "high": 1}},
                       "y": {"dtype": "float", "shape": [8]}},
           "ops": [{"api": "DataCopy", "dst": "y", "src": "x", "params": {"count": 8}}]}
    text = json.dumps(doc).replace('"high": 1', f'"high": {value}')
    with pytest.raises(CaseError, match="not a finite number"):
        load_case_text(text, "c.json", fmt="json")
    text = json.dumps(doc).replace('"count": 8', f'"count": {value}')
    with pytest.raises(CaseError, match="expected an integer"):
        load_case_text(text, "c.json", fmt="json")


def test_a_constant_float_input_may_be_infinite():
    doc = {"product": "ATLAS_A2", "outputs": ["u"],
           "buffers": {"x": {"dtype": "float", "shape": [8], "init": {"kind": "constant", "value": float("inf")}},
                       "u": {"dtype": "float", "position": "VECIN", "count": 8}},
           "ops": [{"api": "DataCopy", "dst": "u", "src": "x", "params": {"count": 8}}]}
    res = run_program(load_case_text(json.dumps(doc), "c.json", fmt="json").point(0))
    assert np.isinf(res.outputs["u"][0]).all()


# -------------------------------------------------------------------------- item 14: outputs nobody wrote
def test_an_output_nobody_wrote_fails_run_and_verify(tmp_path, capsys):
    text = case_text()
    text = text[:text.rindex("[[ops]]")]  # the CopyOut forgotten
    path = write_case(tmp_path, text)
    for extra in ([], ["--strict"]):
        assert main(["run", path, "-o", str(tmp_path / "o"), "-q", *extra]) == 1
        assert "no defined element" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    any_file = tmp_path / "any.bin"
    np.zeros(256, np.float16).tofile(any_file)
    g = tmp_path / "g.bin"
    np.zeros(256, np.float16).tofile(g)
    np.zeros(256, np.uint8).tofile(tmp_path / "g.mask.bin")
    assert main(["verify", str(any_file), str(g), "--dtype", "half"]) == 2
    assert "nothing to compare" in capsys.readouterr().err


def test_undeclared_undefined_elements_warn_and_fail_under_strict(tmp_path, capsys):
    path = write_case(tmp_path, case_text(count=128))  # half of yGm never written
    assert main(["run", path, "-o", str(tmp_path / "o"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "output yGm: 128 of 256 elements are undefined" in err and "allow_undefined" in err
    assert main(["run", path, "-o", str(tmp_path / "o2"), "-q", "--strict"]) == 1
    assert "--strict" in capsys.readouterr().err
    allowed = write_case(tmp_path, case_text(count=128, outputs='[{buffer = "yGm", allow_undefined = true}]'),
                         "allowed.toml")
    assert main(["run", allowed, "-o", str(tmp_path / "o3"), "-q", "--strict"]) == 0
    assert "undefined" not in capsys.readouterr().err
    manifest = json.loads((tmp_path / "o3" / "manifest.json").read_text())
    assert manifest["buffers"][1]["allow_undefined"] is True


def test_setitem_marks_computed_values_defined():
    pipe = TPipe()
    t = pipe.alloc(TPosition.VECOUT, "float", 64)
    assert not t.defined().any()
    t.numpy()[:] = 1.0  # raw write: data only (documented)
    assert not t.defined().any()
    t[:32] = np.arange(32)
    assert t.defined().sum() == 32 and t.numpy()[5] == 5
    t[...] = 2.0
    assert t.defined().all()
    g = GlobalTensor(np.zeros((4, 8), np.int16), defined=False)
    g[1] = 7
    assert g.defined().sum() == 8 and (g.numpy()[1] == 7).all() and g.defined()[1].all()
    g[2:, ::2] = -1
    assert g.defined().sum() == 16


def test_write_golden_refuses_an_all_undefined_output_and_warns_on_some(tmp_path):
    pipe = TPipe()
    t = pipe.alloc(TPosition.VECOUT, "float", 64)
    t.numpy()[:] = 1.0  # the silent path
    with pytest.raises(GoldenWriteError, match=r"no defined element.*tensor\[\.\.\.\] = values"):
        write_golden(str(tmp_path / "g"), {}, {"y": t})
    assert not (tmp_path / "g").exists()
    t[:10] = 3.0
    with pytest.warns(FastCopyWarning, match="54 undefined of 64"):
        write_golden(str(tmp_path / "g"), {}, {"y": t})
    write_golden(str(tmp_path / "g2"), {}, {"y": t}, allow_undefined=True)


# ------------------------------------------------------------------------------------- item 15: bad shapes
@pytest.mark.parametrize("shape", [["-512", "-1"], ["0", "4"], ["4x-2"], ["2.5", "4"]])
def test_verify_rejects_bad_shapes(tmp_path, capsys, shape):
    a = tmp_path / "a.bin"
    np.zeros(8, np.float32).tofile(a)
    assert main(["verify", str(a), str(a), "--dtype", "float", "--shape", *shape]) == 2
    assert "--shape" in capsys.readouterr().err


@pytest.mark.parametrize("shape", [(40.7, 33.2), (40.0, 33), (True, 33), ("40", 33)])
def test_from_nz_rejects_non_integer_shapes(shape):
    from fastcopy.errors import ParamError

    nz = to_nz(np.zeros((40, 33), np.float16))
    with pytest.raises(ParamError, match="tuple of integers"):
        from_nz(nz, shape=shape)
    assert from_nz(nz, shape=(np.int64(40), 33)).shape == (40, 33)


def test_run_error_is_case_run_error():
    text = case_text(count=99999)
    with pytest.raises(CaseRunError):
        run_program(load_case_text(text).point(0))


def test_a_case_may_replace_the_folder_of_an_earlier_sweep(tmp_path):
    d = tmp_path / "d"
    assert main(["run", str(ROOT / "examples" / "matmul_a_nd2nz_sweep.toml"), "-o", str(d), "-q"]) == 0
    assert (d / "0000" / "manifest.json").exists()
    path = write_case(tmp_path, case_text())
    assert main(["run", path, "-o", str(d), "-q"]) == 0
    assert sorted(os.listdir(d)) == ["input", "manifest.json", "output"]
    (d / "mine.txt").write_text("x")
    assert main(["run", path, "-o", str(d), "-q"]) == 1

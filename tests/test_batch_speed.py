"""What makes batches fast must not change a byte: the batch runner reuses one TPipe per thread
(``run_program(reuse=True)``, ``TPipe.restart``), and every program must see exactly a new pipe (poison bytes,
undefined, nothing allocated, registers at their defaults); the writer scans a parent folder for stale
temporaries once, not once per point folder."""

from __future__ import annotations

import pathlib

import numpy as np

from fastcopy import DataCopy, GlobalTensor, SetPadValue, TPipe, TPosition
from fastcopy.golden import load_case, load_case_text, run_batch, run_program
from fastcopy.golden import store

ROOT = pathlib.Path(__file__).resolve().parents[1]

# leaves a pad register and a loop mode set on an Atlas 350 pipe, and writes part of UB
STATEFUL = """\
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
"""

# the same product afterwards, without setting anything: must not see the loop mode, and reads undefined UB
PLAIN = """\
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
api = "DataCopyPad"
dst = "u"
src = "x"
params.DataCopyExtParams = {blockCount = 3, blockLen = 48}
params.DataCopyPadExtParams = {isPad = true, paddingValue = 0}
"""


def _bytes(res) -> dict:
    return {k: (d.tobytes(), m.tobytes()) for k, (d, m) in res.outputs.items()}


def test_reused_pipes_give_the_bytes_of_new_pipes():
    progs = [load_case_text(STATEFUL).point(), load_case_text(PLAIN).point()]
    for name in ("pad_row_copy.toml", "datacopy_tiles.toml", "matmul_nd2nz_nz2nd.toml"):
        progs.append(load_case(ROOT / "examples" / name).point())
    sweep = load_case(ROOT / "examples" / "matmul_a_nd2nz_sweep.toml")
    progs += [sweep.point(i) for i in (0, 5, 17)]
    fresh = [_bytes(run_program(p)) for p in progs]
    order = [0, 1, 2, 0, 3, 1, 4, 5, 6, 7, 1, 2, 7, 5]  # state left behind by one program, then another
    kept = [(k, run_program(progs[k], reuse=True)) for k in order]
    for k, res in kept:  # results stay valid after later programs ran on the same pipe
        assert _bytes(res) == fresh[k], k


def test_restart_is_a_new_pipe():
    pipe = TPipe(product="ATLAS_A2", poison=0xAB)
    u = pipe.alloc(TPosition.VECIN, np.float16, 256)
    with pipe:
        DataCopy(u, GlobalTensor(np.ones(256, np.float16)), 256)
        SetPadValue(np.float16(3), pipe=pipe)
    assert pipe.state and u.defined().all()
    pipe.restart()
    assert not pipe.state
    v = pipe.alloc(TPosition.VECIN, np.float16, 256)
    assert v.GetPhyAddr() == 0 and not v.defined().any()
    assert (v.numpy().view(np.uint8) == 0xAB).all()


def test_a_sweep_lists_its_parent_folder_once(tmp_path, monkeypatch):
    stale = tmp_path / "out" / "matmul_a_nd2nz_sweep" / ".0003.fastcopy-new-999999999-abc"
    stale.mkdir(parents=True)  # a dead writer's leftover: still removed
    other = stale.parent / ".notes.fastcopy-new-999999999-abc"
    other.mkdir()  # not a folder this batch writes: left alone (its writer may run on another host)
    listed = []
    real = store.os.listdir
    monkeypatch.setattr(store.os, "listdir", lambda p: listed.append(p) or real(p))
    rep = run_batch([ROOT / "examples" / "matmul_a_nd2nz_sweep.toml"], str(tmp_path / "out"))
    assert rep.ok and len(rep.outcomes) == 18 and not stale.exists() and other.exists()
    parents = [p for p in listed if str(p).endswith("matmul_a_nd2nz_sweep")]
    assert len(parents) == 1, listed


def test_a_killed_writer_not_yet_reaped_counts_as_gone():
    import os
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while store._pid_alive(child.pid) and time.monotonic() < deadline:  # a zombie until we wait() for it
        time.sleep(0.05)
    assert not store._pid_alive(child.pid) and child.poll() == 0 and store._pid_alive(os.getpid())


# ------------------------------------------------------------------------------------ cheaper point writes
def test_a_point_folder_has_the_modes_of_a_new_folder_and_no_leftovers(tmp_path):
    import os

    prog = load_case(ROOT / "examples" / "matmul_a_nd2nz_sweep.toml").point(3)
    res = run_program(prog)
    mask = os.umask(0o027)
    try:
        from fastcopy.golden import write_result

        write_result(res, str(tmp_path / "p"))
        write_result(res, str(tmp_path / "p"))  # replaced as a whole
    finally:
        os.umask(mask)
    for d in (tmp_path / "p", tmp_path / "p" / "input", tmp_path / "p" / "output"):
        assert d.stat().st_mode & 0o777 == 0o750, d
    assert (tmp_path / "p" / "manifest.json").stat().st_mode & 0o777 == 0o640
    assert sorted(os.listdir(tmp_path)) == ["p"]


def test_a_parent_folder_removed_during_a_batch_is_made_again(tmp_path):
    import shutil

    from fastcopy.golden import write_result

    case = load_case(ROOT / "examples" / "matmul_a_nd2nz_sweep.toml")
    res = run_program(case.point(0))
    write_result(res, str(tmp_path / "out" / "a"))
    shutil.rmtree(tmp_path / "out")  # the process remembers the parent: it must still write
    write_result(res, str(tmp_path / "out" / "b"))
    assert (tmp_path / "out" / "b" / "manifest.json").is_file()


def test_the_manifest_encoder_writes_json_dumps_bytes():
    import json

    from fastcopy.golden import files

    values = [1, 1.0, -0.0, 1e300, float("nan"), float("-inf"), True, None, "é\"\\\n", [], {}, [1, [2.5, "x"]],
              {"a": {"b": [np.int64(3), np.float32(0.1), b"\x01\xff"]}, "c": np.uint8(7)}]
    for v in values:
        assert files._dumps(v) == json.dumps(v, ensure_ascii=False, default=files._json_default)


# --------------------------------------------------------------------------- small calls stay on numpy
def test_a_batch_of_small_points_never_loads_numba(tmp_path):
    """A batch keeps small calls on the numpy kernels however many there are (numba costs ~0.14 s a process);
    outside the batch the usual rule is back."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from fastcopy import config\n"
        "from fastcopy.dma import kernels\n"
        "from fastcopy.golden import run_batch\n"
        "before = config.CALLS_BEFORE_KERNELS\n"
        f"rep = run_batch([{str(ROOT / 'bench' / 'cases' / 'datacopy_sweep_1000.toml')!r}], sys.argv[1])\n"
        "assert rep.ok and len(rep.outcomes) == 1000\n"
        "assert not kernels.loaded() and 'numba' not in sys.modules, 'numba loaded'\n"
        "assert config.CALLS_BEFORE_KERNELS == before\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_numpy_strided_views_match_the_index_path():
    """The numpy kernels' strided views (a few offsets) give the bytes of the fancy-index path, also when the
    source and destination are the same array (every read before any write) and strides are negative."""
    from fastcopy.dma import abi, npkernels

    rng = np.random.default_rng(5)
    for trial in range(400):
        n_off = int(rng.integers(1, npkernels.VIEW_OFFSETS + 3))
        burst = int(rng.integers(1, 5))
        loops = [(int(rng.integers(1, 4)), int(rng.integers(-8, 9)), int(rng.integers(-8, 9))) for _ in range(2)]
        loops += [(1, 0, 0)] * (abi.MAX_LOOPS - len(loops))
        doffs = [int(x) for x in rng.integers(0, 40, n_off)]
        soffs = [int(x) for x in rng.integers(0, 40, n_off)]
        i_lo = int(rng.integers(0, loops[0][0]))
        o_lo = int(rng.integers(0, n_off))
        meta = abi.pack(burst, loops, (o_lo, n_off, i_lo, loops[0][0]), doffs, soffs)
        size = 256
        same = trial % 2 == 0
        src = rng.integers(0, 2**16, size, dtype=np.uint16)
        dst = src if same else rng.integers(0, 2**16, size, dtype=np.uint16)
        want_dst = dst.copy()
        want_src = want_dst if same else src.copy()
        base = 100
        try:
            d_idx = npkernels._index(base, meta, 2)
            s_idx = npkernels._index(base, meta, 1)
            d_units = np.arange(size)[d_idx]
        except IndexError:
            continue
        if len(np.unique(d_units)) != d_units.size or d_units.min() < 0:  # the lowering never overlaps writes
            continue
        if not (0 <= np.arange(size)[s_idx].min()):
            continue
        want_dst[d_idx] = want_src[s_idx]
        npkernels.copy_strided(dst, base, src, base, meta)
        assert np.array_equal(dst, want_dst), (trial, meta)
        fill = dst.copy()
        want_fill = dst.copy()
        want_fill[d_idx] = 0x5A5A
        npkernels.fill_strided(fill, base, meta, 0x5A5A)
        assert np.array_equal(fill, want_fill), trial
        whole = meta.copy()
        whole[abi.RANGE:abi.RANGE + 4] = (0, n_off, 0, loops[0][0])
        try:
            read = fill[npkernels._index(base, whole, 1)]
        except IndexError:
            continue
        for arr in (fill, want_src):
            want = bool(np.all(arr[npkernels._index(base, whole, 1)] == 0x5A5A)) if arr is want_src else \
                bool(np.all(read == 0x5A5A))
            assert npkernels.all_set(arr, base, meta, 0x5A5A) == want, trial


def test_batch_workers_keep_small_calls_on_numpy():
    """A forked worker keeps the setting for its whole life (a context manager entered and dropped would
    restore it at once when garbage-collected)."""
    import gc
    import signal

    from fastcopy import config
    from fastcopy.golden import batch

    before = config.CALLS_BEFORE_KERNELS
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        batch._worker_init([], [], False, False)
        gc.collect()
        assert config.CALLS_BEFORE_KERNELS > 10**15
    finally:
        config.CALLS_BEFORE_KERNELS = before
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])


def test_batches_in_two_threads_restore_the_setting_when_both_end():
    import threading

    from fastcopy import config
    from fastcopy.golden.work import small_calls_in_numpy

    before = config.CALLS_BEFORE_KERNELS
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with small_calls_in_numpy():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    t = threading.Thread(target=first)
    t.start()
    first_in.wait(10)
    with small_calls_in_numpy():
        second_in.set()
        first_out.wait(10)  # the first batch ended while this one runs: still on numpy
        assert config.CALLS_BEFORE_KERNELS > 10**15
    t.join()
    assert config.CALLS_BEFORE_KERNELS == before


def test_a_section_that_copies_the_variables_records_them_all():
    from fastcopy.golden.template import TemplateCompiler

    comp = TemplateCompiler({}, {}, "x.toml", "", ".", {"a": 1, "b": 2}, None)
    log: dict = {}
    comp._logs.append(log)
    assert dict(comp.names) == {"a": 1, "b": 2}
    assert ("names",) in log


# ------------------------------------------------------------------ restart refills only the touched bytes
def _all_poison_and_undefined(pipe) -> None:
    """Every on-chip buffer of ``pipe`` (made now if needed) is what a new TPipe's is: poison, all undefined."""
    from fastcopy.products import Phys

    for phys in pipe.capacities:
        if phys is Phys.GM:
            continue
        mem = pipe.buffer(phys)
        assert (mem.data == pipe.poison).all(), phys
        assert not mem.plane_bytes(0, mem.size).any(), phys


def test_restart_refills_every_byte_a_tensor_could_have_written():
    from fastcopy.memory import LocalTensor
    from fastcopy.products import Phys

    pipe = TPipe(product="ATLAS_A2", poison=0x5A)
    ub = pipe.capacities[Phys.UB]
    for rnd in range(3):  # (the touched range of one round must not leak into the next)
        a = pipe.alloc(TPosition.VECIN, np.int8, 64)
        b = pipe.alloc(TPosition.VECOUT, np.int8, 32, addr=ub - 32 - 32 * rnd)  # far up, explicit address
        a.numpy()[:] = 1  # raw writes (not marked defined)
        b[...] = np.arange(32, dtype=np.int8)
        a[16].numpy()[:] = 2  # a sub-tensor
        bias = LocalTensor(pipe, TPosition.C2, pipe.buffer(Phys.BT), 64, np.dtype(np.int32), 8)  # (as Mmad does)
        bias[...] = np.full(8, -1, np.int32)
        pipe.restart()
        _all_poison_and_undefined(pipe)
        pipe.restart()


def test_restart_after_every_example_is_a_new_pipe():
    from fastcopy.golden import engine

    for path in sorted((ROOT / "examples").glob("*.toml")):
        case = load_case(path, allow_python=True)
        for i in range(min(len(case), 3)):
            run_program(case.point(i), reuse=True)
    pipes = list(engine._PIPES.__dict__.get("pipes", {}).values())
    assert len(pipes) >= 2
    for pipe in pipes:
        pipe.restart()
        _all_poison_and_undefined(pipe)


def test_manifests_from_kept_lines_are_the_manifests(tmp_path, monkeypatch):
    """manifest.json of every example point (and of points written in any order, the kept lines of one case
    serving another's) is the JSON of the manifest write_result returns, and the text a writer with no kept
    line writes."""
    import json

    from fastcopy.golden import files, write_result

    written = []
    for path in sorted((ROOT / "examples").glob("*.toml")):
        case = load_case(path, allow_python=True)
        for i in range(min(len(case), 4)):
            res = run_program(case.point(i), reuse=True)
            d = tmp_path / f"{path.stem}-{i}"
            written.append((write_result(res, str(d), allow_empty=True), (d / "manifest.json").read_text()))
    for manifest, text in written:
        assert json.loads(text) == json.loads(json.dumps(manifest, default=files._json_default))
        monkeypatch.setattr(files, "_LINES", {})
        monkeypatch.setattr(files, "_KEYS", {})
        assert files.manifest_text(manifest) == text


def test_alloc_by_name_or_member_after_the_first():
    """TPipe.alloc remembers what a position resolves to: later allocations by name or by member, and a bad
    position (unknown name, unhashable), behave as the first."""
    import pytest

    from fastcopy.errors import UnsupportedError
    from fastcopy.products import Phys

    pipe = TPipe(product="ATLAS_A2")
    for _ in range(2):
        for pos in ("VECIN", TPosition.VECIN, "A1", TPosition.CO1):
            t = pipe.alloc(pos, np.int8, 32)
            assert t.position is TPosition(pos) and t.memory.phys is pipe.phys_of(TPosition(pos))
        for bad in ("VECINN", ["VECIN"], "GM"):
            with pytest.raises(UnsupportedError):
                pipe.alloc(bad, np.int8, 32)
    assert pipe.alloc("VECOUT", np.int8, 32).memory.phys is Phys.UB

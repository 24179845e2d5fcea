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

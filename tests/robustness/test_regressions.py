"""One regression test per reliability finding (issue 10, items 1-8): each failed before the fix.

Every rejected call must raise a FastCopyError subclass *before* anything is written: the tests snapshot every
byte (data and definedness plane) of every memory involved and compare after the error."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastcopy
from fastcopy import (AlignmentError, CapacityError, DataCopy, DataCopyExtParams, DataCopyMVType, DataCopyPad,
                      DataCopyPadExtParams, DataCopyParams, FastCopyError, GlobalTensor, LoopModeParams,
                      OutOfBoundsError, ParamTypeError, RangeError, SetLoopModePara, SetPadValue, SliceInfo, TPipe,
                      TPosition, UnsupportedError, current_pipe)
from fastcopy.errors import ReadOnlyError
from fastcopy.memory import TensorSig
from fastcopy.ops.pad import PADREG

ROOT = Path(__file__).resolve().parents[2]


def snapshot(*things):
    """Every byte of every memory behind the given tensors / pipes / arrays, with its plane."""
    out = []
    for t in things:
        if isinstance(t, TPipe):
            mems = list(t._buffers.values())
        elif isinstance(t, np.ndarray):
            out.append(t.view(np.uint8).reshape(-1).copy())
            continue
        else:
            mems = [t.memory]
        for m in mems:
            out.append(m.data.copy())
            out.append(None if m.plane is None else m.plane.copy())
    return out


def same(a, b) -> bool:
    return len(a) == len(b) and all((x is None and y is None) or (x is not None and y is not None
                                                                  and np.array_equal(x, y)) for x, y in zip(a, b))


def rejected(exc, call, *things, match=None):
    before = snapshot(*things)
    with pytest.raises(exc, match=match):
        call()
    assert same(before, snapshot(*things)), "an error left memory changed"


# ------------------------------------------------------------------------------------ 1. negative addresses
@pytest.mark.parametrize("addr", [-64, -(1 << 40), -32])
def test_negative_addr_is_rejected(addr):
    pipe = TPipe(product="ATLAS_A2")
    pipe.buffer(fastcopy.Phys.UB)
    rejected(RangeError, lambda: pipe.alloc(TPosition.VECIN, "half", 16, addr=addr), pipe,
             match=rf"TPipe.alloc: addr={addr} must be >= 0")


def test_addr_past_the_buffer_is_a_capacity_error():
    pipe = TPipe(product="ATLAS_A2")
    cap = pipe.capacities[fastcopy.Phys.UB]
    with pytest.raises(CapacityError, match="needs bytes"):
        pipe.alloc(TPosition.VECIN, "half", 16, addr=cap)
    with pytest.raises(AlignmentError):
        pipe.alloc(TPosition.VECIN, "half", 16, addr=33)


# ------------------------------------------------------------------------------------ 2. numpy integers
def _two_tensors(product="ATLAS_A2"):
    """A UB tensor with a defined neighbour right behind it (whose plane must never change)."""
    pipe = TPipe(product=product)
    x = pipe.alloc(TPosition.VECIN, "half", 256)
    y = pipe.alloc(TPosition.VECIN, "half", 1 << 16)
    y.numpy()[:] = 7
    y.set_defined()
    return pipe, x, y


@pytest.mark.parametrize("count", [np.int8(100), np.uint8(200), np.uint8(64), np.int16(256), np.uint64(128)])
def test_numpy_count_behaves_like_the_python_int(count):
    """count*sizeof(half) is computed in Python ints: floor(count*2/32) whole blocks are copied, the rest of
    the tensor and its neighbour stay as they were."""
    src = np.arange(4096, dtype=np.float16)
    pipe, x, y = _two_tensors()
    y_before = (y.numpy().view(np.uint16).copy(), y.defined().copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DataCopy(x, GlobalTensor(src), count)
    n = int(count) * 2 // 32 * 16
    assert np.array_equal(x.numpy()[:n], src[:n])
    assert x.defined()[:n].all() and not x.defined()[n:].any()
    assert np.array_equal(y_before[0], y.numpy().view(np.uint16)) and np.array_equal(y_before[1], y.defined())


@pytest.mark.parametrize("count", [np.int32(600_000_000), np.int64(2**40), np.uint32(2**32 - 1)])
def test_numpy_count_out_of_range_writes_nothing(count):
    pipe, x, y = _two_tensors()
    g = GlobalTensor(np.zeros(4096, np.float16))
    rejected(FastCopyError, lambda: DataCopy(x, g, count), pipe, g)


def test_numpy_integers_in_every_integer_slot():
    pipe = TPipe(product=np.str_("ATLAS_A2"), capacities={"UB": np.int64(1 << 20)}, poison=np.uint8(0xA5))
    assert pipe.poison == 0xA5 and type(pipe.poison) is int
    x = pipe.alloc(TPosition.VECIN, "half", np.int32(64), addr=np.uint64(512))
    assert type(x.offset) is int and type(x.size) is int and x.offset == 512
    g = GlobalTensor(np.arange(128, dtype=np.float16))
    sub = g[np.int16(64)]
    assert type(sub.offset) is int and sub.offset == 128
    p = DataCopyParams(np.uint16(2), np.int8(2), np.uint32(0), np.int64(0))
    assert all(type(v) is int for v in p.key())
    DataCopy(x, sub, p)
    assert np.array_equal(x.numpy(), np.arange(64, 128, dtype=np.float16))
    info = [SliceInfo(np.int64(0), np.uint32(15), np.int8(0), np.uint16(1), np.int32(16))]
    DataCopy(x, g, info, [SliceInfo(0, 15, 0, 1, 16)], np.int64(1))


_SLOTS = ["count", "gm[k]", "alloc count", "alloc addr", "poison", "capacity", "field", "dimValue"]
_BAD = [True, np.bool_(True), 2.5, "16", None, np.array([1, 2])]


@pytest.mark.parametrize("slot,value", [(s, v) for s in _SLOTS for v in _BAD
                                        if not (s == "alloc addr" and v is None)])  # addr=None: the default
def test_bools_fractions_and_strings_are_rejected_in_every_integer_slot(slot, value):
    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 64)
    g = GlobalTensor(np.arange(64, dtype=np.float16))
    info = [SliceInfo(0, 15, 0, 1, 16)]
    calls = {
        "count": lambda: DataCopy(x, g, value),
        "gm[k]": lambda: g[value],
        "alloc count": lambda: pipe.alloc(TPosition.VECIN, "half", value),
        "alloc addr": lambda: pipe.alloc(TPosition.VECIN, "half", 16, addr=value),
        "poison": lambda: TPipe(poison=value),
        "capacity": lambda: TPipe(capacities={"UB": value}),
        "field": lambda: DataCopyParams(1, value, 0, 0),
        "dimValue": lambda: DataCopy(x, g, info, info, value),
    }
    rejected(FastCopyError, calls[slot], pipe, g)


# ------------------------------------------------------------------------------------ 3. helpful errors
def test_poison_must_be_a_byte():
    with pytest.raises(ParamTypeError, match=r"TPipe: poison=2.5 is not an integer"):
        TPipe(poison=2.5)
    with pytest.raises(RangeError, match=r"poison=256 is outside \[0, 255\]"):
        TPipe(poison=256)


def test_float_addr_and_string_count():
    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 16, addr=32.0)
    assert x.offset == 32 and type(x.offset) is int
    DataCopy(x, GlobalTensor(np.arange(16, dtype=np.float16)), 16)
    assert np.array_equal(x.numpy(), np.arange(16, dtype=np.float16))
    with pytest.raises(ParamTypeError, match=r"count='16' is not an integer"):
        pipe.alloc(TPosition.VECIN, "half", "16")
    with pytest.raises(TypeError):  # ParamTypeError is also a TypeError
        pipe.alloc(TPosition.VECIN, "half", "16")


def test_unknown_position_lists_the_valid_ones():
    pipe = TPipe(product="ATLAS_A2")
    with pytest.raises(UnsupportedError, match=r"unknown position 'VECINN'.*local positions on Atlas A2: .*VECIN"):
        pipe.alloc("VECINN", "half", 16)
    assert pipe.alloc("VECIN", "half", 16).position is TPosition.VECIN


def test_read_only_gm_destination():
    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 64)
    x.numpy()[:] = 1
    x.set_defined()
    out = np.zeros(64, np.float16)
    out.flags.writeable = False
    g = GlobalTensor(out)
    rejected(ReadOnlyError, lambda: DataCopy(g, x, 64), pipe, g)
    rejected(ReadOnlyError, lambda: DataCopyPad(g, x, DataCopyExtParams(1, 64, 0, 0, 0)), pipe, g)


def test_slice_between_two_local_tensors_with_shape_zero():
    pipe = TPipe(product="ATLAS_A2")
    a = pipe.alloc(TPosition.VECIN, "half", 64)
    b = pipe.alloc(TPosition.VECOUT, "half", 64)
    info = [SliceInfo(0, 15, 0, 1, 0)]
    rejected(FastCopyError, lambda: DataCopy(b, a, info, info), pipe)


# ------------------------------------------------------------------------------------ 4. current core per thread
def test_with_pipe_is_per_thread(switch_often):
    errors = []
    barrier = threading.Barrier(4)

    def work(k):
        barrier.wait()
        for i in range(300):
            with TPipe(product="ATLAS_A2") as p:
                v = np.float16(k * 1000 + i)
                SetPadValue(v)
                if current_pipe() is not p or p.state.get(PADREG) != v.tobytes():
                    errors.append((k, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_with_pipe_is_per_asyncio_task():
    async def task(k):
        with TPipe(product="ATLAS_A2") as p:
            for _ in range(20):
                await asyncio.sleep(0)
                assert current_pipe() is p
        return k

    async def main():
        return await asyncio.gather(*(task(k) for k in range(8)))

    assert asyncio.run(main()) == list(range(8))


def test_exit_removes_only_its_own_entry():
    a, b = TPipe(), TPipe()
    with a:
        with b:
            assert current_pipe() is b
        assert current_pipe() is a


# ------------------------------------------------------------------------------------ 5. atomic alloc
def test_alloc_is_atomic_across_threads(switch_often):
    pipe = TPipe(product="ATLAS_A2", capacities={"UB": 64 << 20})
    got = [[] for _ in range(8)]
    barrier = threading.Barrier(8)

    def work(k):
        barrier.wait()
        for _ in range(1500):
            t = pipe.alloc(TPosition.VECIN, "half", 16)
            got[k].append(t.offset)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    offsets = sorted(o for g in got for o in g)
    assert len(offsets) == len(set(offsets)) == 12000
    assert all(b - a >= 32 for a, b in zip(offsets, offsets[1:]))
    assert len({id(t) for t in pipe._buffers.values()}) == 1


# ------------------------------------------------------------------------------------ 6. memory
def test_exact_path_memory_is_bounded():
    """A 128-byte copy repeated 65,536 times onto one place (loop mode, overlapping writes: the exact path):
    its working memory stays bounded (it was ~40 bytes per written byte, 4.3 GB for 2,097,151 repeats)."""
    pipe = TPipe(product="ATLAS_350")
    g = GlobalTensor(np.arange(64, dtype=np.float16))
    x = pipe.alloc(TPosition.VECIN, "half", 64)
    SetLoopModePara(LoopModeParams(loop1Size=65536, loop1SrcStride=0, loop1DstStride=0), DataCopyMVType.OUT_TO_UB,
                    pipe=pipe)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DataCopy(x, g, 64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(x.numpy(), g.numpy()) and x.defined().all()
    assert peak < 160 << 20, f"exact path peaked at {peak >> 20} MiB for 8 MiB of writes"


def test_tensor_signatures_do_not_accumulate():
    gc.collect()
    before = len(TensorSig._interned)
    for n in range(1, 20001):
        GlobalTensor(np.zeros(n, np.uint8))
    gc.collect()
    assert len(TensorSig._interned) - before < 5000


# ------------------------------------------------------------------------------------ 7. read-only cache
@pytest.mark.parametrize("tmp_writable", [True, False], ids=["temp-cache", "in-memory"])
def test_import_and_work_without_a_writable_numba_cache(tmp_path, tmp_writable):
    """Package folder, HOME and NUMBA_CACHE_DIR all unusable for a cache (a regular file where a folder would
    go: unwritable even for root): import, copy, at most one warning."""
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "fastcopy", pkg / "fastcopy", ignore=shutil.ignore_patterns("__pycache__"))
    for d in (pkg / "fastcopy").rglob("*"):
        if d.is_dir():
            (d / "__pycache__").write_text("not a folder")
    (pkg / "fastcopy" / "__pycache__").write_text("not a folder")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    env = dict(os.environ, PYTHONPATH=str(pkg), HOME=str(blocker), XDG_CACHE_HOME=str(blocker / "c"),
               NUMBA_CACHE_DIR=str(blocker / "numba"), PYTHONDONTWRITEBYTECODE="1")
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import numpy as np\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    import fastcopy as fc\n"
            "    import fastcopy.kernels, fastcopy.kernels.matmul  # every cache=True kernel\n"
            "    p = fc.TPipe(); x = p.alloc('VECIN', 'uint16', 1 << 16)\n"
            "    fc.DataCopy(x, fc.GlobalTensor(np.arange(1 << 16, dtype=np.uint16)), 1 << 16)\n"
            "assert (x.numpy() == np.arange(1 << 16)).all()\n"
            "msgs = [str(m.message) for m in w if 'numba' in str(m.message).lower() or 'cache' in str(m.message)]\n"
            "print(len(msgs)); print(fc.__file__); print(msgs[0].split(';')[1].split()[2] if msgs else '-')\n")
    if not tmp_writable:  # no temporary folder either (simulated; root can write anywhere): compile in memory
        code = ("import tempfile\n"
                "def no_temp(*a, **k):\n    raise OSError('read-only')\n"
                "tempfile.mkdtemp = no_temp\n") + code
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    count, where, how = r.stdout.split()
    assert int(count) == 1 and where.startswith(str(pkg))
    assert how == ("cached" if tmp_writable else "compiled"), r.stdout


# ------------------------------------------------------------------------------------ 8. 8-byte first fill
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["ATLAS_A2", "ATLAS_A3", "ATLAS_350"]),  # (no 8-byte DataCopyPad on Atlas 200I/500 A2)
       st.sampled_from(["int64", "uint64", "float64"]), st.integers(1, 3), st.integers(1, 7), st.integers(0, 3),
       st.integers(0, 2**64 - 1))
def test_8_byte_first_fill_is_the_first_word_in_every_slot(product, dtype, block_count, n_el, gap, word):
    """Property (spec of the DUMMY fill, 8-byte types): every 4-byte slot of the dummy bytes holds the first
    32-bit word of its burst (bytes 0..4 of the burst's first element), never its upper half."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(word)
    raw = rng.integers(0, 2**63, block_count * (n_el + gap) + 4, dtype=np.uint64) ^ np.uint64(word)
    src = GlobalTensor(raw.view(dt))
    pipe = TPipe(product=product)
    bl = n_el * 8
    pitch = -(-bl // 32) * 32
    dst = pipe.alloc(TPosition.VECIN, dt, block_count * pitch // 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DataCopyPad(dst, src, DataCopyExtParams(block_count, bl, gap * 8, 0, 0),
                    DataCopyPadExtParams(False, 0, 0, 0))
    out = dst.numpy().view(np.uint8)
    sb = raw.view(np.uint8)
    for i in range(block_count):
        s = i * (bl + gap * 8)
        first_word = sb[s:s + 4]
        for slot in range(i * pitch + bl, (i + 1) * pitch, 4):
            assert list(out[slot:slot + 4]) == list(first_word), (i, slot)
        assert np.array_equal(out[i * pitch:i * pitch + bl], sb[s:s + bl])


# ------------------------------------------------------------------------------------ the class made impossible
def test_a_plan_whose_span_leaves_its_memory_never_runs():
    """Whatever a planner got wrong upstream (here: a signature claiming 1 MiB for a 32-byte tensor at the end
    of UB), the spans are checked against the whole memory before any kernel runs."""
    from fastcopy.dma.lower import make_plan
    from fastcopy.dma.run import execute
    from fastcopy.dma.steps import Move

    pipe = TPipe(product="ATLAS_A2")
    cap = pipe.capacities[fastcopy.Phys.UB]
    src = pipe.alloc(TPosition.VECIN, "uint8", 64)
    src.set_defined()
    tail = pipe.alloc(TPosition.VECOUT, "uint8", 32, addr=cap - 32)
    s = tail._sig
    big = TensorSig(s.position, s.phys, s.dtype, 1 << 20, s.addr_mod, s.host_mod)
    plan = make_plan("test", [Move((0,), (0,), 64, ())], src._sig, big)
    rejected(OutOfBoundsError, lambda: execute(plan, tail, src), pipe, match=r"outside|of its memory")


def test_a_lowering_bug_is_caught_at_planning(monkeypatch):
    """A lowered kernel step that strays outside the planned span (simulated: offsets shifted by one unit)
    is refused when the plan is made, before anything can run it."""
    from fastcopy.dma import lower as plan_mod
    from fastcopy.dma.steps import Move

    real = plan_mod._units
    monkeypatch.setattr(plan_mod, "_units", lambda offs, residue, w: tuple(u + 1 for u in real(offs, residue, w)))
    pipe = TPipe(product="ATLAS_A2")
    a = pipe.alloc(TPosition.VECIN, "uint8", 64)
    b = pipe.alloc(TPosition.VECOUT, "uint8", 64)
    with pytest.raises(OutOfBoundsError, match="internal error"):
        plan_mod.make_plan("test", [Move((0,), (0,), 64, ())], a._sig, b._sig)


@pytest.mark.parametrize("shape", [(40.7, 33.2), (4, True), (np.bool_(True), 16), ("4", 16)])
def test_from_nz_shape_must_be_integers(shape):
    nz = fastcopy.to_nz(np.zeros((40, 33), np.float16))
    with pytest.raises(fastcopy.ParamError):
        fastcopy.from_nz(nz, shape)


def test_from_nz_numpy_integer_shape_and_c0():
    a = np.arange(40 * 33, dtype=np.float16).reshape(40, 33)
    back = fastcopy.from_nz(fastcopy.to_nz(a, c0=np.int64(16)), (np.int32(40), np.uint16(33)), c0=np.uint8(16))
    assert np.array_equal(back, a)
    with pytest.raises(ParamTypeError):
        fastcopy.to_nz(a, c0=True)


def test_read_only_workspace_of_the_two_stage_pad():
    """UB -> TSCM through a caller's GM workspace over a read-only array: a FastCopyError before anything is
    written (it reached numba as a TypingError)."""
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "half", 64)
    ub.set_defined()
    l1 = pipe.alloc(TPosition.A1, "half", 1024)
    ro = np.zeros(4096, np.float16)
    ro.flags.writeable = False
    ws = GlobalTensor(ro)
    rejected(ReadOnlyError, lambda: DataCopyPad(l1, ub, DataCopyExtParams(1, 64, 0, 0, 0),
                                                fastcopy.Nd2NzParams(1, 2, 16, 0, 16, 2, 1, 0), workspace=ws),
             pipe, ws)


@pytest.mark.parametrize("shape", [(4.5, 16), (True, 16), ("4", 16)])
def test_slice_infos_shape_must_be_integers(shape):
    with pytest.raises(ParamTypeError):
        fastcopy.slice_infos(shape, (0, slice(0, 16)), "half")

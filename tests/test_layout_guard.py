"""The plan-time guard of the layout kernel steps (``transpose``, ``rows``, ``dense``, ``elements``): kernels never
validate and run with boundscheck off, so every byte each layout kernel call reads and writes (from the metas and
pieces it will receive, in the kernel's own terms) is checked against the plan's read and write spans when the
plan is made (fastcopy/dma/lower.py: ``_check_layout``).

(1) Real calls that take each kind plan and run exactly, their layout steps checked. (2) A lowering corrupted by
one unit (the last chunk widened by one row, the last dense piece by one byte) raises the internal
OutOfBoundsError at plan time, with the destination and the guard bytes around it unchanged. Without the check,
(2) fails: the corrupted kernel call runs and writes the guard bytes.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_layout_paths import _clear_plan_caches

import fastcopy as fc
from fastcopy import DataCopy, GlobalTensor, TPipe, TPosition, config, from_nz, nd2nz_params, nz2nd_params, to_nz
from fastcopy.dma import abi, lower
from fastcopy.errors import OutOfBoundsError

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")
GUARD = 0xA5


@pytest.fixture(autouse=True)
def fresh_plans():
    _clear_plan_caches()  # (a cached plan is reused without planning: every case here plans anew)
    yield
    _clear_plan_caches()


def _spy(monkeypatch) -> list:
    """The kinds of the layout steps :func:`lower._check_layout` checks from now on."""
    seen = []
    check = lower._check_layout

    def spy(api, ks, read, write):
        seen.append(ks.kind)
        return check(api, ks, read, write)

    monkeypatch.setattr(lower, "_check_layout", spy)
    return seen


def _widen(ks):
    """The layout step with its last chunk one unit wider: one more row (``a_hi + 1``) of its last meta, or one
    more byte of its last dense piece."""
    if ks.kind == "dense":
        lo, n = ks.metas[-1]
        return ks._replace(metas=ks.metas[:-1] + ((lo, n + 1),))
    meta = ks.metas[-1].copy()
    meta[abi.T_A_HI] += 1
    return ks._replace(metas=ks.metas[:-1] + (meta,))


def _corrupt(monkeypatch, kind: str) -> list:
    """Make :func:`lower.match_kernel` return its ``kind`` steps widened by one unit; the list of widened steps."""
    match = lower.match_kernel
    widened = []

    def corrupted(step, src_residue, dst_residue):
        out = match(step, src_residue, dst_residue)
        if out is None:
            return None
        out = tuple(_widen(ks) if ks.kind == kind else ks for ks in out)
        widened.extend(ks for ks in out if ks.kind == kind)
        return out

    monkeypatch.setattr(lower, "match_kernel", corrupted)
    return widened


def _guarded(nbytes: int, dtype, head: int = 256, tail: int = 1 << 20) -> tuple:
    """A destination array of ``nbytes`` inside a buffer of guard bytes: (buffer, destination view)."""
    buf = np.full(head + nbytes + tail, GUARD, np.uint8)
    return buf, buf[head:head + nbytes].view(dtype)


def _buffer_state(tensor) -> tuple:
    """Copies of the bytes and definedness plane of the whole local buffer ``tensor`` lives in."""
    mem = tensor.memory
    return mem.data.copy(), (None if mem.plane is None else mem.plane.copy())


# ------------------------------------------------------------------------------------------- the calls
def _to_nz(monkeypatch):
    """to_nz of a 512 x 4096 half matrix (4 MiB): ``transpose`` (several chunks)."""
    a = np.random.default_rng(1).integers(0, 1 << 16, (512, 4096), dtype=np.uint16).view(np.float16)
    buf, out = _guarded(a.nbytes, np.float16)
    before = buf.copy()

    nz = out.reshape(256, 32, 16, 16)
    return (lambda: to_nz(a, out=nz), lambda: np.array_equal(buf, before),
            lambda: np.array_equal(from_nz(nz, a.shape).view(np.uint16), a.view(np.uint16)))


def _from_nz(monkeypatch):
    """from_nz back to a 512 x 4096 half matrix: ``transpose``."""
    a = np.random.default_rng(2).integers(0, 1 << 16, (512, 4096), dtype=np.uint16).view(np.float16)
    nz = to_nz(a)
    buf, out = _guarded(a.nbytes, np.float16)
    before = buf.copy()
    return (lambda: from_nz(nz, a.shape, out=out.reshape(a.shape)), lambda: np.array_equal(buf, before),
            lambda: np.array_equal(out.reshape(a.shape).view(np.uint16), a.view(np.uint16)))


def _nd2nz(monkeypatch):
    """ND2NZ GM -> L1 of 16 x 4096 halves (128 KiB, above LAYOUT_BYTES): ``transpose``."""
    rows, cols = 16, 4096
    a = np.random.default_rng(3).integers(0, 1 << 16, (rows, cols), dtype=np.uint16).view(np.float16)
    pipe = TPipe("ATLAS_A2")
    dst = pipe.alloc(TPosition.A1, "half", rows * cols)
    pipe.alloc(TPosition.A1, "half", 32768)  # (guard bytes after it in the same L1)
    before = _buffer_state(dst)
    return (lambda: DataCopy(dst, GlobalTensor(a), nd2nz_params(rows, cols, "half")),
            lambda: all(np.array_equal(x, y) for x, y in zip(_buffer_state(dst), before) if x is not None),
            lambda: np.array_equal(dst.numpy().view(np.uint16), to_nz(a).reshape(-1).view(np.uint16)))


def _nz2nd(monkeypatch):
    """NZ2ND UB -> GM to 16 x 4096 halves: ``transpose``."""
    rows, cols = 16, 4096
    a = np.random.default_rng(4).integers(0, 1 << 16, (rows, cols), dtype=np.uint16).view(np.float16)
    pipe = TPipe("ATLAS_A2")
    ub = pipe.alloc(TPosition.VECOUT, "half", rows * cols)
    ub.numpy()[:] = to_nz(a, c0=16).reshape(-1)
    ub.set_defined()
    buf, out = _guarded(a.nbytes, np.float16)
    before = buf.copy()
    return (lambda: DataCopy(GlobalTensor(out), ub, nz2nd_params(rows, cols, "half")),
            lambda: np.array_equal(buf, before),
            lambda: np.array_equal(out.view(np.uint16), a.reshape(-1).view(np.uint16)))


def _dense(monkeypatch):
    """A contiguous DataCopy GM -> UB of 128 KiB at DENSE_NT_BYTES = 64 KiB: ``dense`` (several pieces)."""
    monkeypatch.setattr(config, "DENSE_NT_BYTES", 64 << 10)
    monkeypatch.setattr(config, "PARALLEL_BYTES", 64 << 10)
    n = 128 << 10
    src = np.random.default_rng(5).integers(0, 256, n, dtype=np.uint8)
    pipe = TPipe("ATLAS_A2", capacities={"UB": 2 * n})
    ub = pipe.alloc(TPosition.VECIN, "int8_t", n)
    pipe.alloc(TPosition.VECIN, "int8_t", n)  # (guard bytes)
    before = _buffer_state(ub)
    return (lambda: DataCopy(ub, GlobalTensor(src.view(np.int8)), fc.DataCopyParams(1, n // 32)),
            lambda: all(np.array_equal(x, y) for x, y in zip(_buffer_state(ub), before) if x is not None),
            lambda: np.array_equal(ub.numpy().view(np.uint8), src))


def _rows(monkeypatch):
    """A sliced DataCopy GM -> UB of 1024 rows of 512 bytes (the first half of each 1 KiB row; the device's offset
    lists hold at most 1536 rows), PARALLEL_BYTES lowered to its 512 KiB: ``rows``."""
    nrows = 1024
    monkeypatch.setattr(config, "PARALLEL_BYTES", nrows * 512)
    src = np.random.default_rng(6).integers(0, 1 << 16, (nrows, 512), dtype=np.uint16).view(np.float16)
    pipe = TPipe("ATLAS_A2", capacities={"UB": nrows * 512 + 65536})
    ub = pipe.alloc(TPosition.VECIN, "half", nrows * 256)
    pipe.alloc(TPosition.VECIN, "half", 32768)  # (guard bytes)
    before = _buffer_state(ub)
    d = [fc.SliceInfo(0, 255, 0, 16, 256), fc.SliceInfo(0, nrows - 1, 0, 1, nrows)]
    s = [fc.SliceInfo(0, 255, 0, 16, 512), fc.SliceInfo(0, nrows - 1, 0, 1, nrows)]
    return (lambda: DataCopy(ub, GlobalTensor(src.reshape(-1)), d, s, 2),
            lambda: all(np.array_equal(x, y) for x, y in zip(_buffer_state(ub), before) if x is not None),
            lambda: np.array_equal(ub.numpy().view(np.uint16), src[:, :256].reshape(-1).view(np.uint16)))


def _elements(monkeypatch):
    """A transposing LoadData L1 -> L0B of 64 KiB (128 fractals of 16 x 16 halves): ``elements``."""
    pipe = TPipe("ATLAS_A2")
    l1 = pipe.alloc(TPosition.A1, "half", 32768)
    l1.numpy()[:] = np.random.default_rng(7).integers(0, 1 << 16, 32768, dtype=np.uint16).view(np.float16)
    l1.set_defined()
    b2 = pipe.alloc(TPosition.B2, "half", 32768)
    before = _buffer_state(b2)

    def exact():
        got = b2.numpy().view(np.uint16).reshape(128, 16, 16)
        return np.array_equal(got, l1.numpy().view(np.uint16).reshape(128, 16, 16).transpose(0, 2, 1))

    return (lambda: fc.LoadData(b2, l1, fc.LoadData2DParams(0, 128, 1, ifTranspose=True)),
            lambda: all(np.array_equal(x, y) for x, y in zip(_buffer_state(b2), before) if x is not None), exact)


CASES = [("transpose", _to_nz), ("transpose", _from_nz), ("transpose", _nd2nz), ("transpose", _nz2nd),
         ("dense", _dense), ("rows", _rows), ("elements", _elements)]
IDS = [f"{kind}-{make.__name__[1:]}" for kind, make in CASES]


@pytest.mark.parametrize("kind, make", CASES, ids=IDS)
def test_real_layout_calls_plan_checked_and_run_exact(monkeypatch, kind, make):
    """(1) The call takes the layout kernel ``kind``, its steps pass the check and it moves the right bytes."""
    seen = _spy(monkeypatch)
    call, _, exact = make(monkeypatch)
    call()
    assert kind in seen
    assert exact()


@pytest.mark.parametrize("kind, make", CASES, ids=IDS)
def test_a_corrupted_layout_lowering_raises_at_plan_time(monkeypatch, kind, make):
    """(2) The same call with its ``kind`` steps one unit too wide: the internal OutOfBoundsError, nothing written
    (the destination, the guard bytes around it and the definedness plane as they were)."""
    call, unchanged, _ = make(monkeypatch)
    widened = _corrupt(monkeypatch, kind)
    with pytest.raises(OutOfBoundsError, match=rf"internal error: a lowered {kind} step touches bytes \[\d+, \d+\) "
                                               r"outside the planned span .*nothing was written \(please report"):
        call()
    assert widened  # (the corruption took)
    assert unchanged()


def test_every_chunk_is_checked(monkeypatch):
    """A corrupted first chunk of several (not only the last) is caught: the check walks every meta."""
    call, unchanged, _ = _to_nz(monkeypatch)
    match = lower.match_kernel

    def corrupted(step, src_residue, dst_residue):
        out = match(step, src_residue, dst_residue)
        if out is None:
            return None
        ks = out[0]
        assert ks.kind == "transpose" and len(ks.metas) > 1
        meta = ks.metas[0].copy()
        meta[abi.T_A_LO] -= 1  # (the first chunk one block row earlier: before the spans)
        return (ks._replace(metas=(meta,) + ks.metas[1:]),) + out[1:]

    monkeypatch.setattr(lower, "match_kernel", corrupted)
    with pytest.raises(OutOfBoundsError, match="internal error: a lowered transpose step"):
        call()
    assert unchanged()


def test_elements_are_checked_in_the_kernels_terms(monkeypatch):
    """``transpose_elements`` takes its source row stride and destination column stride as the element width,
    whatever the meta says: a meta whose ``sa`` / ``dc`` fields alone are wrong touches no other byte and passes;
    one more column (``nc + 1``) does not."""
    call, unchanged, exact = _elements(monkeypatch)
    match = lower.match_kernel

    def with_fields(fields):
        def corrupted(step, src_residue, dst_residue):
            out = match(step, src_residue, dst_residue)
            if out is None or out[0].kind != "elements":
                return out
            meta = out[0].metas[-1].copy()
            for k, v in fields.items():
                meta[k] += v
            return (out[0]._replace(metas=out[0].metas[:-1] + (meta,)),) + out[1:]
        return corrupted

    monkeypatch.setattr(lower, "match_kernel", with_fields({abi.T_NC: 1}))
    with pytest.raises(OutOfBoundsError, match="internal error: a lowered elements step"):
        call()
    assert unchanged()
    _clear_plan_caches()
    monkeypatch.setattr(lower, "match_kernel", with_fields({abi.T_SA: 1 << 20, abi.T_DC: 1 << 20}))
    call()
    assert exact()


@pytest.mark.parametrize("share", [0.0, 0.3, 0.5, 1.0])
def test_the_pair_halves_of_a_checked_element_meta_partition_it(monkeypatch, share):
    """The one place layout kernel arguments are cut after planning (fastcopy/cube/recall.py: ``_halves``, an
    element transpose shared by this thread and a helper on repeats): its two rows split the planned, checked
    meta's batches (or whole tiles of rows) at one cut strictly inside, every other field as planned; so the
    halves touch only bytes the meta touches. (``crew.dense_pair`` cuts its range at ``0 < cut < n`` likewise.)"""
    from fastcopy.cube import recall

    monkeypatch.setattr(config, "PAIR_SHARE_ELEMENTS", share)
    for w in (1, 2, 4, 8):
        n = 32 // w
        for nb, na in ((1, n), (1, 2 * n), (1, 5 * n + 3), (2, n), (7, 3 * n)):
            for lo in (0, 3):
                meta = abi.pack_transpose(w, (nb + lo, 4096, 8192), (na + lo, w, 32), (n, 32, w), (1, 1), False,
                                          (lo, lo + nb, lo, lo + na))
                halves = recall._halves(meta, nb, na)
                if halves is None:
                    assert nb == 1 and na // n < 2
                    continue
                f_lo, f_hi = (abi.T_B_LO, abi.T_B_HI) if nb >= 2 else (abi.T_A_LO, abi.T_A_HI)
                cut = halves[0, f_hi]
                assert meta[f_lo] < cut < meta[f_hi] and halves[1, f_lo] == cut
                assert halves[0, f_lo] == meta[f_lo] and halves[1, f_hi] == meta[f_hi]
                if nb < 2:
                    assert (cut - meta[f_lo]) % n == 0  # (whole tiles of rows)
                for row in halves:
                    rest = [k for k in range(len(meta)) if k not in (f_lo, f_hi)]
                    assert np.array_equal(row[rest], meta[rest])

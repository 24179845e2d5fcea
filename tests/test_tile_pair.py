"""Whole tiles split between two threads (the pair lane of fastcopy/kernels/crew.py, bound by fastcopy/cube/recall.py
for repeated loads of at least config.PAIR_BYTES): each part's bytes and nothing around them, cuts on lines and on
tiles, the helper's side (claim, run, find its chunk taken back) and the caller's side (run alone, take an unclaimed
chunk back) decided on private boxes without timing, the public loads repeated against the readable references
(every width of the transposing loads, sources partly undefined, guard bands around the destination), threads
calling at once, and a forked child."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from numba import njit
import test_crew
from test_crew import run_ok
from test_cube_in_speed_kernels import _bytes
from test_cube_in_speed_kernels import _fill_src as _fill

import fastcopy as fc
from fastcopy import config
from fastcopy.cube import recall
from fastcopy.dma import abi, crew
from fastcopy.dma import kernels as K
from fastcopy.kernels import crew as KC
from fastcopy.memory import aligned_empty
from fastcopy.reference import loaddata as ref

# test_crew's autouse fixture (numba, two threads, crew on, no back-off on a busy machine), here too
_numba_and_threads = test_crew._numba_and_threads

pytestmark = [pytest.mark.skipif(not crew.SUPPORTED, reason="helper threads need x86-64 Linux"),
              pytest.mark.filterwarnings("error::fastcopy.FastCopyWarning")]
POISON = 0xFF
GUARD = 0xA5


def _private_box():
    """A box with no helper thread: a posted pair call is never claimed (its caller takes it back)."""
    crew._start()  # (the TSC calibration)
    box = crew._new_box()
    crew.tune(box)
    return box


@njit(nogil=True)
def _help(box):
    return KC._help_pair(box)


def _dense(n: int, shift: int, seed: int):
    """A destination window of ``n`` bytes inside guard bands (``shift`` bytes after a line) and a source."""
    rng = np.random.default_rng(seed)
    buf = aligned_empty(n + 256, offset=shift)
    buf[:] = GUARD
    src = rng.integers(0, 256, n + 16, dtype=np.uint8)
    return buf, src


@pytest.mark.parametrize("n,shift", [(65536, 0), (65536, 16), (65536 + 17, 5), (4099, 48), (130, 0)])
def test_dense_pair_cut_on_a_line_each_part_and_nothing_else(n, shift):
    buf, src = _dense(n, shift, n + shift)
    kernel, head = crew.dense_pair(buf, 64, src, 3, n)
    table = head[KC.HEAD + 1:].reshape(2, 2)
    cut = table[0, 1]
    assert table.tolist() == [[0, cut], [cut, n - cut]] and 0 < cut < n
    assert (buf.ctypes.data + 64 + cut) % 64 == 0 and abs(cut - n * config.PAIR_SHARE) <= 64
    for part in (0, 1):  # each chunk alone writes its part of the window and nothing else
        buf[:] = GUARD
        KC.run_chunk(head, part, False)
        lo, hi = (0, cut) if part == 0 else (cut, n)
        want = np.full(buf.size, GUARD, np.uint8)
        want[64 + lo:64 + hi] = src[3 + lo:3 + hi]
        assert np.array_equal(buf, want)
    for k in range(30):  # the whole job, the source changing between calls
        src[:] = (np.arange(src.size) * (k + 1)) % 251
        code = kernel(head)
        assert code in (KC.SHARED_CALL, KC.ALONE_ASLEEP, KC.ALONE_BUSY, KC.ALONE_BACKING_OFF)
        assert np.array_equal(buf[64:64 + n], src[3:3 + n])
        assert (buf[:64] == GUARD).all() and (buf[64 + n:] == GUARD).all()


def test_dense_pair_needs_a_crew_and_a_cut(monkeypatch):
    buf, src = _dense(64, 0, 1)
    assert crew.dense_pair(buf, 0, src, 0, 64) is None  # (one line: no cut inside it)
    monkeypatch.setattr(crew, "ENABLED", False)
    assert crew.dense_pair(buf, 0, src, 0, 4096) is None
    monkeypatch.setattr(crew, "ENABLED", True)
    monkeypatch.setattr(config, "THREADS", 1)
    assert crew.dense_pair(buf, 0, src, 0, 4096) is None


def _head(box, n=8192, seed=0):
    buf, src = _dense(n, 0, seed)
    head = crew._pair_head(box, crew.DENSE, buf, 64, src, 0, np.array([[0, 4096], [4096, n - 4096]], np.int64))
    return head, buf, src


def test_helper_side_claims_runs_and_finds_its_chunk_taken_back():
    box = _private_box()
    head, buf, src = _head(box)
    box[KC.LANE_JOB] = head.ctypes.data
    box[KC.LANE], box[KC.CLAIM] = 5, 4
    assert _help(box)  # claims call 5, runs chunk 1 only
    assert box[KC.CLAIM] == 5 and box[KC.LANE_DONE] == 10
    assert (buf[64:64 + 4096] == GUARD).all() and np.array_equal(buf[64 + 4096:64 + 8192], src[4096:8192])
    assert not _help(box)  # nothing new posted
    buf[:] = GUARD
    box[KC.LANE], box[KC.STEAL] = 6, 6  # posted, then taken back by its caller before the helper claimed it
    assert not _help(box)
    assert box[KC.CLAIM] == 6 and box[KC.LANE_DONE] == 13 and (buf == GUARD).all()
    box[KC.LANE], box[KC.CLAIM] = 7, 7  # claimed by another helper
    assert not _help(box) and box[KC.LANE_DONE] == 13 and (buf == GUARD).all()
    box[KC.LANE], box[KC.STEAL] = 9, 8  # a later call than the one taken back: run
    assert _help(box) and box[KC.LANE_DONE] == 18 and not (buf == GUARD).all()


def test_caller_takes_back_an_unclaimed_chunk_and_backs_off(monkeypatch):
    box = _private_box()  # (no helper: nothing ever claims)
    head, buf, src = _head(box, 12288, 3)
    box[KC.LANE], box[KC.CLAIM], box[KC.LANE_DONE] = 40, 40, 80
    assert KC.pair(head) == KC.SHARED_CALL
    assert box[KC.LANE] == 41 and box[KC.STEAL] == 41 and box[KC.CLAIM] == 40
    assert np.array_equal(buf[64:64 + 12288], src[:12288]) and (buf[:64] == GUARD).all()
    assert box[KC.SKIP] == 0  # (SLOW_HELPER infinite: never backs off)
    monkeypatch.setattr(config, "SLOW_HELPER", 2.0)
    crew.tune(box)
    buf[:] = GUARD
    # (a back-off shorter than SLEEP_BACKOFF keeps the helpers spinning)
    assert KC.pair(head) == KC.SHARED_CALL and box[KC.SKIP] == 2 and box[KC.SPIN] == box[KC.T_SPIN] > 0
    assert np.array_equal(buf[64:64 + 12288], src[:12288])
    buf[:] = GUARD
    assert KC.pair(head) == KC.ALONE_BACKING_OFF and box[KC.LANE] == 42  # (not posted)
    assert np.array_equal(buf[64:64 + 12288], src[:12288])
    monkeypatch.setattr(config, "SLEEP_BACKOFF", 4)
    crew.tune(box)
    box[KC.SKIP] = 0
    assert KC.pair(head) == KC.SHARED_CALL and box[KC.SKIP] == 4 and box[KC.SPIN] == 0  # (from 4: asleep)
    assert np.array_equal(buf[64:64 + 12288], src[:12288])


def test_a_sleeping_helper_is_woken_once_for_a_row_of_pair_calls(monkeypatch):
    """With the helper asleep a row of pair calls runs alone and wakes it at the WAKE_AFTER-th call: once, not at
    every call while it comes (each wake a system call), again only WAKE_AGAIN_US later; a wake-up gives the
    next PAIR_WAKE_GRACE shared calls no verdict."""
    monkeypatch.setattr(config, "WAKE_AGAIN_US", 1e6)  # (1 s: the row's 20 calls take far less; the box's first
    box = _private_box()  # wake-up is at least 1 s of TSC after 0, the slot's start: any machine up that long)
    head, buf, src = _head(box, 8192, 6)
    box[KC.SLEEPING] = 1  # (a helper asleep, as far as the caller can tell)
    for k in range(20):
        buf[:] = GUARD
        assert KC.pair(head) == KC.ALONE_ASLEEP and box[KC.LANE] == 0
        assert np.array_equal(buf[64:64 + 8192], src[:8192]) and (buf[:64] == GUARD).all()
    assert box[KC.WAKE] == 1 and box[KC.GRACE] == config.PAIR_WAKE_GRACE > 0
    monkeypatch.setattr(config, "WAKE_AGAIN_US", 0)
    crew.tune(box)
    for k in range(20):
        assert KC.pair(head) == KC.ALONE_ASLEEP
    assert box[KC.WAKE] >= 10  # (every call of the row woke it again: 20, unless the machine paused the row)


def test_the_first_pair_calls_after_a_wake_are_not_judged(monkeypatch):
    """A helper back from sleep runs its first chunks cold: the PAIR_WAKE_GRACE shared calls after its caller
    woke it do not back off (here: no helper at all, each call taken back), the next one does; a back-off's
    trial gives the grace only when it wakes a helper that is asleep."""
    monkeypatch.setattr(config, "SLOW_HELPER", 2.0)
    box = _private_box()
    head, buf, src = _head(box, 8192, 7)
    box[KC.SLEEPING] = 1
    for k in range(config.WAKE_AFTER + 1):  # (the row's WAKE_AFTER-th call after the first wakes it)
        assert KC.pair(head) == KC.ALONE_ASLEEP
    assert box[KC.WAKE] == 1 and box[KC.GRACE] == config.PAIR_WAKE_GRACE
    box[KC.SLEEPING] = 0
    for k in range(config.PAIR_WAKE_GRACE):
        buf[:] = GUARD
        assert KC.pair(head) == KC.SHARED_CALL and box[KC.SKIP] == 0 and box[KC.STEAL] == box[KC.LANE]
        assert np.array_equal(buf[64:64 + 8192], src[:8192])
    assert box[KC.GRACE] == 0
    assert KC.pair(head) == KC.SHARED_CALL and box[KC.SKIP] == 2  # judged: taken back, a slow helper
    assert KC.pair(head) == KC.ALONE_BACKING_OFF and box[KC.WAKE] == 1
    assert KC.pair(head) == KC.ALONE_BACKING_OFF and box[KC.WAKE] == 1  # the trial's: no helper asleep, no wake
    assert box[KC.GRACE] == 0 and KC.pair(head) == KC.SHARED_CALL and box[KC.SKIP] == 4
    box[KC.SLEEPING] = 1
    for k in range(4):
        assert KC.pair(head) == KC.ALONE_BACKING_OFF
    assert box[KC.WAKE] == 2 and box[KC.GRACE] == config.PAIR_WAKE_GRACE  # this trial woke it
    assert np.array_equal(buf[64:64 + 8192], src[:8192])


@pytest.mark.parametrize("w", [1, 2, 4, 8])
def test_element_pairs_turn_at_every_call_and_stay_exact(monkeypatch, w):
    """A pair of element transposes (one whole tile a batch) walks the other way at every call, on the caller's
    side (the box's TURN) taken back, backing off and alone, and on the helper's side (the call number's parity):
    the same bytes each time, nothing outside the window."""
    monkeypatch.setattr(config, "SLOW_HELPER", 2.0)
    box = _private_box()  # (no helper: nothing ever claims; calls are taken back, then run alone backing off)
    n, nb = 32 // w, 37
    span = n * 32
    meta = abi.pack_transpose(w, (nb, span + 32, span + 64), (n, w, 32), (n, 32, w), (1, 1), False, (0, nb, 0, n))
    rng = np.random.default_rng(w)
    src = rng.integers(0, 256, nb * (span + 32) + 64, dtype=np.uint8)
    buf = aligned_empty(nb * (span + 64) + 256)
    want = np.full(buf.size, GUARD, np.uint8)
    K.transpose_elements(want, 64, src, 5, meta)
    head = crew._pair_head(box, crew.ELEMENTS, buf, 64, src, 5, recall._halves(meta, nb, n))
    turns, codes = [], []
    for _ in range(6):
        buf[:] = GUARD
        codes.append(KC.pair(head))
        turns.append(int(box[KC.TURN]))
        assert np.array_equal(buf, want)
    assert turns == [1, 0, 1, 0, 1, 0] and KC.ALONE_BACKING_OFF in codes and KC.SHARED_CALL in codes
    for g in (7, 8):  # the helper's side: chunk 1 of an odd call backward, of an even one forward
        buf[:] = GUARD
        box[KC.LANE_JOB], box[KC.LANE], box[KC.CLAIM], box[KC.STEAL] = head.ctypes.data, g, g - 1, 0
        assert _help(box) and box[KC.LANE_DONE] == 2 * g
        part = want.copy()
        part[64:64 + int(head[KC.HEAD + 1 + abi.T_B_HI]) * (span + 64)] = GUARD
        assert np.array_equal(buf, part)
    for backward in (False, True):  # each chunk alone, either way: its part of the window, nothing else
        for k in (0, 1):
            buf[:] = GUARD
            KC.run_chunk(head, k, backward)
            cut = int(head[KC.HEAD + 1 + abi.T_B_HI])
            lo, hi = (0, cut) if k == 0 else (cut, nb)
            part = np.full(buf.size, GUARD, np.uint8)
            part[64 + lo * (span + 64):64 + hi * (span + 64)] = want[64 + lo * (span + 64):64 + hi * (span + 64)]
            assert np.array_equal(buf, part), (backward, k)


@pytest.mark.parametrize("slow, factor", [(2.0, 2.0), (2.0, 1.0), (float("inf"), 2.0)])
def test_pair_calls_back_off_at_their_own_bound(monkeypatch, slow, factor):
    """A pair call is judged against PAIR_SLOW_FACTOR x SLOW_HELPER (its own share is short), a crew job against
    SLOW_HELPER; an infinite SLOW_HELPER never backs off either."""
    monkeypatch.setattr(config, "SLOW_HELPER", slow)
    monkeypatch.setattr(config, "PAIR_SLOW_FACTOR", factor)
    box = _private_box()
    big = 1 << 62
    assert box[KC.T_SLOW] == (big if slow == float("inf") else int(slow * 1024))
    assert box[KC.T_PAIR_SLOW] == (big if slow == float("inf") else int(slow * factor * 1024))
    head, buf, src = _head(box, 12288, 5)
    assert KC.pair(head) == KC.SHARED_CALL  # (no helper: taken back, which is a slow helper at any finite bound)
    assert box[KC.SKIP] == (0 if slow == float("inf") else 2)
    assert np.array_equal(buf[64:64 + 12288], src[:12288])


@pytest.mark.parametrize("state", ["stopped", "locked", "asleep", "backing off"])
def test_pair_runs_alone_without_posting(state):
    box = _private_box()
    head, buf, src = _head(box, 8192, 4)
    box[{"stopped": KC.STOP, "locked": KC.LOCK, "asleep": KC.SLEEPING, "backing off": KC.SKIP}[state]] = 1
    code = KC.pair(head)
    assert code == {"stopped": KC.ALONE_BUSY, "locked": KC.ALONE_BUSY, "asleep": KC.ALONE_ASLEEP,
                    "backing off": KC.ALONE_BACKING_OFF}[state]
    assert box[KC.LANE] == 0 and np.array_equal(buf[64:64 + 8192], src[:8192])
    assert (buf[:64] == GUARD).all() and (buf[64 + 8192:] == GUARD).all()


@pytest.mark.parametrize("w", [1, 2, 4, 8])
@pytest.mark.parametrize("nb,tiles,extra", [(128, 1, 0), (3, 2, 5), (1, 8, 0), (1, 5, 3), (1, 1, 7), (2, 0, 9)])
def test_halves_of_an_element_transpose(w, nb, tiles, extra):
    """The two rows cover the transpose exactly: batches cut when there are two, else whole tiles of rows."""
    n = 32 // w
    na, nc = tiles * n + extra, 2 * n + 3
    sc, da = na * w + 8, nc * w + 8
    sb, db = nc * sc + w, na * da + 3 * w
    meta = abi.pack_transpose(w, (nb, sb, db), (na, w, da), (nc, sc, w), (1, 1), False, (0, nb, 0, na))
    halves = recall._halves(meta, nb, na)
    if nb < 2 and na // n < 2:
        assert halves is None
        return
    b_lo, b_hi, a_lo, a_hi = abi.T_B_LO, abi.T_B_HI, abi.T_A_LO, abi.T_A_HI
    if nb >= 2:
        cut = halves[0, b_hi]
        assert 0 < cut < nb and halves[1, b_lo] == cut and (halves[:, [a_lo, a_hi]] == (0, na)).all()
    else:
        cut = halves[0, a_hi]
        assert 0 < cut < na and cut % n == 0 and halves[1, a_lo] == cut
    rng = np.random.default_rng(w * 100 + nb)
    src = rng.integers(0, 256, nb * sb + 64, dtype=np.uint8)
    want = np.full(nb * db + 64, GUARD, np.uint8)
    got, part0 = want.copy(), want.copy()
    K.transpose_elements(want, 5, src, 2, meta)
    for row in halves:
        K.transpose_elements(got, 5, src, 2, np.ascontiguousarray(row))
    K.transpose_elements(part0, 5, src, 2, np.ascontiguousarray(halves[0]))
    assert np.array_equal(got, want)
    assert 0 < np.count_nonzero(part0 != GUARD) and not np.array_equal(part0, want)


@pytest.mark.parametrize("share", [0.5, 0.55, 0.6])
def test_element_halves_take_their_own_share(monkeypatch, share):
    """An element transpose is cut at ``config.PAIR_SHARE_ELEMENTS`` of its batches (or whole tiles of rows),
    whatever the dense copies' ``config.PAIR_SHARE``."""
    monkeypatch.setattr(config, "PAIR_SHARE_ELEMENTS", share)
    monkeypatch.setattr(config, "PAIR_SHARE", 0.9)
    meta = abi.pack_transpose(2, (128, 512, 512), (16, 2, 32), (16, 32, 2), (1, 1), False, (0, 128, 0, 16))
    assert recall._halves(meta, 128, 16)[0, abi.T_B_HI] == round(128 * share)
    one = abi.pack_transpose(2, (1, 0, 0), (160, 2, 32), (16, 512, 2), (1, 1), False, (0, 1, 0, 160))
    assert recall._halves(one, 1, 160)[0, abi.T_A_HI] == 16 * round(10 * share)


# ------------------------------------------------------------------------------------------ through the public API
#: name: (product, source position, destination position, dtype, elements, call(dst, src), reference(want, ...))
def _cases():
    def load2d(transpose, dtype, es):
        p = fc.LoadData2DParams(1, 96, 1, 0, 0, transpose)
        return (lambda d, s: fc.LoadData(d, s, p),
                lambda w, wd, s, sd: ref.load2d(w, wd, s, sd, es=es, startIndex=1, repeatTimes=96, srcStride=1,
                                                dstGap=0, transpose=transpose, poison=POISON))

    def with_transpose(es, dtype):
        squares, gap = {1: (48, 1), 2: (96, 0), 4: (48, 1)}[es]  # (dstGap: a square's fractals after each other)
        p = fc.LoadData2dTransposeParams(1, squares, 1, gap, 0, 0)
        return (lambda d, s: fc.LoadDataWithTranspose(d, s, p),
                lambda w, wd, s, sd: ref.load2d_transpose(w, wd, s, sd, es=es, startIndex=1, repeatTimes=squares,
                                                          srcStride=1, dstGap=gap, dstFracGap=0, poison=POISON))

    v2 = fc.LoadData2DParamsV2(0, 0, 24, 4, 24, 24)  # (whole fractal columns: one contiguous region)
    return {
        "2D": ("ATLAS_A2", "A1", "A2", "half") + load2d(False, "half", 2),
        "2D int8": ("ATLAS_A2", "A1", "A2", "int8_t") + load2d(False, "int8_t", 1),
        "2D ifTranspose": ("ATLAS_A2", "A1", "B2", "half") + load2d(True, "half", 2),
        "2D V2": ("ATLAS_350", "A1", "A2", "half", lambda d, s: fc.LoadData(d, s, v2),
                  lambda w, wd, s, sd: ref.load2d_v2(w, wd, s, sd, es=2, mStartPosition=0, kStartPosition=0,
                                                     mStep=24, kStep=4, srcStride=24, dstStride=24, poison=POISON)),
        "transpose b8": ("ATLAS_A2", "B1", "B2", "int8_t") + with_transpose(1, "int8_t"),
        "transpose b16": ("ATLAS_A2", "B1", "B2", "half") + with_transpose(2, "half"),
        "transpose b32": ("ATLAS_A2", "B1", "B2", "float") + with_transpose(4, "float"),
    }


CASES = _cases()
#: forms whose kernel work is not one copy or one element transpose (b32 squares: a strided copy of 4-byte units)
UNPAIRED = {"transpose b32"}


def _setup(name):
    product, spos, dpos, dtype, call, reference = CASES[name]
    pipe = fc.TPipe(product=product)
    es = {"int8_t": 1, "half": 2, "float": 4}[dtype]
    src = pipe.alloc(spos, dtype, (1 << 17) // es)
    # a 48 KiB tile in the middle of the 64 KiB buffer, guard bands of 8 KiB on both sides
    before = pipe.alloc(dpos, dtype, 8192 // es)
    dst = pipe.alloc(dpos, dtype, 49152 // es)
    after = pipe.alloc(dpos, dtype, 8192 // es)
    for g in (before, after):
        g.numpy().view(np.uint8)[:] = GUARD
        g.set_defined()
    return pipe, src, dst, (before, after), call, reference


@pytest.mark.parametrize("name", list(CASES))
def test_repeated_tile_loads_are_split_and_exact(name):
    pipe, src, dst, guards, call, reference = _setup(name)
    box = None
    for k, undefined in enumerate((True, False, False, False, True, False, False, False)):
        _fill(src, k, undefined)
        want, want_def = _bytes(dst)
        s, s_def = _bytes(src)
        reference(want, want_def, s, s_def)
        call(dst, src)
        got, got_def = _bytes(dst)
        assert np.array_equal(got_def, want_def) and np.array_equal(got[want_def], want[want_def]), k
        for g in guards:
            assert (g.memory.data[g.offset:g.offset + g.nbytes] == GUARD).all()
            assert _bytes(g)[1].all()
        fast = dst._prepared[recall_api(name)][5][5]
        if fast:
            box = fast[1][0]
    paired = box is not None and box.size > KC.P_BOX and box[KC.P_BOX] == crew._state["box"].ctypes.data
    assert paired == (name not in UNPAIRED), "the repeats were not bound as expected"


def recall_api(name):
    return "LoadDataWithTranspose" if name.startswith("transpose") else "LoadData"


def test_repeated_tiles_from_threads_at_once():
    """Four threads, each with its own core, repeat tile loads at once (one of them at a time holds the helpers'
    box, the others run alone): every result exact, every guard kept."""
    errors = []
    names = ["2D", "2D ifTranspose", "transpose b8", "2D V2"]

    def worker(name, seed):
        try:
            pipe, src, dst, guards, call, reference = _setup(name)
            for k in range(40):
                _fill(src, seed + k, False)
                s, _ = _bytes(src)
                want, want_def = _bytes(dst)
                if k % 8 == 0:
                    reference(want, want_def, s, np.ones(s.size, bool))
                call(dst, src)
                if k % 8 == 0:
                    got, got_def = _bytes(dst)
                    assert np.array_equal(got, want) and got_def.all(), (name, k)
                for g in guards:
                    assert (g.memory.data[g.offset:g.offset + g.nbytes] == GUARD).all(), (name, k)
        except BaseException as e:  # noqa: BLE001 (reported by the main thread)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n, 10 * i)) for i, n in enumerate(names)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_forked_child_runs_bound_tiles_alone_and_exact():
    """A tile load bound to the pair in the parent repeats exactly in a forked child (the parent's box stays
    locked there: no post to a helper that is not in the child), and both processes exit with helpers spinning."""
    code = ("import os, numpy as np, fastcopy as fc\n"
            "from fastcopy import config\n"
            "from fastcopy.dma import crew\n"
            "from fastcopy.kernels import crew as KC\n"
            "config.SLOW_HELPER = float('inf')\n"
            "pipe = fc.TPipe(product='ATLAS_A2')\n"
            "a1, a2 = pipe.alloc('A1', 'half', 32768), pipe.alloc('A2', 'half', 32768)\n"
            "p = fc.LoadData2DParams(0, 128, 1)\n"
            "def check(seed):\n"
            "    rng = np.random.default_rng(seed)\n"
            "    a1.numpy().view(np.uint16)[:] = rng.integers(0, 2**16, 32768, dtype=np.uint16)\n"
            "    a1.set_defined()\n"
            "    fc.LoadData(a2, a1, p)\n"
            "    return np.array_equal(a2.numpy().view(np.uint16), a1.numpy().view(np.uint16))\n"
            "assert all(check(k) for k in range(40))\n"
            "fast = a2._prepared['LoadData'][5][5]\n"
            "head = fast[1][0]\n"
            "assert head[KC.P_BOX] == crew._state['box'].ctypes.data\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    arrays = [np.zeros(KC.BOX_SIZE + 8, np.int64) for _ in range(16)]  # (a box's size)\n"
            "    ok = all(check(100 + k) for k in range(40))\n"
            "    ok = ok and fast[0](head) == KC.ALONE_BUSY and check(7)\n"
            "    ok = ok and not any(a.any() for a in arrays)\n"
            "    os._exit(0 if ok else 3)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "assert os.waitstatus_to_exitcode(status) == 0, status\n"
            "assert all(check(200 + k) for k in range(40))\n"
            "print('ok')\n")
    run_ok(code)


def test_no_helper_thread_can_start_then_tiles_run_alone(monkeypatch):
    """A thread that cannot start (a thread limit, the interpreter exiting) never fails a call: the tile's repeat
    binds its one-thread form and crew jobs run on the calling thread."""
    crew.stop()

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    pipe, src, dst, guards, call, reference = _setup("2D")
    for k in range(6):
        _fill(src, k, False)
        call(dst, src)
        assert np.array_equal(_bytes(dst)[0], _bytes(src)[0][512:512 + dst.nbytes])
    assert crew._state["box"] is None and dst._prepared["LoadData"][5][5][0] is np.copyto
    assert not crew.run_job(crew.dense_job(np.zeros(1 << 18, np.uint8), 0, np.ones(1 << 18, np.uint8), 0, 1 << 18))
    monkeypatch.undo()


def test_a_stopped_crew_keeps_the_box_of_a_bound_tile():
    """A tile load bound to the pair holds its box's address in the pair header, not the box: after crew.stop()
    (also what the exit hook runs) the box stays allocated and stopped, so the repeats run alone, exact, and write
    nothing else. (Freed, its 768 bytes were the next array of that size, from numpy's cache of small buffers: a
    repeat wrote the lane's words into that array and raised ZeroDivisionError, its zeros read as the poll count.)"""
    pipe, src, dst, guards, call, reference = _setup("2D")
    for k in range(20):
        _fill(src, k, False)
        call(dst, src)
    head = dst._prepared["LoadData"][5][5][1][0]
    assert head[KC.P_BOX] == crew._state["box"].ctypes.data
    crew.stop()
    arrays = [np.zeros(KC.BOX_SIZE + 8, np.int64) for _ in range(16)]  # (the box's buffer's size: freed, one is it)
    for k in range(8):
        _fill(src, 100 + k, False)
        want, want_def = _bytes(dst)
        s, s_def = _bytes(src)
        reference(want, want_def, s, s_def)
        call(dst, src)
        got, got_def = _bytes(dst)
        assert np.array_equal(got, want) and got_def.all(), k
        for g in guards:
            assert (g.memory.data[g.offset:g.offset + g.nbytes] == GUARD).all()
        assert not any(a.any() for a in arrays), k


def test_the_helpers_are_stopped_and_joined_at_exit():
    """The exit hook (run by the interpreter before it frees the modules) stops the helpers and joins them: no
    helper thread touches the box or a job's arrays while they are freed; bound tiles then run alone."""
    code = ("import atexit, numpy as np, fastcopy as fc\n"
            "from fastcopy.dma import crew\n"
            "from fastcopy.kernels import crew as KC\n"
            "pipe = fc.TPipe(product='ATLAS_A2')\n"
            "a1, a2 = pipe.alloc('A1', 'half', 32768), pipe.alloc('A2', 'half', 32768)\n"
            "a1.numpy()[:] = 3\n"
            "a1.set_defined()\n"
            "p = fc.LoadData2DParams(0, 128, 1)\n"
            "for _ in range(20):\n"
            "    fc.LoadData(a2, a1, p)\n"
            "threads, box = crew._state['threads'], crew._state['box']\n"
            "assert threads and all(t.is_alive() for t in threads)\n"
            "crew._at_exit()\n"
            "assert not any(t.is_alive() for t in threads) and box[KC.STOP] == 1 and crew._state['box'] is None\n"
            "a1.numpy()[:] = 5\n"
            "fc.LoadData(a2, a1, p)\n"
            "assert (a2.numpy() == 5).all()\n"
            "for _ in range(20):\n"  # (a new crew starts for other calls; the exit hook stops it too)
            "    fc.LoadData(a2, a1, p)\n"
            "print('ok')\n")
    run_ok(code)


@pytest.mark.parametrize("pair_spin", [False, True])
def test_after_a_pair_call_the_helper_spins_its_own_window(monkeypatch, pair_spin):
    """A helper that ran a pair call stays awake for config.PAIR_SPIN_US (a tile loop's Mmad between two loads
    must not put it to sleep), else for config.SPIN_US; backing off, it sleeps at once either way. (Windows of
    1 us and a minute: the verdicts wait for the thread, they time nothing.)"""
    import time

    crew.stop()
    monkeypatch.setattr(config, "SPIN_US", 60e6)  # (awake while the calls below find it)
    monkeypatch.setattr(config, "PAIR_SPIN_US", 120e6 if pair_spin else 0.0)
    buf, src = _dense(65536, 0, 9)
    kernel, head = crew.dense_pair(buf, 64, src, 3, 65536)
    box = crew._state["box"]

    def asleep_within(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if box[KC.SLEEPING] > 0:
                return True
            time.sleep(0.005)
        return False

    end = time.monotonic() + 30
    while box[KC.HELPED] == 0 and time.monotonic() < end:
        kernel(head)
    assert box[KC.HELPED] > 0, "the helper never ran a pair call"
    box[KC.SPIN] = box[KC.T_SPIN] = 1  # the crew's window now ~0: only a pair call's own window keeps it awake
    assert asleep_within(0.2 if pair_spin else 30) != pair_spin
    if pair_spin:  # backing off: the helpers sleep at once, whatever the window
        box[KC.SPIN] = 0
        assert asleep_within(30)
    assert np.array_equal(buf[64:64 + 65536], src[3:3 + 65536])
    crew.stop()

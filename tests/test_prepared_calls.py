"""The prepared-call cache of fastcopy.api: a repeated call skips planning, and every change of the core's state
that a plan depends on (pad register, loop mode) is seen: each test fails if a stale prepared call ran."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fastcopy as fc
from fastcopy import (DataCopy, DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                      GlobalTensor, LoopModeParams, TPipe, TPosition)

pytestmark = pytest.mark.filterwarnings("ignore::fastcopy.FastCopyWarning")


def test_repeated_calls_hit_the_cache_and_stay_exact():
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "half", 512)
    a = np.arange(512, dtype=np.float16)
    gm = GlobalTensor(a)
    for form in (512, DataCopyParams(1, 32)):
        for k in range(3):
            a[:] = k + 1
            DataCopy(ub, gm, form)
            assert np.array_equal(ub.numpy(), a) and ub.defined().all()
    assert len(ub._prepared) == 2
    other = GlobalTensor(np.full(512, 7, np.float16))  # another source: not the cached one
    DataCopy(ub, other, 512)
    assert (ub.numpy() == 7).all()


def test_pad_register_change_is_seen():
    """isPad=false fills from the pad register: a SetPadValue between two identical calls must change the fill."""
    pipe = TPipe(product="ATLAS_A2")
    ub = pipe.alloc(TPosition.VECIN, "half", 32)
    gm = GlobalTensor(np.arange(16, dtype=np.float16))
    cp, pp = DataCopyExtParams(1, 20, 0, 0, 0), DataCopyPadExtParams(False, 0, 2, 0)
    fc.SetPadValue(np.float16(1))
    DataCopyPad(ub, gm, cp, pp)
    assert ub.numpy()[10:12].tolist() == [1, 1]
    fc.SetPadValue(np.float16(5))
    DataCopyPad(ub, gm, cp, pp)
    assert ub.numpy()[10:12].tolist() == [5, 5]
    DataCopyPad(ub, gm, cp, DataCopyPadExtParams(True, 0, 2, 3))  # isPad=true sets the register...
    DataCopyPad(ub, gm, cp, pp)  # ...which this identical-to-before call must read
    assert ub.numpy()[10:12].tolist() == [3, 3]


def test_loop_mode_change_is_seen():
    pipe = TPipe(product="ATLAS_350")
    ub = pipe.alloc(TPosition.VECIN, "half", 256)
    gm = GlobalTensor(np.arange(256, dtype=np.float16))
    ub.numpy()[:] = 0
    ub.set_defined()
    DataCopy(ub, gm, 16)
    assert ub.numpy()[16:32].tolist() == [0] * 16
    fc.SetLoopModePara(LoopModeParams(2, 1, 32, 64, 0, 0), DataCopyMVType.OUT_TO_UB, pipe=pipe)
    DataCopy(ub, gm, 16)  # now repeated twice: source +32 bytes, destination +64 bytes
    assert np.array_equal(ub.numpy()[32:48], np.arange(16, 32, dtype=np.float16))
    ub.numpy()[:] = 0
    fc.ResetLoopModePara(pipe=pipe)
    DataCopy(ub, gm, 16)
    assert ub.numpy()[32:48].tolist() == [0] * 16


def test_state_version_counts_every_write():
    pipe = TPipe(product="ATLAS_A2")
    v = pipe.state.version
    fc.SetPadValue(np.float16(2), pipe=pipe)
    fc.SetPadValue(np.float16(2), pipe=pipe)
    assert pipe.state.version == v + 2


# ---------------------------------------------------------------- every cached form, against the uncached path
def _snapshot(*tensors):
    return [(t.numpy().view(np.uint8).copy(), np.asarray(t.defined()).copy()) for t in tensors]


def _same_snapshots(a, b) -> bool:
    return all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(a, b))


def _nd2nz_gm_ub(pipe):
    """ND2NZ GM -> UB (on Atlas 350 it runs under OUT_TO_UB loop mode)."""
    gm = GlobalTensor(np.arange(4096, dtype=np.int16))
    ub = pipe.alloc(TPosition.VECIN, "int16", 4096)
    return DataCopy, ub, gm, (fc.nd2nz_params(8, 40, "int16"),), DataCopyMVType.OUT_TO_UB


def _nz2nd_ub_gm(pipe):
    ub = pipe.alloc(TPosition.VECOUT, "half", 2048)
    ub[0:2048] = np.arange(2048, dtype=np.float16)
    gm = GlobalTensor(np.zeros(4096, np.float16))
    return DataCopy, gm, ub, (fc.nz2nd_params(8, 32, "half"),), DataCopyMVType.UB_TO_OUT


def _slice_gm_ub(pipe):
    gm = GlobalTensor(np.arange(2048, dtype=np.float16))
    ub = pipe.alloc(TPosition.VECIN, "half", 2048)
    d = [fc.SliceInfo(0, 31, 0, 2, 32), fc.SliceInfo(0, 3, 0, 1, 4)]  # rows 0, 2, 4, 6, columns 16..47 of 8 x 64
    s = [fc.SliceInfo(16, 47, 0, 2, 64), fc.SliceInfo(0, 6, 1, 1, 8)]
    return DataCopy, ub, gm, (d, s, 2), DataCopyMVType.OUT_TO_UB


def _pad_ub_gm(pipe):
    ub = pipe.alloc(TPosition.VECOUT, "float", 256)
    ub[0:256] = np.arange(256, dtype=np.float32)
    gm = GlobalTensor(np.zeros(1024, np.float32))
    return DataCopyPad, gm, ub, (DataCopyExtParams(3, 20, 1, 4, 0),), DataCopyMVType.UB_TO_OUT


def _pad_gm_ub(pipe):
    gm = GlobalTensor(np.arange(512, dtype=np.float32))
    ub = pipe.alloc(TPosition.VECIN, "float", 512)
    return DataCopyPad, ub, gm, (DataCopyExtParams(3, 20, 4, 0, 0), DataCopyPadExtParams(False, 1, 2, 0)), \
        DataCopyMVType.OUT_TO_UB


FORMS = {"Nd2NzParams": _nd2nz_gm_ub, "Nz2NdParamsFull": _nz2nd_ub_gm, "SliceInfo": _slice_gm_ub,
         "DataCopyPad UB->GM": _pad_ub_gm, "DataCopyPad GM->UB": _pad_gm_ub}


def _run(make, product, cached: bool, change):
    """The call four times (twice, the state change, twice more); every tensor's bytes and definedness after
    each call. ``cached=False`` empties the prepared-call cache before each call: the full path every time."""
    pipe = TPipe(product=product)
    fn, dst, src, args, direction = make(pipe)
    snaps = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(4):
            if k == 2:
                change(pipe, direction)
            if not cached:
                dst._prepared = None
            fn(dst, src, *args)
            snaps.append(_snapshot(dst, src))
    return snaps, dst


def _loop_mode(pipe, direction):
    fc.SetLoopModePara(LoopModeParams(2, 1, 256, 512, 0, 0), direction, pipe=pipe)


def _pad_register(pipe, direction):
    fc.SetPadValue(np.float32(-3.5), pipe=pipe)


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("product, change", [("ATLAS_A2", _pad_register), ("ATLAS_350", _loop_mode),
                                             ("ATLAS_350", _pad_register)])
def test_cached_forms_match_the_uncached_path(form, product, change):
    """Each cached form, repeated around a state change (loop mode of its direction, the pad register):
    bit-exact equal to the same calls on the full path, and the repeats were served by the cache."""
    cached, dst = _run(FORMS[form], product, True, change)
    full, _ = _run(FORMS[form], product, False, change)
    for k, (a, b) in enumerate(zip(cached, full)):
        assert _same_snapshots(a, b), f"{form} on {product}: call {k} differs from the uncached path"
    assert dst._prepared, f"{form}: the call was not remembered"


def test_loop_mode_change_is_seen_by_each_new_form():
    """Atlas 350 loop mode repeats GM <-> UB moves: a repeat after SetLoopModePara must move the repetition
    too (a stale prepared call would not), for every form that follows loop mode."""
    for form in ("Nd2NzParams", "SliceInfo", "DataCopyPad UB->GM", "DataCopyPad GM->UB"):
        before, _ = _run(FORMS[form], "ATLAS_350", True, lambda pipe, d: None)
        after, _ = _run(FORMS[form], "ATLAS_350", True, _loop_mode)
        assert not _same_snapshots(before[2], after[2]), f"{form}: loop mode made no difference"


def test_nz2nd_loop_mode_warning_is_not_cached_away():
    """NZ2ND does not follow loop mode but warns about it: the repeat after SetLoopModePara must warn."""
    pipe = TPipe(product="ATLAS_350")
    fn, gm, ub, args, direction = _nz2nd_ub_gm(pipe)
    fn(gm, ub, *args)
    fn(gm, ub, *args)
    _loop_mode(pipe, direction)
    with pytest.warns(fc.FastCopyWarning, match="loop mode"):
        fn(gm, ub, *args)


def test_params_changed_in_place_are_seen():
    """Structs are mutable like the C++ aggregates: a field assigned between two calls is a new call."""
    pipe = TPipe(product="ATLAS_A2")
    fn, dst, src, (p,), _ = _nd2nz_gm_ub(pipe)
    fn(dst, src, p)
    fn(dst, src, p)
    p.nValue = 4  # fewer rows: the rows 4..7 of each block keep what the first call wrote
    dst.numpy()[:] = 0
    fn(dst, src, p)
    ref_pipe = TPipe(product="ATLAS_A2")
    _, rdst, rsrc, (q,), _ = _nd2nz_gm_ub(ref_pipe)
    q.nValue = 4
    rdst.numpy()[:] = 0
    fn(rdst, rsrc, q)
    assert np.array_equal(dst.numpy(), rdst.numpy())


def test_other_source_or_infos_miss():
    pipe = TPipe(product="ATLAS_A2")
    fn, ub, gm, (d, s, n), _ = _slice_gm_ub(pipe)
    fn(ub, gm, d, s, n)
    fn(ub, gm, d, s, n)
    other = GlobalTensor(np.full(2048, 9, np.float16))
    fn(ub, other, d, s, n)
    assert (ub.numpy()[:128] == 9).all()
    s[1].startIndex, s[1].endIndex = 1, 7  # odd rows now
    fn(ub, gm, d, s, n)
    assert np.array_equal(ub.numpy()[:32], np.arange(64 + 16, 64 + 48, dtype=np.float16))


def test_310p_scratch_is_checked_on_every_call():
    """The Atlas inference AI Core GM -> L1 ND2NZ uses the top 8 KiB of UB: an allocation made there after a
    first call must still be refused on the repeat (that check depends on allocations, not on the state)."""
    pipe = TPipe(product="ATLAS_INFERENCE_AICORE")
    gm = GlobalTensor(np.arange(1024, dtype=np.float16))
    l1 = pipe.alloc(TPosition.A1, "half", 1024)
    p = fc.nd2nz_params(16, 32, "half")
    DataCopy(l1, gm, p)
    DataCopy(l1, gm, p)
    pipe.alloc(TPosition.VECIN, "half", 8, addr=250 * 1024)
    with pytest.raises(fc.CapacityError):
        DataCopy(l1, gm, p)

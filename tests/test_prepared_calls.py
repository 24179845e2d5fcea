"""The prepared-call cache of fastcopy.api: a repeated call skips planning, and every change of the core's state
that a plan depends on (pad register, loop mode) is seen: each test fails if a stale prepared call ran."""

from __future__ import annotations

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

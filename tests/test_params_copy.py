"""A copy of a parameter struct (copy.copy) is a struct of its own, as in C++: setting a field of the copy changes
neither the original's fields nor what a call with the original does (the default shallow copy shared the field
values, so the original read the copy's value while its key snapshot, which plans and repeats use, kept the old
one). Found in review of the LoadData memo change (8aec7d8), which holds a params object by its snapshot."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import fastcopy as fc


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, lambda p: pickle.loads(pickle.dumps(p))])
def test_a_copys_field_is_its_own(how):
    p = fc.DataCopyParams(1, 2, 0, 0)
    p.key()  # (the snapshot made, as a call makes it)
    q = how(p)
    q.blockLen = 5
    assert (p.blockLen, p.key(), q.blockLen, q.key()) == (2, (1, 2, 0, 0), 5, (1, 5, 0, 0))
    assert p != q and type(q) is type(p)


@pytest.mark.parametrize("called_before", [False, True])
def test_a_call_with_the_original_after_the_copy_changed_moves_what_its_fields_say(called_before):
    src = fc.GlobalTensor(np.arange(256, dtype=np.float16))
    pipe = fc.TPipe(product="ATLAS_A2")
    u = pipe.alloc("VECIN", "half", 256)
    fc.DataCopy(u, src, 256)
    p = fc.DataCopyParams(1, 2, 0, 0)  # one burst of two 32-byte blocks: 32 halves
    out = np.zeros(256, np.float16)
    if called_before:  # (its snapshot made before the copy)
        fc.DataCopy(fc.GlobalTensor(np.zeros(256, np.float16)), u, p)
    q = copy.copy(p)
    q.blockLen = 8
    fc.DataCopy(fc.GlobalTensor(out), u, p)
    assert p.blockLen == 2
    assert np.array_equal(out[:32], np.arange(32, dtype=np.float16)) and not out[32:].any()


def test_a_loaddata_repeat_with_the_original_after_the_copy_changed():
    """The LoadData memo holds its params object and proves it unchanged by its snapshot: a copy's change must
    not reach the original."""
    pipe = fc.TPipe(product="ATLAS_A2")
    a1 = pipe.alloc("A1", "half", 4096)
    a1[...] = np.arange(4096, dtype=np.float16)
    a2 = pipe.alloc("A2", "half", 4096)
    p = fc.LoadData2DParams(0, 1, 0, 0, 0, False, 0)  # one 512-byte fractal
    fc.LoadData(a2, a1, p)
    fc.LoadData(a2, a1, p)  # (the quickest repeat remembered)
    q = copy.copy(p)
    q.repeatTimes = 4
    pipe2 = fc.TPipe(product="ATLAS_A2")
    b1 = pipe2.alloc("A1", "half", 4096)
    b1[...] = np.arange(4096, dtype=np.float16)
    b2 = pipe2.alloc("A2", "half", 4096)
    fc.LoadData(a2, a1, p)  # (the repeat with p: one fractal)
    fc.LoadData(b2, b1, fc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    assert np.array_equal(a2.defined(), b2.defined())
    assert np.array_equal(a2.numpy().view(np.uint16), b2.numpy().view(np.uint16))
    assert p.repeatTimes == 1

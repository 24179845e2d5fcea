"""The memory model: GlobalTensor over user arrays, TPipe buffers, sub-tensors, definedness."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from fastcopy import (CapacityError, DataCopy, FastCopyError, GlobalTensor, OutOfBoundsError, Phys, Product,
                      TPipe, TPosition, UnsupportedError, current_pipe)
from fastcopy.products import CAPACITIES, POSITIONS


def test_global_tensor_is_a_view_without_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = GlobalTensor(a)
    assert g.size == 12 and g.numpy().shape == (3, 4) and np.shares_memory(g.numpy(), a)
    assert g.defined().shape == (3, 4) and g.defined().all()
    sub = g[5]
    assert sub.size == 7 and sub.numpy()[0] == 5 and sub.GetPhyAddr() == 20
    assert not GlobalTensor(a, defined=False).defined().any()
    with pytest.raises(FastCopyError, match="must be C-contiguous"):
        GlobalTensor(a.T)
    with pytest.raises(OutOfBoundsError, match=r"offset outside \[0, 12\] elements"):
        g[13]


@pytest.mark.parametrize("dtype", ["half", "bfloat16_t", "fp8_e4m3fn_t", np.float64, ml_dtypes.float8_e5m2,
                                   "complex32", "int4b_t"])
def test_any_supported_dtype(dtype):
    pipe = TPipe()
    t = pipe.alloc(TPosition.VECIN, dtype, 64)
    assert t.numpy().size == 64 and t.nbytes == 64 * t.itemsize


def test_alloc_is_aligned_and_bounded_per_position():
    for product in Product:
        pipe = TPipe(product=product)
        for pos, phys in POSITIONS[product].items():
            if phys is Phys.GM:
                continue
            t = pipe.alloc(pos, "uint8", 1)
            assert t.position is pos and t.memory.phys is phys
            assert t.offset % {Phys.L0A: 512, Phys.L0B: 512, Phys.L0C: 64, Phys.BT: 64, Phys.FB: 128}.get(phys, 32) == 0
        cap = CAPACITIES[product][Phys.UB]
        fresh = TPipe(product=product)
        fresh.alloc(TPosition.VECIN, "uint8", cap)
        with pytest.raises(CapacityError, match=f"holds {cap} bytes on {product.display_name}"):
            fresh.alloc(TPosition.VECOUT, "uint8", 1)


def test_positions_share_their_physical_buffer():
    pipe = TPipe(product="ATLAS_INFERENCE_AICORE")  # C1 and CO2 are UB there (semantics.md §1.2)
    a = pipe.alloc(TPosition.VECIN, "half", 16)
    b = pipe.alloc(TPosition.CO2, "half", 16)
    c = pipe.alloc(TPosition.C1, "half", 16)
    assert a.memory is b.memory is c.memory and len({a.offset, b.offset, c.offset}) == 3


def test_fresh_memory_is_poison_and_undefined_and_set_defined_marks():
    pipe = TPipe(poison=0xA5)
    t = pipe.alloc(TPosition.VECIN, "int16", 8)
    assert (t.numpy().view(np.uint16) == 0xA5A5).all() and not t.defined().any()
    t.numpy()[:4] = 1
    t.set_defined(np.arange(8) < 4)
    assert t.defined().tolist() == [True] * 4 + [False] * 4
    t.set_defined()
    assert t.defined().all()
    t.set_undefined()
    assert not t.defined().any() and (t.numpy().view(np.uint16) == 0xA5A5).all()
    t.SetValue(3, 9)
    assert t.GetValue(3) == 9 and t.defined()[3] and t.defined().sum() == 1


def test_partly_defined_element_is_undefined():
    pipe = TPipe()
    t = pipe.alloc(TPosition.VECIN, "int32", 8)
    t.memory.plane[t.offset:t.offset + 2] = 1  # two bytes of element 0
    assert not t.defined()[0]


def test_current_pipe_and_context():
    p1 = TPipe()
    assert current_pipe() is p1
    p2 = TPipe(product="ATLAS_350")
    assert current_pipe() is p2
    with p1:
        assert current_pipe() is p1
    assert current_pipe() is p2


def test_capacity_override_and_errors():
    pipe = TPipe(capacities={"UB": 1 << 20, Phys.L1: 2 << 20})
    assert pipe.capacities[Phys.UB] == 1 << 20 and pipe.capacities[Phys.L1] == 2 << 20
    with pytest.raises(UnsupportedError, match="has no BiasTable buffer"):
        TPipe(product="ATLAS_TRAINING", capacities={"BT": 1024})
    with pytest.raises(UnsupportedError, match="unknown product 'A9'"):
        TPipe(product="A9")
    assert TPipe(product="A3").product is Product.ATLAS_A3
    assert TPipe(product="Atlas 350").product is Product.ATLAS_350


def test_writes_touch_only_the_written_bytes_of_gm():
    out = np.full(64, -1, np.float16)
    pipe = TPipe()
    ub = pipe.alloc(TPosition.VECOUT, "half", 64)
    ub.numpy()[:] = 3
    ub.set_defined()
    DataCopy(GlobalTensor(out)[16], ub, 16)
    assert (out[:16] == -1).all() and (out[16:32] == 3).all() and (out[32:] == -1).all()

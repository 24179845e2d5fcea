"""The cheap paths of first calls of new parameters give exactly what the general paths give.

* to_nz / from_nz of small arrays run as numpy slice assignments on unsigned views (``config.NZ_NUMPY_BYTES``):
  bit for bit the bytes their move/fill plans write, into fresh outputs and into ``out=`` arrays full of other
  bytes (a stray or missing write shows), for every dtype, batch, shape, C0 and input address; the same errors.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastcopy import ParamError, config, from_nz, to_nz
from fastcopy.formats import nz_shape

DTYPES = [np.bool_, np.int8, ml_dtypes.float8_e4m3fn, np.float16, ml_dtypes.bfloat16, np.int32, np.float32,
          np.float64, np.complex64, np.complex128, "V3"]


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).view(np.uint8).tobytes()


def _at(rng, nbytes: int, shift: int) -> np.ndarray:
    """``nbytes`` random bytes starting ``shift`` bytes after a 64-byte boundary."""
    buf = rng.integers(0, 256, nbytes + 128, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + shift
    return buf[start:start + nbytes]


def _both(fn):
    """``fn()`` with the small numpy path, then with the plans (``NZ_NUMPY_BYTES = 0``): each result or error."""
    out = []
    keep = config.NZ_NUMPY_BYTES
    for limit in (keep, 0):
        config.NZ_NUMPY_BYTES = limit
        try:
            out.append(("ok", fn()))
        except Exception as exc:  # noqa: BLE001 (the verdict is the error's type and message)
            out.append(("error", (type(exc), str(exc))))
        finally:
            config.NZ_NUMPY_BYTES = keep
    return out


@settings(max_examples=150, deadline=None)
@given(dtype=st.sampled_from(DTYPES), lead=st.lists(st.integers(1, 3), max_size=2), rows=st.integers(1, 40),
       cols=st.integers(1, 70), c0=st.sampled_from([None, None, 1, 3, 4, 16]), shift=st.integers(0, 63),
       into=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_small_numpy_nz_is_the_plans(dtype, lead, rows, cols, c0, shift, into, seed):
    dt = np.dtype(dtype)
    if c0 is None and 32 % dt.itemsize:
        c0 = 2
    shape = (*lead, rows, cols)
    nzs = nz_shape(shape, dt, c0)
    rng = np.random.default_rng(seed)
    a = _at(rng, int(np.prod(shape)) * dt.itemsize, shift * dt.itemsize % 64).view(dt).reshape(shape)
    garbage = _at(rng, int(np.prod(nzs)) * dt.itemsize, shift).view(dt).reshape(nzs)
    garbage_nd = _at(rng, a.nbytes, 0).view(dt).reshape(shape)

    def forward():
        out = garbage.copy() if into else None
        return _bits(to_nz(a, c0, out=out))

    (k1, nz1), (k2, nz2) = _both(forward)
    assert k1 == k2 == "ok" and nz1 == nz2
    nz = np.frombuffer(nz1, np.uint8).view(dt).reshape(nzs)

    def back():
        out = garbage_nd.copy() if into else None
        return _bits(from_nz(nz, shape, c0, out=out))

    (k1, nd1), (k2, nd2) = _both(back)
    assert k1 == k2 == "ok" and nd1 == nd2 == _bits(a)


def test_small_numpy_nz_reads_no_pad_and_writes_every_pad():
    """from_nz never reads the pads (poisoned NZ pads change nothing); to_nz into ``out=`` zeroes every pad."""
    a = np.arange(17 * 21, dtype=np.float16).reshape(17, 21)
    nz = to_nz(a)
    poisoned = nz.copy()
    poisoned[1, :, :, 5:] = np.float16(7)  # the last column block's pad columns
    poisoned[:, 1, 1:, :] = np.float16(7)  # rows 17..31
    assert _bits(from_nz(poisoned, a.shape)) == _bits(a)
    out = np.full(nz.shape, 9, np.float16)
    assert _bits(to_nz(a, out=out)) == _bits(nz)
    assert not out[1, :, :, 5:].any() and not out[:, 1, 1:, :].any()


@pytest.mark.parametrize("call", [
    lambda: to_nz(np.zeros((20, 40), np.float32), out=np.empty((5, 2, 16, 8), np.float16)),
    lambda: to_nz(np.zeros((20, 40), np.float32), out=np.empty((5, 2, 16, 8), np.float32)[::-1]),
    lambda: from_nz(np.zeros((5, 2, 16, 8), np.float32), (20, 41)),
    lambda: from_nz(np.zeros((5, 2, 16, 8), np.float32), (20, 40), out=np.empty((40, 20), np.float32).T),
    lambda: to_nz(np.zeros(8, np.float32)),
])
def test_small_numpy_nz_errors_are_the_plans(call):
    (k1, e1), (k2, e2) = _both(call)
    assert k1 == k2 == "error" and e1 == e2 and issubclass(e1[0], ParamError)


@settings(max_examples=200, deadline=None)
@given(start0=st.integers(0, 64), start1=st.integers(0, 40), stride1=st.integers(0, 5), count=st.integers(1, 9),
       shape0=st.integers(1, 300), es=st.sampled_from([1, 2, 4, 8]))
def test_two_dimensional_slice_loop_is_its_offsets_list(start0, start1, stride1, count, shape0, es):
    """A two-dimensional slice is planned as one offset and a loop over dimension 1: exactly the offsets list
    (device order) the general form makes."""
    from fastcopy.ops.slice import _offsets, _row_loop

    end1 = start1 + (count - 1) * (1 + stride1)
    keys = ((start0, start0, 0, 1, shape0), (start1, end1, stride1, 1, end1 + 1))
    first, step = _row_loop(keys, (shape0, end1 + 1), es)
    assert tuple(first + t * step for t in range(count)) == _offsets(keys, (shape0, end1 + 1), es)


_STRUCTS = ["DataCopyParams", "DataCopyExtParams", "Nd2NzParams", "Nz2NdParamsFull", "SliceInfo", "LoopModeParams"]


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_STRUCTS), product=st.sampled_from(list(__import__("fastcopy").products.Product)),
       data=st.data())
def test_key_types_checked_at_once_are_the_field_checks(name, product, data):
    """``check_key_types`` passes a key by its least and greatest value when both lie in every field's range:
    the same verdict (and the same first failing field's message) as checking field by field."""
    from fastcopy import params
    from fastcopy.errors import ParamTypeError

    cls = getattr(params, name)
    edges = [-(2**63), -1, 0, 1, 255, 256, 65535, 65536, 2**31, 2**32 - 1, 2**32, 2**40, 2**64 - 1, 2**64]
    key = tuple(data.draw(st.one_of(st.sampled_from(edges), st.integers(0, 70000))) for _ in cls.FIELDS)
    want = None
    for f, v in zip(cls.FIELDS, key):
        c, lo, hi = params.CTYPES[cls._product_types(f).get(product, f.ctype)]
        if not lo <= v <= hi:
            want = f"X: {f.name}={v} does not fit {c} [{lo}, {hi}] on {product}"
            break
    try:
        cls.check_key_types("X", key, product)
        got = None
    except ParamTypeError as exc:
        got = str(exc)
    assert got == want

"""The worked examples of the reference pages (tests/data/vectors.json) and
helpers to build their buffers and check results bit for bit."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np

VECTORS_PATH = pathlib.Path(__file__).resolve().parent / "data" / "vectors.json"
with open(VECTORS_PATH, encoding="utf-8") as fh:
    VECTORS = json.load(fh)["vectors"]

DTYPES = {"half": np.float16, "float": np.float32, "uint8_t": np.uint8, "int8_t": np.int8, "int32_t": np.int32}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: vector product keys -> fastcopy Product names
PRODUCTS = {"910": "ATLAS_TRAINING", "310P": "ATLAS_INFERENCE_AICORE", "310P-VEC": "ATLAS_INFERENCE_VECTORCORE",
            "A2": "ATLAS_A2", "A3": "ATLAS_A3", "310B": "ATLAS_200I_500_A2", "350": "ATLAS_350"}


def vector(vid: str) -> dict:
    return next(v for v in VECTORS if v["id"] == vid)


_INIT = re.compile(r"^(?:(?P<zeros>zeros)|fill\((?P<fill>-?\d+)\)|arange\((?P<args>-?\d+(?:,\s*-?\d+)?)\)"
                   r"(?:\s*(?P<op>[-+%])\s*(?P<operand>\d+))?)"
                   r"(?:\s+as\s+(?P<as>\w+))?"
                   r"(?:\s+viewed as shape (?P<shape>(?:\[\d+\])+).*)?$")


def init_values(init, length, dtype):
    """Element values of an 'init' string ('zeros', 'fill(v)', 'arange(a, b) [op k] [as T] [viewed as ...]')."""
    m = _INIT.match(init)
    assert m, f"unparsed init string {init!r}"
    if m["zeros"]:
        ints = np.zeros(length, np.int64)
    elif m["fill"] is not None:
        ints = np.full(length, int(m["fill"]), np.int64)
    else:
        ints = np.arange(*[int(a) for a in m["args"].split(",")], dtype=np.int64)
        if m["op"]:
            k = int(m["operand"])
            ints = {"-": ints - k, "+": ints + k, "%": ints % k}[m["op"]]
    assert ints.size == length, f"{init!r} gives {ints.size} elements, buffer has {length}"
    if m["as"]:
        assert np.dtype(m["as"]) == np.dtype(dtype), f"{init!r} on a {np.dtype(dtype)} buffer"
    if m["shape"]:
        assert np.prod([int(x) for x in re.findall(r"\d+", m["shape"])]) == length
    values = ints.astype(dtype)
    assert np.array_equal(values.astype(np.int64), ints), f"{init!r} not exact in {np.dtype(dtype)}"
    return values


def to_bytes(values):
    """Element array -> (little-endian tensor bytes, all-defined mask)."""
    data = np.ascontiguousarray(values.astype(values.dtype.newbyteorder("<"))).view(np.uint8).copy()
    return data, np.ones(data.size, np.bool_)



def check_elements(data, defined, expected, dtype, undefined_indices=(), what="dst", poison=0xFF):
    """Bit-exact comparison; null / undefined_indices elements must be reported undefined (all bytes)."""
    es = np.dtype(dtype).itemsize
    n = len(expected)
    assert data.size == n * es, f"{what}: {data.size} bytes, expected {n} elements of {es} B"
    want_undef = np.zeros(n, bool)
    want_undef[[i for i, x in enumerate(expected) if x is None]] = True
    want_undef[list(undefined_indices)] = True
    want_bits = np.array([0 if x is None else x for x in expected], dtype).view(UINT[es])
    got_bits = data.view(UINT[es])
    byte_def = defined.reshape(n, es)
    bad = []
    for i in range(n):
        if want_undef[i]:
            ok = not byte_def[i].any() and (data[i * es:(i + 1) * es] == poison).all()
        else:
            ok = byte_def[i].all() and got_bits[i] == want_bits[i]
        if not ok:
            bad.append(i)
    assert not bad, (f"{what}: {len(bad)} element(s) differ, first at {bad[:8]}: got "
                     f"{[(hex(got_bits[i]), bool(byte_def[i].all())) for i in bad[:8]]}, expected "
                     f"{[('undefined' if want_undef[i] else hex(want_bits[i])) for i in bad[:8]]}")



"""Where every destination element of one call comes from, found by running the call itself on tagged data.

The call runs again in a scratch TPipe of the same product (same capacities, poison byte and per-core state:
pad register, loop mode) on copies of its tensors at the same addresses: the source holds element indices
("tags"), the destination a known background. Comparing a few such runs classifies every destination element
exactly as the emulation does, so a picture can never disagree with it:

* copied: its value follows the source tags (it is source element ``origin``);
* fill: the same value whatever the source holds (padding, zero pad, pad register, ``paddingValue``);
* undefined: the call left it undefined (``defined()`` is False);
* untouched: it still holds the background of each run;
* computed: its value depends on the source but is not a copy of one element (quantisation, ReLU, a float
  rewrite); its origin is not drawn.

Tags are bit patterns of the element's width (several runs, one per base-``2**(8*es)`` digit, when the source
has more elements than one digit can number); the dtype-widening L1 -> BiasTable copy is tagged with small
integers that convert exactly. The packed 4-bit types are traced value by value: every 4-bit value (two per
byte, the even one in the low nibble) is one element with a 4-bit tag, so a transposing load that moves single
values is drawn as such. Nothing of the caller's tensors or TPipe is read for data or written.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from ..errors import collecting
from ..memory import CoreState, GlobalTensor, TPipe

UNTOUCHED, COPY, FILL, UNDEFINED, COMPUTED = 0, 1, 2, 3, 4
KIND_NAMES = {UNTOUCHED: "untouched", COPY: "copied", FILL: "fill", UNDEFINED: "undefined", COMPUTED: "computed"}

_BG = (0x5A, 0x3C)  # background bytes of the two classifying runs (not complements of each other)


@dataclass
class Operand:
    """What a picture shows of one tensor: where it sits and how big it is."""

    role: str  # "src" / "dst"
    position: str
    phys: str
    dtype: np.dtype
    dtype_name: str
    size: int  # elements (4-bit types: values, two per byte)
    offset: int  # byte address in its buffer (GM: in the array)
    capacity: int | None  # bytes of the physical buffer (GM: the array's bytes)
    shape: tuple = ()  # GM: the numpy array's shape
    bits: int = 0  # bits per element (0: 8 * itemsize)

    @property
    def per_byte(self) -> int:
        """Elements per byte: 2 for the packed 4-bit types, else 1."""
        return 2 if self.bits == 4 else 1

    def byte_span(self, lo: int, hi: int) -> tuple[int, int]:
        """Buffer bytes ``[a, b)`` holding elements ``[lo, hi)``."""
        if self.per_byte == 2:
            return self.offset + lo // 2, self.offset + (hi + 1) // 2
        return self.offset + lo * self.dtype.itemsize, self.offset + hi * self.dtype.itemsize


@dataclass
class Trace:
    """The result of :func:`trace`: per destination element its kind, origin (source element) and fill value."""

    api: str
    product: str
    src: Operand
    dst: Operand
    kind: np.ndarray  # uint8 per destination element (UNTOUCHED, COPY, FILL, UNDEFINED)
    origin: np.ndarray  # int64 per destination element: source element index, -1 if not copied
    fill: np.ndarray  # per destination element: the fill value (destination dtype), meaningful where FILL
    read: np.ndarray  # bool per source element: read by the call (copied somewhere)
    warnings: list = field(default_factory=list)

    @property
    def written(self) -> np.ndarray:
        return self.kind != UNTOUCHED


def operand(role: str, t, nibbles: bool = False) -> Operand:
    """``nibbles``: a packed 4-bit tensor drawn value by value (``size`` counts values)."""
    from ..dtypes import ascend_name

    mem = t.memory
    if t.is_global:
        cap = mem.data.size
        shape = tuple(t.shape)
    else:
        cap = t.pipe.capacities.get(mem.phys)
        shape = ()
    return Operand(role, str(t.position), str(mem.phys), t.dtype, ascend_name(t.dtype),
                   t.size * (2 if nibbles else 1), t.offset, cap, shape, 4 if nibbles else 0)


def _scratch_pipe(pipe) -> TPipe:
    # a scratch core must not become the user's current core
    s = TPipe.detached(product=pipe.product, capacities=dict(pipe.capacities), poison=pipe.poison)
    s.state = CoreState()
    s.state.update(copy.deepcopy({k: v for k, v in pipe.state.items() if k != "pad_workspace"}))
    return s


def _pipe_of(dst, src):
    for t in (dst, src):
        if not t.is_global:
            return t.pipe
    raise ValueError("explain: one operand must be a LocalTensor")


def _clone(t, pipe: TPipe, fill_bytes: np.ndarray | None):
    """A tensor like ``t`` in the scratch world, all defined, holding ``fill_bytes`` (its own bytes)."""
    if t.is_global:
        nbytes = t.memory.data.size
        nbytes += -nbytes % t.dtype.itemsize
        raw = np.zeros(nbytes, np.uint8)
        arr = raw.view(t.dtype)
        base = GlobalTensor(arr.reshape(t.shape) if t.offset == 0 and arr.size == np.prod(t.shape) else arr)
        out = base[t.offset // t.dtype.itemsize] if t.offset else base
    else:
        out = pipe.alloc(t.position, t.dtype, t.size, t.offset)
    if fill_bytes is not None:
        out.numpy().reshape(-1).view(np.uint8)[:] = fill_bytes
    out.set_defined()
    return out


def _uint(dtype: np.dtype):
    return np.dtype(f"u{dtype.itemsize}")


def _run(func, dst, src, args, kwargs, src_bytes, bg_byte):
    pipe = _scratch_pipe(_pipe_of(dst, src))
    s = _clone(src, pipe, src_bytes)
    d_bytes = np.full(dst.nbytes, bg_byte, np.uint8)
    if dst.memory is src.memory and not dst.is_global:  # one buffer: place the destination after the source
        d = pipe.alloc(dst.position, dst.dtype, dst.size, dst.offset)
        lo, hi = s.offset, s.offset + s.nbytes
        d_view = d.numpy().reshape(-1).view(np.uint8)
        keep = np.arange(d.offset, d.offset + d.nbytes)
        mask = (keep < lo) | (keep >= hi)
        d_view[mask] = bg_byte
        d.set_defined()
    else:
        d = _clone(dst, pipe, d_bytes)
    kwargs = dict(kwargs)
    if kwargs.get("workspace") is not None:
        kwargs["workspace"] = None
    with collecting() as got, pipe:  # (fastcopy's warnings of this call, in this thread only)
        func(d, s, *args, **kwargs)
    values = np.array(d.numpy(), copy=True).reshape(-1)
    return values, np.asarray(d.defined()).reshape(-1).copy(), [m for _, m in got]


def _digits(n: int, base: int) -> int:
    k, top = 1, n + 1
    while top >= base:
        top //= base
        k += 1
    return k


def _nibbles(b: np.ndarray) -> np.ndarray:
    """The 4-bit values of bytes ``b`` in order (low nibble first), as uint8."""
    out = np.empty(2 * b.size, np.uint8)
    out[0::2], out[1::2] = b & 0xF, b >> 4
    return out


def trace(func, dst, src, *args, **kwargs) -> Trace:
    """Classify every element of ``dst`` for the call ``func(dst, src, *args, **kwargs)`` (run in scratch)."""
    from ..cube.b4 import from_codes, is_b4

    b4 = is_b4(src.dtype) and is_b4(dst.dtype)  # one element per 4-bit value
    n = src.size * (2 if b4 else 1)
    idx = np.arange(n, dtype=np.uint64) + 1  # tag 0 is never an index: a zero fill is not element 0
    convert = src.dtype != dst.dtype and not b4
    if b4:  # 4-bit tags, two per byte
        base = 16

        def encode(d):
            d = d.astype(np.uint8)
            return d[0::2] | (d[1::2] << 4)

        def decode(v):
            return _nibbles(v.view(np.uint8)).astype(np.int64)

        def complement(d):
            return 15 - d.astype(np.uint8)
    elif convert:  # L1 -> BiasTable widening: small integers convert exactly
        base, tag_dt = 256, src.dtype

        def encode(d):
            return d.astype(np.float64).astype(tag_dt).view(np.uint8)

        def decode(v):
            return np.rint(v.astype(np.float64)).astype(np.int64) & 0xFF

        def complement(d):
            return (base - 1) - d
    else:
        bits = 8 * src.dtype.itemsize
        base, ut = 1 << bits, _uint(src.dtype)
        ones = np.iinfo(ut).max

        def encode(d):
            return d.astype(ut).view(np.uint8)

        def decode(v):
            return v.view(_uint(dst.dtype)).astype(np.uint64).astype(np.int64)

        def complement(d):
            return np.bitwise_xor(d.astype(ut), ut.type(ones))

    shift = 4 if b4 else 8 if convert else min(8 * src.dtype.itemsize, 63)
    digit0 = idx & np.uint64(base - 1) if base < 2**64 else idx
    ud = _uint(dst.dtype)
    v0, def0, msgs = _run(func, dst, src, args, kwargs, encode(digit0), _BG[0])
    vc, defc, _ = _run(func, dst, src, args, kwargs, encode(complement(digit0)), _BG[1])
    u0, uc = v0.view(ud), vc.view(ud)
    ub0, ub1 = (np.full(dst.dtype.itemsize, b, np.uint8).view(ud)[0] for b in _BG)
    size = dst.size
    if b4:  # per value: its nibble, the byte's definedness
        u0, uc = _nibbles(u0), _nibbles(uc)
        ub0, ub1 = np.tile(_nibbles(np.array([_BG[0]], np.uint8)), dst.size), \
            np.tile(_nibbles(np.array([_BG[1]], np.uint8)), dst.size)
        def0, defc = np.repeat(def0, 2), np.repeat(defc, 2)
        ud, size = np.dtype(np.uint8), 2 * dst.size
    undefined = ~(def0 & defc)
    untouched = (u0 == ub0) & (uc == ub1) & ~undefined
    if convert:
        d0, dc = decode(v0), decode(vc)
        copied = (d0 + dc == base - 1) & np.isfinite(v0.astype(np.float64)) & (v0 != vc)
    else:
        copied = uc == np.bitwise_xor(u0, ud.type(15 if b4 else np.iinfo(ud).max))
    copied &= ~undefined & ~untouched
    filled = ~(undefined | untouched | copied) & (u0 == uc)
    computed = ~(undefined | untouched | copied | filled)
    kind = np.full(size, UNTOUCHED, np.uint8)
    kind[copied] = COPY
    kind[filled] = FILL
    kind[computed] = COMPUTED
    kind[undefined] = UNDEFINED
    origin = np.full(size, -1, np.int64)
    tag = decode(v0)[copied]
    for r in range(1, _digits(n, base)):
        digit = (idx >> np.uint64(shift * r)) & np.uint64(base - 1)
        vr, _, _ = _run(func, dst, src, args, kwargs, encode(digit), _BG[0])
        tag = tag + (decode(vr)[copied] << (shift * r))
    origin[copied] = tag - 1
    read = np.zeros(n, bool)
    good = (origin >= 0) & (origin < n)
    read[origin[good]] = True
    pipe = _pipe_of(dst, src)
    api = getattr(func, "__name__", str(func))
    fill = from_codes(u0, dst.dtype) if b4 else v0  # (4-bit: the value of each destination value)
    return Trace(api, pipe.product.display_name, operand("src", src, b4), operand("dst", dst, b4), kind, origin,
                 fill, read, msgs)

"""Emulated memory: global memory over user arrays, on-chip buffers of one AI Core, typed tensors over both.

Every memory is a flat byte array plus a *definedness plane* (one byte per data byte, 1 = defined). A plane of
``None`` means "every byte defined" (GM built from a user array), so copies between defined memories cost
nothing extra. Fresh on-chip memory is undefined and holds the core's poison byte.
"""

from __future__ import annotations

import threading

import numpy as np

from .dtypes import UINT_OF_WIDTH, as_dtype
from .errors import CapacityError, FastCopyError, OutOfBoundsError, UnsupportedError
from .products import ALIGN, CAPACITIES, DEFAULT_PRODUCT, POSITIONS, Phys, Product, TPosition

_PLANE_LOCK = threading.Lock()

#: Default poison byte of undefined memory: NaN in every float type, -1 / max in integer types.
DEFAULT_POISON = 0xFF


def aligned_empty(nbytes: int, shape=None, dtype=np.uint8, offset: int = 0) -> np.ndarray:
    """An uninitialised array of ``nbytes`` bytes (viewed as ``shape`` / ``dtype``) starting ``offset`` bytes
    after a 64-byte boundary. ``offset=0``: whole cache lines from its first byte, as the non-temporal stores of
    the layout kernels need; ``offset=16``: where numpy's own large arrays start (memcpy between two equally
    misaligned arrays measured 20% faster than between a line-aligned and a misaligned one)."""
    buf = np.empty(nbytes + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start:start + nbytes]
    return out if shape is None else out.view(dtype).reshape(shape)


class Memory:
    """One flat byte space (a GM array or a physical on-chip buffer) and its definedness plane."""

    __slots__ = ("data", "plane", "phys", "pipe", "addr0", "host", "_views", "_plane_views", "poison", "known",
                 "__weakref__")

    def __init__(self, data: np.ndarray, phys: Phys, pipe=None, plane=None, poison: int = DEFAULT_POISON):
        self.data = data  # 1-D uint8
        self.plane = plane  # 1-D uint8 (1 = defined) or None = all defined
        self.phys = phys
        self.pipe = pipe
        self.poison = poison
        self.host = data.ctypes.data  # host address of byte 0 (aliasing between memories over one array)
        self.addr0 = self.host % 64  # host pointer residue: decides which unsigned views fit
        self._views = {}
        self._plane_views = {}
        self.known = []  # byte ranges [lo, hi) known to be all defined (a cache; see note_defined / forget)

    def shares(self, other: "Memory") -> bool:
        """Whether the two memories overlap in host memory (two GlobalTensors over one array, say)."""
        return self is other or (self.host < other.host + other.data.size and other.host < self.host + self.data.size)

    def note_defined(self, lo: int, hi: int) -> None:
        """Record that plane bytes ``[lo, hi)`` are all defined (merged with touching ranges)."""
        keep = []
        for a, b in self.known:
            if b < lo or a > hi:
                keep.append((a, b))
            else:
                lo, hi = min(lo, a), max(hi, b)
        keep.append((lo, hi))
        self.known = keep[-16:]

    def known_defined(self, lo: int, hi: int) -> bool:
        return any(a <= lo and hi <= b for a, b in self.known)

    def forget(self) -> None:
        """Undefined bytes may have been written: drop the cache of defined ranges."""
        self.known = []

    def view(self, width: int, plane: bool = False) -> tuple[np.ndarray, int]:
        """``(array, shift)``: the memory as a flat ``uint{8*width}`` array starting ``shift`` bytes in."""
        cache = self._plane_views if plane else self._views
        hit = cache.get(width)
        if hit is None:
            base = self.plane if plane else self.data
            shift = (-self.addr0) % width
            n = (base.size - shift) // width
            hit = (base[shift:shift + n * width].view(UINT_OF_WIDTH[width]), shift)
            cache[width] = hit
        return hit

    def materialize_plane(self) -> np.ndarray:
        """Give the memory an explicit plane (all defined) if it has none."""
        if self.plane is None:
            with _PLANE_LOCK:
                if self.plane is None:
                    self._plane_views = {}
                    self.plane = np.ones(self.data.size, np.uint8)
        return self.plane


class TensorSig:
    """Everything a plan depends on about a tensor: position, physical buffer, dtype, extent, start address
    modulo 512 (alignment rules) and host pointer modulo 64 (which unsigned views fit). Interned, so plan-cache
    lookups hash and compare by identity."""

    __slots__ = ("position", "phys", "dtype", "nbytes", "addr_mod", "host_mod", "itemsize", "__weakref__")
    _interned: dict = {}

    def __new__(cls, position, phys, dtype, nbytes, addr_mod, host_mod):
        key = (position, phys, dtype, nbytes, addr_mod, host_mod)
        sig = cls._interned.get(key)
        if sig is None:
            sig = object.__new__(cls)
            sig.position, sig.phys, sig.dtype, sig.nbytes = position, phys, dtype, nbytes
            sig.addr_mod, sig.host_mod, sig.itemsize = addr_mod, host_mod, dtype.itemsize
            cls._interned[key] = sig
        return sig

    def __repr__(self) -> str:
        return (f"TensorSig({self.position}, {self.phys}, {self.dtype}, nbytes={self.nbytes}, "
                f"addr%512={self.addr_mod}, host%64={self.host_mod})")


class _Tensor:
    """A typed window ``[offset, offset + size*itemsize)`` of a Memory."""

    __slots__ = ("memory", "offset", "dtype", "size", "position", "_sig")
    is_global = False

    def __init__(self, memory: Memory, offset: int, dtype: np.dtype, size: int, position: TPosition):
        self.memory, self.offset, self.dtype, self.size, self.position = memory, offset, dtype, size, position
        # what plans depend on: position, physical buffer, dtype, extent, address residues (alignment, views)
        self._sig = TensorSig(position, memory.phys, dtype, size * dtype.itemsize, offset % 512,
                              (memory.addr0 + offset) % 64)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def _bytes(self) -> np.ndarray:
        return self.memory.data[self.offset:self.offset + self.nbytes]

    def numpy(self) -> np.ndarray:
        """A view of the tensor's elements (flat), for reading. Writing through it changes the data but NOT the
        definedness: elements stay undefined (and a golden of them is empty). To write computed values, use
        ``tensor[...] = values`` (or ``tensor[i:j] = ...``, ``SetValue``), which marks them defined; after a raw
        write through this view, call :meth:`set_defined`."""
        return self._bytes().view(self.dtype)

    def __setitem__(self, key, values) -> None:
        """``t[...] = values`` / ``t[i:j] = values`` / ``t[i] = v``: write computed values (numpy indexing of
        :meth:`numpy`'s view, shaped for a whole GlobalTensor) and mark exactly those elements defined."""
        view = self.numpy()
        view[key] = values
        plane = self.memory.plane
        if plane is not None:
            es = self.dtype.itemsize
            pv = plane[self.offset:self.offset + self.nbytes].reshape(*view.shape, es)
            pv[key] = 1

    def defined(self) -> np.ndarray:
        """Bool array, one per element: True where every byte of the element holds defined data."""
        plane = self.memory.plane
        if plane is None:
            return np.ones(self.size, bool)
        es = self.dtype.itemsize
        p = plane[self.offset:self.offset + self.nbytes].reshape(self.size, es)
        return p.all(axis=1) if es > 1 else p[:, 0].astype(bool)

    def set_defined(self, mask=None) -> None:
        """Mark elements as defined (all, or where ``mask`` is True), e.g. after writing through ``numpy()``."""
        mem = self.memory
        if mask is None:
            if mem.plane is not None:
                mem.plane[self.offset:self.offset + self.nbytes] = 1
                mem.note_defined(self.offset, self.offset + self.nbytes)
            return
        mask = np.asarray(mask, bool).reshape(-1)
        if mask.size != self.size:
            raise FastCopyError(f"set_defined: mask has {mask.size} elements, the tensor {self.size}")
        plane = mem.materialize_plane()
        view = plane[self.offset:self.offset + self.nbytes].reshape(self.size, self.dtype.itemsize)
        view[mask] = 1

    def set_undefined(self) -> None:
        """Declare the whole tensor undefined (its bytes then hold the poison fill)."""
        plane = self.memory.materialize_plane()
        plane[self.offset:self.offset + self.nbytes] = 0
        self.memory.forget()
        self._bytes()[:] = self.memory.poison

    def __getitem__(self, k):
        """``t[k]``: the sub-tensor starting ``k`` elements later, to the end (``GlobalTensor::operator[]``)."""
        if isinstance(k, slice) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"{type(self).__name__}[k] takes an element offset (int); use .numpy() for slicing")
        k = int(k)
        if not 0 <= k <= self.size:
            raise OutOfBoundsError(f"{type(self).__name__}[{k}]: offset outside [0, {self.size}] elements")
        return self._sub(k)

    def _sub(self, k: int):
        t = object.__new__(type(self))
        _Tensor.__init__(t, self.memory, self.offset + k * self.dtype.itemsize, self.dtype, self.size - k,
                         self.position)
        return t

    # Ascend C spellings
    def GetSize(self) -> int:  # noqa: N802
        return self.size

    def GetPhyAddr(self) -> int:  # noqa: N802
        """Byte address of element 0 within its physical buffer (within the array, for GM)."""
        return self.offset

    def GetValue(self, i: int):  # noqa: N802
        return self.numpy()[i]

    def SetValue(self, i: int, v) -> None:  # noqa: N802
        self.numpy()[i] = v
        if self.memory.plane is not None:
            es = self.dtype.itemsize
            self.memory.plane[self.offset + i * es:self.offset + (i + 1) * es] = 1

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.position}, dtype={self.dtype}, size={self.size}, "
                f"addr={self.offset})")


class GlobalTensor(_Tensor):
    """Global memory over a user's numpy array, seen flat; no copy.

    ``GlobalTensor(array)`` is defined everywhere; ``GlobalTensor(array, defined=False)`` declares an output
    buffer whose prior contents do not count. Addresses are byte offsets from the array start, which counts as
    aligned (device GM allocations are).
    """

    __slots__ = ("_shape",)
    is_global = True

    def __init__(self, array, defined: bool = True, dtype=None):
        arr = np.asarray(array)
        if dtype is not None:
            arr = arr.view(as_dtype(dtype))
        dt = as_dtype(arr.dtype)
        if not arr.flags.c_contiguous:
            raise FastCopyError("GlobalTensor: the array must be C-contiguous (global memory is flat); "
                                "pass np.ascontiguousarray(a)")
        flat = arr.reshape(-1)
        data = flat.view(np.uint8)
        plane = None if defined else np.zeros(data.size, np.uint8)
        super().__init__(Memory(data, Phys.GM, plane=plane), 0, dt, flat.size, TPosition.GM)
        self._shape = arr.shape

    def _sub(self, k):
        t = super()._sub(k)
        t._shape = (t.size,)
        return t

    @property
    def shape(self) -> tuple:
        return self._shape

    def numpy(self) -> np.ndarray:
        """The user's array (its shape) for a whole GlobalTensor; a flat view for ``gm[k]``."""
        flat = super().numpy()
        return flat.reshape(self._shape) if self.offset == 0 and flat.size == int(np.prod(self._shape)) else flat

    def defined(self) -> np.ndarray:
        d = super().defined()
        return d.reshape(self._shape) if self.offset == 0 and d.size == int(np.prod(self._shape)) else d


class LocalTensor(_Tensor):
    """A typed window at an aligned address of one physical on-chip buffer of a TPipe."""

    __slots__ = ("pipe",)

    def __init__(self, pipe, position: TPosition, memory: Memory, offset: int, dtype: np.dtype, size: int):
        super().__init__(memory, offset, dtype, size, position)
        self.pipe = pipe

    def _sub(self, k):
        t = super()._sub(k)
        t.pipe = self.pipe
        return t


_current: list = []


def current_pipe(required: bool = True):
    """The current core: the innermost ``with pipe:``, else the most recently created TPipe."""
    if _current:
        return _current[-1]
    if TPipe._last is not None:
        pipe = TPipe._last()
        if pipe is not None:
            return pipe
    if required:
        raise FastCopyError("no current TPipe: create one (TPipe(product=...)) or pass pipe=")
    return None


class TPipe:
    """One AI Core: its on-chip buffers (UB, L1, L0A/B/C, BiasTable, Fixpipe buffer) and per-core state.

    ``capacities`` overrides buffer sizes in bytes, keyed by :class:`Phys` or its name (``{"UB": 64 << 20}``).
    ``poison`` is the byte that undefined memory holds.
    """

    _last = None

    def __init__(self, product=DEFAULT_PRODUCT, capacities: dict | None = None, poison: int = DEFAULT_POISON):
        import weakref

        self.product = Product.get(product)
        self.capacities = dict(CAPACITIES[self.product])
        for k, v in (capacities or {}).items():
            phys = k if isinstance(k, Phys) else _phys_by_name(k)
            if phys not in self.capacities:
                raise UnsupportedError(f"TPipe: {self.product} has no {phys} buffer")
            self.capacities[phys] = int(v)
        if not 0 <= poison <= 255:
            raise FastCopyError(f"TPipe: poison={poison} is not a byte value [0, 255]")
        self.poison = poison
        self._buffers: dict[Phys, Memory] = {}
        self._next: dict[Phys, int] = {}
        self.state: dict = {}  # per-core registers (pad value, loop mode), owned by the ops that use them
        TPipe._last = weakref.ref(self)

    def buffer(self, phys: Phys) -> Memory:
        """The physical buffer (created on first use: all bytes poison and undefined)."""
        mem = self._buffers.get(phys)
        if mem is None:
            if phys not in self.capacities:
                raise UnsupportedError(f"{self.product} has no {phys} buffer")
            n = self.capacities[phys]
            # both arrays written now (not calloc'd np.zeros): their pages are faulted in here, not by the first
            # copy into the buffer. L1 (the ND2NZ destination) starts on a cache line, for the layout kernels'
            # non-temporal stores; the other buffers where numpy's large GM arrays start, for dense copies
            offset = 0 if phys is Phys.L1 else 16
            data = aligned_empty(n, offset=offset)
            data.fill(self.poison)
            plane = aligned_empty(n, offset=offset)
            plane.fill(0)  # touched now: the first call into a fresh TPipe does not page-fault on its plane
            mem = Memory(data, phys, pipe=self, plane=plane, poison=self.poison)
            self._buffers[phys] = mem
        return mem

    def phys_of(self, position: TPosition) -> Phys:
        phys = POSITIONS[self.product].get(TPosition(position))
        if phys is None or phys is Phys.GM:
            have = ", ".join(p.name for p in POSITIONS[self.product] if p is not TPosition.GM)
            raise UnsupportedError(f"TPipe.alloc: position {position} is not a local position on {self.product}; "
                                   f"local positions there: {have}")
        return phys

    def alloc(self, position, dtype, count: int, addr: int | None = None) -> LocalTensor:
        """A LocalTensor of ``count`` elements at the next aligned address (or at byte ``addr``) of the
        physical buffer that ``position`` maps to on this product."""
        position = _position(position, self.product)
        dt = as_dtype(dtype)
        phys = self.phys_of(position)
        align = ALIGN[phys]
        nbytes = int(count) * dt.itemsize
        if count < 0:
            raise FastCopyError(f"TPipe.alloc: count={count} is negative")
        if addr is None:
            addr = -(-self._next.get(phys, 0) // align) * align
        elif addr % align:
            from .errors import AlignmentError

            raise AlignmentError(f"TPipe.alloc: addr={addr} is not a multiple of {align} bytes ({phys} on "
                                 f"{self.product})")
        cap = self.capacities[phys]
        if addr + nbytes > cap:
            raise CapacityError(f"TPipe.alloc({position}, {dt}, {count}): needs bytes [{addr}, {addr + nbytes}) "
                                f"but {phys} holds {cap} bytes on {self.product} ({cap - addr} free at {addr}); "
                                "raise it with TPipe(capacities=...)")
        self._next[phys] = max(self._next.get(phys, 0), addr + nbytes)
        return LocalTensor(self, position, self.buffer(phys), addr, dt, int(count))

    def allocated(self, phys: Phys) -> int:
        """End (byte address) of the highest allocation made so far in buffer ``phys`` (0 if none)."""
        return self._next.get(phys, 0)

    def reset(self) -> None:
        """Free every allocation (contents stay as they are)."""
        self._next.clear()

    def __enter__(self):
        _current.append(self)
        return self

    def __exit__(self, *exc):
        _current.pop()
        return False

    def __repr__(self) -> str:
        return f"TPipe(product={self.product.name})"


def _position(position, product) -> TPosition:
    """A TPosition from a member or its name, or an UnsupportedError naming the valid positions."""
    try:
        return TPosition(position)
    except ValueError:
        import difflib

        names = [p.name for p in POSITIONS[product] if p is not TPosition.GM]
        close = difflib.get_close_matches(str(position), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnsupportedError(f"TPipe.alloc: unknown position {position!r}{hint}; local positions on {product}: "
                               f"{', '.join(names)}") from None


def _phys_by_name(name) -> Phys:
    for p in Phys:
        if str(name) in (p.name, p.value):
            return p
    raise UnsupportedError(f"unknown buffer {name!r}; buffers: {', '.join(p.name for p in Phys)}")

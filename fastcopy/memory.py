"""Emulated memory: global memory over user arrays, on-chip buffers of one AI Core, typed tensors over both.

Every memory is a flat byte array plus its definedness: "every byte defined" (GM built from a user array: copies
between defined memories cost nothing extra), exact ranges of defined bytes (fresh memory, until something needs
bytes), or a *definedness plane* (one byte per data byte, 1 = defined). Fresh on-chip memory is undefined and
holds the core's poison byte. See :class:`Memory` and docs/architecture.md ("Definedness").
"""

from __future__ import annotations

import contextvars
import math
import threading
import weakref

import numpy as np

from . import config
from .dtypes import UINT_OF_WIDTH, as_dtype
from .errors import AlignmentError, CapacityError, FastCopyError, OutOfBoundsError, ParamTypeError, UnsupportedError
from .integers import as_int, check_int
from .products import ALIGN, CAPACITIES, DEFAULT_PRODUCT, POSITIONS, Phys, Product, TPosition

_PLANE_LOCK = threading.Lock()

#: Largest on-chip buffer TPipe(capacities=...) accepts, in bytes (the emulation allocates it on the host)
MAX_CAPACITY = 1 << 40

#: Default poison byte of undefined memory: NaN in every float type, -1 / max in integer types.
DEFAULT_POISON = 0xFF
#: on-chip buffers that start on a cache line (the others start 16 bytes after one, where numpy's large arrays
#: do): L1 for the layout kernels' streaming stores, L0A/L0B because their loads come from L1 (a 64 KiB tile
#: copied between two line-aligned buffers measured ~1.35 us bare against ~1.5 us into a misaligned one, and
#: the 16x16 tile transposes store whole lines)
_LINE_BUFFERS = frozenset((Phys.L1, Phys.L0A, Phys.L0B))


def aligned_empty(nbytes: int, shape=None, dtype=np.uint8, offset: int = 0) -> np.ndarray:
    """An uninitialised array of ``nbytes`` bytes (viewed as ``shape`` / ``dtype``) starting ``offset`` bytes
    after a 64-byte boundary. ``offset=0``: whole cache lines from its first byte, as the non-temporal stores of
    the layout kernels need; ``offset=16``: where numpy's own large arrays start (memcpy between two equally
    misaligned arrays measured 20% faster than between a line-aligned and a misaligned one)."""
    out, _ = aligned_bytes(nbytes, offset)
    return out if shape is None else out.view(dtype).reshape(shape)


class _Arena(threading.local):
    """This thread's block that small arrays are cut from (:func:`aligned_bytes`)."""

    block = None  # 1-D uint8, its first byte on a cache line
    host = 0  # its address
    at = 0  # the next free byte (on a cache line)
    end = 0


_ARENA = _Arena()


def aligned_bytes(nbytes: int, offset: int = 0) -> tuple:
    """``(array, host address)``: :func:`aligned_empty`'s uninitialised ``nbytes`` bytes and the address of its
    first byte (``ndarray.ctypes.data`` costs ~1 us: a :class:`Memory` over it can take the address from here).
    An array of at most ``config.ARENA_PIECE`` bytes (``offset`` 0) is a slice of a per-thread block made once per
    ``config.ARENA_BYTES``: whole cache lines of its own (the next one starts on the next line), so no two
    overlap; the block lives as long as one of its arrays does."""
    if offset == 0 and 0 < nbytes <= config.ARENA_PIECE:
        arena = _ARENA
        at = arena.at
        if at + nbytes > arena.end:
            size = max(config.ARENA_BYTES, nbytes)  # (the tunables may let a piece exceed a block: one its size)
            block = np.empty(size + 64, np.uint8)
            host = block.ctypes.data
            start = (-host) % 64
            arena.block, arena.host, arena.end = block[start:start + size], host + start, size
            at = 0
        arena.at = (at + nbytes + 63) & -64
        return arena.block[at:at + nbytes], arena.host + at
    buf = np.empty(nbytes + 128, np.uint8)
    host = buf.ctypes.data
    start = (-host) % 64 + offset
    out = buf[start:start + nbytes]
    return out, host + start if nbytes else out.ctypes.data  # (numpy may place an empty slice elsewhere)


class Memory:
    """One flat byte space (a GM array or a physical on-chip buffer) and its definedness.

    Definedness is in one of three states; every reader and writer goes through the methods below:

    * **all defined** (``tracked`` False): GM over a user array. No plane, nothing recorded.
    * **lazy** (``lazy`` True): fresh on-chip buffers and ``GlobalTensor(a, defined=False)``. No byte plane: the
      defined bytes are exactly the ranges in ``known`` (sorted, disjoint, not touching), every other byte is
      undefined. A whole-span write of defined data adds a range (:meth:`mark_defined`): nothing per byte.
    * **materialised**: a byte plane (``plane``, one byte per data byte, 1 = defined), made from the ranges the
      first time something needs per-byte definedness (a strided or partly undefined write, reading ``plane``,
      more than ``config.LAZY_RANGES`` ranges). ``known`` is then a cache of ranges known to be all defined
      (:meth:`note_defined`, :meth:`forget`).

    A memory moves only from lazy to materialised (and back to lazy "all undefined" on :meth:`clear`): while it
    is lazy no plane exists (nor views of one), so nothing can read a stale plane; once it exists, it is the
    truth.
    """

    __slots__ = ("data", "_plane", "tracked", "lazy", "_spare", "phys", "pipe", "addr0", "host", "_views",
                 "_plane_views", "poison", "known", "readonly", "size", "touched", "__weakref__")

    def __init__(self, data: np.ndarray, phys: Phys, pipe=None, plane=None, poison: int = DEFAULT_POISON,
                 defined: bool = True, host: int | None = None):
        self.data = data  # 1-D uint8
        self._plane = plane  # 1-D uint8 (1 = defined), or None: not materialised (see lazy)
        self.lazy = plane is None and not defined  # no plane: the defined bytes are exactly ``known``
        self.tracked = plane is not None or self.lazy  # False: every byte defined
        self.known = []  # byte ranges [lo, hi): lazy, exactly the defined ones; materialised, a cache of some
        self._spare = None  # a plane array of before clear(), reused when the plane is materialised again
        self.phys = phys
        self.pipe = pipe
        self.poison = poison
        # host address of byte 0 (aliasing between memories over one array); ``host``: the caller knows it
        self.host = data.ctypes.data if host is None else host
        self.addr0 = self.host % 64  # host pointer residue: decides which unsigned views fit
        self._views = {}
        self._plane_views = {}
        self.readonly = not data.flags.writeable  # a read-only user array: never a destination
        self.size = data.size  # bytes (a Python int: the last bounds check before any kernel reads it)
        # on-chip: bytes [lo, hi) that may differ from the poison fill, the union of every LocalTensor's window
        # made over this memory since it was last filled (TPipe.restart refills only those; see touch)
        self.touched = (0, 0)
        if self.lazy and not config.LAZY_PLANES:  # (the eager plane of before: tests compare the two)
            self.materialize_plane()

    def touch(self, lo: int, hi: int) -> None:
        """A tensor over bytes ``[lo, hi)`` exists: they may be written from now on. Every write into on-chip
        memory goes through a tensor's window (plans are checked against it) or writes poison (a plan's side
        effects), so bytes outside ``touched`` still hold the poison fill."""
        a, b = self.touched
        if a <= lo and hi <= b:
            return
        with _PLANE_LOCK:  # (two threads making tensors over one pipe: neither extension is lost)
            a, b = self.touched
            self.touched = (lo, hi) if a >= b else (min(a, lo), max(b, hi))

    def shares(self, other: "Memory") -> bool:
        """Whether the two memories overlap in host memory (two GlobalTensors over one array, say)."""
        return self is other or (self.host < other.host + other.data.size and other.host < self.host + self.data.size)

    # ------------------------------------------------------------------------------------------ definedness
    @property
    def plane(self):
        """The byte plane (1 = defined), materialised now if the memory is lazy; None when every byte is defined.
        Writing 0 into it directly needs a :meth:`forget` after (prefer :meth:`mark_undefined`)."""
        return self._plane if self._plane is not None or not self.lazy else self.materialize_plane()

    @plane.setter
    def plane(self, plane) -> None:
        """Replace the definedness: an explicit plane, or None (every byte defined)."""
        with _PLANE_LOCK:
            self._plane_views = {}
            self.known = []
            self._plane = plane
            self.tracked = plane is not None
            self.lazy = False

    def known_defined(self, lo: int, hi: int) -> bool:
        """Whether bytes ``[lo, hi)`` lie in one range of ``known`` (lazy: exactly whether they are all defined,
        for a non-empty span; materialised: a cache, False when unknown)."""
        for a, b in self.known:  # (a loop: this is on the hot path of small calls)
            if a <= lo and hi <= b:
                return True
        return False

    def note_defined(self, lo: int, hi: int) -> None:
        """Record that bytes ``[lo, hi)`` are all defined (they are: in the plane, or written defined)."""
        if self.lazy:
            self.mark_defined(lo, hi)
            return
        keep = []
        for a, b in self.known:
            if b < lo or a > hi:
                keep.append((a, b))
            else:
                lo, hi = min(lo, a), max(hi, b)
        keep.append((lo, hi))
        self.known = keep[-16:]

    def forget(self) -> None:
        """Undefined bytes were written into the plane: drop the cache of defined ranges (a lazy memory has no
        plane to write into: its ranges are the truth and stay; undefined bytes go through mark_undefined)."""
        if not self.lazy:
            self.known = []

    def mark_defined(self, lo: int, hi: int, note: bool = True) -> None:
        """Bytes ``[lo, hi)`` now hold defined data. Lazy: one range more (merged with the ranges it touches; past
        ``config.LAZY_RANGES`` ranges the plane is materialised). Materialised: the plane span set to 1 (and noted
        in the cache if ``note``). All defined: nothing."""
        if self.lazy:
            if hi <= lo or self.known_defined(lo, hi):
                return
            with _PLANE_LOCK:
                if self.lazy:  # (another thread may have materialised the plane meanwhile)
                    if not self.known:  # (the first range: a new buffer's first write)
                        self.known = [(lo, hi)]
                        return
                    keep = [r for r in self.known if r[1] < lo or r[0] > hi]
                    for a, b in self.known:
                        if not (b < lo or a > hi):
                            lo, hi = min(lo, a), max(hi, b)
                    keep.append((lo, hi))
                    keep.sort()
                    self.known = keep  # (replaced whole: readers in other threads see the old list or this one)
                    if len(keep) > config.LAZY_RANGES:
                        self._materialize()
                    return
        plane = self._plane
        if plane is not None:
            plane[lo:hi] = 1
            if note:
                self.note_defined(lo, hi)

    def mark_undefined(self, lo: int, hi: int) -> None:
        """Bytes ``[lo, hi)`` now hold undefined data (the caller writes their poison bytes)."""
        if self.lazy:
            with _PLANE_LOCK:
                if self.lazy:
                    keep = []
                    for a, b in self.known:
                        if b <= lo or a >= hi:
                            keep.append((a, b))
                            continue
                        if a < lo:
                            keep.append((a, lo))
                        if b > hi:
                            keep.append((hi, b))
                    self.known = keep
                    if len(keep) > config.LAZY_RANGES:
                        self._materialize()
                    return
        self.materialize_plane()[lo:hi] = 0
        self.forget()

    def plane_bytes(self, lo: int, hi: int) -> np.ndarray:
        """Definedness of bytes ``[lo, hi)`` as uint8 (1 = defined), for reading (a view of the plane when there
        is one; made from the ranges while lazy, without materialising)."""
        if not self.tracked:
            return np.ones(hi - lo, np.uint8)
        known = self.known  # (read before lazy: exact if the memory is still lazy after)
        if not self.lazy:
            return self._plane[lo:hi]
        out = np.zeros(hi - lo, np.uint8)
        for a, b in known:
            if a < hi and lo < b:
                out[max(a, lo) - lo:min(b, hi) - lo] = 1
        return out

    def materialize_plane(self) -> np.ndarray:
        """The byte plane, made now if there is none (all defined: ones; lazy: from its ranges)."""
        if self._plane is None:
            with _PLANE_LOCK:
                if self._plane is None:
                    self._materialize()
        return self._plane

    def _materialize(self) -> None:  # (under _PLANE_LOCK)
        plane = self._spare
        self._spare = None
        if plane is None:  # zero pages from the OS (mapped when written), at the data's host residue
            try:
                raw = np.zeros(self.size + 128, np.uint8)
            except MemoryError:
                raise CapacityError(f"cannot allocate the {self.size}-byte definedness plane of the {self.phys} "
                                    "buffer on this host (nothing was written); lower TPipe(capacities=...)") from None
            start = (self.addr0 - raw.ctypes.data) % 64
            plane = raw[start:start + self.size]
        else:
            plane.fill(0)
        if self.lazy:
            for a, b in self.known:
                plane[a:b] = 1
        else:
            plane.fill(1)
        self._plane_views = {}
        self._plane = plane
        self.tracked = True
        self.lazy = False  # (after the plane exists: a reader still seeing lazy finds the exact ranges)
        self.known = []  # (a cache from now on; not kept: a caller writing into the plane may forget to forget)

    def clear(self) -> None:
        """Every byte undefined again (the data bytes are the caller's to refill): lazy, no ranges."""
        with _PLANE_LOCK:
            if self._plane is not None:
                self._spare = self._plane
            self._plane_views = {}
            self._plane = None
            self.known = []
            self.lazy = True
            self.tracked = True
            if not config.LAZY_PLANES:
                self._materialize()

    def view(self, width: int, plane: bool = False) -> tuple[np.ndarray, int]:
        """``(array, shift)``: the memory (or its plane, materialised) as a flat ``uint{8*width}`` array starting
        ``shift`` bytes in."""
        if plane and self._plane is None:  # (views of a plane exist only while it does)
            self.materialize_plane()
        cache = self._plane_views if plane else self._views
        hit = cache.get(width)
        if hit is None:
            base = self._plane if plane else self.data
            shift = (-self.addr0) % width
            n = (base.size - shift) // width
            hit = (base[shift:shift + n * width].view(UINT_OF_WIDTH[width]), shift)
            cache[width] = hit
        return hit


class CoreState(dict):
    """Per-core registers (pad value, loop mode, cube registers): a dict whose ``version`` counts every write, so
    caches of prepared calls (``fastcopy.api``) see any change. Replace values, never mutate them in place."""

    __slots__ = ("version",)

    def __init__(self):
        super().__init__()
        self.version = 0

    def __setitem__(self, key, value):
        self.version += 1
        super().__setitem__(key, value)

    def __delitem__(self, key):
        self.version += 1
        super().__delitem__(key)

    def pop(self, *args):
        self.version += 1
        return super().pop(*args)

    def popitem(self):
        self.version += 1
        return super().popitem()

    def clear(self):
        self.version += 1
        super().clear()

    def setdefault(self, key, default=None):
        self.version += 1
        return super().setdefault(key, default)

    def update(self, *args, **kwargs):
        self.version += 1
        super().update(*args, **kwargs)


class TensorSig:
    """Everything a plan depends on about a tensor: position, physical buffer, dtype, extent, start address
    modulo 512 (alignment rules) and host pointer modulo 64 (which unsigned views fit). Interned, so plan-cache
    lookups hash and compare by identity."""

    __slots__ = ("position", "phys", "dtype", "nbytes", "addr_mod", "host_mod", "itemsize", "__weakref__")
    #: weak: a signature lives as long as a tensor or a cached plan holds it (the plan caches are LRU-bounded),
    #: so the table never grows beyond what is in use
    _interned = weakref.WeakValueDictionary()
    _lock = threading.Lock()
    #: the signatures made or found last, held strongly (at most _RECENT): a plain dict lookup (~0.2 us) in front
    #: of the weak table's (~1.5 us). Every entry is also in ``_interned``, so identity is kept
    _recent: dict = {}
    _RECENT = 1024

    def __new__(cls, position, phys, dtype, nbytes, addr_mod, host_mod):
        key = (position, phys, dtype, nbytes, addr_mod, host_mod)
        sig = cls._recent.get(key)
        if sig is not None:
            return sig
        sig = cls._interned.get(key)
        if sig is None:
            with cls._lock:
                sig = cls._interned.get(key)
                if sig is None:
                    sig = object.__new__(cls)
                    sig.position, sig.phys, sig.dtype, sig.nbytes = position, phys, dtype, nbytes
                    sig.addr_mod, sig.host_mod, sig.itemsize = addr_mod, host_mod, dtype.itemsize
                    cls._interned[key] = sig
        recent = cls._recent
        if len(recent) >= cls._RECENT:
            recent.clear()
        recent[key] = sig
        return sig

    def __repr__(self) -> str:
        return (f"TensorSig({self.position}, {self.phys}, {self.dtype}, nbytes={self.nbytes}, "
                f"addr%512={self.addr_mod}, host%64={self.host_mod})")


class _Tensor:
    """A typed window ``[offset, offset + size*itemsize)`` of a Memory."""

    __slots__ = ("memory", "offset", "dtype", "size", "position", "_sig", "_prepared")
    is_global = False

    def __init__(self, memory: Memory, offset: int, dtype: np.dtype, size: int, position: TPosition):
        self.memory, self.offset, self.dtype, self.size, self.position = memory, offset, dtype, size, position
        self._prepared = None  # calls with this destination, prepared by fastcopy.api (a cache)
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
        mem = self.memory
        if mem.lazy and key is not Ellipsis:  # (the plane made before the data is written)
            mem.materialize_plane()
        view = self.numpy()
        view[key] = values
        if not mem.tracked:
            return
        if key is Ellipsis:  # every element
            mem.mark_defined(self.offset, self.offset + self.nbytes)
            return
        es = self.dtype.itemsize
        pv = mem.plane[self.offset:self.offset + self.nbytes].reshape(*view.shape, es)
        pv[key] = 1

    def defined(self) -> np.ndarray:
        """Bool array, one per element: True where every byte of the element holds defined data."""
        mem = self.memory
        lo, hi = self.offset, self.offset + self.nbytes
        if not mem.tracked or (mem.lazy and mem.known_defined(lo, hi)):
            return np.ones(self.size, bool)
        es = self.dtype.itemsize
        p = mem.plane_bytes(lo, hi).reshape(self.size, es)
        return p.all(axis=1) if es > 1 else p[:, 0].astype(bool)

    def set_defined(self, mask=None) -> None:
        """Mark elements as defined (all, or where ``mask`` is True), e.g. after writing through ``numpy()``."""
        mem = self.memory
        if mask is None:
            mem.mark_defined(self.offset, self.offset + self.nbytes)
            return
        mask = np.asarray(mask, bool).reshape(-1)
        if mask.size != self.size:
            raise FastCopyError(f"set_defined: mask has {mask.size} elements, the tensor {self.size}")
        plane = mem.materialize_plane()
        view = plane[self.offset:self.offset + self.nbytes].reshape(self.size, self.dtype.itemsize)
        view[mask] = 1

    def set_undefined(self) -> None:
        """Declare the whole tensor undefined (its bytes then hold the poison fill)."""
        self.memory.mark_undefined(self.offset, self.offset + self.nbytes)
        self._bytes()[:] = self.memory.poison

    def __getitem__(self, k):
        """``t[k]``: the sub-tensor starting ``k`` elements later, to the end (``GlobalTensor::operator[]``)."""
        name = type(self).__name__
        if isinstance(k, slice):
            raise ParamTypeError(f"{name}[k] takes an element offset (int); use .numpy() for slicing")
        k = as_int(k, f"{name}[k]", "k", "an element offset")
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

    def _index(self, i, api: str) -> int:
        return check_int(i, f"{type(self).__name__}.{api}", "i", 0, self.size - 1, f"elements (size {self.size})",
                         error=OutOfBoundsError)

    def GetValue(self, i: int):  # noqa: N802
        return self.numpy()[self._index(i, "GetValue")]

    def SetValue(self, i: int, v) -> None:  # noqa: N802
        i = self._index(i, "SetValue")
        self.numpy()[i] = v
        es = self.dtype.itemsize
        self.memory.mark_defined(self.offset + i * es, self.offset + (i + 1) * es, note=False)

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
        super().__init__(Memory(data, Phys.GM, defined=defined), 0, dt, flat.size, TPosition.GM)
        self._shape = arr.shape

    @classmethod
    def _fresh(cls, data: np.ndarray, host: int, dtype: np.dtype, shape: tuple, defined: bool) -> "GlobalTensor":
        """``GlobalTensor(data.view(dtype).reshape(shape), defined)`` for ``data`` a new 1-D uint8 array made by
        fastcopy (:func:`aligned_bytes`, its address ``host``; C-contiguous, writable, whole elements of a dtype
        :func:`as_dtype` accepts): the same tensor, without the checks and the address lookup."""
        t = object.__new__(cls)
        _Tensor.__init__(t, Memory(data, Phys.GM, defined=defined, host=host), 0, dtype,
                         data.size // dtype.itemsize, TPosition.GM)
        t._shape = shape
        return t

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
        return flat.reshape(self._shape) if self.offset == 0 and flat.size == math.prod(self._shape) else flat

    def defined(self) -> np.ndarray:
        d = super().defined()
        return d.reshape(self._shape) if self.offset == 0 and d.size == math.prod(self._shape) else d


class LocalTensor(_Tensor):
    """A typed window at an aligned address of one physical on-chip buffer of a TPipe."""

    __slots__ = ("pipe",)

    def __init__(self, pipe, position: TPosition, memory: Memory, offset: int, dtype: np.dtype, size: int):
        super().__init__(memory, offset, dtype, size, position)
        self.pipe = pipe
        memory.touch(offset, offset + size * dtype.itemsize)  # (a sub-tensor lies inside its tensor's window)

    def _sub(self, k):
        t = super()._sub(k)
        t.pipe = self.pipe
        return t


#: per thread / asyncio task: the stack of ``with pipe:`` blocks and the TPipe created last (weak references)
_current: contextvars.ContextVar = contextvars.ContextVar("fastcopy_current_pipe", default=())
_created: contextvars.ContextVar = contextvars.ContextVar("fastcopy_last_pipe", default=None)


def current_pipe(required: bool = True):
    """The current core of this thread (or asyncio task): its innermost ``with pipe:``, else the TPipe it
    created last, else (a thread that never made one) the TPipe created last in the process."""
    stack = _current.get()
    if stack:
        return stack[-1]
    for ref in (_created.get(), TPipe._last):
        pipe = ref() if ref is not None else None
        if pipe is not None:
            return pipe
    if required:
        raise FastCopyError("no current TPipe: create one (TPipe(product=...)) or pass pipe=")
    return None


#: the types of the numpy dtypes :func:`as_dtype` returns unchanged (1, 2, 4 or 8-byte elements, no objects)
_DTYPE_TYPES = frozenset(type(as_dtype(d)) for d in (np.int8, np.uint8, np.int16, np.uint16, np.float16, np.int32,
                                                     np.uint32, np.float32, np.int64, np.uint64, np.float64, np.bool_))


class TPipe:
    """One AI Core: its on-chip buffers (UB, L1, L0A/B/C, BiasTable, Fixpipe buffer) and per-core state.

    ``capacities`` overrides buffer sizes in bytes, keyed by :class:`Phys` or its name (``{"UB": 64 << 20}``).
    ``poison`` is the byte that undefined memory holds.
    """

    _last = None

    def __init__(self, product=DEFAULT_PRODUCT, capacities: dict | None = None, poison: int = DEFAULT_POISON):
        self.product = Product.get(product)
        self.capacities = dict(CAPACITIES[self.product])
        if capacities is not None and not isinstance(capacities, dict):
            raise ParamTypeError(f"TPipe: capacities must be a dict {{buffer: bytes}}, got {type(capacities).__name__}")
        for k, v in (capacities or {}).items():
            phys = k if isinstance(k, Phys) else _phys_by_name(k)
            if phys not in self.capacities or phys is Phys.GM:
                raise UnsupportedError(f"TPipe: {self.product} has no {phys} buffer")
            self.capacities[phys] = check_int(v, "TPipe", f"capacities[{phys.name}]", 0, MAX_CAPACITY, "bytes")
        self.poison = check_int(poison, "TPipe", "poison", 0, 255, "(a byte value)")
        self._buffers: dict[Phys, Memory] = {}
        self._spare: dict[Phys, Memory] = {}  # buffers of before restart(), reused (cleared) on first use
        self._next: dict[Phys, int] = {}
        self._where: dict = {}  # position as given to alloc (a TPosition or its name) -> (TPosition, Phys)
        self._lock = threading.Lock()  # allocation and buffer creation are atomic
        self.state = CoreState()  # per-core registers (pad value, loop mode), owned by the ops that use them
        ref = weakref.ref(self)
        TPipe._last = ref
        _created.set(ref)

    @classmethod
    def detached(cls, **kwargs) -> "TPipe":
        """A TPipe that does not become the current core (scratch cores of tools such as explain)."""
        last, created = cls._last, _created.get()
        try:
            return cls(**kwargs)
        finally:
            cls._last = last
            _created.set(created)

    def buffer(self, phys: Phys) -> Memory:
        """The physical buffer (created on first use: all bytes poison and undefined)."""
        mem = self._buffers.get(phys)
        if mem is None:
            if phys not in self.capacities:
                raise UnsupportedError(f"{self.product} has no {phys} buffer")
            with self._lock:
                mem = self._buffers.get(phys)
                if mem is None:
                    n = self.capacities[phys]
                    mem = self._spare.pop(phys, None)
                    if mem is not None:  # a buffer of before restart(): made new again
                        lo, hi = mem.touched  # (every other byte still holds the poison fill)
                        mem.data[lo:hi].fill(self.poison)
                        mem.touched = (0, 0)
                        mem.clear()
                        self._buffers[phys] = mem
                        return mem
                    # the data written now (not calloc'd np.zeros): its pages are faulted in here, not by the first
                    # copy into the buffer; the definedness starts lazy (no plane until a call needs bytes of it).
                    # L1 (the ND2NZ destination) starts on a cache line, for the layout kernels' non-temporal
                    # stores; the other buffers where numpy's large GM arrays start
                    offset = 0 if phys in _LINE_BUFFERS else 16
                    try:
                        data = aligned_empty(n, offset=offset)
                        data.fill(self.poison)
                    except MemoryError:
                        raise CapacityError(f"TPipe: cannot allocate the {n}-byte {phys} buffer on this host; "
                                            "lower TPipe(capacities=...)") from None
                    mem = Memory(data, phys, pipe=self, poison=self.poison, defined=False)
                    self._buffers[phys] = mem
        return mem

    def position(self, position) -> TPosition:
        """``position`` (a TPosition or its name) as a TPosition, else UnsupportedError naming the valid ones."""
        return _position(position, self.product)

    def _local_names(self) -> str:
        return ", ".join(p.name for p in POSITIONS[self.product] if p is not TPosition.GM)

    def phys_of(self, position: TPosition) -> Phys:
        position = self.position(position)
        phys = POSITIONS[self.product].get(position)
        if phys is None or phys is Phys.GM:
            raise UnsupportedError(f"TPipe.alloc: position {position} is not a local position on {self.product}; "
                                   f"local positions there: {self._local_names()}")
        return phys

    def alloc(self, position, dtype, count: int, addr: int | None = None) -> LocalTensor:
        """A LocalTensor of ``count`` elements at the next aligned address (or at byte ``addr``) of the
        physical buffer that ``position`` maps to on this product."""
        api = "TPipe.alloc"
        try:
            where = self._where.get(position)  # (what the two lookups below gave for this position before)
        except TypeError:  # (unhashable: the lookups below say what is wrong with it)
            where = None
        if where is None:
            given = position
            position = _position(position, self.product)
            phys = self.phys_of(position)
            if type(given) in (str, TPosition) and len(self._where) < 64:
                self._where[given] = (position, phys)
        else:
            position, phys = where
        dt = dtype if type(dtype) in _DTYPE_TYPES else as_dtype(dtype)  # (a numpy dtype fastcopy takes: itself)
        align = ALIGN[phys]
        cap = self.capacities[phys]
        if type(count) is not int or count < 0:
            count = check_int(count, api, "count", 0, None, "elements")
        nbytes = count * dt.itemsize
        if addr is not None:
            addr = check_int(addr, api, "addr", 0, None, f"bytes (an address inside {phys}, {cap} bytes on "
                                                        f"{self.product})")
            if addr % align:
                raise AlignmentError(f"{api}: addr={addr} is not a multiple of {align} bytes ({phys} on "
                                     f"{self.product})")
        mem = self.buffer(phys)
        with self._lock:  # read, check and advance the allocation pointer as one step (threads share pipes)
            if addr is None:
                at = -(-self._next.get(phys, 0) // align) * align
            else:
                at = addr
            if at + nbytes > cap:
                raise CapacityError(f"{api}({position}, {dt}, {count}): needs bytes [{at}, {at + nbytes}) but "
                                    f"{phys} holds {cap} bytes on {self.product} ({max(cap - at, 0)} free at "
                                    f"{at}); raise it with TPipe(capacities=...)")
            self._next[phys] = max(self._next.get(phys, 0), at + nbytes)
        return LocalTensor(self, position, mem, at, dt, count)

    def allocated(self, phys: Phys) -> int:
        """End (byte address) of the highest allocation made so far in buffer ``phys`` (0 if none)."""
        return self._next.get(phys, 0)

    def reset(self) -> None:
        """Free every allocation (contents stay as they are)."""
        self._next.clear()

    def restart(self) -> None:
        """Make this pipe equal to a new ``TPipe`` of the same product, capacities and poison: nothing allocated,
        every on-chip byte poison and undefined, per-core registers at their defaults. The buffers' host memory
        is kept and cleared when next used (cheaper than new memory for many small programs in a row; tensors
        of before the restart must not be used again): only the bytes some tensor covered since the last fill
        are filled with poison again (``Memory.touched``), not the whole buffer."""
        self._spare.update(self._buffers)
        self._buffers = {}
        self._next.clear()
        self.state.clear()

    def __enter__(self):
        _current.set(_current.get() + (self,))
        return self

    def __exit__(self, *exc):
        stack = _current.get()
        if stack and stack[-1] is self:  # (the usual: the innermost entry is this one)
            _current.set(stack[:-1])
            return False
        for k in range(len(stack) - 1, -1, -1):  # this context's innermost entry of this pipe
            if stack[k] is self:
                _current.set(stack[:k] + stack[k + 1:])
                break
        return False

    def __repr__(self) -> str:
        return f"TPipe(product={self.product.name})"


def _position(position, product) -> TPosition:
    """A TPosition from a member or its name, or an UnsupportedError naming the valid positions."""
    try:
        return TPosition(position)
    except (ValueError, TypeError):
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

"""FRACTAL_NZ for whole arrays, without tensors: ``to_nz`` / ``from_nz``, and the usual ND2NZ / NZ2ND params.

FRACTAL_NZ of a ``(..., rows, cols)`` array with ``C0`` columns per block (default ``32 // itemsize``) is the
array of shape ``(..., D1, N1, 16, C0)`` with ``D1 = ceil(cols / C0)``, ``N1 = ceil(rows / 16)``::

    nz[..., c // C0, r // 16, r % 16, c % C0] = a[..., r, c]      pads (r >= rows or c >= cols) are 0

i.e. the layout ``DataCopy(dst, src, nd2nz_params(rows, cols, dtype))`` writes (``dstNzNStride = 1``,
``dstNzC0Stride = AU(rows, 16)``). Both directions run as move/fill plans through the same kernels as DataCopy.
"""

from __future__ import annotations

import math
import operator
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import config
from .dtypes import as_dtype
from .errors import ParamError, UnsupportedError
from .integers import as_int
from .memory import Memory, aligned_empty
from .params import Nd2NzParams, Nz2NdParamsFull
from .dma import crew
from .dma.lower import make_plan
from .dma.run import OBSERVERS, layout_job
from .dma.steps import Fill, Move
from .products import Phys

BLK = 32
ROWS = 16  # rows per fractal (N0)
NZ2ND_FRACTAL = 16  # NZ2ND fractal columns are 16 elements wide for every dtype (semantics.md §6.1)


def _dtype(dtype, api: str) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.hasobject or dt.itemsize == 0:
        raise UnsupportedError(f"{api}: dtype {dt} cannot be moved as raw bytes")
    return dt


def _c0(c0, dt: np.dtype, api: str) -> int:
    if c0 is None:
        if BLK % dt.itemsize:
            raise ParamError(f"{api}: dtype {dt} ({dt.itemsize} bytes) has no default C0 (32 bytes / itemsize); "
                             "pass c0=")
        return BLK // dt.itemsize
    c0 = as_int(c0, api, "c0", "elements per C0 block")
    if c0 < 1:
        raise ParamError(f"{api}: c0={c0!r} must be a positive integer (elements per C0 block)")
    return c0


def _split(shape, api: str) -> tuple:
    if len(shape) < 2:
        raise ParamError(f"{api}: needs a (..., rows, cols) shape with at least 2 dimensions, got {tuple(shape)}")
    return math.prod(shape[:-2]), int(shape[-2]), int(shape[-1])


def nz_shape(shape, dtype, c0=None) -> tuple:
    """The FRACTAL_NZ shape ``(..., ceil(cols/C0), ceil(rows/16), 16, C0)`` of a ``(..., rows, cols)`` array."""
    dt = _dtype(as_dtype(dtype) if isinstance(dtype, str) else dtype, "nz_shape")
    c0 = _c0(c0, dt, "nz_shape")
    _split(shape, "nz_shape")
    rows, cols = shape[-2], shape[-1]
    return (*shape[:-2], -(-cols // c0), -(-rows // ROWS), ROWS, c0)


#: outputs smaller than this are allocated by numpy, not line-aligned (below the streaming-store sizes nothing
#: needs the alignment); to_nz allocates them zeroed and its plan leaves out the zero pads (fewer steps to plan
#: and run); larger outputs are allocated uninitialised and line-aligned (zeroing them would be a pass of its own)
SMALL_OUT_BYTES = 1 << 16


def _out(out, shape, dt, api: str, a: np.ndarray, small: bool = False, zero: bool = False) -> np.ndarray:
    if out is None:
        if small:
            return (np.zeros if zero else np.empty)(shape, dt)
        return aligned_empty(math.prod(shape) * dt.itemsize, shape, dt)
    if not isinstance(out, np.ndarray) or out.shape != tuple(shape) or out.dtype != dt or not out.flags.c_contiguous \
            or not out.flags.writeable:
        got = f"{out.shape} {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ParamError(f"{api}: out= must be a writable C-contiguous {tuple(shape)} {dt} array, got {got}")
    if np.may_share_memory(out, a):
        raise ParamError(f"{api}: out= shares memory with the input; pass a separate array")
    return out


class _Raw:
    """Global memory over an array's bytes, as the executor sees a tensor (no copy; every byte defined, so no
    definedness cost). A light GlobalTensor: to_nz / from_nz of small arrays are dominated by such overheads, so
    its :class:`Memory` is made only when the general runner needs one (a small plan runs on the bytes directly,
    :func:`fastcopy.dma.run.run_raw`), its signature only when a plan is made (cached by shape and residue)."""

    __slots__ = ("data", "mod", "offset", "_memory")

    def __init__(self, data: np.ndarray, mod: int | None = None):
        self.data, self.offset, self._memory = data, 0, None
        # the host address residue (which unsigned views fit, as Memory.addr0); given for arrays allocated here
        self.mod = data.ctypes.data % 64 if mod is None else mod

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            self._memory = Memory(self.data, Phys.GM)
        return self._memory

    @property
    def _sig(self) -> _Extent:
        """The signature a plan over this array is made for (the array's bytes, its host residue)."""
        return _sig(self.data.size, self.mod)


def _raw(a: np.ndarray, mod: int | None = None) -> _Raw:
    return _Raw(a.reshape(-1).view(np.uint8), mod)


class _Extent(NamedTuple):
    """What a plan over a whole array depends on of it, the two fields :func:`make_plan` reads of a
    :class:`fastcopy.memory.TensorSig`: its bytes and host address residue (a new shape makes no interned signature)."""

    nbytes: int
    host_mod: int


def _sig(nbytes: int, host_mod: int) -> _Extent:
    return _Extent(nbytes, host_mod)


def to_nz_call(array, c0=None, out=None, small_numpy: bool = False) -> tuple:
    """Check a :func:`fastcopy.api.to_nz` call: ``(out, plan, dst, src)``, ``plan`` None when nothing moves or
    (``small_numpy``) when a small array was moved already (:func:`_to_nz_numpy`)."""
    a = np.asarray(array)
    geometry = _to_nz_geometry if c0 is None or type(c0) is int else _to_nz_geometry.__wrapped__
    dt, c0, batch, rows, cols, shape, small = geometry(a.shape, a.dtype, c0)
    a = np.ascontiguousarray(a)
    zeroed = out is None and small  # (then no pads to write)
    out = _out(out, shape, dt, "to_nz", a, small, zero=True)
    if not out.size:
        return out, None, None, None
    if small_numpy and out.nbytes < config.NZ_NUMPY_BYTES and dt.itemsize in _UINT:
        _to_nz_numpy(a, out, batch, rows, cols, c0, zeroed)
        return out, None, None, None
    src, dst = _raw(a), _raw(out)
    return out, _to_nz_plan(batch, rows, cols, dt.itemsize, c0, src.mod, dst.mod, zeroed), dst, src


@lru_cache(maxsize=1024)
def _to_nz_geometry(shape: tuple, dtype, c0) -> tuple:
    """The checks of a to_nz call on a ``shape`` / ``dtype`` array: ``(dtype, C0, batch, rows, cols, NZ shape,
    whether a fresh output is small enough to allocate zeroed)``; remembered (errors raise every time)."""
    dt = _dtype(dtype, "to_nz")
    c0 = _c0(c0, dt, "to_nz")
    batch, rows, cols = _split(shape, "to_nz")
    nzs = nz_shape(shape, dt, c0)
    return dt, c0, batch, rows, cols, nzs, math.prod(nzs) * dt.itemsize < SMALL_OUT_BYTES


@lru_cache(maxsize=1024)
def _from_nz_geometry(shape: tuple, dt: np.dtype, c0: int) -> tuple:
    """``(batch, rows, cols, NZ shape)`` of a from_nz call (``shape`` normalised, ``dt`` and ``c0`` checked);
    remembered (errors raise every time)."""
    return (*_split(shape, "from_nz"), nz_shape(shape, dt, c0))


def from_nz_call(array, shape, c0=None, out=None, small_numpy: bool = False) -> tuple:
    """Check a :func:`fastcopy.api.from_nz` call: ``(out, plan, dst, src)``, ``plan`` None when nothing moves or
    (``small_numpy``) when a small array was moved already (:func:`_from_nz_numpy`)."""
    a = np.asarray(array)
    dt = _dtype(a.dtype, "from_nz")
    c0 = _c0(c0, dt, "from_nz")
    if type(shape) is not tuple or not all(type(s) is int for s in shape):  # (a tuple of ints is one already)
        try:
            raw = tuple(shape)
            if any(isinstance(s, (bool, np.bool_)) for s in raw):
                raise TypeError("a boolean dimension")
            shape = tuple(operator.index(s) for s in raw)  # 40.7 is refused, not truncated
        except TypeError as exc:
            raise ParamError(f"from_nz: shape={shape!r} must be a tuple of integers (..., rows, cols)") from exc
    if any(s < 0 for s in shape):
        raise ParamError(f"from_nz: shape={shape} has a negative dimension")
    batch, rows, cols, want = _from_nz_geometry(shape, dt, c0)
    if a.size != math.prod(want):
        raise ParamError(f"from_nz: the FRACTAL_NZ form of a {shape} {dt} array with C0={c0} has shape {want} "
                         f"({math.prod(want)} elements); got an array of shape {a.shape} ({a.size} elements)")
    a = np.ascontiguousarray(a)
    small = out is None and a.nbytes < SMALL_OUT_BYTES  # (the ND output is at most the NZ input)
    fresh = out is None and not small
    out = _out(out, shape, dt, "from_nz", a, small)
    if not out.size:
        return out, None, None, None
    if small_numpy and a.nbytes < config.NZ_NUMPY_BYTES and dt.itemsize in _UINT:
        _from_nz_numpy(a, out, batch, rows, cols, c0)
        return out, None, None, None
    src, dst = _raw(a), _raw(out, 0 if fresh else None)  # (aligned_empty: on a 64-byte boundary)
    return out, _from_nz_plan(batch, rows, cols, dt.itemsize, c0, src.mod, dst.mod), dst, src


#: a loop that converts case after case into the same arrays repeats the same call: its plan's job (the
#: crew header and its chunk table, :func:`fastcopy.dma.run.layout_job`) runs again at once, without the checks,
#: planning and dispatch in Python (~60 us of a 1.3 ms 4096x4096 half from_nz, its Python cold after the copy)
_JOBS: dict = {}
JOBS_KEEP = 16


def repeat_key(kind: str, a, out, shape=None, c0=None):
    """What a large ``to_nz`` / ``from_nz`` call into ``out=`` depends on (``kind``, the two arrays' addresses,
    shapes and dtypes, ``shape``, ``c0``), or None for a call that always takes the full path (not two
    C-contiguous ndarrays, a small one, other spellings of ``shape`` / ``c0``). Two calls with equal keys make
    the same plan over the same bytes: a call that passed its checks once passes them again."""
    if (type(a) is not np.ndarray or type(out) is not np.ndarray or a.nbytes < config.PARALLEL_BYTES
            or not (a.flags.c_contiguous and out.flags.c_contiguous and out.flags.writeable)
            or (c0 is not None and type(c0) is not int) or (shape is not None and type(shape) is not tuple)):
        return None
    return kind, a.ctypes.data, out.ctypes.data, a.shape, out.shape, a.dtype, out.dtype, shape, c0


def run_repeat(key) -> bool:
    """Run the remembered job of ``key`` (its arrays are the caller's, alive for the call): True when done."""
    job = _JOBS.get(key)
    return job is not None and not OBSERVERS and crew.run_job(job[0])


run_repeat.cache_clear = _JOBS.clear  # (cleared with the plan caches)


def remember_job(key, plan, dst: _Raw, src: _Raw) -> None:
    """After a call of ``key`` ran ``plan``: keep its threads' job for the repeats (plans of one layout step)."""
    job = layout_job(plan, dst.data, src.data)
    if job is not None:
        if len(_JOBS) >= JOBS_KEEP:
            _JOBS.clear()
        _JOBS[key] = job


#: unsigned integer types by element width: the numpy paths move bit patterns, never values
_UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _fractals(nz: np.ndarray, batch: int, cols: int, c0: int) -> np.ndarray:
    """The NZ array as unsigned ``(batch, column blocks, AU(rows, 16), C0)`` (a view: ``nz`` is C-contiguous)."""
    u = nz.view(_UINT[nz.dtype.itemsize])
    return u.reshape(batch, -(-cols // c0), -1, c0)


def _blocks(nd: np.ndarray, width: int, c0: int) -> np.ndarray:
    """Columns ``[0, width)`` of a ``(batch, rows, cols)`` unsigned view as ``(batch, rows, width // C0, C0)``:
    a view, never a copy (setting ``shape`` raises where numpy would have to copy: a write into a copy would be
    lost)."""
    v = nd[:, :, :width]
    v.shape = (nd.shape[0], nd.shape[1], width // c0, c0)
    return v


def _to_nz_numpy(a: np.ndarray, out: np.ndarray, batch: int, rows: int, cols: int, c0: int, zeroed: bool) -> None:
    """A small to_nz as numpy slice assignments on unsigned views (the layout of :func:`_to_nz_plan`, bit for bit:
    a test holds them equal): whole C0 blocks transposed in one assignment, the partial last block in another,
    the pads zeroed unless ``out`` is zeroed already."""
    nz = _fractals(out, batch, cols, c0)
    nd = a.view(_UINT[a.dtype.itemsize]).reshape(batch, rows, cols)
    nfull, rem = divmod(cols, c0)
    if nfull:
        nz[:, :nfull, :rows, :] = _blocks(nd, nfull * c0, c0).transpose(0, 2, 1, 3)
    if rem:
        nz[:, nfull, :rows, :rem] = nd[:, :, nfull * c0:]
    if not zeroed:
        if rem:
            nz[:, nfull, :rows, rem:] = 0
        nz[:, :, rows:, :] = 0


def _from_nz_numpy(a: np.ndarray, out: np.ndarray, batch: int, rows: int, cols: int, c0: int) -> None:
    """A small from_nz as numpy slice assignments on unsigned views (the inverse of :func:`_to_nz_numpy`; pads
    are not read), bit for bit what :func:`_from_nz_plan` writes (a test holds them equal)."""
    nz = _fractals(a, batch, cols, c0)
    nd = out.view(_UINT[out.dtype.itemsize]).reshape(batch, rows, cols)
    nfull, rem = divmod(cols, c0)
    if nfull:
        _blocks(nd, nfull * c0, c0)[...] = nz[:, :nfull, :rows, :].transpose(0, 2, 1, 3)
    if rem:
        nd[:, :, nfull * c0:] = nz[:, nfull, :rows, :rem]


@lru_cache(maxsize=256)
def _to_nz_plan(batch, rows, cols, es, c0, src_mod, dst_mod, zeroed=False):
    """Loops (batch, column block, row): the destination is written sequentially. ``*_mod``: host address
    residues (which unsigned views fit). ``zeroed``: the destination is all 0 already (the pads are not written)."""
    n16 = -(-rows // ROWS) * ROWS
    nfull, rem = divmod(cols, c0)
    nblk = nfull + (rem > 0)
    blk, col = c0 * es, n16 * c0 * es  # bytes of one C0 row / one column block
    sb, db = rows * cols * es, nblk * col  # bytes per batch item
    steps = []
    if nfull:
        steps.append(Move((0,), (0,), blk, ((batch, sb, db), (nfull, blk, col), (rows, cols * es, blk))))
    zero = b"\0" * es
    if rem:
        steps.append(Move((nfull * blk,), (nfull * col,), rem * es, ((batch, sb, db), (rows, cols * es, blk))))
        if not zeroed:
            steps.append(Fill((nfull * col + rem * es,), blk - rem * es, ((batch, db), (rows, blk)), zero))
    if n16 > rows and not zeroed:
        steps.append(Fill((rows * blk,), (n16 - rows) * blk, ((batch, db), (nblk, col)), zero))
    return make_plan("to_nz", steps, _sig(batch * rows * cols * es, src_mod), _sig(batch * nblk * col, dst_mod),
                     marks=False)  # (whole arrays, all defined: no definedness plane to mark)


@lru_cache(maxsize=256)
def _from_nz_plan(batch, rows, cols, es, c0, src_mod, dst_mod):
    """Loops (batch, column block, row): the source is read sequentially."""
    n16 = -(-rows // ROWS) * ROWS
    nfull, rem = divmod(cols, c0)
    nblk = nfull + (rem > 0)
    blk, col = c0 * es, n16 * c0 * es
    sb, db = nblk * col, rows * cols * es
    steps = []
    if nfull:
        steps.append(Move((0,), (0,), blk, ((batch, sb, db), (nfull, col, blk), (rows, blk, cols * es))))
    if rem:
        steps.append(Move((nfull * col,), (nfull * blk,), rem * es, ((batch, sb, db), (rows, blk, cols * es))))
    return make_plan("from_nz", steps, _sig(batch * nblk * col, src_mod), _sig(batch * rows * cols * es, dst_mod),
                     marks=False)


# ----------------------------------------------------------------------------------------------- param helpers
def nd2nz_params(rows: int, cols: int, dtype, count: int = 1, row_stride: int | None = None) -> Nd2NzParams:
    """Nd2NzParams moving ``count`` ND matrices of ``rows x cols`` elements (rows ``row_stride`` elements apart,
    default ``cols``; matrices ``rows*row_stride`` apart) into the :func:`to_nz` layout: ``dstNzNStride = 1``,
    ``dstNzC0Stride = AU(rows, 16)``, matrices ``AU(rows, 16)*ceil(cols/C0)*C0`` elements apart,
    ``C0 = 32 / sizeof(dtype)``."""
    dt = as_dtype(dtype)
    c0 = BLK // dt.itemsize
    stride = cols if row_stride is None else row_stride
    n16 = -(-rows // ROWS) * ROWS
    many = count > 1
    return Nd2NzParams(ndNum=count, nValue=rows, dValue=cols, srcNdMatrixStride=rows * stride if many else 0,
                       srcDValue=stride, dstNzC0Stride=n16, dstNzNStride=1,
                       dstNzMatrixStride=n16 * -(-cols // c0) * c0 if many else 0)


def nz2nd_params(rows: int, cols: int, dtype=None, count: int = 1, row_stride: int | None = None) -> Nz2NdParamsFull:
    """Nz2NdParamsFull moving ``count`` NZ matrices of ``rows x cols`` (``cols`` a multiple of 16) laid out with
    16-element fractal columns of ``AU(rows, 16)`` rows, i.e. ``to_nz(a, c0=16)`` (the default ``to_nz`` layout
    for 2-byte types only), back to ND rows ``row_stride`` elements apart (default ``cols``), matrices
    ``rows*row_stride`` apart. ``dtype`` does not change the params: NZ2ND fractals are 16 wide for every dtype."""
    if dtype is not None:
        as_dtype(dtype)
    if cols % NZ2ND_FRACTAL:
        raise ParamError(f"nz2nd_params: cols={cols} is not a multiple of 16 (NZ2ND moves whole 16-element fractal "
                         "columns; pad the matrix to AU(cols, 16) columns)")
    stride = cols if row_stride is None else row_stride
    n16 = -(-rows // ROWS) * ROWS
    many = count > 1
    return Nz2NdParamsFull(ndNum=count, nValue=rows, dValue=cols,
                           srcNdMatrixStride=n16 * cols // 256 if many else 1, srcNStride=n16, dstDStride=stride,
                           dstNdMatrixStride=rows * stride if many else 1)

"""Where the runner's kernels come from.

``import fastcopy`` does not load numba. Until the numba kernels of :mod:`fastcopy.kernels` are loaded, each
name below is a stand-in: a small call runs the numpy kernels of :mod:`.npkernels` (same ``meta``, same
results); the first call that benefits (one moving more than ``config.SMALL_BYTES``, or the
``config.CALLS_BEFORE_KERNELS``-th call) loads the numba kernels and replaces every stand-in, so later calls
go straight to numba. ``FASTCOPY_KERNELS=numba|numpy`` (or :func:`use`) pins one implementation.
"""

from __future__ import annotations

import os
import threading

from .. import config
from . import abi, npkernels

KERNELS = ("copy_strided", "fill_strided", "all_set")
#: the layout kernels: only ever called for steps larger than config.SMALL_BYTES, so their stand-ins load numba
#: (their numpy versions in .npkernels serve FASTCOPY_KERNELS=numpy); but transpose_elements (also small element
#: transposes), run_steps (small prepared plans) and copy_tailed (new small ND2NZ calls) run in numpy for small
#: early calls, as the strided kernels
LAYOUT_KERNELS = ("transpose_blocks", "copy_dense", "copy_rows", "fill_dense", "transpose_elements", "run_steps",
                  "copy_tailed")
_calls = 0


#: one thread loads the kernels; another calling load() meanwhile waits for it (a second ``from .. import
#: kernels`` would otherwise see the half-initialised module and miss its kernels)
_LOAD_LOCK = threading.RLock()


def load() -> None:
    """Import (compile or load from the on-disk cache) the numba kernels and bind them here."""
    with _LOAD_LOCK:
        from .. import kernels

        _bind(kernels)


def use(which: str) -> None:
    """``"numba"``, ``"numpy"`` or ``"auto"`` (numpy for small first calls, numba from the first that benefits)."""
    global _calls
    if which == "numba":
        load()
    elif which == "numpy":
        _bind(npkernels)
    elif which == "auto":
        _calls = 0
        g = globals()
        g.update(copy_strided=_copy_strided, fill_strided=_fill_strided, all_set=_all_set, **_LAYOUT_STAND_INS)
    else:
        raise ValueError(f"FASTCOPY_KERNELS={which!r}: use numba, numpy or auto")


def _bind(module) -> None:
    g = globals()
    for name in KERNELS + LAYOUT_KERNELS:
        g[name] = getattr(module, name)


def usable_crew() -> bool:
    """Whether parallel calls may go to the helper threads (:mod:`.crew`, numba kernels): not while the numpy
    kernels are pinned; the stand-ins load numba (only large calls are shared)."""
    if globals()["copy_strided"] is npkernels.copy_strided:
        return False
    if not loaded():
        load()
    return True


def loaded() -> bool:
    return globals()["copy_strided"] is not _copy_strided and globals()["copy_strided"] is not npkernels.copy_strided


def numpy_copies() -> bool:
    """Whether a ``copy_strided`` call may still run on the numpy kernels (pinned, or the stand-in still in place):
    only then do new plans carry the byte views of :func:`fastcopy.dma.npkernels.byte_views` (with numba loaded
    :func:`copy_in_numpy` is False for every call, so views made then were never read: 1-3 us of a new plan)."""
    cs = globals()["copy_strided"]
    return cs is _copy_strided or cs is npkernels.copy_strided


def _small(view, meta) -> bool:
    """Whether a call is small enough for numpy (and early enough in the process)."""
    return _small_list(view, meta) is not None


#: where the inner loops' counts are in a strided kernel's meta
_INNER_COUNTS = tuple(abi.LOOPS + 3 * k for k in range(1, abi.MAX_LOOPS))


def _small_list(view, meta):
    """:func:`_small`: the meta as a list when the call is small and early enough, else None."""
    global _calls
    _calls += 1
    if _calls > config.CALLS_BEFORE_KERNELS:
        return None
    m = meta.tolist()
    o_lo, o_hi, i_lo, i_hi = m[abi.RANGE:abi.RANGE + 4]
    units = m[abi.BURST] * max(o_hi - o_lo, 0) * max(i_hi - i_lo, 0)
    for k in _INNER_COUNTS:
        units *= m[k]
    return m if units * view.itemsize <= config.SMALL_BYTES else None


def copy_in_numpy(nbytes: int) -> bool:
    """Whether a ``copy_strided`` call moving ``nbytes`` bytes runs on the numpy kernels now: they are pinned, or
    the stand-in is in place and its rule (:func:`_small_list`, which this counts as a call) keeps the call in
    numpy. False: call :data:`copy_strided` (the stand-in has loaded numba already when its rule says so)."""
    cs = globals()["copy_strided"]
    if cs is npkernels.copy_strided:
        return True
    if cs is not _copy_strided:
        return False
    global _calls
    _calls += 1
    if _calls <= config.CALLS_BEFORE_KERNELS and nbytes <= config.SMALL_BYTES:
        return True
    load()
    return False


def _copy_strided(dst, dbase, src, sbase, meta):
    m = _small_list(dst, meta)
    if m is not None:
        return npkernels.copy_strided(dst, dbase, src, sbase, meta, m)
    load()
    return copy_strided(dst, dbase, src, sbase, meta)


def _fill_strided(dst, dbase, meta, value):
    if _small(dst, meta):
        return npkernels.fill_strided(dst, dbase, meta, value)
    load()
    return fill_strided(dst, dbase, meta, value)


def _all_set(src, sbase, meta, value):
    whole = meta.copy()
    whole[abi.RANGE:abi.RANGE + 4] = (0, meta[abi.NOFF], 0, meta[abi.LOOPS])
    if _small(src, whole):
        return npkernels.all_set(src, sbase, meta, value)
    load()
    return all_set(src, sbase, meta, value)


def _layout_stand_in(name: str):
    def call(*args):
        load()
        return globals()[name](*args)

    call.__name__ = call.__qualname__ = name
    return call


def _early(nbytes: int) -> bool:
    """Whether a small call runs in numpy (the rule of :func:`_small`, for kernels whose arguments say their size
    another way)."""
    global _calls
    _calls += 1
    return _calls <= config.CALLS_BEFORE_KERNELS and nbytes <= config.SMALL_BYTES


def _transpose_elements(dst, dbase, src, sbase, meta):
    """Stand-in: a small element transpose (a 1 KiB LoadDataWithTranspose square) runs in numpy early on."""
    m = meta.tolist()
    n = (m[abi.T_B_HI] - m[abi.T_B_LO]) * (m[abi.T_A_HI] - m[abi.T_A_LO]) * m[abi.T_NC] * m[abi.T_BURST]
    if _early(n):
        return npkernels.transpose_elements(dst, dbase, src, sbase, meta)
    load()
    return transpose_elements(dst, dbase, src, sbase, meta)


def _run_steps(dst, src, table):
    """Stand-in: the steps of a small prepared plan (see :func:`fastcopy.kernels.strided.run_steps`)."""
    if _early(0):
        return npkernels.run_steps(dst, src, table)
    load()
    return run_steps(dst, src, table)


def _copy_tailed(dst, dbase, src, sbase, meta, value):
    """Stand-in: rows with a tail (see :func:`fastcopy.kernels.tailed.copy_tailed`) run in numpy early on."""
    m = meta.tolist()
    units = m[abi.R_C0] * m[abi.R_C1] * (m[abi.R_NB] * m[abi.R_BLK] + m[abi.R_REM] + m[abi.R_TAIL])
    if _early(units * dst.itemsize):
        return npkernels.copy_tailed(dst, dbase, src, sbase, meta, value)
    load()
    return copy_tailed(dst, dbase, src, sbase, meta, value)


_LAYOUT_STAND_INS = {name: _layout_stand_in(name) for name in LAYOUT_KERNELS}
_LAYOUT_STAND_INS.update(transpose_elements=_transpose_elements, run_steps=_run_steps, copy_tailed=_copy_tailed)
globals().update(_LAYOUT_STAND_INS)
transpose_elements, run_steps, copy_tailed = _transpose_elements, _run_steps, _copy_tailed  # (bound above, named
# here: the stand-ins call what load() binds to these names)
copy_strided, fill_strided, all_set = _copy_strided, _fill_strided, _all_set
if os.environ.get("FASTCOPY_KERNELS"):
    use(os.environ["FASTCOPY_KERNELS"])

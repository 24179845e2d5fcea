"""Repeats of the cube-in loads (``LoadData``, ``LoadDataWithTranspose``, ``LoadDataWithStride``): the remembered
calls of a destination and what a repeat runs instead of planning.

A call that planned is remembered in its destination's cache (``tensor._prepared``, shared with the DataCopy
family of :mod:`fastcopy.api`) as an *entry*, a list::

    [regs_of, version, src, plan, prep, fast, regs]

``regs_of`` / ``version``: what the plan read of the core's state. The 2D loads and the transposes read no
register: ``regs_of`` is :data:`STATELESS`, whose version never changes. A 3D load (img2col) reads FMATRIX,
PADDING, the repeat register and the L1 boundary: ``regs_of`` is the core's state, ``version`` its write count
right after the call, and ``regs`` the values of the registers it reads at that moment. While the version is
unchanged the entry is valid; after any register write the entry is checked once against ``regs``
(:func:`revalidate`): equal values (another register written, or the same values written again) keep it, any
difference drops it (the next call plans, exactly like a call that never saw the cache). The call's own
register writes (``isSetFMatrix`` / ``isSetPadding``, the Atlas 350 pitch) are part of ``regs``: a repeat finds
them there and writes nothing.

``prep`` is what :func:`fastcopy.dma.run.prepare` made (on the first repeat); ``fast`` the quickest form of it,
one kernel call (its compiled entry for the bound arguments' types) or one numpy copy with its arguments, for a
prepared call that is nothing else (:func:`fast_call`; a whole tile's copy or element transpose of at least
``config.PAIR_BYTES`` is bound split in two, this thread and a helper: :func:`fastcopy.kernels.crew.pair`, whose
header holds the two memories' addresses: the entry keeps the memories): ``[kernel, args, src memory, its known
ranges, dst memory, its known ranges, read lo, read hi]``. A memory replaces its list of known-defined ranges whenever its
definedness may lose bytes (and whenever it learns new ones), so the very list objects seen right after a run
that found the source's read span defined (and so wrote and marked only defined bytes) prove that both still
hold: a repeat whose two lists are those objects calls the kernel and is done. Anything else takes
:func:`rerun` (the prepared runner of :mod:`fastcopy.dma.run`, which checks and marks), after which the lists
are taken again.

The last call of each entry point on a destination is also kept as a *memo* (:func:`memo`), and its recent
calls by parameter object: the very parameter snapshots of the call (``ParamStruct._key``: the same tuple object
until a field is set), its source and its entry, so that :mod:`fastcopy.api` recognises a repeat without
building and hashing a key.
"""

from __future__ import annotations

import numpy as np

from .. import config as config_module
from ..dma import abi, crew
from ..dma import kernels as K
from ..dma import run as _run
from .b4 import NibblePlan
from .registers import FMATRIX_L, L1_3D_SIZE, L3D_RPT, PADDING


class _Stateless:
    """The state of a load that reads no register: its version never changes. (An instance slot, like
    ``CoreState.version``: a repeat reads it on every call, and a class attribute read through an instance costs
    ~30 ns more in CPython 3.11, ~2% of a whole tile's call.)"""

    __slots__ = ("version",)

    def __init__(self):
        self.version = 0


STATELESS = _Stateless()
#: the registers a 3D load reads (and may write): their values make its entry valid
REGISTERS = (FMATRIX_L, PADDING, L3D_RPT, L1_3D_SIZE)
#: ``prep`` of an entry not prepared yet (made on its first repeat)
UNPREPARED = False
#: ``prep`` of a remembered 4-bit load (a NibblePlan runs itself: its nibble kernels)
NIBBLES = "nibbles"
#: ``fast`` known-ranges slot that no memory's list is (the next repeat checks and marks)
_STALE = ()
#: kernel of a prepared step by its kind (:func:`fastcopy.dma.run._prepare_steps`)
_STEP_KERNELS = {"steps": "run_steps", "copy": "copy_strided", "fill": "fill_strided",
                 "elements": "transpose_elements", "transpose": "transpose_blocks", "rows": "copy_rows"}


def register_values(state) -> tuple:
    get = state.get
    return tuple(get(k) for k in REGISTERS)


def remember(key, dst, src, plan, state=None, values: bool = True) -> list:
    """Keep a planned load in its destination's cache under ``key`` (its parameters); ``state``: the core's
    registers when the plan read some (a 3D load), read after the call wrote its own. ``values=False``: the
    entry holds no register values, so any write to the state drops it (DataCopy's DN2NZ, whose plan may read
    any of the state: the rule of fastcopy.api's prepared DataCopy calls)."""
    cache = dst._prepared
    if cache is None:
        cache = dst._prepared = {}
    elif len(cache) >= config_module.PREPARED_CALLS:
        cache.clear()
    if state is None:
        entry = [STATELESS, 0, src, plan, UNPREPARED, None, None]
    else:
        entry = [state, state.version, src, plan, UNPREPARED, None, register_values(state) if values else None]
    if type(plan) is NibblePlan:
        entry[4] = NIBBLES
    cache[key] = entry
    return entry


def revalidate(entry) -> bool:
    """An entry whose core state was written since: still valid if the registers its plan read hold the same
    values (then valid again for the current version)."""
    state = entry[0]
    if entry[6] is None or register_values(state) != entry[6]:
        return False
    entry[1] = state.version
    return True


def valid(entry, src) -> bool:
    return entry is not None and entry[2] is src and (entry[0].version == entry[1] or revalidate(entry))


def memo(api: str, slot, dst, params, config, entry) -> None:
    """Make ``entry`` the memo of ``api`` on ``dst`` (its last call), also kept in ``slot``, the recent calls by
    parameter object (a dict by ``id(params)``). A memo is ``(params, params snapshot, config marker, config type,
    source, entry, the params' __dict__)``; the config marker is the config's snapshot (with its type), or None (no
    type). A repeat proves its params object unchanged with ``m[0] is params and m[6]["_key"] is m[1]`` (setting a
    field drops ``_key``): no attribute read of the params object, whose ``__getattr__`` keeps CPython 3.11 from
    specialising one (``params._key`` ~27 ns, the dict's item ~10 ns)."""
    pkey = params.__dict__.get("_key")
    if pkey is None:
        return
    if config is None:
        marker = (None, None)
    else:
        ckey = config.__dict__.get("_key")
        if ckey is None:
            return
        marker = (ckey, type(config))
    cache = dst._prepared
    m = (params, pkey) + marker + (entry[2], entry, params.__dict__)
    cache[api] = m
    recent = cache.get(slot)
    if recent is None or len(recent) >= config_module.PREPARED_CALLS:
        recent = cache[slot] = {}
    recent[id(params)] = m  # (it holds the object: its id is not reused meanwhile)


def run(entry, dst, src) -> None:
    """A valid entry's repeat: its quickest form when both memories' known-range lists are the armed ones, else
    :func:`rerun`. (fastcopy.api._again inlines this for the memo: keep the two alike.)"""
    f = entry[5]
    if f and f[2].known is f[3] and f[4].known is f[5] and not _run.OBSERVERS:
        f[0](*f[1])
    else:
        rerun(entry, dst, src)


def rerun(entry, dst, src) -> None:
    """A valid entry's repeat when its quickest form does not apply: prepared on its first repeat, run through
    the prepared runner (or the plan's own runner, which checks and marks), then its quickest form made or
    armed again (:func:`fast_call`)."""
    prep, plan = entry[4], entry[3]
    if prep is NIBBLES:
        plan.run(dst, src, repeat=True)
    else:
        if prep is UNPREPARED:
            prep = entry[4] = _run.prepare(plan, dst, src)
        if prep is None:
            _run.execute(plan, dst, src)
            return
        _run.run_prepared(prep, plan, dst, src)
    fast = entry[5]
    if fast is None:
        fast = entry[5] = fast_call(plan, prep, dst, src)
    if fast:
        smem, dmem = fast[2], fast[4]
        if smem.tracked and not smem.known_defined(fast[6], fast[7]):
            fast[3] = fast[5] = _STALE  # (undefined source bytes: the destination's plane takes them)
        else:  # every byte this call wrote is defined, and marked so
            fast[3], fast[5] = smem.known, dmem.known


def fast_call(plan, prep, dst, src) -> list:
    """``[kernel, args, src memory, _, dst memory, _, read lo, read hi]`` of a call that is one kernel call (or
    one numpy copy), with no warnings (the prepared forms have none); ``[]`` when it is not, None when the
    numba kernels are not loaded yet (asked again on the next repeat; a single-burst copy is numpy's own and needs
    none: a process whose only loads are whole tiles never loads them)."""
    if not K.loaded() and (prep is NIBBLES or prep[0] is not None or prep[4] is not None):
        return None
    if prep is NIBBLES:
        return _nibble_call(plan, dst, src)
    dview, dbase, sview, sbase, meta, smem, slo, shi, dmem = prep[:9]
    if dview is None:  # one burst (a crew job from config.HOT_BYTES on: not here; a pair from PAIR_BYTES)
        call = None if meta is not None else _pair(crew.DENSE, dbase, 0, sview, 0, None) or (np.copyto,
                                                                                            (dbase, sview))
    elif dview is _run.STEPS:
        call = None
        if len(dbase) == 1 and dbase[0][0] in _STEP_KERNELS:  # (not a copy_tailed call: its fill value is a 7th)
            kind, a, b, c, d, m = dbase[0]
            args = (a, b, c) if kind == "steps" else (a, b, m, c) if kind == "fill" else (a, b, c, d, m)
            call = kind == "elements" and _pair(crew.ELEMENTS, a, b, c, d, m) or (getattr(K, _STEP_KERNELS[kind]),
                                                                                   args)
    else:  # one strided copy (a tuple: chunks the threads share)
        call = None if type(meta) is tuple else (K.copy_strided, (dview, dbase, sview, sbase, meta))
    return [] if call is None else [_entry(*call), call[1], smem, _STALE, dmem, _STALE, slo, shi]


def _pair(kind: int, dst, dbase: int, src, sbase: int, meta):
    """``(kernel, args)`` of a whole tile's copy (``meta`` None: the two windows ``dst`` <- ``src``) or element
    transpose (``meta``) split between this thread and a helper (:func:`fastcopy.dma.crew.pair_job`), or None:
    smaller than ``config.PAIR_BYTES``, no crew, or not to be cut."""
    if meta is None:
        n = dst.nbytes
        if n < config_module.PAIR_BYTES or not K.usable_crew():
            return None
        job = crew.dense_pair(dst, 0, src, 0, n)
    else:
        m = meta.tolist()
        nb, na = m[abi.T_B_HI] - m[abi.T_B_LO], m[abi.T_A_HI] - m[abi.T_A_LO]
        if nb * na * m[abi.T_NC] * m[abi.T_BURST] < config_module.PAIR_BYTES or not K.usable_crew():
            return None
        halves = _halves(meta, nb, na)
        job = None if halves is None else crew.pair_job(kind, dst, dbase, src, sbase, halves)
    if job is None:
        return None
    kernel, head = job
    from numba import typeof

    kernel.compile((typeof(head),))
    return kernel, (head,)


def _halves(meta, nb: int, na: int):
    """An element transpose's ``meta`` as two rows, the first ``config.PAIR_SHARE_ELEMENTS`` of its batches (or,
    for one batch, of its whole tiles of rows) and the rest; None when it has neither two batches nor two tiles."""
    share = config_module.PAIR_SHARE_ELEMENTS
    out = np.stack([meta, meta])
    if nb >= 2:
        lo, hi = abi.T_B_LO, abi.T_B_HI
        cut = meta[lo] + min(nb - 1, max(1, round(nb * share)))
    else:
        lo, hi = abi.T_A_LO, abi.T_A_HI
        rows = 32 // int(meta[abi.T_BURST])  # (a tile of the kernel: 32 bytes of rows, fastcopy/kernels/elements.py)
        tiles = na // rows
        if tiles < 2:
            return None
        cut = meta[lo] + min(tiles - 1, max(1, round(tiles * share))) * rows
    out[0, hi] = out[1, lo] = cut
    return out


def _entry(kernel, args: tuple):
    """The compiled entry of the numba kernel for exactly these arguments' types (what its dispatcher calls
    after typing the arguments and finding the overload: ~0.09 us of a small repeat saved), or the kernel itself
    (not compiled for them, or not a numba kernel). The arguments are bound for good: their types cannot change."""
    if not hasattr(kernel, "get_overload"):
        return kernel
    from numba import typeof

    try:
        return kernel.get_overload(tuple(typeof(a) for a in args))
    except KeyError:
        return kernel


def _nibble_call(nplan, dst, src) -> list:
    """The quickest form of a 4-bit load whose bytes are all whole transposed tiles on aligned words
    (:meth:`fastcopy.cube.b4.NibblePlan._gather` with nothing else to do)."""
    g, plan = nplan.gather, nplan.plan
    smem, dmem = src.memory, dst.memory
    if g is None or plan.warnings or g.span is None or not g.tiles.size or g.rest.size or smem.shares(dmem):
        return []
    dview, dshift = dmem.view(8)
    sview, sshift = smem.view(8)
    if (dst.offset - dshift) % 8 or (src.offset - sshift) % 8:
        return []
    from ..kernels.nibbles import transpose_tiles

    args = (dview, (dst.offset - dshift) // 8, sview, (src.offset - sshift) // 8, g.tiles)
    return [_entry(transpose_tiles, args), args, smem, _STALE, dmem, _STALE, src.offset + plan.read[0],
            src.offset + plan.read[1]]


__all__ = ["STATELESS", "REGISTERS", "remember", "revalidate", "valid", "memo", "run", "rerun",
           "fast_call", "register_values"]

"""Run a plan on tensors: the only place a call writes memory. Kernels on unsigned views for data and
definedness, or the exact path.

The exact path (numpy, slower) resolves calls whose writes may overlap (semantics.md §8.2, §11.2: a byte written more
than once with different values becomes undefined) and calls whose source and destination share bytes
(read-before-write, semantics.md §0). Everything else runs the numba kernels.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import config
from ..errors import warn
from . import abi, crew, npkernels
from . import kernels as K
from .lower import LAYOUT_KINDS, Plan
from .steps import (Convert, Fill, Move, check_in_memory, grid_pieces, read_grid, src_burst, write_grid,
                    written)

#: 0x01 in every byte of a unit, by view width (the definedness plane's "defined")
_ONES = {w: np.uint64(int.from_bytes(b"\x01" * w, "little")) for w in (1, 2, 4, 8)}
_ZERO = np.uint64(0)


def poison_byte(dst, src) -> int:
    """The poison byte of the core doing the call (semantics.md §11.1): undefined bytes it writes, GM included."""
    if dst.is_global and src is not None and not src.is_global:
        return src.pipe.poison
    return dst.memory.poison


def _poison(byte: int, w: int) -> np.uint64:
    return np.uint64(int.from_bytes(bytes([byte]) * w, "little"))


#: Callables ``observer(plan, dst, src)`` told of every plan just before it runs (``fastcopy check`` reports the
#: bytes each op reads and writes with it). Empty in normal use: one truthiness test per call.
OBSERVERS: list = []


def prepare(plan: Plan, dst, src):
    """What a repeated call of ``plan`` on these two tensors needs for the hot path (views, unit bases, spans;
    source and destination do not alias), or None when it cannot take it. Run it with :func:`run_prepared`."""
    fast = plan.fast
    if src is None:
        return None
    if fast is None:
        return _prepare_steps(plan, dst, src)
    dmem, smem = dst.memory, src.memory
    if smem.shares(dmem):
        return None
    w, meta, mark, _ = fast
    dview, dshift = dmem.view(w)
    sview, sshift = smem.view(w)
    if len(mark) == 2:
        mark = (dst.offset + mark[0], dst.offset + mark[1])
    dbase, sbase = (dst.offset - dshift) // w, (src.offset - sshift) // w
    if meta.ndim == 1 and abi.is_contiguous(meta):  # one burst: the prepared arguments are the two windows themselves
        d0, s0, n = dbase + abi.offsets_of(meta)[0][0], sbase + abi.offsets_of(meta)[1][0], abi.burst_of(meta)
        # (from config.HOT_BYTES: a crew job, shared when a helper is awake, else one memcpy on this thread)
        hot = crew.dense_job(dmem.data, dshift + d0 * w, smem.data, sshift + s0 * w, n * w) if (
            n * w >= config.HOT_BYTES and K.usable_crew()) else None
        return (None, dview[d0:d0 + n], sview[s0:s0 + n], None, hot, smem, src.offset + plan.read[0],
                src.offset + plan.read[1], dmem, mark, [None, None])
    if meta.ndim == 2:  # chunks the threads share: the crew's job header, made once
        meta = (meta, crew.job(crew.COPY, dview, dbase, sview, sbase, meta, nbytes=plan.nbytes)
                if K.usable_crew() else None)
    return (dview, dbase, sview, sbase, meta, smem, src.offset + plan.read[0], src.offset + plan.read[1], dmem,
            mark, [None, None])


#: marks a prepared plan of several kernel calls (see _prepare_steps)
STEPS = object()


def _prepare_steps(plan: Plan, dst, src):
    """:func:`prepare` for a dense plan of a few single-chunk kernel steps (strided copies, documented fills,
    element / block transposes: a small img2col load, a transposed tile): each kernel call with its views and
    bases bound; the plane is then set over the write span once, unless known to be defined. None when the plan
    does not qualify (it then runs through :func:`execute`)."""
    if plan.exact or plan.warnings or plan.effects or not plan.dense or plan.read is None:
        return None
    lo, hi = dst.offset + plan.write[0], dst.offset + plan.write[1]
    if not 0 < len(plan.ksteps) <= config.PREPARED_STEPS or hi - lo >= config.PARALLEL_BYTES:
        job = _prepare_layout_job(plan, dst, src)  # (a large layout step: the threads' job, made once)
        return None if job is None else (STEPS, (), job, None, None, src.memory, src.offset + plan.read[0],
                                         src.offset + plan.read[1], dst.memory, (lo, hi), [None, None])
    dmem, smem = dst.memory, src.memory
    if smem.shares(dmem):
        return None
    calls = []
    for ks in plan.ksteps:
        if len(ks.metas) != 1 or ks.kind in ("dense", "convert"):
            return None
        if ks.kind in LAYOUT_KINDS:  # byte views, bases at the step's offsets
            calls.append((ks.kind, dmem.data, dst.offset + ks.doffs[0], smem.data, src.offset + ks.soffs[0],
                          ks.metas[0]))
            continue
        dview, dshift = dmem.view(ks.w)
        if ks.kind == "tailed":  # (its fill value an argument of its own)
            sview, sshift = smem.view(ks.w)
            calls.append(("tailed", dview, (dst.offset - dshift) // ks.w, sview, (src.offset - sshift) // ks.w,
                          ks.metas[0], ks.value))
        elif ks.kind == "copy":
            sview, sshift = smem.view(ks.w)
            calls.append(("copy", dview, (dst.offset - dshift) // ks.w, sview, (src.offset - sshift) // ks.w,
                          ks.metas[0]))
        else:
            calls.append(("fill", dview, (dst.offset - dshift) // ks.w, ks.value, 0, ks.metas[0]))
    calls = _batched(calls)
    bound = None  # one kernel call: (its kernel's name, its arguments), run without the step loop
    if len(calls) == 1 and calls[0][0] in _BOUND:
        kind = calls[0][0]
        bound = (_BOUND[kind], calls[0][1:4] if kind == "steps" else calls[0][1:])
    return (STEPS, calls, bound, None, None, smem, src.offset + plan.read[0], src.offset + plan.read[1], dmem,
            (lo, hi), [None, None])


def _prepare_layout_job(plan: Plan, dst, src):
    """The bound call of a repeated large layout plan (ND2NZ / NZ2ND into or out of a buffer): its one layout
    step's crew job (:func:`layout_job`) on the two memories, run by :func:`_run_layout_job`; None when the plan
    is something else or there is no crew."""
    dmem, smem = dst.memory, src.memory
    if smem.shares(dmem) or len(plan.ksteps) != 1 or plan.ksteps[0].kind not in _LAYOUT_JOBS:
        return None
    job = layout_job(plan, dmem.data, smem.data, dst.offset, src.offset)
    return None if job is None else (_run_layout_job, (job, plan, dst, src))


def _run_layout_job(job, plan: Plan, dst, src) -> None:
    """A prepared layout job: on the threads, or (no crew now: one thread, disabled) the general path."""
    if not crew.run_job(job[0]):
        execute(plan, dst, src)


#: the kernel (its name in :mod:`.kernels`, looked up per call: numba replaces the stand-ins on load) of a
#: prepared plan of one call, by kind
_BOUND = {"steps": "run_steps", "elements": "transpose_elements", "transpose": "transpose_blocks",
          "rows": "copy_rows", "tailed": "copy_tailed"}


def _batched(calls: list) -> tuple:
    """Several copies and fills on views of one width as one ``run_steps`` call (one kernel dispatch: ~0.3 us
    each from Python, most of a small img2col load); other call lists as they are."""
    if len(calls) < 2 or any(c[0] not in ("copy", "fill") for c in calls) or len({c[1].dtype for c in calls}) > 1:
        return tuple(calls)
    copies = [c for c in calls if c[0] == "copy"]
    if len({id(c[3]) for c in copies}) > 1:
        return tuple(calls)
    table = np.zeros((len(calls), 4 + max(c[5].size for c in calls)), np.int64)
    for k, c in enumerate(calls):
        fill = c[0] == "fill"
        table[k, :4] = (fill, np.uint64(c[3]).view(np.int64) if fill else 0, c[2], 0 if fill else c[4])
        table[k, 4:4 + c[5].size] = c[5]
    return (("steps", calls[0][1], copies[0][3] if copies else calls[0][1], table, None, None),)


def _run_steps(calls) -> None:
    for kind, a, b, c, d, meta, *value in calls:  # (kernels looked up per call: numba replaces the stand-ins)
        if kind == "tailed":
            K.copy_tailed(a, b, c, d, meta, value[0])
        elif kind == "steps":
            K.run_steps(a, b, c)
        elif kind == "copy":
            K.copy_strided(a, b, c, d, meta)
        elif kind == "fill":
            K.fill_strided(a, b, meta, c)
        elif kind == "elements":
            K.transpose_elements(a, b, c, d, meta)
        elif kind == "transpose":
            K.transpose_blocks(a, b, c, d, meta)
        else:
            K.copy_rows(a, b, c, d, meta)


def run_prepared(prep, plan: Plan, dst, src) -> None:
    """:func:`execute` for a prepared call: one copy (a kernel call, or numpy's memcpy for a single burst), and
    the destination plane marked unless known to be defined."""
    dview, dbase, sview, sbase, meta, smem, slo, shi, dmem, mark, seen = prep
    # (``seen``: the known-defined lists of the two memories in which the spans were last found; every change of
    # definedness replaces a memory's list, so while it is the same object the lookup would give the same answer)
    known = smem.known
    if known is not seen[0]:
        if OBSERVERS or (smem.tracked and not smem.known_defined(slo, shi)):
            return execute(plan, dst, src)
        seen[0] = known
    elif OBSERVERS:
        return execute(plan, dst, src)
    if dview is None:
        if meta is None or not crew.run_job(meta):  # (a job header from config.HOT_BYTES on)
            np.copyto(dbase, sview)
    elif dview is STEPS:
        if sview is not None:
            (sview[0] if callable(sview[0]) else getattr(K, sview[0]))(*sview[1])
        else:
            _run_steps(dbase)
    elif type(meta) is not tuple:
        K.copy_strided(dview, dbase, sview, sbase, meta)
    elif not crew.run_job(meta[1]):  # (no crew: this thread alone)
        for m in meta[0]:
            K.copy_strided(dview, dbase, sview, sbase, m)
    if dmem.tracked:
        if len(mark) == 2:  # a dense span: numpy's memset (or a lazy memory's range), then remembered as defined
            known = dmem.known
            if known is not seen[1]:
                if dmem.known_defined(mark[0], mark[1]):
                    seen[1] = known
                else:
                    dmem.mark_defined(mark[0], mark[1])
        else:  # marks of a copy with gaps: set every time
            mw, mmeta, mvalue = mark
            pview, pshift = dmem.view(mw, plane=True)
            K.fill_strided(pview, (dst.offset - pshift) // mw, mmeta, mvalue)


def run_raw(plan: Plan, dst: np.ndarray, dst_mod: int, src: np.ndarray, src_mod: int) -> bool:
    """Run a small plan over the bytes of two whole arrays (``to_nz`` / ``from_nz``): every byte of both defined
    (no planes), the two not sharing memory (the caller's guarantee), ``*_mod`` the host address residues the plan
    was made for. Its kernel steps are called on views of the arrays, without tensors or memories: True when done;
    False, nothing written, when the plan needs :func:`execute` (warnings, observers, layout kernels, threads)."""
    if OBSERVERS or plan.exact or plan.warnings or plan.effects or not plan.ksteps:
        return False
    for ks in plan.ksteps:
        if (ks.kind not in ("copy", "elements") and (ks.kind != "fill" or not ks.defined)) or len(ks.metas) != 1:
            return False
    w, r = plan.write, plan.read
    if w[0] < 0 or w[1] > dst.size or (r is not None and (r[0] < 0 or r[1] > src.size)):
        return False  # (execute raises the error)
    views = {}
    for ks in plan.ksteps:
        if ks.kind == "elements":  # (byte offsets: a small element transpose, e.g. to_nz with a narrow C0)
            K.transpose_elements(dst, ks.doffs[0], src, ks.soffs[0], ks.metas[0])
            continue
        u = ks.w
        dv = views.get(u)
        if dv is None:
            dv = views[u] = (_raw_view(dst, dst_mod, u), _raw_view(src, src_mod, u))
        (dview, dbase), (sview, sbase) = dv
        if ks.kind == "copy":
            K.copy_strided(dview, dbase, sview, sbase, ks.metas[0])
        else:
            K.fill_strided(dview, dbase, ks.metas[0], ks.value)
    return True


def _raw_view(data: np.ndarray, mod: int, w: int) -> tuple:
    """``(view, base)``: the bytes as ``uint{8w}`` units from the first ``w``-aligned byte, and the unit base of byte
    0 (as :meth:`fastcopy.memory.Memory.view` and the runner compute them for a tensor at offset 0)."""
    if w == 1:
        return data, 0
    shift = -mod % w
    n = (data.size - shift) // w
    return data[shift:shift + n * w].view(_UINT[w]), -shift // w


_UINT = {2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}


def _copy_shared(dview, dbase, sview, sbase, table, nbytes: int) -> None:
    """A copy step whose chunks (rows of ``table``) the threads share."""
    _share(crew.COPY, lambda m: K.copy_strided(dview, dbase, sview, sbase, m), table, dview, dbase, sview, sbase,
           nbytes=nbytes)


def execute(plan: Plan, dst, src) -> None:
    """Apply ``plan`` (built for these tensors' signatures) and emit its warnings."""
    check_in_memory(plan, dst, src)
    if OBSERVERS:
        for observer in OBSERVERS:
            observer(plan, dst, src)
    fast = plan.fast
    if fast is not None:  # the hot path of small calls: one copy, source defined, no aliasing
        dmem, smem = dst.memory, src.memory
        if not smem.shares(dmem) and (not smem.tracked or smem.known_defined(src.offset + plan.read[0],
                                                                             src.offset + plan.read[1])):
            w, meta, mark, views = fast
            if len(mark) == 3 and dmem.lazy:  # marks with gaps need the plane: made before any data is written
                dmem.materialize_plane()
            if views is not None and K.copy_in_numpy(plan.nbytes):  # (byte views: no typed view of the memories)
                npkernels.copy_bytes(dmem.data, dst.offset, smem.data, src.offset, views)
            else:
                dview, dshift = dmem.view(w)
                sview, sshift = smem.view(w)
                if meta.ndim == 1:
                    K.copy_strided(dview, (dst.offset - dshift) // w, sview, (src.offset - sshift) // w, meta)
                else:
                    _copy_shared(dview, (dst.offset - dshift) // w, sview, (src.offset - sshift) // w, meta,
                                 plan.nbytes)
            if dmem.tracked:
                lo, hi = dst.offset + plan.write[0], dst.offset + plan.write[1]
                if hi - lo >= config.KNOWN_BYTES and dmem.known_defined(lo, hi):
                    pass  # a repeated large call: its destination span is already all defined
                elif len(mark) == 2:  # a dense span: numpy's memset beats a kernel dispatch (lazy: a range)
                    # (a lookup costs more than setting a small span: noted from KNOWN_BYTES)
                    dmem.mark_defined(lo, hi, note=hi - lo >= config.KNOWN_BYTES)
                else:
                    mw, mmeta, mvalue = mark
                    pview, pshift = dmem.view(mw, plane=True)
                    K.fill_strided(pview, (dst.offset - pshift) // mw, mmeta, mvalue)
                    if plan.dense and hi - lo >= config.KNOWN_BYTES:
                        dmem.note_defined(lo, hi)
            return
    for msg in plan.warnings:
        warn(msg)
    if not plan.steps:
        return
    exact = plan.exact
    if src is not None and plan.read is not None and src.memory.shares(dst.memory):
        a0 = src.memory.host + src.offset + plan.read[0]
        a1 = src.memory.host + src.offset + plan.read[1]
        b0 = dst.memory.host + dst.offset + plan.write[0]
        b1 = dst.memory.host + dst.offset + plan.write[1]
        exact = exact or (a0 < b1 and b0 < a1)
    if exact:
        _run_exact(plan, dst, src)
    else:
        _run_fast(plan, dst, src)
    for eff in plan.effects:
        _apply(eff, dst, src)


def _apply(effect, dst, src) -> None:
    """A plan's side effect: bytes of the calling core's buffer become undefined (poison)."""
    core = dst.pipe if not dst.is_global else src.pipe
    mem = core.buffer(effect.phys)
    hi = min(effect.hi, mem.data.size)
    if effect.lo < hi:
        mem.data[effect.lo:hi] = mem.poison
        mem.mark_undefined(effect.lo, hi)


def _share(kind: int, fn, chunks, dview, dbase, sview, sbase, value=_ZERO, nt: int = 0, nbytes: int = 0) -> None:
    """Run ``fn(chunk)`` for every chunk: shared with the helper threads (:mod:`.crew`: the same kernel on the
    same arrays, chunk by chunk) when the numba kernels run and the crew is free, else one after another here."""
    if len(chunks) > 1 and config.THREADS > 1 and K.usable_crew():
        if crew.run(kind, dview, dbase, sview, sbase, _table(chunks), value, nt, nbytes):
            return
    for chunk in chunks:
        fn(chunk)


def _step_bytes(ks) -> int:
    n = ks.burst * ks.w * max(len(ks.doffs), 1)
    for lp in ks.loops:
        n *= lp[0]
    return n


def _table(chunks) -> np.ndarray:
    """The chunks as rows of one int64 array (kernel metas packed by the lowering already are)."""
    if isinstance(chunks, np.ndarray):
        return chunks
    first = chunks[0]
    if isinstance(first, np.ndarray):
        t = first.base
        if t is not None and t.ndim == 2 and t.shape[0] == len(chunks) and t.flags.c_contiguous:
            return t
        return np.stack(chunks)
    return _pieces_table(tuple(chunks))


@functools.lru_cache(maxsize=256)
def _pieces_table(pieces) -> np.ndarray:
    return np.array(pieces, np.int64)


def _run_fast(plan: Plan, dst, src) -> None:
    dmem = dst.memory
    # one pass over the source plane's read span decides whether its plane must travel with the data
    src_defined = src is None or plan.read is None or _span_defined(src, plan.read)
    lo, hi = dst.offset + plan.write[0], dst.offset + plan.write[1]
    # the destination span is known to be all defined already: defined writes leave its plane as it is
    already = src_defined and dmem.tracked and dmem.known_defined(lo, hi)
    # every written byte ends up defined and the writes tile the span: mark it once at the end
    mark_span = plan.dense and src_defined and dmem.tracked and not already
    if dmem.lazy and not mark_span and (not already or not plan.dense):  # plane bytes to write: the plane made
        dmem.materialize_plane()  # before any data is (a host that cannot hold it: nothing written)
    for ks in plan.ksteps:
        w = ks.w
        if ks.kind == "copy":
            _copy_step(ks, w, dst, src, src_defined, not mark_span and not already)
        elif ks.kind in LAYOUT_KINDS:
            _layout_step(ks, dst, src, src_defined, not mark_span and not already)
        elif ks.kind == "tailed":
            _tailed_step(ks, dst, src, src_defined, not mark_span and not already)
        elif ks.kind == "fill":
            dview, dshift = dmem.view(w)
            dbase = (dst.offset - dshift) // w
            if ks.defined:
                _fill(ks, dview, dbase, ks.value)
                if dmem.tracked and not mark_span and not already:
                    _fill(ks, dmem.view(w, plane=True)[0], dbase, _ONES[w])
            else:
                _fill(ks, dview, dbase, _poison(poison_byte(dst, src), w))
                dmem.materialize_plane()
                dmem.forget()
                _fill(ks, dmem.view(w, plane=True)[0], dbase, _ZERO)
        else:
            idx, val, dfd = _convert_writes(ks.step, dst, src)
            _scatter(dst, idx, val, dfd)
    if mark_span:
        if dmem.lazy or hi - lo < config.PARALLEL_BYTES:  # a range of a lazy memory, or numpy's memset
            dmem.mark_defined(lo, hi)
            return
        if hi - lo >= config.NT_BYTES:  # streaming stores: the plane is written once, not read first
            plane, ones = dmem.plane, _ones_page()
            _share(crew.FILL_DENSE, lambda p: K.fill_dense(plane, lo + p[0], p[1], ones), _fill_pieces(hi - lo),
                   plane, lo, ones, 0, nbytes=hi - lo)
        else:
            for mk in plan.span_mark:
                view, shift = dmem.view(mk.w, plane=True)
                _fill(mk, view, (dst.offset - shift) // mk.w, mk.value)
        dmem.note_defined(lo, hi)


_ONES_PAGE = []


def _ones_page() -> np.ndarray:
    """4096 bytes of 0x01 on a cache line (the source of streaming plane fills)."""
    if not _ONES_PAGE:
        buf = np.ones(4096 + 64, np.uint8)
        start = (-buf.ctypes.data) % 64
        _ONES_PAGE.append(buf[start:start + 4096])
    return _ONES_PAGE[0]


def _fill_pieces(n: int) -> list:
    """``(offset, length)`` pieces of an ``n``-byte fill for the threads (whole lines, the last takes the rest)."""
    k = config.THREADS * config.CHUNKS_PER_THREAD if config.THREADS > 1 else 1
    per = -(-n // k)
    size = -(-per // 64) * 64
    return [(o, min(size, n - o)) for o in range(0, n, size)]


def _fill(ks, view, base, value) -> None:
    metas = ks.metas
    if len(metas) == 1:
        K.fill_strided(view, base, metas[0], value)
    else:
        _share(crew.FILL, lambda m: K.fill_strided(view, base, m, value), metas, view, base, view, 0, value,
               nbytes=_step_bytes(ks))


def _copy(ks, dview, dbase, sview, sbase) -> None:
    metas = ks.metas
    if len(metas) == 1:
        K.copy_strided(dview, dbase, sview, sbase, metas[0])
    else:
        _share(crew.COPY, lambda m: K.copy_strided(dview, dbase, sview, sbase, m), metas, dview, dbase, sview, sbase,
               nbytes=_step_bytes(ks))


def _plane_mark(ks, dst) -> None:
    """Mark the bytes a copy step writes as defined (its folded destination pattern)."""
    dmem = dst.memory
    for mk in ks.mark:
        view, shift = dmem.view(mk.w, plane=True)
        if mk.kind == "tailed":  # (its meta sets every unit the step writes)
            K.copy_tailed(view, (dst.offset - shift) // mk.w, view, 0, mk.metas[0], mk.value)
        else:
            _fill(mk, view, (dst.offset - shift) // mk.w, mk.value)


def _copy_step(ks, w, dst, src, src_defined: bool, mark: bool = True) -> None:
    """Data, then the definedness plane: written bytes marked defined (source all defined) or the source's
    plane copied along."""
    dmem, smem = dst.memory, src.memory
    dview, dshift = dmem.view(w)
    sview, sshift = smem.view(w)
    dbase = (dst.offset - dshift) // w
    sbase = (src.offset - sshift) // w
    _copy(ks, dview, dbase, sview, sbase)
    if src_defined:
        if dmem.tracked and mark:
            _plane_mark(ks, dst)
        return
    sp = smem.view(w, plane=True)[0]
    if not dmem.tracked and K.all_set(sp, sbase, ks.metas[0], _ONES[w]):
        return
    dmem.materialize_plane()
    dmem.forget()
    _copy(ks, dmem.view(w, plane=True)[0], dbase, sp, sbase)


def _tailed_step(ks, dst, src, src_defined: bool, mark: bool) -> None:
    """Rows with a tail (``copy_tailed``): data, then the plane as in :func:`_copy_step` (the source's plane moved
    by the same kernel with a tail of 1: the tail is a documented fill)."""
    dmem, smem, w, meta = dst.memory, src.memory, ks.w, ks.metas[0]
    dview, dshift = dmem.view(w)
    sview, sshift = smem.view(w)
    dbase, sbase = (dst.offset - dshift) // w, (src.offset - sshift) // w
    K.copy_tailed(dview, dbase, sview, sbase, meta, ks.value)
    if src_defined:
        if dmem.tracked and mark:
            _plane_mark(ks, dst)
        return
    sp = smem.view(w, plane=True)[0]
    if not dmem.tracked and npkernels.tailed_all_set(sp, sbase, meta, _ONES[w]):
        return
    dmem.materialize_plane()
    dmem.forget()
    K.copy_tailed(dmem.view(w, plane=True)[0], dbase, sp, sbase, meta, _ONES[w])


def _layout_step(ks, dst, src, src_defined: bool, mark: bool) -> None:
    """A layout-kernel step (``transpose_blocks`` / ``copy_dense`` on byte views): data, then the plane as in
    :func:`_copy_step` (the source's plane moved by the same kernel when the source is not all defined)."""
    dmem, smem = dst.memory, src.memory
    dbase, sbase = dst.offset + ks.doffs[0], src.offset + ks.soffs[0]
    _layout(ks, dmem.data, dbase, smem.data, sbase)
    if src_defined:
        if dmem.tracked and mark:
            _plane_mark(ks, dst)
        return
    dplane = dmem.materialize_plane()
    dmem.forget()
    _layout(ks, dplane, dbase, smem.plane, sbase, nt=False)


#: the crew's job kind of each layout kernel step that is cut into metas (the dense one is cut into pieces)
_LAYOUT_JOBS = {"transpose": crew.TRANSPOSE, "elements": crew.ELEMENTS, "rows": crew.ROWS}


def _layout(ks, dview, dbase, sview, sbase, nt: bool = True) -> None:
    if ks.kind != "dense":
        kernel = (K.transpose_blocks if ks.kind == "transpose" else K.transpose_elements if ks.kind == "elements"
                  else K.copy_rows)
        metas = ks.metas if nt else tuple(abi.without_nt(m) for m in ks.metas)
        _share(_LAYOUT_JOBS[ks.kind], lambda m: kernel(dview, dbase, sview, sbase, m), metas, dview, dbase, sview,
               sbase, nbytes=written(ks.step))
    else:
        _share(crew.DENSE, lambda p: K.copy_dense(dview, dbase + p[0], sview, sbase + p[0], p[1], nt), ks.metas,
               dview, dbase, sview, sbase, nt=int(nt), nbytes=ks.burst)


def layout_job(plan: Plan, dst: np.ndarray, src: np.ndarray, dbase: int = 0, sbase: int = 0):
    """The threads' job of a plan that is one layout-kernel step cut into several chunks (a large ``to_nz`` /
    ``from_nz``) over the bytes of two whole arrays, for its repeats to run with :func:`crew.run_job` (no
    planning, checks or dispatch in Python: ~60 us of a 1.3 ms call): ``(header, table)``, the table to be kept
    with the header (the header holds its address, and the arrays'), or None (such a plan runs through
    :func:`execute`). The caller's guarantees, as for :func:`run_raw`: every byte of both defined, no shared
    memory, the arrays the plan was made for."""
    if (OBSERVERS or plan.exact or plan.warnings or plan.effects or len(plan.ksteps) != 1
            or plan.ksteps[0].kind not in _LAYOUT_JOBS or len(plan.ksteps[0].metas) < 2 or not K.usable_crew()):
        return None
    ks = plan.ksteps[0]
    table = _table(ks.metas)
    head = crew.job(_LAYOUT_JOBS[ks.kind], dst, dbase + ks.doffs[0], src, sbase + ks.soffs[0], table,
                    nbytes=written(ks.step))
    return None if head is None else (head, table)


def _span_defined(t, span) -> bool:
    """Whether every byte of ``t``'s bytes ``[lo, hi)`` is defined (one vectorised pass over the plane)."""
    mem = t.memory
    if not mem.tracked:
        return True
    lo, hi = t.offset + span[0], t.offset + span[1]
    if mem.known_defined(lo, hi):
        return True
    if mem.lazy:  # (its ranges are exact: some byte of a non-empty span is undefined)
        return hi <= lo
    plane = mem.plane
    a8, b8 = -(-lo // 8) * 8, hi // 8 * 8
    if b8 <= a8:
        ok = bool(plane[lo:hi].all())
    else:
        ok = bool(plane[lo:a8].all() and plane[b8:hi].all() and _all_ones(plane[a8:b8].view(np.uint64)))
    if ok:
        mem.note_defined(lo, hi)
    return ok


def _all_ones(words) -> bool:
    return K.all_set(words, 0, abi.contiguous(words.size), _ONES[8])


# --------------------------------------------------------------------------------------------- exact path
def _src_bytes(src, idx):
    mem = src.memory
    pos = src.offset + idx
    vals = mem.data[pos]
    dfd = np.ones(idx.size, bool) if not mem.tracked else mem.plane[pos].astype(bool)
    return vals, dfd


def _convert_writes(step: Convert, dst, src):
    es_s, es_d = step.src_dtype.itemsize, step.dst_dtype.itemsize
    sidx, didx = read_grid(step), write_grid(step)
    vals, dfd = _src_bytes(src, sidx)
    out = vals.view(step.src_dtype).astype(step.dst_dtype).view(np.uint8)
    dfd_el = dfd.reshape(-1, es_s).all(axis=1)
    return didx, out, np.repeat(dfd_el, es_d)


def _step_writes(step, dst, src):
    """``(dst byte offsets, values, defined)`` of one step, in program order, piece by piece."""
    limit = config.EXACT_CHUNK
    if isinstance(step, Move):
        for sidx, didx in zip(grid_pieces(step.src_offs, step.burst, step.loops, 1, limit),
                              grid_pieces(step.dst_offs, step.burst, step.loops, 2, limit)):
            vals, dfd = _src_bytes(src, sidx)
            yield didx, vals, dfd
    elif isinstance(step, Fill):
        for didx in grid_pieces(step.dst_offs, step.burst, step.loops, 1, limit):
            if step.pattern is None:
                yield didx, np.full(didx.size, poison_byte(dst, src), np.uint8), np.zeros(didx.size, bool)
                continue
            pat = np.frombuffer(step.pattern, np.uint8)
            within = np.tile(np.arange(step.burst) % pat.size, didx.size // step.burst if step.burst else 0)
            yield didx, pat[within], np.ones(didx.size, bool)
    else:
        yield _convert_writes(step, dst, src)


def _step_reads(step):
    if not isinstance(step, Fill):
        yield from grid_pieces(step.src_offs, src_burst(step), step.loops, 1, config.EXACT_CHUNK)


def _scatter(dst, idx, val, dfd) -> None:
    mem = dst.memory
    pos = dst.offset + idx
    plane = mem.materialize_plane() if mem.tracked or not dfd.all() else None  # (before the data: see _run_fast)
    mem.data[pos] = val
    if plane is not None:
        plane[pos] = dfd
        mem.forget()


def _run_exact(plan: Plan, dst, src) -> None:
    """Every write of the call resolved byte by byte (last write wins; a byte written with different values or
    definedness is undefined), gathered before anything is written (read-before-write). Works piece by piece
    over state arrays of the write span, so its memory is bounded whatever the call's size."""
    lo, hi = plan.write
    n = hi - lo
    key = np.zeros(n, np.int16)  # value * 2 + defined of the last write
    count = np.zeros(n, np.uint8)  # 0 unwritten, 1 once, 2 more than once
    conflict = np.zeros(n, bool)
    for step in plan.steps:
        for idx, v, d in _step_writes(step, dst, src):
            if not idx.size:
                continue
            rel = idx - lo
            order = np.argsort(rel, kind="stable")
            rel, k = rel[order], v[order].astype(np.int16) * 2 + d[order]
            first = np.ones(rel.size, bool)
            first[1:] = rel[1:] != rel[:-1]
            starts = np.flatnonzero(first)
            kmin, kmax = np.minimum.reduceat(k, starts), np.maximum.reduceat(k, starts)
            last = np.append(starts[1:], rel.size) - 1
            u = rel[starts]
            seen = count[u] > 0
            conflict[u] |= (kmin != kmax) | (seen & ((key[u] != kmin) | (key[u] != kmax)))
            count[u] = np.where(seen | (last > starts), 2, 1)
            key[u] = k[last]
    written = np.flatnonzero(count)
    if not written.size:  # zero-count loops: nothing is written
        return
    wkey = key[written]
    uval, udfd = (wkey >> 1).astype(np.uint8), (wkey & 1).astype(bool)
    bad = conflict[written]
    multi = int(np.count_nonzero(count[written] == 2))
    if multi:
        uval[bad] = poison_byte(dst, src)
        udfd[bad] = False
        warn(f"{plan.api}: writes overlap: {multi} destination bytes are written more than once in one "
             f"call, {int(bad.sum())} of them with different values; the hardware order is "
             "unspecified, so those are undefined")
    if src is not None and src.memory.shares(dst.memory):  # what the source held, before the scatter
        shift = src.memory.host + src.offset - (dst.memory.host + dst.offset + lo)
        hit = np.zeros(n, bool)
        for step in plan.steps:
            for sidx in _step_reads(step):
                rel = sidx + shift
                hit[rel[(rel >= 0) & (rel < n)]] = True
        shared = int(np.count_nonzero(hit & (count > 0)))
        if shared:
            warn(f"{plan.api}: source and destination share {shared} bytes; fastcopy reads the "
                 "whole source before writing, the hardware does not promise that")
    _scatter(dst, written + lo, uval, udfd)

"""The public Ascend C entry points. ``DataCopy`` dispatches on its third argument to the op's planner,
then executes the plan; every other op module registers itself here."""

from __future__ import annotations

import numbers

from .errors import FastCopyError
from .execute import execute

#: params type -> planner(dst, src, arg, *rest, **kwargs) -> Plan
_DATACOPY_PLANNERS: dict = {}


_DATACOPY_DIRECT: dict = {}


def register_datacopy(kind, planner, direct: bool = False) -> None:
    """Register the planner of a ``DataCopy`` form: ``kind`` is a params class, ``"count"`` or ``"slice"``.
    ``direct``: ``planner`` is the whole operation (validates and writes itself; compute forms out of L0C)."""
    if direct:
        _DATACOPY_DIRECT[kind] = planner
        return
    _DATACOPY_PLANNERS[kind] = planner
    if kind == "count":
        _DATACOPY_PLANNERS[int] = planner  # the common case, found without the ABC check


def _kind_of(arg):
    if isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        return "count"
    if isinstance(arg, (list, tuple)):
        return "slice"
    return type(arg)


def DataCopy(dst, src, arg, *rest, **kwargs) -> None:  # noqa: N802
    """``AscendC::DataCopy``: move data between global memory and a core's buffers, destination first.

    ``dst`` and ``src`` are a :class:`LocalTensor` (``TPipe.alloc(position, dtype, n)``, or a slice ``x[k:]``) or
    a :class:`GlobalTensor` (global memory over a numpy array; ``g[k]`` starts at element k). The *path* is the
    pair of physical buffers behind the two positions (VECIN/VECOUT/VECCALC are UB, A1/B1/TSCM are L1, ...);
    each form supports the paths and element types listed below per product. The form is chosen by the third
    argument:

    ``DataCopy(dst, src, count)``
        ``count`` elements as one burst of ``floor(count*sizeof(T) / 32)`` 32-byte blocks (64-byte units towards
        the BiasTable on Atlas A2/A3, 128-byte units towards the Fixpipe buffer). A count that is not a whole
        number of units is rounded down with a FastCopyWarning; what is left is not copied.
    ``DataCopy(dst, src, DataCopyParams(blockCount, blockLen, srcGap, dstGap))``
        ``blockCount`` bursts of ``blockLen`` units; source burst i starts at
        ``i*(blockLen*unit + srcGap*32)`` bytes, destination burst i at ``i*(blockLen*unit + dstGap*gap_unit)``
        (tail-to-head gaps; head-to-head towards the Fixpipe buffer). Bytes between bursts are untouched.
        Source and destination have the same dtype, except L1 -> BiasTable, which widens (table below).
    ``DataCopy(dst, src, Nd2NzParams(...), small_c0=False)``
        ND -> NZ fractal layout (GM -> L1 or UB, UB -> TSCM): source element ``(m, r, c)`` goes to destination
        element ``m*dstNzMatrixStride + r*dstNzNStride*C0 + (c // C0)*dstNzC0Stride*C0 + c % C0``,
        ``C0 = 32 / sizeof(T)``; the rest of a row's last C0 block is zeros. ``small_c0=True`` is Atlas 350's
        ``enableSmallC0`` (GM -> L1, ``dValue <= 4``). :func:`nd2nz_params` builds the usual layout.
    ``DataCopy(gm, ub, Nz2NdParamsFull(...))``
        NZ -> ND: destination element ``m*dstNdMatrixStride + r*dstDStride + c`` receives source element
        ``m*srcNdMatrixStride*256 + (c // 16)*srcNStride*16 + r*16 + c % 16`` (16-wide fractals for every
        dtype). :func:`nz2nd_params` builds the usual layout.
    ``DataCopy(dst, src, dstSliceInfo, srcSliceInfo, dimValue=1)``
        A strided sub-tensor (GM <-> UB): the k-th selected source element goes to the k-th selected destination
        element, dimension 0 innermost; each list holds ``dimValue`` :class:`SliceInfo` (or tuples / dicts of
        fields). Note the order: destination info first. :func:`slice_infos` builds them from numpy indexing.

    Rules every form follows: start addresses aligned (listed below); every field within its C++ type and its
    documented range on the product; every byte read and written inside its tensor and the buffer's capacity. A call that breaks a rule raises a :class:`FastCopyError` subclass naming the
    field, value, range, unit and product, and writes nothing. Bytes the hardware leaves undefined hold the
    core's poison byte and are marked in ``tensor.defined()``. Set up per-core state with
    :func:`SetLoopModePara` (Atlas 350). Full description: docs/semantics.md (cube forms: docs/cube-in.md,
    docs/cube-out.md).
    """
    direct = _DATACOPY_DIRECT.get(type(arg))
    if direct is not None:
        return direct(dst, src, arg, *rest, **kwargs)
    planner = _DATACOPY_PLANNERS.get(type(arg)) or _DATACOPY_PLANNERS.get(_kind_of(arg))
    if planner is None:
        forms = ", ".join(k if isinstance(k, str) else k.__name__ for k in _DATACOPY_PLANNERS)
        raise FastCopyError(f"DataCopy: no form takes a {type(arg).__name__} as third argument; forms: {forms}")
    plan = planner(dst, src, arg, *rest, **kwargs)
    execute(plan, dst, src)

"""Every public Ascend C entry point, and where each call starts.

An entry point picks its planner with a literal dispatch, gets an immutable plan (validated, spans checked; the
planners in :mod:`fastcopy.ops` never write memory), and hands it to :func:`fastcopy.dma.run.execute`, the only
code that writes memory. Per-core state (the pad register, loop mode) is written here, after a call succeeded.
See docs/architecture.md.
"""

from __future__ import annotations

import numbers

from . import config as _config
from .dma.run import OBSERVERS, execute, prepare, run_prepared, run_raw
from .errors import FastCopyError, UnsupportedError
from . import formats as _formats
from .formats import from_nz_call, to_nz_call
from .memory import GlobalTensor, LocalTensor, current_pipe
from .cube.fpconfig import CFG_ROW_MAJOR
from .lazy import LazyModule, loaded
from .ops import datacopy as _datacopy
from .ops import loopmode as _loopmode
from .ops import pad as _pad
from .ops.common import core_of
from .ops.loopmode import DataCopyMVType
from .ops.pad import PaddingMode
from .params import (DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, Nd2NzParams,
                     Nz2NdParamsFull, SliceInfo)

# The cube's modules load on a first cube call, not with `import fastcopy` (a DataCopy never needs them). A type
# test of a cube params class goes through `loaded()` where the module may not be imported yet (no instance of a
# class from a module nobody imported can exist), or through the module (`_cp.LoadData2DParams`) where the call is
# a cube call anyway.
# The ND<->NZ, slice and UB -> TSCM planners load on their first call too (a batch of basic copies never needs them).
_nz = LazyModule("fastcopy.ops.nz", globals(), "_nz")
_pad_tscm = LazyModule("fastcopy.ops.pad_tscm", globals(), "_pad_tscm")
_slice = LazyModule("fastcopy.ops.slice", globals(), "_slice")
_cp = LazyModule("fastcopy.cube.params", globals(), "_cp")
_b4 = LazyModule("fastcopy.cube.b4", globals(), "_b4")
_dn2nz = LazyModule("fastcopy.cube.dn2nz", globals(), "_dn2nz")
_enhanced = LazyModule("fastcopy.cube.enhanced", globals(), "_enhanced")
_fixpipe = LazyModule("fastcopy.cube.fixpipe", globals(), "_fixpipe")
_img2col = LazyModule("fastcopy.cube.img2col", globals(), "_img2col")
_load3d_v1 = LazyModule("fastcopy.cube.load3d_v1", globals(), "_load3d_v1")
_loaddata = LazyModule("fastcopy.cube.loaddata", globals(), "_loaddata")
_recall = LazyModule("fastcopy.cube.recall", globals(), "_recall")
_registers = LazyModule("fastcopy.cube.registers", globals(), "_registers")

_TENSORS = (GlobalTensor, LocalTensor)
_PAD_PARAMS = (DataCopyPadExtParams, DataCopyPadParams)
_COPY_PARAMS = (DataCopyExtParams, DataCopyParams)
_LOAD_FORMS: tuple = ()


def _datacopy_forms() -> tuple:
    """The params classes DataCopy takes as third argument (besides a count and a pair of SliceInfo lists)."""
    from .cube.outparams import DataCopyCO12DstParams

    return (DataCopyParams, Nd2NzParams, Nz2NdParamsFull, _cp.Dn2NzParams, DataCopyCO12DstParams)


def _loaddata_forms() -> tuple:
    """The params classes LoadData takes as third argument (2D, 2D V2, then the img2col forms)."""
    global _LOAD_FORMS
    if not _LOAD_FORMS:
        _LOAD_FORMS = (_cp.LoadData2DParams, _cp.LoadData2DParamsV2, _cp.LoadData3DParamsV2,
                       _cp.LoadData3DParamsV2Pro, _cp.LoadData3DParamsV1)
    return _LOAD_FORMS


def __getattr__(name: str):
    """``DATACOPY_FORMS`` and ``LOADDATA_FORMS``, made when first read (they name the cube's classes)."""
    if name == "DATACOPY_FORMS":
        return _datacopy_forms()
    if name == "LOADDATA_FORMS":
        return _loaddata_forms()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _remember(key, dst, src, plan) -> None:
    """Keep a planned call in the destination's cache: ``key`` (the parameters) -> (core state, its version,
    source, plan, prepared kernel arguments). :func:`DataCopy` reuses it while the source is the same tensor
    and the core's state version is unchanged (any write to the pad register, loop mode, ... bumps it): a hit
    skips planning and the aliasing test."""
    cache = dst._prepared
    if cache is None:
        cache = dst._prepared = {}
    elif len(cache) >= _config.PREPARED_CALLS:
        cache.clear()
    state = (src if dst.is_global else dst).pipe.state
    version = getattr(state, "version", None)
    if version is not None:  # (a state that does not count its writes cannot be trusted: no caching)
        cache[key] = [state, version, src, plan, False]  # prepared on the first repeat (new calls stay cheap)


def _hit(hit, dst, src) -> bool:
    if hit is not None and hit[2] is src and hit[0].version == hit[1]:
        if hit[4] is False:
            hit[4] = prepare(hit[3], dst, src)
        if hit[4] is not None:
            run_prepared(hit[4], hit[3], dst, src)
        else:
            execute(hit[3], dst, src)
        return True
    return False


def _slice_keys(infos):
    """The keys of a list of SliceInfo (None if any entry is another spelling: those take the full path)."""
    if type(infos) is not list and type(infos) is not tuple:
        return None
    keys = []
    for info in infos:
        if type(info) is not SliceInfo:
            return None
        keys.append(info.key())
    return tuple(keys)


def _prepared_key(kind, arg, rest):
    """The prepared-call key of a DataCopy form (its parameters as a hashable value, tagged by form), or None
    for calls that always take the full path (keyword arguments, other spellings, the compute forms)."""
    if kind is int or kind is DataCopyParams:
        return None if rest else arg if kind is int else arg.key()
    if kind is Nd2NzParams or kind is Nz2NdParamsFull:
        return None if rest else (kind, arg.key())
    if (kind is list or kind is tuple) and 1 <= len(rest) <= 2 and (len(rest) == 1 or type(rest[1]) is int):
        dkeys, skeys = _slice_keys(arg), _slice_keys(rest[0])
        if dkeys is not None and skeys is not None:
            return (SliceInfo, dkeys, skeys, rest[1] if len(rest) == 2 else 1)
    if not rest and kind is loaded("fastcopy.cube.params", "Dn2NzParams"):  # (a cube-in operand staged in L1)
        return (kind, arg.key())
    return None


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
    ``DataCopy(dst, src, Dn2NzParams(...))``
        DN2NZ (Atlas 350, GM -> A1/B1): ``dnNum`` matrices of ``dValue`` GM rows of ``nValue`` elements become the
        Nz image of the ``nValue x dValue`` matrix, with ND2NZ's destination strides. help(fastcopy.Dn2NzParams).
    ``DataCopy(dst, src, DataCopyCO12DstParams(...))``
        Out of L0C, with Fixpipe's conversions. help(fastcopy.DataCopyCO12DstParams).

    Rules every form follows: start addresses aligned (listed below); every field within its C++ type and its
    documented range on the product; every byte read and written inside its tensor and the buffer's capacity. A call that breaks a rule raises a :class:`FastCopyError` subclass naming the
    field, value, range, unit and product, and writes nothing. Bytes the hardware leaves undefined hold the
    core's poison byte and are marked in ``tensor.defined()``. Set up per-core state with
    :func:`SetLoopModePara` (Atlas 350). Full description: docs/semantics.md (cube forms: docs/cube-in.md,
    docs/cube-out.md).
    """
    global _DN2NZ
    kind = type(arg)
    if kind is _DN2NZ and not rest and not kwargs and _again(_DC, _DC_ALL, dst, src, arg, None):
        return  # (a DN2NZ repeat found by its memo: fastcopy.cube.recall)
    if not kwargs and type(dst) in _TENSORS:
        key = _prepared_key(kind, arg, rest)
        if key is not None:
            cache = dst._prepared
            if kind is _DN2NZ:  # (the memo missed: the remembered call of these values?)
                if _repeat(key, _DC, dst, src, arg, None):
                    return
            elif cache is not None:
                hit = cache.get(key)
                if hit is not None and _hit(hit, dst, src):
                    return
            if type(src) in _TENSORS:
                if kind is DataCopyParams:
                    plan = _datacopy.plan_data_copy(dst, src, arg, key)
                elif kind is int:
                    plan = _datacopy.plan_data_copy(dst, src, arg)
                elif kind is Nd2NzParams:
                    plan = _nz.plan_nd2nz(dst, src, arg)
                elif kind is Nz2NdParamsFull:
                    plan = _nz.plan_nz2nd(dst, src, arg)
                elif key[0] is SliceInfo:
                    plan = _slice.plan_slice_keys(dst, src, key[1], key[2], key[3])
                else:
                    _DN2NZ = kind
                    plan = _dn2nz.plan_dn2nz(dst, src, arg)
                    state = dst.pipe.state if type(dst) is LocalTensor else None
                    if plan.effects or getattr(state, "version", None) is None:
                        key = None  # (not remembered: see _remember)
                    _planned(key, _DC, dst, src, arg, None, plan, state, values=False)
                    return
                execute(plan, dst, src)
                if not plan.effects:  # (the 310P scratch is checked against the allocations on every call)
                    _remember(key, dst, src, plan)
                return
    if rest and type(rest[-1]) is loaded("fastcopy.cube.enhanced", "DataCopyEnhancedParams"):  # 310P L0C -> UB, a compute op like CO12
        return _enhanced.DataCopyEnhanced(dst, src, arg, *rest, **kwargs)
    if kind is int or kind is DataCopyParams or (isinstance(arg, numbers.Integral) and kind is not bool):
        plan = _datacopy.plan_data_copy(dst, src, arg, *rest, **kwargs)
    elif kind is Nd2NzParams:
        plan = _nz.plan_nd2nz(dst, src, arg, *rest, **kwargs)
    elif kind is Nz2NdParamsFull:
        plan = _nz.plan_nz2nd(dst, src, arg, *rest, **kwargs)
    elif isinstance(arg, (list, tuple)):
        plan = _slice.plan_slice(dst, src, arg, *rest, **kwargs)
    elif kind is loaded("fastcopy.cube.params", "Dn2NzParams"):
        plan = _dn2nz.plan_dn2nz(dst, src, arg, *rest, **kwargs)
    elif kind is loaded("fastcopy.cube.outparams", "DataCopyCO12DstParams"):  # L0C -> GM/L1 with conversion: a compute op, validates and writes itself
        return _fixpipe.DataCopyCO12(dst, src, arg, *rest, **kwargs)
    else:
        forms = "count, " + ", ".join(k.__name__ for k in _datacopy_forms()) + ", slice (SliceInfo lists)"
        raise FastCopyError(f"DataCopy: no form takes a {kind.__name__} as third argument; forms: {forms}")
    execute(plan, dst, src)


def LoadData(dst, src, params, config=None, **kwargs) -> None:  # noqa: N802
    """``AscendC::LoadData(dst, src, params)``: into the cube's operand buffers, destination first.

    ``LoadData2DParams``: L1 -> L0A/L0B, GM -> L0A/L0B/L1, ``repeatTimes`` fractals (512 bytes) from source
    fractal ``startIndex + i*srcStride`` to destination fractal ``i*(dstGap+1)``, each 16x16 fractal transposed
    with ``ifTranspose`` (2-byte types, L1 -> L0). ``LoadData2DParamsV2`` (Atlas 350): an ``mStep x kStep``
    fractal region of an Nz source, Nz out (or the Nz image of its transpose). ``LoadData3DParamsV2`` /
    ``LoadData3DParamsV2Pro``: img2col from the feature map in L1 through the FMATRIX / PADDING / repeat
    registers (``config=IsResetLoad3dConfig(...)``: which registers the call writes first);
    ``LoadData3DParamsV1`` (Atlas training / inference AI Core, experimental): the older img2col form.
    Full description: docs/cube-in.md.

    A repeat of a call (same tensors and parameters, the registers it reads unchanged) skips planning.
    """
    if config is None and not kwargs:
        # the quickest repeat of a 2D load, inline (a whole tile's bound kernel: ~30-60 ns of a ~1.4 us call less
        # than through _again, which does the same tests and the rest; keep the two alike; a 3D load with a
        # config object goes straight to _again: the tests here would only be repeated there). A memo is made only
        # by a LoadData on its destination; no cache, no memo or no tensor is a lookup error, which costs nothing
        # when none is raised (~15 ns less than testing the tensor's type and its cache first)
        try:
            m = dst._prepared[_LD]
        except (AttributeError, TypeError, KeyError):
            m = None
        if m is not None and m[0] is params and m[6]["_key"] is m[1] and m[4] is src and m[2] is None:
            e = m[5]
            f = e[5]
            if f and e[0].version == e[1] and f[2].known is f[3] and f[4].known is f[5] and not OBSERVERS:
                f[0](*f[1])
                return
    if not kwargs and _again(_LD, _LD_ALL, dst, src, params, config):
        return
    kind = type(params)
    cp = _cp
    if kind is cp.LoadData2DParams or kind is cp.LoadData2DParamsV2:
        if kwargs or config is not None:
            got = ", ".join((["config"] if config is not None else []) + list(kwargs))
            raise UnsupportedError(f"LoadData({kind.__name__}): takes no keyword arguments, got {got} (config= "
                                   "belongs to the 3D forms)")
        key = (kind, params.key())
        if not _repeat(key, _LD, dst, src, params, None):
            planner = _loaddata.plan_load2d if kind is cp.LoadData2DParams else _loaddata.plan_load2dv2
            _planned(key, _LD, dst, src, params, None, planner(dst, src, params), None)
    elif kind is cp.LoadData3DParamsV2 or kind is cp.LoadData3DParamsV2Pro or kind is cp.LoadData3DParamsV1:
        if kwargs:
            raise UnsupportedError(f"LoadData({kind.__name__}): unknown keyword arguments {', '.join(kwargs)}; "
                                   "takes config=IsResetLoad3dConfig(...)")
        if kind is cp.LoadData3DParamsV1:  # experimental, warns on every call: never on the prepared cache
            execute(_load3d_v1.plan_load3d_v1(dst, src, params, config=config), dst, src)
        else:
            _load3d(dst, src, params, config, False)
    else:
        forms = ", ".join(k.__name__ for k in _loaddata_forms())
        raise UnsupportedError(f"LoadData: no form takes a {kind.__name__} as third argument; forms: {forms}")


def LoadDataWithTranspose(dst, src, params) -> None:  # noqa: N802
    """``AscendC::LoadDataWithTranspose(dst, src, LoadData2dTransposeParams | LoadData2dTransposeParamsV2)``:
    ``repeatTimes`` squares (b8: two stacked fractals, b16: one, b32: two side by side) transposed, the
    output fractals of square ``i`` at ``i*(dstGap+1) + j*(dstFracGap+1)``. docs/cube-in.md."""
    if _again(_LDT, _LDT_ALL, dst, src, params, None):
        return
    kind = type(params)
    if kind is not _cp.LoadData2dTransposeParams and kind is not _cp.LoadData2dTransposeParamsV2:
        raise UnsupportedError(f"LoadDataWithTranspose: takes LoadData2dTransposeParams or "
                               f"LoadData2dTransposeParamsV2, got {kind.__name__}")
    key = (kind, params.key())
    if not _repeat(key, _LDT, dst, src, params, None):
        _planned(key, _LDT, dst, src, params, None, _loaddata.plan_transpose(dst, src, params), None)


def LoadDataWithStride(dst, src, params, config=None) -> None:  # noqa: N802
    """``AscendC::LoadDataWithStride(dst, src, LoadData3DParamsV2)`` (Atlas 350): img2col written with the
    destination pitch set by ``SetLoadDataRepeatWithStride``. docs/cube-in.md."""
    if _again(_LDS, _LDS_ALL, dst, src, params, config):
        return
    _load3d(dst, src, params, config, True)


def _load3d(dst, src, params, config, with_stride: bool) -> None:
    """A 3D load (img2col), remembered for its repeats with the registers it read. Its own register writes
    (``isSetFMatrix``, ``isSetPadding``, the Atlas 350 pitch) happen while planning; a repeat finds the registers
    holding what the call wrote and writes nothing (fastcopy.cube.recall)."""
    key = None
    api = _LDS if with_stride else _LD
    if type(params) in (_LOAD_FORMS or _loaddata_forms()) and (
            config is None or type(config) is _registers.IsResetLoad3dConfig):
        key = ("3d", type(params), params.key(), with_stride, None if config is None else config.key())
        if _repeat(key, api, dst, src, params, config):
            return
    plan = _img2col.plan_load3d(dst, src, params, config=config, with_stride=with_stride)
    _planned(key, api, dst, src, params, config, plan, dst.pipe.state if type(dst) is LocalTensor else None)


#: entry points of the cube-in loads (their memo slots in a destination's cache, see fastcopy.cube.recall), and
#: DataCopy's DN2NZ form (a cube-in operand staged in L1: remembered the same way)
_LD, _LDT, _LDS, _DC = "LoadData", "LoadDataWithTranspose", "LoadDataWithStride", "DataCopy"
#: ... and the slots of their recent memos by params object (a tile loop cycling through a few)
_LD_ALL, _LDT_ALL, _LDS_ALL, _DC_ALL = (f"{api} (by params object)" for api in (_LD, _LDT, _LDS, _DC))
_RECENT = {_LD: _LD_ALL, _LDT: _LDT_ALL, _LDS: _LDS_ALL, _DC: _DC_ALL}
#: the Dn2NzParams class, once a DN2NZ call planned (DataCopy tells its form without loading the cube's modules)
_DN2NZ = None


def _again(api: str, recent: str, dst, src, params, config) -> bool:
    """A repeat of a remembered cube-in load, found by the entry point's memo on this destination (its last call,
    else its recent calls by params object): run, True. The quickest repeat calls the bound kernel here
    (fastcopy.cube.recall: the memo, the known-list proof); anything else goes through ``recall.rerun``."""
    if type(dst) is not LocalTensor:
        return False
    cache = dst._prepared
    if cache is None:
        return False
    m = cache.get(api)
    if m is None or m[0] is not params or m[6]["_key"] is not m[1]:  # another params object: a recent one?
        m = cache.get(recent)
        m = None if m is None else m.get(id(params))
        if m is None or m[0] is not params or m[6]["_key"] is not m[1]:
            return False
    if m[4] is not src or not (config is m[2] or type(config) is m[3] and config._key is m[2]):
        return False
    e = m[5]
    if e[0].version != e[1] and not _recall.revalidate(e):
        return False
    f = e[5]
    if f and f[2].known is f[3] and f[4].known is f[5] and not OBSERVERS:
        f[0](*f[1])
    else:
        _recall.rerun(e, dst, src)
    return True


def _repeat(key, api: str, dst, src, params, config) -> bool:
    """A cube-in load not recognised by its entry point's memo (new parameter objects, or another call on this
    destination since): whether the remembered call of ``key`` on these tensors ran (then it is the memo)."""
    cache = dst._prepared if type(dst) in _TENSORS else None
    e = None if cache is None else cache.get(key)
    if e is None or not _recall.valid(e, src):
        return False
    _recall.run(e, dst, src)
    _recall.memo(api, _RECENT[api], dst, params, config, e)
    return True


def _planned(key, api: str, dst, src, params, config, plan, state, values: bool = True) -> None:
    """A cube-in load just planned: run it and remember it for its repeats (``key`` None: not kept); ``state``:
    the core's registers when the plan read some (``values=False``: a plan valid only while the state is not
    written at all, as DataCopy's DN2NZ). A 4-bit transpose moves nibbles (a NibblePlan runs itself)."""
    if type(plan) is _b4.NibblePlan:
        plan.run(dst, src)
    else:
        execute(plan, dst, src)
    if key is not None and type(dst) in _TENSORS:
        _recall.memo(api, _RECENT[api], dst, params, config, _recall.remember(key, dst, src, plan, state, values))


def DataCopyPad(dst, src, copyParams, *args, mode=PaddingMode.Normal, workspace=None):  # noqa: N802, N803
    """``AscendC::DataCopyPad``: copies of rows whose length is any whole number of elements, destination first.

    ``DataCopyPad(local, gm, copyParams, padParams, mode=PaddingMode.Normal)``  (GM -> UB, or L1 on Atlas 350)
        ``blockCount`` bursts of ``blockLen`` bytes; source burst i starts ``i*(blockLen + srcStride)`` bytes
        into GM. Each burst lands in a 32-byte-aligned row of ``P = AU(left + blockLen + right, 32)`` bytes:
        ``leftPadding`` fill elements, the data, ``rightPadding`` fill elements, then dummy fill up to the next
        32 bytes; rows are ``P + dstStride*32`` bytes apart. The fill is ``paddingValue`` when ``isPad``
        (which also sets the core's pad register), else the pad register (:func:`SetPadValue`), else, where the
        documented table says so, the burst's first element; fills with no documented value are undefined
        (poison, ``defined()`` False, with a FastCopyWarning). ``mode=PaddingMode.Compact`` (Atlas 350) packs
        the bursts back to back and pads only the tail to 32 bytes.
    ``DataCopyPad(gm, local, copyParams, mode=PaddingMode.Normal)``  (UB -> GM)
        Burst i is read from ``i*(AU(blockLen, 32) + srcStride*32)`` bytes into UB and written to
        ``i*(blockLen + dstStride)`` bytes into GM; the dummy bytes after each UB row never reach GM.
    ``DataCopyPad(l1, ub, copyParams, nd2nzParams, workspace=None)``  (UB -> TSCM)
        The UB -> GM copy above into a GM workspace, then ND2NZ (:func:`DataCopy` with Nd2NzParams,
        ``ndNum = 1``) from the workspace into L1. Returns the workspace GlobalTensor (``workspace=`` to pass
        your own).

    ``copyParams``: :class:`DataCopyExtParams` (32-bit fields) or the legacy :class:`DataCopyParams` (16-bit;
    ``blockLen`` in bytes). ``padParams``: :class:`DataCopyPadExtParams` with the first, :class:`DataCopyPadParams`
    with the second. GM-side strides are in bytes, UB/L1-side strides in 32-byte blocks. ``blockLen`` must be a
    multiple of sizeof(T); each padding at most 32 bytes; 8-byte types pad with 0 only. ``mode`` may also be
    passed positionally; ``PaddingMode.Normal`` is accepted on every product. Fill tables per product:
    docs/semantics.md ("DataCopyPad").
    """
    key = None
    if type(copyParams) in _COPY_PARAMS and workspace is None and type(mode) is PaddingMode:  # prepared calls
        if type(dst) is LocalTensor and type(src) is GlobalTensor and len(args) == 1 and type(args[0]) in _PAD_PARAMS:
            key = ("pad", type(copyParams), copyParams.key(), type(args[0]), args[0].key(), mode)  # GM -> local
        elif type(dst) is GlobalTensor and type(src) is LocalTensor and not args:
            key = ("pad out", type(copyParams), copyParams.key(), mode)  # local -> GM
        if key is not None:
            cache = dst._prepared
            if cache is not None:
                hit = cache.get(key)
                if hit is not None and _hit(hit, dst, src):
                    return None
    api = _pad.API
    if key is not None and args:  # (GM -> local with its padParams and a PaddingMode: parsed and keyed already)
        pad, nd = args[0], None
    else:
        pad, nd, mode = _pad.parse_extra(args, mode)
    pipe = core_of(api, dst, src)
    if nd is not None or (not dst.is_global and not src.is_global):
        if pad is not None:
            raise UnsupportedError(f"{api}: the local -> local (UB -> TSCM) form takes Nd2NzParams, not "
                                   f"{type(pad).__name__}")
        plans, ws = _pad_tscm.plan_pad_tscm(dst, src, copyParams, nd, mode, workspace)
        for plan, (d, s) in zip(plans, ((ws, src), (ws, src), (dst, ws))):  # src: the core (poison byte)
            execute(plan, d, s)
        pipe.state["pad_workspace"] = ws
        return ws
    if workspace is not None:
        raise UnsupportedError(f"{api}: workspace= belongs to the UB -> TSCM form (with Nd2NzParams)")
    if dst.is_global:
        if pad is not None:
            raise UnsupportedError(f"{api}: the local -> GM form takes no {type(pad).__name__} (padding exists "
                                   "only on the way in)")
        plan = _pad.plan_pad_out(dst, src, copyParams, mode)
        execute(plan, dst, src)
        if key is not None:
            _remember(key, dst, src, plan)
        return None
    if pad is None:
        raise UnsupportedError(f"{api}: the GM -> local form needs padParams (DataCopyPadExtParams or "
                               "DataCopyPadParams), as in DataCopyPad(dst, src, copyParams, padParams)")
    if key is None:
        plan, padreg_after = _pad.plan_pad_in(dst, src, copyParams, pad, mode, pipe)
    else:  # (the keys taken for the repeat cache: not taken again)
        plan, padreg_after = _pad.plan_pad_in_keys(dst, src, key[1].__name__, key[2], key[3].__name__, key[4], mode,
                                                   pipe)
    execute(plan, dst, src)
    if padreg_after is not None and pipe.state.get(_pad.PADREG) != padreg_after:
        pipe.state[_pad.PADREG] = padreg_after
    if key is not None:
        _remember(key, dst, src, plan)
    return None


def SetPadValue(value, pipe=None, dtype=None) -> None:  # noqa: N802
    """``SetPadValue<T>(value)``: set the pad register of a core (default: the current core), semantics.md §4.3.

    A numpy scalar (or ``dtype=``) fixes ``T``: the register keeps that exact bit pattern and width (§11.12). A
    plain Python number is kept as a number and converted, exactly, to the element type of each copy that reads
    the register (an error there if that type cannot hold it)."""
    pipe = pipe or current_pipe()
    pipe.state[_pad.PADREG] = _pad.pad_register(value, pipe.product, dtype)


def SetLoopModePara(params, type: DataCopyMVType, pipe=None) -> None:  # noqa: N802, A002
    """Set loop mode for one direction on a core (default: the current core). Atlas 350 only."""
    pipe = pipe or current_pipe()
    mv, key = _loopmode.check_loop_mode(params, type, pipe.product)
    pipe.state["loop_mode"] = {**pipe.state.get("loop_mode", {}), mv: key}


def ResetLoopModePara(type: DataCopyMVType | None = None, pipe=None) -> None:  # noqa: N802, A002
    """Back to single moves, for one direction or (``type=None``) both."""
    pipe = pipe or current_pipe()
    modes = dict(pipe.state.get("loop_mode", {}))
    if type is None:
        modes.clear()
    else:
        modes.pop(DataCopyMVType(type), None)
    pipe.state["loop_mode"] = modes


def to_nz(array, c0=None, out=None):
    """FRACTAL_NZ of a ``(..., rows, cols)`` array of any dtype: shape ``(..., ceil(cols/C0), ceil(rows/16), 16,
    C0)``, ``nz[..., c // C0, r // 16, r % 16, c % C0] = a[..., r, c]``, pads 0. ``C0 = 32 // itemsize`` unless
    ``c0=`` is given. ``out=``: a C-contiguous array of that shape and dtype to write into. Exactly inverted by
    :func:`from_nz`.

    This is the layout of ND2NZ with ``dstNzNStride = 1, dstNzC0Stride = AU(rows, 16)`` (:func:`nd2nz_params`).
    The hardware NZ2ND reads 16-element fractal columns for every dtype (semantics.md §6.1), so for 4-byte types it
    is not the inverse of ND2NZ: the NZ2ND source of a float matrix is ``to_nz(a, c0=16)``, not ``to_nz(a)``.
    """
    key = None if out is None else _formats.repeat_key("to_nz", array, out, None, c0)
    if key is not None and _formats.run_repeat(key):  # (the same large call again: its job, at once)
        return out
    out, plan, dst, src = to_nz_call(array, c0, out, small_numpy=not OBSERVERS)  # (observers see plans)
    if plan is not None and not run_raw(plan, dst.data, dst.mod, src.data, src.mod):
        execute(plan, dst, src)
        if key is not None:
            _formats.remember_job(key, plan, dst, src)
    return out


def from_nz(array, shape, c0=None, out=None):
    """The ``(..., rows, cols)`` array of ``shape`` back from its FRACTAL_NZ form (any array holding exactly
    ``prod(nz_shape(shape, dtype, c0))`` elements, e.g. the result of :func:`to_nz` with the same ``c0``).
    Pads are not read. Inverse of :func:`to_nz` for every dtype, shape and ``c0``. ``out=``: a C-contiguous
    array of ``shape`` and the dtype to write into.

    Hardware NZ2ND (``DataCopy(gm, ub, Nz2NdParamsFull)``) reads 16-element fractal columns for every dtype,
    so for 4-byte types it is ``from_nz(nz, shape, c0=16)``, not the inverse of the default ND2NZ layout.
    """
    key = None if out is None else _formats.repeat_key("from_nz", array, out, shape, c0)
    if key is not None and _formats.run_repeat(key):  # (the same large call again: its job, at once)
        return out
    out, plan, dst, src = from_nz_call(array, shape, c0, out, small_numpy=not OBSERVERS)
    if plan is not None and not run_raw(plan, dst.data, dst.mod, src.data, src.mod):
        execute(plan, dst, src)
        if key is not None:
            _formats.remember_job(key, plan, dst, src)
    return out


def Fixpipe(dst, src, *args, config=CFG_ROW_MAJOR, dst1=None) -> None:  # noqa: N802
    """``AscendC::Fixpipe<T, U, config>(dst, src, [cbufWorkspace,] params)``: L0C -> GM / L1 / UB with NZ2ND /
    NZ2NZ / NZ2DN, quantisation and ReLU (:func:`fastcopy.cube.fixpipe.Fixpipe`). ``config``: ``CFG_ROW_MAJOR``
    (default), ``CFG_NZ``, ``CFG_COLUMN_MAJOR`` or a ``FixpipeConfig``; ``dst1``: vector core 1's UB tensor for an
    Atlas 350 dual destination. A repeat of a pure copy (NoQuant, no ReLU) with the same parameters, the same
    source and an unchanged core state reuses its prepared plan."""
    key = None
    if len(args) == 1 and dst1 is None and type(dst) in _TENSORS and type(src) is LocalTensor:
        key = _fixpipe.call_key(args[0], config)
        if key is not None:
            cache = dst._prepared
            if cache is not None and _hit(cache.get(key), dst, src):
                return
    plan = _fixpipe.Fixpipe(dst, src, *args, config=config, dst1=dst1)
    if key is not None and plan is not None:
        _remember(key, dst, src, plan)


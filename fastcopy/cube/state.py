"""Per-core state of the cube's compute and output side, kept on the TPipe (``pipe.state``), and its setters.

=====================  ==========================================  ==================================
state                  written by                                  initial value
=====================  ==========================================  ==================================
HF32 mode / rounding   SetHF32Mode, SetHF32TransMode               disabled, nearest-even
CTRL48 (overflow)      AscendCUtils.SetOverflow                    1 (INF_NAN) on A2/A3/350; 0 fixed elsewhere
QUANT_PRE              SetFixpipePreQuantFlag, Fixpipe scalar      unset (reading it is an error)
ND_PARA / LOOP3        SetFixpipeNz2ndFlag, Fixpipe ND / DN        unset
FPC                    SetFixPipeConfig, Fixpipe vector modes      unset
CLIP_RELU, ELTWISE     SetFixPipeClipRelu, SetFixPipeAddr (310B)   unset
=====================  ==========================================  ==================================
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from ..errors import ParamError, RangeError, UnsupportedError
from ..memory import current_pipe
from ..products import Phys, Product

P = Product
HF32_PRODUCTS = frozenset({P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_200I_500_A2, P.ATLAS_350})
CTRL48_SETTABLE = frozenset({P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_350})
#: HF32 stored mantissa bits per product (11 on A2/A3/310B, 10 on Atlas 350)
HF32_BITS = {P.ATLAS_A2: 11, P.ATLAS_A3: 11, P.ATLAS_200I_500_A2: 11, P.ATLAS_350: 10}

HF32 = "cube.hf32"
HF32_TRANS = "cube.hf32_trans"
CTRL48 = "cube.ctrl48"
QUANT_PRE = "cube.quant_pre"
ND_PARA = "cube.nd_para"  # (ndNum, srcNdStride, dstNdStride) as stored (unit per product)
FPC = "cube.fpc"  # (quant_pre_addr in 128 B, relu_pre_addr in 64 B)
CLIP_RELU = "cube.clip_relu"
ELTWISE = "cube.eltwise"


class HF32Mode(enum.Enum):
    DISABLE = 0
    ENABLE = 1


class HF32TransMode(enum.Enum):
    NEAREST_EVEN = 0
    NEAREST_ZERO = 1  # ties away from zero


def _pipe(api, pipe, products=None):
    pipe = pipe if pipe is not None else current_pipe()
    if products is not None and pipe.product not in products:
        have = ", ".join(sorted(str(p) for p in products))
        raise UnsupportedError(f"{api}: not available on {pipe.product} (available on {have})")
    return pipe


def SetHF32Mode(mode, pipe=None) -> None:  # noqa: N802
    """HF32 for float x float Mmad: every input is first rounded to 11 (A2/A3/310B) or 10 (350) mantissa bits."""
    pipe = _pipe("SetHF32Mode", pipe, HF32_PRODUCTS)
    pipe.state[HF32] = HF32Mode(int(mode.value if isinstance(mode, HF32Mode) else bool(mode))) is HF32Mode.ENABLE


def SetHF32TransMode(mode, pipe=None) -> None:  # noqa: N802
    """HF32 rounding: NEAREST_EVEN (false, default) or NEAREST_ZERO (true: ties away from zero)."""
    pipe = _pipe("SetHF32TransMode", pipe, HF32_PRODUCTS)
    m = HF32TransMode(int(mode.value if isinstance(mode, HF32TransMode) else bool(mode)))
    pipe.state[HF32_TRANS] = m is HF32TransMode.NEAREST_EVEN


def hf32_state(pipe) -> tuple:
    """``(enabled, nearest_even, mantissa bits)``."""
    return pipe.state.get(HF32, False), pipe.state.get(HF32_TRANS, True), HF32_BITS.get(pipe.product, 11)


def SetOverflow(v, pipe=None) -> None:  # noqa: N802
    """``AscendCUtils::SetOverflow``: CTRL48 = (v == 1): 1 = INF_NAN mode, 0 = saturation (A2/A3/350 only;
    the other products always saturate)."""
    pipe = _pipe("SetOverflow", pipe)
    v = operator.index(v)
    if pipe.product not in CTRL48_SETTABLE:
        if v == 1:
            raise UnsupportedError(f"SetOverflow: v=1 (INF_NAN mode) is not available on {pipe.product}, "
                                   "which always saturates")
        return
    pipe.state[CTRL48] = v == 1


class AscendCUtils:
    """``AscendC::AscendCUtils`` (the overflow-mode setter)."""

    SetOverflow = staticmethod(SetOverflow)


def ctrl48(pipe) -> bool:
    return pipe.state.get(CTRL48, pipe.product in CTRL48_SETTABLE)


def SetFixpipePreQuantFlag(config, pipe=None) -> None:  # noqa: N802
    """QUANT_PRE = config: the scale word DataCopy's scalar quantisation modes use."""
    pipe = _pipe("SetFixpipePreQuantFlag", pipe, HF32_PRODUCTS)
    config = operator.index(config)
    if not 0 <= config < 2**64:
        raise RangeError(f"SetFixpipePreQuantFlag: config={config} does not fit uint64_t [0, 2^64-1]")
    pipe.state[QUANT_PRE] = config


def SetFixpipeNz2ndFlag(ndNum, srcNdStride, dstNdStride, pipe=None) -> None:  # noqa: N802, N803
    """ND_PARA (A2/A3) / LOOP3 (310B, 350): the NZ2ND multi-matrix parameters DataCopy with ``nz2ndEn`` uses.
    ``srcNdStride`` is in 1024 B on A2/A3, in 16 elements of the L0C type on 310B and Atlas 350."""
    pipe = _pipe("SetFixpipeNz2ndFlag", pipe, HF32_PRODUCTS)
    dst_max = 2**32 - 1 if pipe.product is P.ATLAS_350 else 2**16 - 1
    vals = []
    for name, v, hi in (("ndNum", ndNum, 2**16 - 1), ("srcNdStride", srcNdStride, 2**16 - 1),
                        ("dstNdStride", dstNdStride, dst_max)):
        v = operator.index(v)
        if not 0 <= v <= hi:
            raise RangeError(f"SetFixpipeNz2ndFlag: {name}={v} is outside [0, {hi}] on {pipe.product}")
        vals.append(v)
    pipe.state[ND_PARA] = tuple(vals)


def SetFixPipeConfig(*args, isUnitFlag: bool = False, pipe=None) -> None:  # noqa: N802, N803
    """FPC: ``SetFixPipeConfig(reluPre, quantPre)`` or ``SetFixPipeConfig(preData)``: the Fixpipe-buffer tensors
    (C2PIPE2GM) holding the per-column ReLU and quantisation tables DataCopy's vector modes read."""
    tensors = [a for a in args if not isinstance(a, bool)]
    if not 1 <= len(tensors) <= 2:
        raise ParamError("SetFixPipeConfig: pass (reluPre, quantPre) or (preData) LocalTensors")
    pipe = _pipe("SetFixPipeConfig", pipe if pipe is not None else getattr(tensors[0], "pipe", None),
                 HF32_PRODUCTS)
    for t in tensors:
        if t.memory.phys is not Phys.FB:
            raise UnsupportedError(f"SetFixPipeConfig: the tensor is in {t.memory.phys}; the tables live in the "
                                   "Fixpipe buffer (TPosition.C2PIPE2GM)")
    quant = tensors[-1]
    if quant.offset % 128:
        from ..errors import AlignmentError

        raise AlignmentError(f"SetFixPipeConfig: quantPre tensor at byte {quant.offset} of the Fixpipe buffer is not "
                             "128-byte aligned (the FPC field counts 128 B units)")
    pipe.state[FPC] = quant
    if isUnitFlag:
        pipe.state.pop("cube.unit_flags", None)


def SetFixPipeClipRelu(config, pipe=None) -> None:  # noqa: N802
    """310B: CLIP_RELU = config; bits 15:0 are the half clip value ``DataCopy`` with ``clipReluPre = 1`` applies
    (it must be positive and finite there; the other bits are ignored)."""
    pipe = _pipe("SetFixPipeClipRelu", pipe, {P.ATLAS_200I_500_A2})
    config = operator.index(config)
    if not 0 <= config < 2**64:
        raise RangeError(f"SetFixPipeClipRelu: config={config} does not fit uint64_t [0, 2^64-1]")
    pipe.state[CLIP_RELU] = config


def SetFixPipeAddr(eleWiseData, c0ChStride, pipe=None) -> None:  # noqa: N802, N803
    """310B: the half tensor in L1 that DataCopy's element-wise add/sub (``eltWiseOp`` 1/2) reads: element
    ``(i, j)`` at ``(j // 16) * c0ChStride * 16 + i * 16 + j % 16`` halves (``c0ChStride`` counts 32-byte rows
    between its 16-column blocks)."""
    api = "SetFixPipeAddr"
    pipe = _pipe(api, pipe if pipe is not None else getattr(eleWiseData, "pipe", None), {P.ATLAS_200I_500_A2})
    if eleWiseData.is_global or eleWiseData.memory.phys is not Phys.L1:
        raise UnsupportedError(f"{api}: eleWiseData is in {'GM' if eleWiseData.is_global else eleWiseData.memory.phys}"
                               f"; it must be a LocalTensor in L1 (C1) on {pipe.product}")
    if eleWiseData.dtype != np.float16:
        raise UnsupportedError(f"{api}: eleWiseData has dtype {eleWiseData.dtype}; the element-wise operand is half "
                               f"on {pipe.product}")
    c0 = operator.index(c0ChStride)
    if not 0 <= c0 <= 2**16 - 1:
        raise RangeError(f"{api}: c0ChStride={c0} is outside [0, 65535] (32-byte rows) on {pipe.product}")
    pipe.state[ELTWISE] = (eleWiseData, c0)


def SetMMRowMajor(pipe=None) -> None:  # noqa: N802
    """Compute order only: no effect on data."""


def SetMMColumnMajor(pipe=None) -> None:  # noqa: N802
    """Compute order only: no effect on data."""


UNIT_FLAGS = "cube.unit_flags"  # {512-byte L0C block: flag}; absent = 0
UNIT_BLOCK = 512


def unit_flag_check(api: str, pipe, lo: int, hi: int, unit_flag: int, producer: bool):
    """Raise if a call with ``unitFlag`` 2/3 over L0C bytes ``[lo, hi)`` would wait forever in program order;
    return the state update to apply once the call has run (or None). Mmad (producer) waits for flag 0 and sets 1
    with unitFlag 3; Fixpipe / DataCopy wait for flag 1 and clear it with unitFlag 3."""
    if unit_flag not in (2, 3) or hi <= lo:
        return None
    flags = pipe.state.get(UNIT_FLAGS, {})
    blocks = range(lo // UNIT_BLOCK, -(-hi // UNIT_BLOCK))
    want = 0 if producer else 1
    stuck = [b for b in blocks if flags.get(b, 0) != want]
    if stuck:
        b = stuck[0]
        who = ("a Fixpipe/DataCopy with unitFlag=3 to release it" if producer
               else "an Mmad with unitFlag=3 to fill it")
        raise ParamError(f"{api}: unitFlag={unit_flag} waits for L0C block {b} (bytes [{b * UNIT_BLOCK}, "
                         f"{(b + 1) * UNIT_BLOCK})) to have flag {want}, but it is {1 - want} and nothing before "
                         f"in program order can change it ({who}): the kernel would hang on {pipe.product}")
    if unit_flag == 3:
        return blocks, 1 - want
    return None


def unit_flag_apply(pipe, update) -> None:
    if update is None:
        return
    blocks, value = update
    flags = pipe.state.setdefault(UNIT_FLAGS, {})
    for b in blocks:
        flags[b] = value


MMAD_TILES = "cube.mmad_tiles"  # L0C byte offset of a tile -> (m, n, element size) of the Mmad that wrote it


def note_tile(pipe, offset: int, m: int, n: int, es: int) -> None:
    """Remember the real extent of the tile an Mmad wrote (to warn when its padding is exported)."""
    pipe.state.setdefault(MMAD_TILES, {})[offset] = (m, n, es)


def padding_warning(api: str, pipe, offset: int, m_size: int, n_size: int, es: int) -> list:
    """A warning when a read of ``m_size x n_size`` from an Mmad tile's start goes past its ``m`` rows or ``n``
    columns (padding: defined values computed from operand padding, not meaningful)."""
    tile = pipe.state.get(MMAD_TILES, {}).get(offset)
    if tile is None or tile[2] != es or (m_size <= tile[0] and n_size <= tile[1]):
        return []
    return [f"{api}: mSize={m_size}, nSize={n_size} exports padding of the Mmad tile at L0C byte {offset} "
            f"(m={tile[0]}, n={tile[1]}): those rows/columns come from operand padding"]

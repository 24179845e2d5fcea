"""Parameter structs of the cube's compute and output side: Mmad, Fixpipe, DataCopy out of L0C.

Declared with the one struct mechanism of :mod:`fastcopy.params` (C++ names, types, defaults, positional order of
the first C++ constructor). Fields typed ``"T"`` (the quantisation mode, the scale word, nested structs) are
checked by the ops. Ranges that depend on the product and layout are checked by the ops too.
"""

from __future__ import annotations

from ..params import Field, ParamStruct


class MmadParams(ParamStruct):
    """One Mmad call: ``C[m x n] = A[m x k] x B[k x n] + C0``. Constructor order ``{m, n, k, isBias, fmOffset,
    enSsparse, enWinogradA, enWinogradB}``; the other C++ constructor ``{m, n, k, unitFlag, cmatrixSource,
    cmatrixInitVal}`` is spelled with keywords here. ``cmatrixInitVal`` defaults to true (C starts at 0)."""

    FIELDS = (
        Field("m", "uint16", 0, unit="rows", range="[0, 4095]; 0 = no-op"),
        Field("n", "uint16", 0, unit="columns", range="[0, 4095]; 0 = no-op"),
        Field("k", "uint16", 0, unit="elements", range="[0, 4095]; 0 = no-op; even for int4b_t"),
        Field("isBias", "bool", False, doc="deprecated: true = accumulate onto L0C"),
        Field("fmOffset", "int32", 0, doc="legacy, no effect"),
        Field("enSsparse", "bool", False, doc="legacy, no effect"),
        Field("enWinogradA", "bool", False, doc="legacy, no effect"),
        Field("enWinogradB", "bool", False, doc="legacy, no effect"),
        Field("unitFlag", "uint8", 0, range="{0, 2, 3}"),
        Field("kDirectionAlign", "bool", False, doc="float A on A2/A3: L0A K stride rounded to 16"),
        Field("cmatrixSource", "bool", False, doc="true: initial C from the BiasTable"),
        Field("cmatrixInitVal", "bool", True, doc="true: initial C is 0"),
        Field("disableGemv", "bool", False, doc="Atlas 350: no GEMV mode when m == 1"),
    )


_COMMON = (
    Field("nSize", "uint16", 0, unit="columns", range="[0, 4095]; 0 = no-op"),
    Field("mSize", "uint16", 0, unit="rows", range="[0, 65535] (ND on V220: [0, 8192]); 0 = no-op"),
    Field("srcStride", "uint16", 0, unit="16 elements of the L0C type", doc="between source Z columns"),
    Field("dstStride", "uint32", 0, unit="NZ: 32 B (V220) or elements (Arch3510); ND: elements per row",
          range="!= 0"),
)


class FixpipeParamsV220(ParamStruct):
    """Fixpipe on Atlas A2/A3 (also Atlas 350; ``FixpipeParamsM300`` on 310B). Constructor order
    ``{nSize, mSize, srcStride, dstStride, reluEn, quantPre, deqScalar, ndNum, srcNdStride, dstNdStride,
    unitFlag, isChannelSplit}`` (the short constructor ends at ``reluEn``)."""

    FIELDS = _COMMON + (
        Field("reluEn", "bool", False),
        Field("quantPre", "T", "NoQuant", doc="a QuantMode_t"),
        Field("deqScalar", "T", None, doc="QUANT_PRE word (uint64; int64 accepted); no default"),
        Field("ndNum", "uint16", 1, range="[0, 65535]; 0 = no-op"),
        Field("srcNdStride", "uint16", 0, unit="A2/A3/310B: 1024 B; Atlas 350: 16 elements"),
        Field("dstNdStride", "uint16", 0, unit="elements"),
        Field("unitFlag", "uint8", 0, range="{0, 2, 3}"),
        Field("isChannelSplit", "bool", False, aliases=("channelSplit",)),
    )


class FixpipeParamsM300(FixpipeParamsV220):
    """The 310B name of :class:`FixpipeParamsV220` (same fields)."""


class FixpipeParamsM310(FixpipeParamsV220):
    """Another 310B name of :class:`FixpipeParamsV220` (same fields)."""


class Nz2NdParams(ParamStruct):
    """Atlas 350 NZ2ND multi-matrix parameters of :class:`FixpipeParamsArch3510` (``srcNdStride`` in 16
    elements of the L0C type, ``dstNdStride`` in elements)."""

    FIELDS = (
        Field("ndNum", "uint16", 1),
        Field("srcNdStride", "uint16", 0, unit="16 elements"),
        Field("dstNdStride", "uint32", 0, unit="elements"),
    )


class Nz2DnParams(ParamStruct):
    """Atlas 350 NZ2DN parameters (column-major output)."""

    FIELDS = (
        Field("dnNum", "uint16", 1),
        Field("srcNzMatrixStride", "uint16", 0, unit="16 elements"),
        Field("dstDnMatrixStride", "uint32", 0, unit="elements"),
        Field("srcNzC0Stride", "uint16", 0, unit="rows of 16 elements", range=">= 1"),
    )


class FixpipeParamsArch3510(ParamStruct):
    """Fixpipe on Atlas 350. ``params`` holds :class:`Nz2NdParams` (ROW_MAJOR), :class:`Nz2DnParams`
    (COLUMN_MAJOR) or an int (NZ); the layout is given to Fixpipe as ``config``."""

    FIELDS = _COMMON + (
        Field("quantPre", "T", "NoQuant"),
        Field("deqScalar", "T", None),
        Field("reluEn", "bool", False),
        Field("unitFlag", "uint8", 0),
        Field("isChannelSplit", "bool", False, aliases=("channelSplit",)),
        Field("params", "T", None, doc="Nz2NdParams / Nz2DnParams / uint8_t"),
        Field("dualDstCtl", "uint8", 0, aliases=("dualDstCtrl",), range="0 single, 1 split M, 2 split N"),
        Field("subBlockId", "bool", False),
        Field("preReluMode", "T", "NO_RELU"),
        Field("preClipReluMode", "T", "NOCLIP_RELU"),
        Field("reluScalar", "T", None),
        Field("vectorRelu", "T", None),
    )


class FixpipeParamsC310(FixpipeParamsArch3510):
    """The C310 name of :class:`FixpipeParamsArch3510` (same fields)."""


class DataCopyCO12DstParams(ParamStruct):
    """DataCopy out of L0C. Constructor order ``{nSize, mSize, dstStride, srcStride, quantPre, reluPre,
    channelSplit, nz2ndEn}`` (``dstStride`` before ``srcStride``); NZ ``dstStride`` is in 32 B everywhere."""

    FIELDS = (
        Field("nSize", "uint16", 0),
        Field("mSize", "uint16", 0),
        Field("dstStride", "uint32", 0),
        Field("srcStride", "uint16", 0),
        Field("quantPre", "T", "NoQuant"),
        Field("reluPre", "uint8", 0, range="0 none, 1 ReLU"),
        Field("channelSplit", "bool", False),
        Field("nz2ndEn", "bool", False),
        Field("sid", "uint8", 0, range="0"),
        Field("unitFlag", "uint8", 0),
        Field("clipReluPre", "uint8", 0),
        Field("eltWiseOp", "uint8", 0),
    )

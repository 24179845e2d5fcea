"""Parameter structs of the moves into the cube unit (LoadData 2D / 2D V2 / transpose / 3D, DN2NZ, the load-3D
register setters), declared with the one struct mechanism of :mod:`fastcopy.params` (C++ field types, defaults,
constructor order, aliases). Units are those of docs/cube-in.md: ``F`` = one 512-byte fractal."""

from __future__ import annotations

from ..params import Field, ParamStruct


class LoadData2DParams(ParamStruct):
    """LoadData 2D: ``repeatTimes`` fractals, source fractal ``startIndex + i*srcStride`` (decrementing with
    ``addrMode=1`` on GM->L1) to destination fractal ``i*(dstGap+1)``; ``ifTranspose`` transposes each 16x16
    2-byte fractal in place (L1 -> L0A/L0B). Alias ``LoadData2dParams``."""

    FIELDS = (
        Field("startIndex", "uint16", 0),
        Field("repeatTimes", "uint8", 0),
        Field("srcStride", "uint16", 0),
        Field("sid", "uint8", 0),
        Field("dstGap", "uint16", 0),
        Field("ifTranspose", "bool", False),
        Field("addrMode", "uint8", 0),
    )


LoadData2dParams = LoadData2DParams


class LoadData2DParamsV2(ParamStruct):
    """LoadData 2D V2 (Atlas 350): the ``16*mStep x C0*kStep`` region at fractal (``mStartPosition``,
    ``kStartPosition``) of an Nz source with ``srcStride`` fractals per fractal column, written as Nz with
    ``dstStride`` fractals per column (``ifTranspose``: the region transposed)."""

    FIELDS = (
        Field("mStartPosition", "uint32", 0),
        Field("kStartPosition", "uint32", 0),
        Field("mStep", "uint16", 0),
        Field("kStep", "uint16", 0),
        Field("srcStride", "int32", 0),
        Field("dstStride", "uint16", 0),
        Field("ifTranspose", "bool", False),
        Field("sid", "uint8", 0),
    )


class LoadData2dTransposeParams(ParamStruct):
    """LoadDataWithTranspose: ``repeatTimes`` squares (n fractals: b8 2, b16 1, b32 2), square
    ``startIndex + i*srcStride``, each transposed into n fractals at ``i*(dstGap+1) + j*(dstFracGap+1)``."""

    FIELDS = (
        Field("startIndex", "uint16", 0),
        Field("repeatTimes", "uint8", 0),
        Field("srcStride", "uint16", 0),
        Field("dstGap", "uint16", 0),
        Field("dstFracGap", "uint16", 0),
        Field("addrMode", "uint8", 0),
    )


class LoadData2dTransposeParamsV2(ParamStruct):
    """LoadDataWithTranspose V2 (Atlas 350, B1->B2): as :class:`LoadData2dTransposeParams` with every source
    unit a fractal and ``srcFracGap`` fractals between the source fractals of one square."""

    FIELDS = (*LoadData2dTransposeParams.FIELDS[:5], Field("srcFracGap", "uint16", 0),
              *LoadData2dTransposeParams.FIELDS[5:])


class Dn2NzParams(ParamStruct):
    """DN2NZ (Atlas 350, GM -> A1/B1): ``dnNum`` matrices of ``dValue`` stored GM rows of ``nValue`` elements
    (row pitch ``srcDValue``) become the Nz image of the ``nValue x dValue`` matrix (result row ``r`` = GM
    column ``r``), with ND2NZ's destination strides."""

    FIELDS = (
        Field("dnNum", "uint16", 0),
        Field("nValue", "uint16", 0),
        Field("dValue", "uint32", 0),
        Field("srcDnMatrixStride", "uint64", 0),
        Field("srcDValue", "uint64", 0),
        Field("dstNzC0Stride", "uint16", 0),
        Field("dstNzNStride", "uint16", 0),
        Field("dstNzMatrixStride", "uint32", 0),
    )


class LoadData3DParamsV2(ParamStruct):
    """LoadData 3D V2 (img2col): rows ``mStartPt..+mExtension`` and columns ``kStartPt..+kExtension`` of the
    img2col matrix of an ``l1H x l1W x channelSize`` NC1HWC0 feature map (``padList`` = left, right, top,
    bottom). ``padList`` is 4 uint8 values; ``padValue`` is typed like the data."""

    FIELDS = (
        Field("padList", "T", (0, 0, 0, 0)),
        Field("l1H", "uint16", 0),
        Field("l1W", "uint16", 0),
        Field("channelSize", "uint16", 0),
        Field("kExtension", "uint16", 0),
        Field("mExtension", "uint16", 0),
        Field("kStartPt", "uint16", 0),
        Field("mStartPt", "uint16", 0),
        Field("strideW", "uint8", 1),
        Field("strideH", "uint8", 1),
        Field("filterW", "uint8", 1),
        Field("filterH", "uint8", 1),
        Field("dilationFilterW", "uint8", 1),
        Field("dilationFilterH", "uint8", 1),
        Field("enTranspose", "bool", False),
        Field("enSmallK", "bool", False),
        Field("padValue", "T", 0),
        Field("filterSizeW", "bool", False),
        Field("filterSizeH", "bool", False),
        Field("fMatrixCtrl", "bool", False),
    )


class LoadData3DParamsV2Pro(ParamStruct):
    """LoadData 3D V2Pro: V2 with the geometry packed into ``extConfig`` (kExtension, mExtension, kStartPt,
    mStartPt: 16 bits each, low first) and ``filterConfig`` (strideW, strideH, filterW, filterH, dilationW,
    dilationH: bytes 0..5); the feature map and padding always come from the FMATRIX / PADDING registers."""

    FIELDS = (
        Field("channelSize", "uint16", 0),
        Field("enTranspose", "bool", False),
        Field("enSmallK", "bool", False),
        Field("filterSizeW", "bool", False),
        Field("filterSizeH", "bool", False),
        Field("fMatrixCtrl", "bool", False),
        Field("extConfig", "uint64", 0),
        Field("filterConfig", "uint64", 0x10101010101),
    )


class LoadDataRepeatParam(ParamStruct):
    """Repeat of the 3D loads, set by ``SetLoadDataRepeat``: the 3D load is repeated ``repeatTime`` times, start moved by ``repeatStride``
    (mode 0: 16-row units along M; mode 1: C0 units along K)."""

    FIELDS = (
        Field("repeatStride", "uint16", 0),
        Field("repeatTime", "uint8", 1),
        Field("repeatMode", "uint8", 0),
    )


class LoadDataRepeatParamWithStride(ParamStruct):
    """Repeat and destination pitch, set by ``SetLoadDataRepeatWithStride`` (Atlas 350): :class:`LoadDataRepeatParam` plus the destination pitch
    ``dstStride`` (fractals) that ``LoadDataWithStride`` writes with."""

    FIELDS = (
        Field("repeatStride", "uint16", 0),
        Field("repeatTime", "uint8", 1),
        Field("repeatMode", "uint8", 0),
        Field("dstStride", "uint16", 0),
    )


__all__ = ["LoadData2DParams", "LoadData2dParams", "LoadData2DParamsV2", "LoadData2dTransposeParams",
           "LoadData2dTransposeParamsV2", "Dn2NzParams", "LoadData3DParamsV2", "LoadData3DParamsV2Pro",
           "LoadDataRepeatParam", "LoadDataRepeatParamWithStride"]

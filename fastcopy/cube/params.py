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
        Field("startIndex", "uint16", 0,
              doc="Source fractal of the first repeat", unit="fractals (512 bytes)", range="[0, 65535]"),
        Field("repeatTimes", "uint8", 0,
              doc="Fractals moved (one per repeat)", unit="repeats", range="[0, 255]; 0 is a no-op"),
        Field("srcStride", "uint16", 0,
              doc="Source fractal of one repeat to the next (head to head)", unit="fractals",
              range="[0, 65535]; 0 re-reads one fractal"),
        Field("sid", "uint8", 0,
              doc="Reserved (SMMU id)", range="0 (warning otherwise; error above 15)"),
        Field("dstGap", "uint16", 0,
              doc="Fractals skipped between destination fractals (tail to head)", unit="fractals",
              range="[0, 65535]; ignored on Atlas training series"),
        Field("ifTranspose", "bool", False,
              doc="Transpose each 16 x 16 fractal (2-byte types, L1 -> L0A/L0B)", range="false / true"),
        Field("addrMode", "uint8", 0,
              doc="0: source index increments, 1: decrements (GM -> L1 only)", range="[0, 1]"),
    )


LoadData2dParams = LoadData2DParams


class LoadData2DParamsV2(ParamStruct):
    """LoadData 2D V2 (Atlas 350): the ``16*mStep x C0*kStep`` region at fractal (``mStartPosition``,
    ``kStartPosition``) of an Nz source with ``srcStride`` fractals per fractal column, written as Nz with
    ``dstStride`` fractals per column (``ifTranspose``: the region transposed)."""

    FIELDS = (
        Field("mStartPosition", "uint32", 0,
              doc="First 16-row block of the region in the source", unit="16-row blocks", range="[0, 65535]"),
        Field("kStartPosition", "uint32", 0,
              doc="First fractal column of the region in the source", unit="fractal columns (32 bytes)",
              range="[0, 65535]"),
        Field("mStep", "uint16", 0,
              doc="16-row blocks of the region", unit="16-row blocks", range="[0, 255]; 0 is a no-op"),
        Field("kStep", "uint16", 0,
              doc="Fractal columns of the region", unit="fractal columns", range="[0, 255]; 0 is a no-op"),
        Field("srcStride", "int32", 0,
              doc="Fractals per fractal column of the source (head to head)", unit="fractals", range="[0, 32767]"),
        Field("dstStride", "uint16", 0,
              doc="Fractals per fractal column of the destination (head to head)", unit="fractals", range="[0, 65535]"),
        Field("ifTranspose", "bool", False,
              doc="Write the region transposed (L1 -> L0A/L0B)", range="false / true"),
        Field("sid", "uint8", 0,
              doc="Reserved", range="0"),
    )


class LoadData2dTransposeParams(ParamStruct):
    """LoadDataWithTranspose: ``repeatTimes`` squares (n fractals: b8 2, b16 1, b32 2), square
    ``startIndex + i*srcStride``, each transposed into n fractals at ``i*(dstGap+1) + j*(dstFracGap+1)``."""

    FIELDS = (
        Field("startIndex", "uint16", 0,
              doc="First source square (V2: fractal)", unit="squares (V2: fractals)", range="[0, 65535]"),
        Field("repeatTimes", "uint8", 0,
              doc="Squares transposed", unit="repeats", range="[0, 255]; 0 is a no-op"),
        Field("srcStride", "uint16", 0,
              doc="Source square of one repeat to the next (head to head)", unit="squares (V2: fractals)",
              range="[0, 65535]"),
        Field("dstGap", "uint16", 0,
              doc="From a repeat's first output fractal to the next repeat's first, minus one", unit="fractals",
              range="[0, 65535]"),
        Field("dstFracGap", "uint16", 0,
              doc="Fractals skipped between the output fractals of one repeat", unit="fractals",
              range="[0, 65535]; ignored for 2-byte types"),
        Field("addrMode", "uint8", 0,
              doc="No effect (every implementation increments)", range="0"),
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
        Field("dnNum", "uint16", 0,
              doc="Number of matrices", unit="matrices", range="[0, 4095]; 0 is a no-op"),
        Field("nValue", "uint16", 0,
              doc="Length of each stored GM row = rows of the Nz result", unit="elements",
              range="[0, 16384]; 0 is a no-op"),
        Field("dValue", "uint32", 0,
              doc="Stored GM rows = columns of the Nz result", unit="rows", range="[0, 2097151]; 0 is a no-op"),
        Field("srcDnMatrixStride", "uint64", 0,
              doc="Start of one source matrix to the next", unit="elements", range="[0, 2^40 - 1]"),
        Field("srcDValue", "uint64", 0,
              doc="Start of one stored GM row to the next", unit="elements", range="[1, 2^40 - 1]"),
        Field("dstNzC0Stride", "uint16", 0,
              doc="Start of one C0 block of a result row to the next", unit="C0 blocks (32 bytes)", range="[1, 16384]"),
        Field("dstNzNStride", "uint16", 0,
              doc="Start of one result row to the next", unit="C0 blocks (32 bytes)", range="[1, 16384]"),
        Field("dstNzMatrixStride", "uint32", 0,
              doc="Start of one result matrix to the next, floored to 32 bytes", unit="elements", range="[0, 16384]"),
    )


class LoadData3DParamsV2(ParamStruct):
    """LoadData 3D V2 (img2col): rows ``mStartPt..+mExtension`` and columns ``kStartPt..+kExtension`` of the
    img2col matrix of an ``l1H x l1W x channelSize`` NC1HWC0 feature map (``padList`` = left, right, top,
    bottom). ``padList`` is 4 uint8 values; ``padValue`` is typed like the data."""

    FIELDS = (
        Field("padList", "T", (0, 0, 0, 0)),
        Field("l1H", "uint16", 0,
              doc="Feature map height", unit="pixels", range="[0, 32767]; 0 is a no-op"),
        Field("l1W", "uint16", 0,
              doc="Feature map width", unit="pixels", range="[0, 32767]; 0 is a no-op"),
        Field("channelSize", "uint16", 0,
              doc="Channels of the feature map", unit="channels", range="multiple of C0; 0 is a no-op"),
        Field("kExtension", "uint16", 0,
              doc="Columns of the img2col matrix loaded", unit="elements", range="multiple of C0; 0 is a no-op"),
        Field("mExtension", "uint16", 0,
              doc="Rows of the img2col matrix loaded", unit="rows",
              range="multiple of 16 (1/2-byte types, all on Atlas 350)"),
        Field("kStartPt", "uint16", 0,
              doc="First column loaded", unit="elements", range="multiple of C0"),
        Field("mStartPt", "uint16", 0,
              doc="First row loaded", unit="rows", range="[0, 32767]"),
        Field("strideW", "uint8", 1,
              doc="Horizontal stride", unit="pixels", range="[1, 63]"),
        Field("strideH", "uint8", 1,
              doc="Vertical stride", unit="pixels", range="[1, 63]"),
        Field("filterW", "uint8", 1,
              doc="Kernel width (+256 with filterSizeW)", unit="taps", range="[0, 255]; 0 is a no-op"),
        Field("filterH", "uint8", 1,
              doc="Kernel height (+256 with filterSizeH)", unit="taps", range="[0, 255]; 0 is a no-op"),
        Field("dilationFilterW", "uint8", 1,
              doc="Horizontal dilation", unit="pixels", range="[1, 255]"),
        Field("dilationFilterH", "uint8", 1,
              doc="Vertical dilation", unit="pixels", range="[1, 255]"),
        Field("enTranspose", "bool", False,
              doc="Write the block transposed (L0A)", range="false / true"),
        Field("enSmallK", "bool", False,
              doc="Withdrawn feature", range="false"),
        Field("padValue", "T", 0,
              doc="Pad element, typed like the data (written to PADDING with isSetPadding)", range="a value of T"),
        Field("filterSizeW", "bool", False,
              doc="Add 256 to filterW", range="false / true"),
        Field("filterSizeH", "bool", False,
              doc="Add 256 to filterH", range="false / true"),
        Field("fMatrixCtrl", "bool", False,
              doc="Use the right feature-map register (not supported)", range="false"),
    )


class LoadData3DParamsV2Pro(ParamStruct):
    """LoadData 3D V2Pro: V2 with the geometry packed into ``extConfig`` (kExtension, mExtension, kStartPt,
    mStartPt: 16 bits each, low first) and ``filterConfig`` (strideW, strideH, filterW, filterH, dilationW,
    dilationH: bytes 0..5); the feature map and padding always come from the FMATRIX / PADDING registers."""

    FIELDS = (
        Field("channelSize", "uint16", 0,
              doc="Channels of the feature map", unit="channels", range="multiple of C0; 0 is a no-op"),
        Field("enTranspose", "bool", False,
              doc="Write the block transposed (L0A)", range="false / true"),
        Field("enSmallK", "bool", False,
              doc="Withdrawn feature", range="false"),
        Field("filterSizeW", "bool", False,
              doc="Add 256 to the kernel width", range="false / true"),
        Field("filterSizeH", "bool", False,
              doc="Add 256 to the kernel height", range="false / true"),
        Field("fMatrixCtrl", "bool", False,
              doc="Use the right feature-map register (not supported)", range="false"),
        Field("extConfig", "uint64", 0,
              doc="kExtension | mExtension << 16 | kStartPt << 32 | mStartPt << 48", range="[0, 2^64 - 1]"),
        Field("filterConfig", "uint64", 0x10101010101,
              doc="strideW, strideH, filterW, filterH, dilationW, dilationH in bytes 0..5", range="[0, 2^64 - 1]"),
    )


class LoadData3DParamsV1(ParamStruct):
    """LoadData 3D V1 (img2col, Atlas training series / inference AI Core; experimental): ``repeatTime`` fractals
    of 16 sliding windows x C0 channels, the first window's top-left at (``leftTopH``, ``leftTopW``), channel block
    ``c1Index``, kernel tap (``fetchFilterH``, ``fetchFilterW``); mode 0 advances the tap per repeat, mode 1 the
    windows. Fractal ``r`` is written ``r*jumpStride`` fractals from the destination start."""

    FIELDS = (
        Field("padList", "T", (0, 0, 0, 0)),
        Field("l1H", "uint16", 0,
              doc="Feature map height", unit="pixels", range="[1, 32767]; 0 is a no-op"),
        Field("l1W", "uint16", 0,
              doc="Feature map width", unit="pixels", range="[1, 32767]; 0 is a no-op"),
        Field("c1Index", "uint16", 0,
              doc="Channel block (C1 index) read", unit="C0 channel blocks", range="[0, 4095]"),
        Field("fetchFilterW", "uint8", 0,
              doc="Kernel column of the first repeat", unit="taps", range="[0, 254], below filterW"),
        Field("fetchFilterH", "uint8", 0,
              doc="Kernel row of the first repeat", unit="taps", range="[0, 254], below filterH"),
        Field("leftTopW", "int16", 0,
              doc="Left column of the first window (-padLeft = the padded map's edge)", unit="pixels",
              range="[-255, 32767]"),
        Field("leftTopH", "int16", 0,
              doc="Top row of the first window (-padTop = the padded map's edge)", unit="pixels",
              range="[-255, 32767]"),
        Field("strideW", "uint8", 0,
              doc="Horizontal stride", unit="pixels", range="[1, 63]"),
        Field("strideH", "uint8", 0,
              doc="Vertical stride", unit="pixels", range="[1, 63]"),
        Field("filterW", "uint8", 0,
              doc="Kernel width", unit="taps", range="[1, 255]"),
        Field("filterH", "uint8", 0,
              doc="Kernel height", unit="taps", range="[1, 255]"),
        Field("dilationFilterW", "uint8", 0,
              doc="Horizontal dilation", unit="pixels", range="[1, 255]"),
        Field("dilationFilterH", "uint8", 0,
              doc="Vertical dilation", unit="pixels", range="[1, 255]"),
        Field("jumpStride", "uint8", 0,
              doc="Destination fractal of one repeat to the next (head to head)", unit="fractals",
              range="[1, 127]"),
        Field("repeatMode", "uint8", 0,
              doc="0: each repeat takes the next kernel tap; 1: the next 16 windows", range="[0, 1]"),
        Field("repeatTime", "uint8", 0,
              doc="Fractals written (one per repeat)", unit="repeats", range="[1, 255]; 0 is a no-op"),
        Field("cSize", "uint8", 0,
              doc="1: the map has 8-byte pixels (4 half / 8 int8 channels) and a fractal row packs 4 kernel taps "
              "(experimental)", range="[0, 1]"),
        Field("padValue", "T", 0,
              doc="Pad element, typed like the data (written to PADDING with isSetPadding)", range="a value of T"),
    )


class LoadDataRepeatParam(ParamStruct):
    """Repeat of the 3D loads, set by ``SetLoadDataRepeat``: each 3D load runs ``repeatTime`` times, its start
    moved by ``repeatStride`` (mode 0: 16-row units along M; mode 1: C0 units along K)."""

    FIELDS = (
        Field("repeatStride", "uint16", 0,
              doc="Start shift from one repeat to the next", unit="16 rows (mode 0) / C0 columns (mode 1)",
              range="[0, 65535]"),
        Field("repeatTime", "uint8", 1,
              doc="Repeats of each 3D load", unit="repeats", range="[0, 255]; 0 is a no-op"),
        Field("repeatMode", "uint8", 0,
              doc="0: repeat along M (rows), 1: along K (columns)", range="[0, 1]"),
    )


class LoadDataRepeatParamWithStride(ParamStruct):
    """Repeat and destination pitch, set by ``SetLoadDataRepeatWithStride`` (Atlas 350): the fields of
    :class:`LoadDataRepeatParam` plus the pitch ``dstStride`` (fractals) that ``LoadDataWithStride`` writes with."""

    FIELDS = (
        Field("repeatStride", "uint16", 0,
              doc="Start shift from one repeat to the next", unit="16 rows (mode 0) / C0 columns (mode 1)",
              range="[0, 65535]"),
        Field("repeatTime", "uint8", 1,
              doc="Repeats of each 3D load", unit="repeats", range="[0, 255]; 0 is a no-op"),
        Field("repeatMode", "uint8", 0,
              doc="0: repeat along M (rows), 1: along K (columns)", range="[0, 1]"),
        Field("dstStride", "uint16", 0,
              doc="Destination pitch of LoadDataWithStride", unit="fractals", range="[0, 65535]"),
    )


__all__ = ["LoadData2DParams", "LoadData2dParams", "LoadData2DParamsV2", "LoadData2dTransposeParams",
           "LoadData2dTransposeParamsV2", "Dn2NzParams", "LoadData3DParamsV1", "LoadData3DParamsV2",
           "LoadData3DParamsV2Pro", "LoadDataRepeatParam", "LoadDataRepeatParamWithStride"]

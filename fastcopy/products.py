"""Per-product facts as data (docs/semantics.md §1-§7): products, positions, capacities, alignment, the
supported (API, physical path, dtype) combinations, and the parameter-field types that differ per product.

Rules are data here and are read by the planners; nothing in this module decides anything.
"""

from __future__ import annotations

import enum

import numpy as np

from .dtypes import ASCEND_DTYPES


class Product(enum.Enum):
    """An Ascend product family (semantics.md §1.1). ``.key`` is the short key, ``.display_name`` the page name."""

    __hash__ = object.__hash__  # members are singletons: identity hash, computed in C

    ATLAS_TRAINING = ("910", "Atlas training series")
    ATLAS_INFERENCE_AICORE = ("310P", "Atlas inference series AI Core")
    ATLAS_INFERENCE_VECTORCORE = ("310P-VEC", "Atlas inference series Vector Core")
    ATLAS_A2 = ("A2", "Atlas A2")
    ATLAS_A3 = ("A3", "Atlas A3")
    ATLAS_200I_500_A2 = ("310B", "Atlas 200I/500 A2")
    ATLAS_350 = ("350", "Atlas 350")

    def __init__(self, key: str, display_name: str):
        self.key = key
        self.display_name = display_name

    def __str__(self) -> str:
        return self.display_name

    @classmethod
    def get(cls, value) -> "Product":
        """A Product from itself, its enum name (``"ATLAS_A2"``), key (``"A2"``) or display name."""
        if isinstance(value, Product):
            return value
        text = str(value).strip()
        for p in cls:
            if text in (p.name, p.key, p.display_name) or text.upper() == p.name:
                return p
        from .errors import UnsupportedError

        names = ", ".join(p.name for p in cls)
        raise UnsupportedError(f"unknown product {value!r}; known products: {names}")


DEFAULT_PRODUCT = Product.ATLAS_A2


class Phys(enum.Enum):
    """Physical memories of one AI Core, plus global memory."""

    __hash__ = object.__hash__  # members are singletons: identity hash, computed in C

    GM = "GM"
    UB = "UB"
    L1 = "L1"
    L0A = "L0A"
    L0B = "L0B"
    L0C = "L0C"
    BT = "BiasTable"
    FB = "Fixpipe buffer"

    def __str__(self) -> str:
        return self.value


class TPosition(enum.Enum):
    """Logical positions of Ascend C (semantics.md §1.2). Each maps to a physical buffer per product."""

    __hash__ = object.__hash__  # members are singletons: identity hash, computed in C

    GM = "GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"
    LCM = "VECCALC"  # alias
    A1 = "A1"
    B1 = "B1"
    C1 = "C1"
    A2 = "A2"
    B2 = "B2"
    CO1 = "CO1"
    CO2 = "CO2"
    C2 = "C2"
    C2PIPE2GM = "C2PIPE2GM"
    TSCM = "TSCM"

    def __str__(self) -> str:
        return self.value


P = Product
_UB, _L1 = Phys.UB, Phys.L1
_COMMON_POSITIONS = {
    TPosition.GM: Phys.GM, TPosition.VECIN: _UB, TPosition.VECOUT: _UB, TPosition.VECCALC: _UB,
    TPosition.A1: _L1, TPosition.B1: _L1, TPosition.TSCM: _L1, TPosition.A2: Phys.L0A, TPosition.B2: Phys.L0B,
    TPosition.CO1: Phys.L0C,
}
_OLD_CORE = {**_COMMON_POSITIONS, TPosition.C1: _UB, TPosition.C2: Phys.L0C, TPosition.CO2: _UB}
_NEW_CORE = {**_COMMON_POSITIONS, TPosition.C1: _L1, TPosition.C2: Phys.BT, TPosition.CO2: Phys.GM,
             TPosition.C2PIPE2GM: Phys.FB}

#: TPosition -> physical memory, per product (semantics.md §1.2; C1 on 310B is L1, semantics.md §9 #27).
POSITIONS: dict[Product, dict[TPosition, Phys]] = {
    P.ATLAS_TRAINING: _OLD_CORE,
    P.ATLAS_INFERENCE_AICORE: _OLD_CORE,
    P.ATLAS_INFERENCE_VECTORCORE: {TPosition.GM: Phys.GM, TPosition.VECIN: _UB, TPosition.VECOUT: _UB,
                                   TPosition.VECCALC: _UB},
    P.ATLAS_A2: _NEW_CORE,
    P.ATLAS_A3: _NEW_CORE,
    P.ATLAS_200I_500_A2: _NEW_CORE,
    P.ATLAS_350: _NEW_CORE,
}

K = 1024
#: Default capacities in bytes (semantics.md §1.3: documented values; overridable per TPipe).
CAPACITIES: dict[Product, dict[Phys, int]] = {
    P.ATLAS_TRAINING: {_UB: 256 * K, _L1: 1024 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 256 * K},
    P.ATLAS_INFERENCE_AICORE: {_UB: 256 * K, _L1: 1024 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 256 * K},
    P.ATLAS_INFERENCE_VECTORCORE: {_UB: 256 * K},
    P.ATLAS_A2: {_UB: 192 * K, _L1: 512 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 128 * K,
                 Phys.BT: 1 * K, Phys.FB: 2 * K},
    P.ATLAS_A3: {_UB: 192 * K, _L1: 512 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 128 * K,
                 Phys.BT: 1 * K, Phys.FB: 2 * K},
    P.ATLAS_200I_500_A2: {_UB: 256 * K, _L1: 1024 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 128 * K,
                          Phys.BT: 1 * K, Phys.FB: 7 * K},
    P.ATLAS_350: {_UB: 248 * K, _L1: 512 * K, Phys.L0A: 64 * K, Phys.L0B: 64 * K, Phys.L0C: 256 * K,
                  Phys.BT: 4 * K, Phys.FB: 4 * K},
}

#: Start-address alignment of local tensors, bytes (semantics.md §1.4). GM alignment depends on the API (ALIGN_GM).
ALIGN: dict[Phys, int] = {_UB: 32, _L1: 32, Phys.L0A: 512, Phys.L0B: 512, Phys.L0C: 64, Phys.BT: 64,
                          Phys.FB: 128}
#: GM start alignment per API: "es" = a multiple of sizeof(T) (semantics.md §9 #2), 1 = any byte.
ALIGN_GM = {"DataCopy": "es", "DataCopyPad": 1, "Nd2Nz": 1, "Nz2Nd": 1, "Slice": 1, "LoadData": 1, "Dn2Nz": 1}

# ----------------------------------------------------------------------------------------------- dtype lists


def _dts(*names: str) -> frozenset:
    return frozenset(ASCEND_DTYPES[n] for n in names)


STD11 = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "half",
             "float", "double")
STD12 = STD11 | _dts("bfloat16_t")
A350_LIST = _dts("bool", "int8_t", "uint8_t", "hifloat8_t", "fp8_e5m2_t", "fp8_e4m3fn_t", "fp8_e8m0_t",
                 "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float", "complex32",
                 "int64_t", "uint64_t", "double", "complex64")
#: any 1/2/4/8-byte type (b8, b16, b32, b64 on Atlas 350)
ANY = None

_GM, _BT, _FB = Phys.GM, Phys.BT, Phys.FB
_A2A3 = (P.ATLAS_A2, P.ATLAS_A3)


def _for(products, table):
    return {p: table for p in products}


#: Basic DataCopy (semantics.md §3.1, §3.5): product -> {(src phys, dst phys): dtypes (same on both sides)}.
DATACOPY_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset | None]] = {
    P.ATLAS_TRAINING: {(_GM, _UB): STD11, (_GM, _L1): STD11, (_UB, _GM): STD11, (_UB, _UB): STD11},
    P.ATLAS_INFERENCE_AICORE: {(_GM, _UB): STD11, (_GM, _L1): STD11, (_UB, _GM): STD11, (_UB, _UB): STD11,
                               (_UB, _L1): STD11},
    P.ATLAS_INFERENCE_VECTORCORE: {(_GM, _UB): STD11, (_UB, _GM): STD11},
    **_for(_A2A3, {(_GM, _UB): STD12, (_GM, _L1): STD12, (_UB, _GM): STD12, (_L1, _GM): STD12,
                   (_UB, _UB): STD12, (_UB, _L1): STD12, (_L1, _BT): _dts("int32_t", "float"),
                   (_L1, _FB): STD12}),
    P.ATLAS_200I_500_A2: {(_GM, _UB): STD12, (_UB, _GM): STD12},
    P.ATLAS_350: {(_GM, _UB): ANY, (_GM, _L1): ANY, (_UB, _GM): ANY, (_UB, _UB): A350_LIST, (_UB, _L1): A350_LIST,
                  (_L1, _BT): _dts("half", "bfloat16_t", "int32_t", "float"), (_L1, _FB): A350_LIST},
}
#: The dtype-changing L1 -> BiasTable prototype (semantics.md §3.6): product -> {(src dtype, dst dtype)}.
DATACOPY_CONVERT: dict[Product, frozenset] = {
    P.ATLAS_A2: frozenset({(ASCEND_DTYPES["half"], ASCEND_DTYPES["float"])}),
    P.ATLAS_A3: frozenset({(ASCEND_DTYPES["half"], ASCEND_DTYPES["float"])}),
    P.ATLAS_350: frozenset({(ASCEND_DTYPES["half"], ASCEND_DTYPES["float"]),
                            (ASCEND_DTYPES["bfloat16_t"], ASCEND_DTYPES["float"])}),
}
#: Products where blockCount/blockLen = 0 is a documented no-op (semantics.md §8.1, semantics.md §9 #1).
ZERO_IS_NOOP = frozenset({P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_350})

_PAD_A2 = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float",
               "int64_t", "uint64_t", "double")
_PAD_310B = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")
_PAD_350 = _dts("bool", "int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t",
                "float", "complex32", "int64_t", "uint64_t", "double", "complex64")
_PAD_350_TSCM = _dts("half", "bfloat16_t", "int16_t", "uint16_t", "float", "int32_t", "uint32_t", "int8_t",
                     "uint8_t")
#: DataCopyPad (semantics.md §4.1, §4.7, semantics.md §9 #31/#32): product -> {(src phys, dst phys): dtypes}.
#: (UB, L1) is the two-stage UB -> TSCM form with Nd2NzParams.
DATACOPYPAD_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    **_for(_A2A3, {(_GM, _UB): _PAD_A2, (_UB, _GM): _PAD_A2,
                   (_UB, _L1): _PAD_A2 - _dts("int64_t", "uint64_t", "double")}),
    P.ATLAS_200I_500_A2: {(_GM, _UB): _PAD_310B, (_UB, _GM): _PAD_310B},
    P.ATLAS_350: {(_GM, _UB): _PAD_350, (_GM, _L1): _PAD_350, (_UB, _GM): _PAD_350, (_UB, _L1): _PAD_350_TSCM},
}
#: Products with the Atlas 350 DataCopyPad engine (PaddingMode, int64 strides, loop mode, fill table).
PAD_350_ENGINE = frozenset({P.ATLAS_350})
#: Products where SetPadValue exists (semantics.md §4.3).
SET_PAD_VALUE = frozenset({P.ATLAS_A2, P.ATLAS_A3, P.ATLAS_350})

_ND_A2_L1 = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "half", "bfloat16_t", "float")
_ND_350_L1 = _dts("bool", "int8_t", "uint8_t", "hifloat8_t", "fp8_e5m2_t", "fp8_e4m3fn_t", "fp8_e8m0_t", "int16_t",
                  "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float", "complex32")
_ND_310P_L1 = _dts("int16_t", "uint16_t", "int32_t", "uint32_t", "half", "float")
_ND_310P_UB = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "half", "float")
#: ND2NZ (semantics.md §5.1, §5.3): product -> {(src phys, dst phys): dtypes}. (UB, L1) = UB -> TSCM.
ND2NZ_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    **_for(_A2A3, {(_GM, _L1): _ND_A2_L1, (_GM, _UB): _ND_A2_L1, (_UB, _L1): _ND_A2_L1}),
    P.ATLAS_350: {(_GM, _L1): _ND_350_L1, (_GM, _UB): _ND_350_L1, (_UB, _L1): _ND_350_L1},
    P.ATLAS_INFERENCE_AICORE: {(_GM, _L1): _ND_310P_L1, (_GM, _UB): _ND_310P_UB},
}
_NZ_A2 = _dts("int16_t", "uint16_t", "int32_t", "uint32_t", "half", "bfloat16_t", "float")
_NZ_310P = _dts("int16_t", "uint16_t", "int32_t", "uint32_t", "half", "float")
#: NZ2ND (semantics.md §6): product -> {(src phys, dst phys): dtypes}. On 310P CO2 maps to UB, so CO2 -> GM is (UB, GM).
NZ2ND_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    **_for(_A2A3, {(_UB, _GM): _NZ_A2}),
    P.ATLAS_INFERENCE_AICORE: {(_UB, _GM): _NZ_310P},
    P.ATLAS_350: {(_UB, _GM): A350_LIST},
}
_SL_A2 = _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "half", "bfloat16_t", "float")
_SL_350 = A350_LIST
#: Slice (semantics.md §7): product -> {(src phys, dst phys): dtypes}.
SLICE_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    **_for(_A2A3, {(_GM, _UB): _SL_A2, (_UB, _GM): _SL_A2}),
    P.ATLAS_INFERENCE_AICORE: {(_GM, _UB): _SL_A2 - _dts("bfloat16_t"), (_UB, _GM): _SL_A2 - _dts("bfloat16_t")},
    P.ATLAS_350: {(_GM, _UB): _SL_350, (_UB, _GM): _SL_350},
}

# ------------------------------------------------------------------------- moves into the cube (docs/cube-in.md)
_L0A, _L0B = Phys.L0A, Phys.L0B
_B8B16 = _dts("uint8_t", "int8_t", "uint16_t", "int16_t", "half")
_B32 = _dts("bfloat16_t", "uint32_t", "int32_t", "float")
_INT4 = _dts("int4b_t")
_FP8 = _dts("int8_t", "uint8_t", "hifloat8_t", "fp8_e5m2_t", "fp8_e4m3fn_t")
_L2D_A2 = _B8B16 | _B32
#: LoadData(LoadData2DParams): product -> {(src phys, dst phys): dtypes}. 350 realises it on 2D V2.
LOAD2D_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    P.ATLAS_TRAINING: {pp: _B8B16 for pp in ((_L1, _L0A), (_L1, _L0B), (_GM, _L0A), (_GM, _L0B), (_GM, _L1))},
    P.ATLAS_INFERENCE_AICORE: {(_L1, _L0A): _B8B16 | _INT4, (_L1, _L0B): _B8B16 | _INT4, (_GM, _L0A): _B8B16,
                               (_GM, _L0B): _B8B16, (_GM, _L1): _B8B16},
    **_for(_A2A3, {(_L1, _L0A): _L2D_A2 | _INT4, (_L1, _L0B): _L2D_A2 | _INT4, (_GM, _L0A): _L2D_A2,
                   (_GM, _L0B): _L2D_A2, (_GM, _L1): _L2D_A2}),
    P.ATLAS_200I_500_A2: {pp: _L2D_A2 for pp in ((_L1, _L0A), (_L1, _L0B), (_GM, _L0A), (_GM, _L0B), (_GM, _L1))},
    P.ATLAS_350: {pp: _L2D_A2 for pp in ((_L1, _L0A), (_L1, _L0B), (_GM, _L1))},
}
_V2_350 = _FP8 | _dts("half", "bfloat16_t", "int32_t", "uint32_t", "float")
#: LoadData(LoadData2DParamsV2), Atlas 350 only (no 16-bit integers).
_FP4 = _dts("fp4x2_e2m1_t", "fp4x2_e1m2_t")
LOAD2DV2_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    P.ATLAS_350: {pp: _V2_350 | _FP4 for pp in ((_L1, _L0A), (_L1, _L0B), (_GM, _L1))},
}
_LDWT = _dts("int8_t", "uint8_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")
#: LoadDataWithTranspose(LoadData2dTransposeParams).
LOAD2D_TRANSPOSE_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    **_for(_A2A3 + (P.ATLAS_200I_500_A2,), {(_L1, _L0A): _LDWT, (_L1, _L0B): _LDWT | _INT4}),
    P.ATLAS_350: {(_L1, _L0B): _LDWT},
}
#: LoadDataWithTranspose(LoadData2dTransposeParamsV2).
LOAD2D_TRANSPOSE_V2_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    P.ATLAS_350: {(_L1, _L0B): _LDWT},
}
#: DataCopy(Dn2NzParams), Atlas 350 GM -> A1/B1.
DN2NZ_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    P.ATLAS_350: {(_GM, _L1): _FP4 | _dts("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t",
                                          "half", "bfloat16_t", "float")},
}
_3D_A2_L0A = _INT4 | _dts("int8_t", "uint8_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")
_3D_A2_L0B = _dts("half", "bfloat16_t", "int32_t", "uint32_t", "float")
_3D_350 = _V2_350 | _dts("int16_t", "uint16_t")
#: LoadData(LoadData3DParamsV2 / V2Pro) (img2col).
LOAD3D_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    P.ATLAS_INFERENCE_AICORE: {(_L1, _L0A): _INT4 | _dts("int8_t", "uint8_t", "half"), (_L1, _L0B): _dts("half")},
    **_for(_A2A3 + (P.ATLAS_200I_500_A2,), {(_L1, _L0A): _3D_A2_L0A, (_L1, _L0B): _3D_A2_L0B}),
    P.ATLAS_350: {(_L1, _L0A): _3D_350, (_L1, _L0B): _3D_350},
}
#: LoadData(LoadData3DParamsV1) (img2col V1, experimental): Atlas training series and inference AI Core, L1 -> L0A,
#: L0B and UB.
LOAD3D_V1_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {
    p: {path: _dts("int8_t", "uint8_t", "half") for path in ((_L1, _L0A), (_L1, _L0B), (_L1, _UB))}
    for p in (P.ATLAS_TRAINING, P.ATLAS_INFERENCE_AICORE)
}
#: LoadDataWithStride(LoadData3DParamsV2), Atlas 350 only.
LOAD3D_STRIDE_PATHS: dict[Product, dict[tuple[Phys, Phys], frozenset]] = {P.ATLAS_350: LOAD3D_PATHS[P.ATLAS_350]}
#: 2D LoadData on GM -> L1 honours addrMode (decrement) on these products only (docs/cube-in.md, "LoadData 2D").
LOAD2D_ADDR_MODE = frozenset({P.ATLAS_INFERENCE_AICORE, *_A2A3, P.ATLAS_200I_500_A2})
#: register setters of the 3D loads: which products have them (docs/cube-in.md, "img2col")
SET_FMATRIX_RIGHT = frozenset({*_A2A3, P.ATLAS_200I_500_A2, P.ATLAS_350})
SET_LOAD_DATA_REPEAT = frozenset({*_A2A3, P.ATLAS_200I_500_A2, P.ATLAS_350})
SET_LOAD_DATA_REPEAT_WITH_STRIDE = frozenset({P.ATLAS_350})
SET_LOAD_DATA_BOUNDARY = frozenset({*_A2A3, P.ATLAS_INFERENCE_AICORE})
LOAD3D_PRODUCTS = frozenset({P.ATLAS_INFERENCE_AICORE, *_A2A3, P.ATLAS_200I_500_A2, P.ATLAS_350})
#: products whose PADDING register keeps only the low 16 bits of a 32-bit pad value (docs/cube-in.md, "img2col")
PADDING_LOW16 = frozenset({P.ATLAS_200I_500_A2, P.ATLAS_350})

# ------------------------------------------------------------------------------------- field C++ types per product
#: (struct, field) -> {product: C++ type} where it differs from the struct's default type (semantics.md §2.2, §2.4).
FIELD_TYPES: dict[tuple[str, str], dict[Product, str]] = {
    ("DataCopyExtParams", "srcStride"): {P.ATLAS_350: "int64"},
    ("DataCopyExtParams", "dstStride"): {P.ATLAS_350: "int64"},
    ("Nd2NzParams", "dValue"): {P.ATLAS_350: "uint32"},
    ("Nd2NzParams", "srcNdMatrixStride"): {P.ATLAS_350: "uint64"},
    ("Nd2NzParams", "srcDValue"): {P.ATLAS_350: "uint64"},
    ("Nd2NzParams", "dstNzMatrixStride"): {P.ATLAS_350: "uint32"},
}


def dtype_list(dtypes) -> str:
    """Readable list of a dtype set for error messages."""
    from .dtypes import ascend_name

    if dtypes is ANY:
        return "any 1, 2, 4 or 8-byte type"
    return ", ".join(sorted(ascend_name(d) for d in dtypes))


def dtype_ok(dtypes, dtype: np.dtype) -> bool:
    return dtype.itemsize in (1, 2, 4, 8) if dtypes is ANY else dtype in dtypes

"""One mechanism for every Ascend C parameter struct.

A struct is declared as a list of :class:`Field` (C++ name, C++ type, default, aliases). Instances behave like
the C++ aggregate: positional arguments in constructor order, keywords by field name (or alias), C++ defaults,
and attribute assignment (``p.blockLen = 8``) as in kernel code. Every value is checked against its C++ type at
construction and assignment, never wrapped; the product-specific type (some fields are wider on Atlas 350) is
checked when the struct is used (:meth:`ParamStruct.check_types`). ``key()`` is the hashable value snapshot the
plan cache uses.
"""

from __future__ import annotations

import numbers

import numpy as np

from .errors import ParamTypeError

#: C++ integer type -> (C spelling, lowest, highest).
CTYPES = {
    "bool": ("bool", 0, 1),
    "uint8": ("uint8_t", 0, 2**8 - 1),
    "uint16": ("uint16_t", 0, 2**16 - 1),
    "uint32": ("uint32_t", 0, 2**32 - 1),
    "uint64": ("uint64_t", 0, 2**64 - 1),
    "int32": ("int32_t", -(2**31), 2**31 - 1),
    "int64": ("int64_t", -(2**63), 2**63 - 1),
}


class Field:
    """One struct field: C++ name, C++ type (``"T"``: typed like the data, checked by the op), default, aliases."""

    __slots__ = ("name", "ctype", "default", "aliases", "doc")

    def __init__(self, name: str, ctype: str, default=0, aliases: tuple = (), doc: str = ""):
        self.name, self.ctype, self.default, self.aliases, self.doc = name, ctype, default, aliases, doc


def _widest(ctype: str, others) -> tuple[int, int]:
    lo, hi = CTYPES[ctype][1:]
    for t in others:
        lo, hi = min(lo, CTYPES[t][1]), max(hi, CTYPES[t][2])
    return lo, hi


class ParamStruct:
    """Base of the parameter structs. Subclasses set ``FIELDS``."""

    FIELDS: tuple = ()
    _index: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._index = {}
        for f in cls.FIELDS:
            cls._index[f.name] = f
            for a in f.aliases:
                cls._index[a] = f

    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        if len(args) > len(self.FIELDS):
            raise ParamTypeError(f"{name}: takes at most {len(self.FIELDS)} values "
                                 f"({', '.join(f.name for f in self.FIELDS)}), got {len(args)}")
        values = {f.name: f.default for f in self.FIELDS}
        for f, v in zip(self.FIELDS, args):
            values[f.name] = v
        given = {f.name for f in self.FIELDS[:len(args)]}
        for key, v in kwargs.items():
            f = self._index.get(key)
            if f is None:
                raise ParamTypeError(f"{name}: unknown field {key!r}; fields are "
                                     f"{', '.join(f.name for f in self.FIELDS)}")
            if f.name in given:
                raise ParamTypeError(f"{name}: field {f.name} given twice")
            given.add(f.name)
            values[f.name] = v
        object.__setattr__(self, "_values", {})
        for f in self.FIELDS:
            setattr(self, f.name, values[f.name])

    # -- attribute access, as in C++ -------------------------------------------------------------------------
    def __getattr__(self, key):
        f = type(self)._index.get(key)
        if f is None:
            raise AttributeError(f"{type(self).__name__} has no field {key!r}")
        return self.__dict__["_values"][f.name]

    def __setattr__(self, key, value):
        f = type(self)._index.get(key)
        if f is None:
            raise AttributeError(f"{type(self).__name__} has no field {key!r}; fields are "
                                 f"{', '.join(f.name for f in self.FIELDS)}")
        self.__dict__["_values"][f.name] = self._coerce(f, value)
        self.__dict__["_key"] = None

    def _coerce(self, f: Field, value):
        name = type(self).__name__
        if f.ctype == "T":
            return value
        if f.ctype == "bool":
            if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
                return bool(value)
            raise ParamTypeError(f"{name}: {f.name}={value!r} is not a bool")
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                value = int(value)
            else:
                raise ParamTypeError(f"{name}: {f.name}={value!r} is not an integer "
                                     f"({CTYPES[f.ctype][0]})")
        value = int(value)
        lo, hi = _widest(f.ctype, self._product_types(f).values())
        if not lo <= value <= hi:
            raise ParamTypeError(f"{name}: {f.name}={value} does not fit {self._type_text(f)} [{lo}, {hi}]; "
                                 "the device would store it wrapped")
        return value

    @classmethod
    def _product_types(cls, f: Field) -> dict:
        cache = cls.__dict__.get("_ptypes")
        if cache is None:
            from .products import FIELD_TYPES

            cache = {g.name: FIELD_TYPES.get((cls.__name__, g.name), {}) for g in cls.FIELDS}
            cls._ptypes = cache
        return cache[f.name]

    @classmethod
    def _type_text(cls, f: Field) -> str:
        types = {CTYPES[f.ctype][0]} | {CTYPES[t][0] for t in cls._product_types(f).values()}
        return " / ".join(sorted(types))

    # -- use ------------------------------------------------------------------------------------------------
    def key(self) -> tuple:
        """Hashable snapshot of the values, in field order (what plans are cached by)."""
        key = self.__dict__.get("_key")
        if key is None:
            v = self.__dict__["_values"]
            key = self.__dict__["_key"] = tuple(v[f.name] for f in self.FIELDS)
        return key

    def as_dict(self) -> dict:
        return dict(self.__dict__["_values"])

    def check_types(self, api: str, product) -> None:
        """Raise ParamTypeError if a value does not fit the field's C++ type *on this product* (spec 11.4)."""
        self.check_key_types(api, self.key(), product)

    @classmethod
    def check_key_types(cls, api: str, key: tuple, product) -> None:
        """:meth:`check_types` on a ``key()`` snapshot (what cached planners hold)."""
        bounds = cls.__dict__.get("_bounds")
        if bounds is None:
            bounds = cls._bounds = {}
        rule = bounds.get(product)
        if rule is None:  # per product: (index, name, C type, lo, hi) of every integer field
            rule = bounds[product] = tuple(
                (i, f.name, *CTYPES[cls._product_types(f).get(product, f.ctype)])
                for i, f in enumerate(cls.FIELDS) if f.ctype not in ("T", "bool"))
        for i, name, c, lo, hi in rule:
            v = key[i]
            if not lo <= v <= hi:
                raise ParamTypeError(f"{api}: {name}={v} does not fit {c} [{lo}, {hi}] on {product}")

    def __eq__(self, other):
        return type(other) is type(self) and other.key() == self.key()

    __hash__ = None  # mutable, like the C++ struct; use key()

    def __repr__(self) -> str:
        v = self.__dict__["_values"]
        return f"{type(self).__name__}({', '.join(f'{f.name}={v[f.name]!r}' for f in self.FIELDS)})"


class DataCopyParams(ParamStruct):
    """Basic DataCopy bursts (spec 2.1): ``blockCount`` bursts of ``blockLen`` units, tail-to-head gaps.

    Source burst i starts at ``i * (blockLen*unit + srcGap*32)`` bytes; destination likewise with ``dstGap``.
    ``srcStride``/``dstStride`` are the old names of ``srcGap``/``dstGap``. With DataCopyPad, blockLen is in bytes.
    """

    FIELDS = (
        Field("blockCount", "uint16", 1),
        Field("blockLen", "uint16", 0),
        Field("srcGap", "uint16", 0, aliases=("srcStride",)),
        Field("dstGap", "uint16", 0, aliases=("dstStride",)),
    )


class DataCopyExtParams(ParamStruct):
    """DataCopyPad bursts (spec 2.2): ``blockLen`` bytes; GM-side gaps in bytes, local-side gaps in 32-byte
    blocks (tail-to-head). Strides are int64 on Atlas 350 (GM source stride may be as low as -blockLen)."""

    FIELDS = (
        Field("blockCount", "uint16", 1),
        Field("blockLen", "uint32", 0),
        Field("srcStride", "uint32", 0),
        Field("dstStride", "uint32", 0),
        Field("rsv", "uint32", 0),
    )


class DataCopyPadExtParams(ParamStruct):
    """DataCopyPad padding (spec 2.3): ``leftPadding``/``rightPadding`` elements (each <= 32 bytes) filled with
    ``paddingValue`` (typed like the data; 0 for 8-byte types) when ``isPad``."""

    FIELDS = (
        Field("isPad", "bool", False),
        Field("leftPadding", "uint8", 0),
        Field("rightPadding", "uint8", 0),
        Field("paddingValue", "T", 0),
    )


class DataCopyPadParams(ParamStruct):
    """Legacy DataCopyPad padding (spec 2.3): as DataCopyPadExtParams, ``paddingValue`` uint64 and must be 0."""

    FIELDS = (
        Field("isPad", "bool", False),
        Field("leftPadding", "uint8", 0),
        Field("rightPadding", "uint8", 0),
        Field("paddingValue", "uint64", 0),
    )


class Nd2NzParams(ParamStruct):
    """ND -> NZ (spec 2.4, 5.2). Element ``(m, r, c)`` goes to destination element
    ``m*dstNzMatrixStride + r*dstNzNStride*C0 + (c // C0)*dstNzC0Stride*C0 + c % C0`` with ``C0 = 32 / sizeof(T)``;
    source element ``m*srcNdMatrixStride + r*srcDValue + c``."""

    FIELDS = (
        Field("ndNum", "uint16", 0),
        Field("nValue", "uint16", 0),
        Field("dValue", "uint16", 0),
        Field("srcNdMatrixStride", "uint16", 0),
        Field("srcDValue", "uint16", 0),
        Field("dstNzC0Stride", "uint16", 0),
        Field("dstNzNStride", "uint16", 0),
        Field("dstNzMatrixStride", "uint16", 0),
    )


class Nz2NdParamsFull(ParamStruct):
    """NZ -> ND (spec 2.5, 6.1). Destination element ``m*dstNdMatrixStride + r*dstDStride + c`` receives source
    element ``m*srcNdMatrixStride*256 + (c // 16)*srcNStride*16 + r*16 + c % 16`` (16-wide fractals, any dtype)."""

    FIELDS = (
        Field("ndNum", "uint16", 1),
        Field("nValue", "uint16", 0),
        Field("dValue", "uint16", 0),
        Field("srcNdMatrixStride", "uint16", 1),
        Field("srcNStride", "uint16", 0),
        Field("dstDStride", "uint16", 0),
        Field("dstNdMatrixStride", "uint16", 1),
    )


class SliceInfo(ParamStruct):
    """One dimension of a sliced copy (spec 2.6, 7.1): indices ``startIndex..endIndex`` (inclusive), ``stride``
    elements skipped between runs, ``burstLen`` 32-byte blocks per run in dimension 0 (1 above), extent
    ``shapeValue`` (0 = the tensor's shape). The C++ defaults are NOT neutral: ``endIndex=31``, ``burstLen=32``."""

    FIELDS = (
        Field("startIndex", "uint32", 0),
        Field("endIndex", "uint32", 31),
        Field("stride", "uint32", 0),
        Field("burstLen", "uint32", 32),
        Field("shapeValue", "uint32", 0),
    )


class LoopModeParams(ParamStruct):
    """Atlas 350 loop mode (spec 4.8): every following GM <-> UB move repeats ``loop2Size x loop1Size`` times,
    source and destination shifted by ``l1*loop1*Stride + l2*loop2*Stride`` bytes. Sizes default to 1 (neutral)."""

    FIELDS = (
        Field("loop1Size", "uint32", 1),
        Field("loop2Size", "uint32", 1),
        Field("loop1SrcStride", "uint64", 0),
        Field("loop1DstStride", "uint64", 0),
        Field("loop2SrcStride", "uint64", 0),
        Field("loop2DstStride", "uint64", 0),
    )

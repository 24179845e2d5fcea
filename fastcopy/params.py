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
from collections import namedtuple

import numpy as np

from . import structdoc
from .errors import ParamTypeError
from .integers import as_int

#: C++ integer type -> (C spelling, lowest, highest).
CTYPES = {
    "bool": ("bool", 0, 1),
    "uint8": ("uint8_t", 0, 2**8 - 1),
    "uint16": ("uint16_t", 0, 2**16 - 1),
    "uint32": ("uint32_t", 0, 2**32 - 1),
    "uint64": ("uint64_t", 0, 2**64 - 1),
    "int16": ("int16_t", -(2**15), 2**15 - 1),
    "int32": ("int32_t", -(2**31), 2**31 - 1),
    "int64": ("int64_t", -(2**63), 2**63 - 1),
}


class Field:
    """One struct field: C++ name, C++ type (``"T"``: typed like the data, checked by the op), default, aliases.

    ``doc``, ``unit`` and ``range`` (the documented range, as text) are presentation only: they make the struct's
    generated docstring (:mod:`fastcopy.structdoc`); the ops check the ranges.
    """

    __slots__ = ("name", "ctype", "default", "aliases", "doc", "unit", "range")

    def __init__(self, name: str, ctype: str, default=0, aliases: tuple = (), doc: str = "", unit: str = "",
                 range: str = ""):  # noqa: A002 (the table's column name)
        self.name, self.ctype, self.default, self.aliases, self.doc = name, ctype, default, aliases, doc
        self.unit, self.range = unit, range

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.ctype!r}, {self.default!r})"


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
        #: the ``key()`` snapshot with field names (what cached planners read fields from)
        cls.Key = namedtuple(f"{cls.__name__}Key", [f.name for f in cls.FIELDS])
        cls._index = {}
        for f in cls.FIELDS:
            cls._index[f.name] = f
            for a in f.aliases:
                cls._index[a] = f
        structdoc.present(cls, CTYPES)

    def __init__(self, *args, **kwargs):
        if not kwargs:  # positional values (or none): each kept as it is when _coerce would keep it
            plain = type(self).__dict__.get("_plain") or type(self)._plain_fields()
            if len(args) <= len(plain):
                values, coerce, n = {}, self._coerce, len(args)
                for i, (f, lo, hi) in enumerate(plain):
                    v = args[i] if i < n else f.default
                    # (an int field's int value inside the widest bounds: what _coerce returns unchanged)
                    values[f.name] = v if type(v) is int and lo is not None and lo <= v <= hi else coerce(f, v)
                d = self.__dict__
                d["_values"], d["_key"] = values, None
                return
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
        coerce = self._coerce
        object.__setattr__(self, "_values", {f.name: coerce(f, values[f.name]) for f in self.FIELDS})
        object.__setattr__(self, "_key", None)

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
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, numbers.Integral) and as_int(value, name, f.name) in (0, 1):
                return bool(value)
            raise ParamTypeError(f"{name}: {f.name}={value!r} is not a bool")
        if type(value) is not int:  # (the type text only for the message: it is not cheap)
            value = as_int(value, name, f.name, self._type_text(f))
        lo, hi = self._widest_bounds(f)
        if not lo <= value <= hi:
            raise ParamTypeError(f"{name}: {f.name}={value} does not fit {self._type_text(f)} [{lo}, {hi}]; "
                                 "the device would store it wrapped")
        return value

    @classmethod
    def _plain_fields(cls) -> tuple:
        """``(field, lo, hi)`` per field in constructor order: the widest bounds of an integer field (whose int
        values inside them :meth:`_coerce` returns unchanged), None for bool and ``T`` fields (cached per class)."""
        plain = tuple((f, *cls._widest_bounds(f)) if f.ctype not in ("T", "bool") else (f, None, None)
                      for f in cls.FIELDS)
        cls._plain = plain
        return plain

    @classmethod
    def _product_types(cls, f: Field) -> dict:
        cache = cls.__dict__.get("_ptypes")
        if cache is None:
            from .products import FIELD_TYPES

            cache = {g.name: FIELD_TYPES.get((cls.__name__, g.name), {}) for g in cls.FIELDS}
            cls._ptypes = cache
        return cache[f.name]

    @classmethod
    def _widest_bounds(cls, f: Field) -> tuple:
        """``(lo, hi)`` of the field's C++ type, widened over the products' types (cached per class)."""
        cache = cls.__dict__.get("_wide")
        if cache is None:
            cache = cls._wide = {g.name: _widest(g.ctype, cls._product_types(g).values()) for g in cls.FIELDS
                                 if g.ctype not in ("T", "bool")}
        return cache[f.name]

    @classmethod
    def _type_text(cls, f: Field) -> str:
        types = {CTYPES[f.ctype][0]} | {CTYPES[t][0] for t in cls._product_types(f).values()}
        return " / ".join(sorted(types))

    # -- use ------------------------------------------------------------------------------------------------
    def key(self) -> tuple:
        """Hashable snapshot of the values, in field order (what plans are cached by)."""
        d = self.__dict__
        key = d.get("_key")
        if key is None:  # (the values dict is in field order: made so, and assignment keeps a key's place)
            key = d["_key"] = tuple(d["_values"].values())
        return key

    def as_dict(self) -> dict:
        return dict(self.__dict__["_values"])

    def check_types(self, api: str, product) -> None:
        """Raise ParamTypeError if a value does not fit the field's C++ type *on this product* (semantics.md §11.4)."""
        self.check_key_types(api, self.key(), product)

    @classmethod
    def check_key_types(cls, api: str, key: tuple, product) -> None:
        """:meth:`check_types` on a ``key()`` snapshot (what cached planners hold)."""
        bounds = cls.__dict__.get("_bounds")
        if bounds is None:
            bounds = cls._bounds = {}
        rule = bounds.get(product)
        if rule is None:  # per product: (index, name, C type, lo, hi) of every integer field
            rule = tuple((i, f.name, *CTYPES[cls._product_types(f).get(product, f.ctype)])
                         for i, f in enumerate(cls.FIELDS) if f.ctype not in ("T", "bool"))
            # every field an integer: a key whose least and greatest values lie in the range every field's type
            # holds passes at once (the fields checked one by one otherwise, for the message)
            whole = len(rule) == len(cls.FIELDS) and rule
            rule = bounds[product] = ((max(r[3] for r in rule), min(r[4] for r in rule)) if whole else None, rule)
        one, rule = rule
        if one is not None and key and one[0] <= min(key) and max(key) <= one[1]:
            return
        for i, name, c, lo, hi in rule:
            v = key[i]
            if not lo <= v <= hi:
                raise ParamTypeError(f"{api}: {name}={v} does not fit {c} [{lo}, {hi}] on {product}")

    @classmethod
    def types_implied(cls, product) -> bool:
        """Whether every integer field's C type on ``product`` is the widest it has on any product: then the
        construction check (against the widest type) already holds every ``key()`` of an instance to it, and
        :meth:`check_key_types` cannot fail on such a key (a planner whose keys are all instances' snapshots
        may skip it: the slice planner)."""
        cache = cls.__dict__.get("_implied")
        if cache is None:
            cache = cls._implied = {}
        ok = cache.get(product)
        if ok is None:
            ok = cache[product] = all(CTYPES[cls._product_types(f).get(product, f.ctype)][1:] == cls._widest_bounds(f)
                                      for f in cls.FIELDS if f.ctype not in ("T", "bool"))
        return ok

    @classmethod
    def checked_key(cls, api: str, key: tuple, product):
        """:meth:`check_key_types`, then the key as a :attr:`Key` (fields by name): validation from the key
        tuple, without rebuilding (and re-checking) the struct."""
        cls.check_key_types(api, key, product)
        return cls.Key._make(key)

    def __eq__(self, other):
        return type(other) is type(self) and other.key() == self.key()

    __hash__ = None  # mutable, like the C++ struct; use key()

    def __copy__(self):
        """A copy with field values of its own, like a copy of the C++ struct (the default shallow copy shared
        them: a field set on the copy changed the original behind its key snapshot, and a call with the
        original ran what the stale snapshot said, not what its fields read)."""
        new = object.__new__(type(self))
        d = new.__dict__
        d.update(self.__dict__)
        d["_values"] = dict(d["_values"])
        return new

    def __repr__(self) -> str:
        v = self.__dict__["_values"]
        return f"{type(self).__name__}({', '.join(f'{f.name}={v[f.name]!r}' for f in self.FIELDS)})"


class DataCopyParams(ParamStruct):
    """Basic DataCopy bursts (docs/semantics.md, "Basic DataCopy"): ``blockCount`` bursts of ``blockLen`` units with
    tail-to-head gaps. Source burst i starts ``i * (blockLen*unit + srcGap*32)`` bytes after the source start; the
    destination likewise with ``dstGap``. The unit is 32 bytes on GM/UB/L1 paths (64 or 128 bytes towards the
    BiasTable and the Fixpipe buffer). As the legacy ``copyParams`` of DataCopyPad, ``blockLen`` is in bytes."""

    FIELDS = (
        Field("blockCount", "uint16", 1, doc="Number of bursts", unit="bursts",
              range="[1, 4095]; 0 is a no-op on Atlas A2, Atlas A3 and Atlas 350"),
        Field("blockLen", "uint16", 0, doc="Length of each burst", unit="32-byte blocks (64 bytes L1->BiasTable "
              "on Atlas A2/A3, 128 bytes L1->Fixpipe buffer; bytes with DataCopyPad)",
              range="[1, 65535]; 0 is a no-op on Atlas A2, Atlas A3 and Atlas 350"),
        Field("srcGap", "uint16", 0, aliases=("srcStride",), doc="Gap from the end of one source burst to the start "
              "of the next (head-to-head for L1->Fixpipe buffer)", unit="32-byte blocks", range="[0, 65535]"),
        Field("dstGap", "uint16", 0, aliases=("dstStride",), doc="Gap from the end of one destination burst to the "
              "start of the next (head-to-head for L1->Fixpipe buffer)", unit="32-byte blocks (64 bytes "
              "L1->BiasTable on Atlas A2/A3, 128 bytes L1->Fixpipe buffer)", range="[0, 65535]"),
    )


class DataCopyExtParams(ParamStruct):
    """DataCopyPad bursts (docs/semantics.md, "DataCopyPad"): ``blockCount`` bursts of ``blockLen`` bytes; the GM
    side's gaps are in bytes, the local side's in 32-byte blocks (tail-to-head)."""

    FIELDS = (
        Field("blockCount", "uint16", 1, doc="Number of bursts", unit="bursts",
              range="[1, 4095]; 0 is a no-op on Atlas A2, Atlas A3 and Atlas 350"),
        Field("blockLen", "uint32", 0, doc="Data bytes per burst, a multiple of sizeof(T)", unit="bytes",
              range="[1, 2097151]; 0 is a no-op on Atlas A2, Atlas A3 and Atlas 350"),
        Field("srcStride", "uint32", 0, doc="Gap after each source burst: bytes when the source is GM, 32-byte "
              "blocks when it is UB", unit="bytes (GM) or 32-byte blocks (UB)",
              range="Atlas 350: GM [-blockLen, 2^40-1], UB [0, 65535]; elsewhere the C++ type's"),
        Field("dstStride", "uint32", 0, doc="Gap after each destination burst: bytes when the destination is GM, "
              "32-byte blocks when it is UB or L1", unit="bytes (GM) or 32-byte blocks (UB, L1)",
              range="Atlas 350: GM [0, 2^40-1], UB/L1 [0, 65535]; elsewhere the C++ type's"),
        Field("rsv", "uint32", 0, doc="Reserved; keep 0", range="0"),
    )


class DataCopyPadExtParams(ParamStruct):
    """DataCopyPad padding (docs/semantics.md, "DataCopyPad"): ``leftPadding``/``rightPadding`` elements around
    each burst, filled with ``paddingValue`` when ``isPad`` (else with the core's pad register, see SetPadValue)."""

    FIELDS = (
        Field("isPad", "bool", False, doc="Fill the padding with paddingValue (and set the pad register to it); "
              "False: fill from the pad register"),
        Field("leftPadding", "uint8", 0, doc="Elements of padding before each burst's data", unit="elements",
              range="leftPadding*sizeof(T) <= 32 bytes"),
        Field("rightPadding", "uint8", 0, doc="Elements of padding after each burst's data", unit="elements",
              range="rightPadding*sizeof(T) <= 32 bytes"),
        Field("paddingValue", "T", 0, doc="The fill value, converted exactly to T", unit="a value of T",
              range="any value T holds exactly; 0 for 8-byte types"),
    )


class DataCopyPadParams(ParamStruct):
    """Legacy DataCopyPad padding (docs/semantics.md, "DataCopyPad"): as DataCopyPadExtParams, with a uint64
    ``paddingValue`` that must be 0."""

    FIELDS = (
        Field("isPad", "bool", False, doc="Fill the padding with paddingValue (0); False: fill from the pad register"),
        Field("leftPadding", "uint8", 0, doc="Elements of padding before each burst's data", unit="elements",
              range="leftPadding*sizeof(T) <= 32 bytes"),
        Field("rightPadding", "uint8", 0, doc="Elements of padding after each burst's data", unit="elements",
              range="rightPadding*sizeof(T) <= 32 bytes"),
        Field("paddingValue", "uint64", 0, doc="Must be 0", range="0"),
    )


class Nd2NzParams(ParamStruct):
    """ND -> NZ (docs/semantics.md, "ND2NZ"). Element ``(m, r, c)`` of the source, at source element
    ``m*srcNdMatrixStride + r*srcDValue + c``, goes to destination element
    ``m*dstNzMatrixStride + r*dstNzNStride*C0 + (c // C0)*dstNzC0Stride*C0 + c % C0`` with ``C0 = 32 / sizeof(T)``;
    the rest of the last C0 block of a row is written with zeros. Layout helper: :func:`fastcopy.nd2nz_params`."""

    FIELDS = (
        Field("ndNum", "uint16", 0, doc="Number of matrices", unit="matrices", range="[0, 4095]; 0 is a no-op"),
        Field("nValue", "uint16", 0, doc="Rows per matrix", unit="rows", range="[0, 16384]; 0 is a no-op"),
        Field("dValue", "uint16", 0, doc="Columns per row", unit="elements", range="[0, 65535]; 0 is a no-op"),
        Field("srcNdMatrixStride", "uint16", 0, doc="Start of one source matrix to the next (used when ndNum > 1)",
              unit="elements", range="[0, 65535]; Atlas 350: any value with value*sizeof(T) < 2^64"),
        Field("srcDValue", "uint16", 0, doc="Start of one source row to the next (used when nValue > 1)",
              unit="elements", range="[1, 65535]; Atlas 350: any value with value*sizeof(T) < 2^64"),
        Field("dstNzC0Stride", "uint16", 0, doc="Start of one C0 column block of a row to the next in the "
              "destination (used when a row has more than one C0 block)", unit="C0 blocks (32 bytes)",
              range="[1, 16384]"),
        Field("dstNzNStride", "uint16", 0, doc="Start of one row to the next in the destination (used when "
              "nValue > 1)", unit="C0 blocks (32 bytes)", range="[1, 16384]"),
        Field("dstNzMatrixStride", "uint16", 0, doc="Start of one destination matrix to the next (used when "
              "ndNum > 1)", unit="elements", range="[0, 65535]; Atlas 350: up to 65535*32/sizeof(T), floored to "
              "whole 32-byte units"),
    )


class Nz2NdParamsFull(ParamStruct):
    """NZ -> ND (docs/semantics.md, "NZ2ND"). Destination element ``m*dstNdMatrixStride + r*dstDStride + c``
    receives source element ``m*srcNdMatrixStride*256 + (c // 16)*srcNStride*16 + r*16 + c % 16``: the source's
    fractal columns are 16 elements wide for every dtype. Layout helper: :func:`fastcopy.nz2nd_params`."""

    FIELDS = (
        Field("ndNum", "uint16", 1, doc="Number of matrices", unit="matrices", range="[0, 4095]; 0 is a no-op"),
        Field("nValue", "uint16", 0, doc="Rows per matrix", unit="rows", range="[1, 8192]"),
        Field("dValue", "uint16", 0, doc="Columns per row, a multiple of 16", unit="elements", range="[1, 8192]"),
        Field("srcNdMatrixStride", "uint16", 1, doc="Start of one source matrix to the next (used when ndNum > 1)",
              unit="fractals (256 elements)", range="[1, 512]"),
        Field("srcNStride", "uint16", 0, doc="Start of one 16-wide fractal column to the next (used when "
              "dValue > 16)", unit="16-element rows", range="[0, 4095]"),
        Field("dstDStride", "uint16", 0, doc="Start of one destination row to the next (used when nValue > 1)",
              unit="elements", range="[16, 65535]"),
        Field("dstNdMatrixStride", "uint16", 1, doc="Start of one destination matrix to the next (used when "
              "ndNum > 1)", unit="elements", range="[1, 65535]"),
    )


class SliceInfo(ParamStruct):
    """One dimension of a sliced copy (docs/semantics.md, "Slice copy"). Dimension 0 is the innermost. The C++
    defaults are NOT neutral: ``endIndex=31``, ``burstLen=32``. Helper: :func:`fastcopy.slice_infos`."""

    FIELDS = (
        Field("startIndex", "uint32", 0, doc="First index selected in this dimension", unit="elements",
              range="startIndex <= endIndex"),
        Field("endIndex", "uint32", 31, doc="Last index selected in this dimension (inclusive)", unit="elements",
              range="endIndex < shapeValue"),
        Field("stride", "uint32", 0, doc="Indices skipped between two runs (dimension 0) or two selected indices "
              "(dimensions >= 1)", unit="elements"),
        Field("burstLen", "uint32", 32, doc="Length of a run in dimension 0; 1 in dimensions >= 1",
              unit="32-byte blocks", range="[1, 65535] in dimension 0, equal on both sides; 1 above"),
        Field("shapeValue", "uint32", 0, doc="Extent of this dimension (0: the GM array's shape)",
              unit="elements"),
    )


class LoopModeParams(ParamStruct):
    """Atlas 350 loop mode (docs/semantics.md, "Loop mode"): every following GM <-> UB move of the chosen
    direction runs ``loop2Size x loop1Size`` times, source and destination shifted by
    ``l1*loop1*Stride + l2*loop2*Stride`` bytes. Sizes default to 1 (neutral). Set with SetLoopModePara."""

    FIELDS = (
        Field("loop1Size", "uint32", 1, doc="Inner repetitions", unit="repetitions", range="[1, 2^21 - 1]"),
        Field("loop2Size", "uint32", 1, doc="Outer repetitions", unit="repetitions", range="[1, 2^21 - 1]"),
        Field("loop1SrcStride", "uint64", 0, doc="Source shift per inner repetition", unit="bytes",
              range="GM: < 2^40; UB: a multiple of 32, < 2^21"),
        Field("loop1DstStride", "uint64", 0, doc="Destination shift per inner repetition", unit="bytes",
              range="GM: < 2^40; UB: a multiple of 32, < 2^21"),
        Field("loop2SrcStride", "uint64", 0, doc="Source shift per outer repetition", unit="bytes",
              range="GM: < 2^40; UB: a multiple of 32, < 2^21"),
        Field("loop2DstStride", "uint64", 0, doc="Destination shift per outer repetition", unit="bytes",
              range="GM: < 2^40; UB: a multiple of 32, < 2^21"),
    )

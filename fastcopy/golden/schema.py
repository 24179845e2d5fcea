"""Case documents (parsed TOML / JSON) -> validated :class:`Program` objects, one per sweep point.

Every error is a :class:`CaseError` naming the file, the key path (``ops[2].params.Nd2NzParams.dValue``) and what
was expected. The API table :data:`APIS` says, per Ascend C API, which parameter keys it takes and in which C++
argument order; struct keys are the names of the :class:`fastcopy.ParamStruct` classes (``Nd2NzParams``), their
fields the C++ field names.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

from ..dtypes import ASCEND_DTYPES, as_dtype, ascend_name
from ..errors import FastCopyError
from ..params import CTYPES
from ..products import POSITIONS, Phys, Product, TPosition
from .expr import FUNCTIONS, ExprError, evaluate
from .store import GoldenWriteError, check_collisions

#: Seed used when neither the case nor the command line gives one (recorded in every manifest).
DEFAULT_SEED = 0

CASE_KEYS = ("name", "description", "product", "seed", "poison", "capacities", "blocks", "sweep", "buffers", "ops",
             "outputs")
GM_KEYS = ("dtype", "shape", "position", "init", "file", "description")
LOCAL_KEYS = ("dtype", "count", "position", "addr", "init", "description")
OP_KEYS = ("api", "dst", "src", "params", "dtype", "note")
LOOP_KEYS = ("for", "range", "body", "note")
COMPUTE_KEYS = ("compute", "buffers", "note")
#: Names an expression always knows (besides sweep and loop variables): GetBlockIdx() and GetBlockNum().
BLOCK_NAMES = ("block_idx", "block_num")
#: Most ops one point may expand into (loops x cores): a guard against typos in loop ranges.
MAX_OPS = 200_000
MAX_BLOCKS = 4096
OUTPUT_KEYS = ("buffer", "file", "allow_undefined", "rtol", "atol", "compare")
INIT_ARGS = {  # kind -> allowed arguments (with defaults; None = required for some dtypes)
    "uniform": {"low": 0.0, "high": 1.0},
    "normal": {"mean": 0.0, "std": 1.0},
    "integers": {"low": None, "high": None},
    "arange": {"start": 0, "step": 1},
    "constant": {"value": None},
    "zeros": {},
    "bits": {},
    "file": {"path": None},
    "values": {"values": None, "packed": False},  # packed: (4-bit buffers) the values are the bytes
}
#: the numbers a packed 4-bit buffer's inputs give, per dtype: (what, lowest, highest) of an integer value; None:
#: any number, rounded to the type (fp4x2_e2m1_t)
B4_VALUES = {"int4b_t": ("int4b_t values", -8, 7), "fp4x2_e1m2_t": ("4-bit codes of fp4x2_e1m2_t", 0, 15),
             "fp4x2_e2m1_t": None}
#: the packed 4-bit dtypes (fastcopy.cube.b4's B4_TYPES, without importing the cube path for a case)
B4_TYPES = frozenset(ASCEND_DTYPES[k] for k in B4_VALUES)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REF = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[(.+)\])?\s*$")


class CaseError(FastCopyError):
    """A case file that cannot be loaded: ``file: key.path: what was expected`` (and the line when known)."""

    def __init__(self, file: str, path: str, message: str, line: int | None = None):
        self.file, self.path, self.message, self.line = file, path, message, line
        where = f"{file}" + (f" (line {line})" if line else "")
        super().__init__(f"{where}: {path}: {message}" if path else f"{where}: {message}")


# ------------------------------------------------------------------------------------------------ API table
@dataclass(frozen=True)
class ApiSpec:
    """How a case op maps to a public fastcopy call.

    ``forms``: the accepted sets of parameter keys, each in C++ argument order (passed positionally after
    ``dst, src``); a trailing ``?`` marks an optional key. ``keywords``: case key -> Python keyword argument.
    """

    tensors: bool
    forms: tuple
    keywords: dict = field(default_factory=dict)
    needs_dtype: bool = False
    #: tensor operands beyond ``dst``/``src``, in C++ argument order (after dst, src; before the parameters);
    #: a trailing ``?`` marks an optional one. For ops without dst/src (state setters) they are the only tensors.
    operands: tuple = ()
    #: tensor operands passed as Python keywords (case key -> keyword), e.g. Fixpipe's ``dst1``
    kw_operands: dict = field(default_factory=dict)
    #: the case key of the second main operand (``src``; Mmad's is ``a``)
    src_key: str = "src"
    #: other spellings of operand keys (Ascend C parameter names): alias -> key
    aliases: dict = field(default_factory=dict)
    #: per-API parameter kinds (override :data:`ARG_KINDS` for keys whose meaning depends on the API)
    kinds: dict = field(default_factory=dict)
    #: the fastcopy attribute to call when it is not the API name (``AscendCUtils.SetOverflow``)
    target: str = ""
    #: operand keys the op writes (besides ``dst``)
    writes: tuple = ()

    def operand_keys(self) -> tuple:
        """Every tensor key of the op, in argument order (``?``: optional)."""
        main = ("dst", self.src_key) if self.tensors else ()
        return main + self.operands + tuple(f"{k}?" for k in self.kw_operands)


APIS: dict[str, ApiSpec] = {
    "DataCopy": ApiSpec(True, (("count",), ("DataCopyParams",), ("Nd2NzParams",), ("Nz2NdParamsFull",),
                               ("dstSliceInfo", "srcSliceInfo", "dimValue?"), ("Dn2NzParams",)),
                        {"enableSmallC0": "small_c0"}),
    "DataCopyPad": ApiSpec(True, (("DataCopyExtParams", "DataCopyPadExtParams"), ("DataCopyExtParams",),
                                  ("DataCopyExtParams", "Nd2NzParams"), ("DataCopyParams", "DataCopyPadParams"),
                                  ("DataCopyParams",), ("DataCopyParams", "Nd2NzParams")),
                           {"mode": "mode"}),
    "SetPadValue": ApiSpec(False, (("value",),), needs_dtype=True),
    "SetLoopModePara": ApiSpec(False, (("LoopModeParams", "type"),)),
    "ResetLoopModePara": ApiSpec(False, ((), ("type",))),
    # into the cube (docs/cube-in.md)
    "LoadData": ApiSpec(True, (("LoadData2DParams",), ("LoadData2DParamsV2",), ("LoadData3DParamsV2",),
                               ("LoadData3DParamsV2Pro",), ("LoadData3DParamsV1",)), {"IsResetLoad3dConfig": "config"}),
    "LoadDataWithTranspose": ApiSpec(True, (("LoadData2dTransposeParams",), ("LoadData2dTransposeParamsV2",))),
    "LoadDataWithStride": ApiSpec(True, (("LoadData3DParamsV2",),), {"IsResetLoad3dConfig": "config"}),
    "SetFmatrix": ApiSpec(False, (("l1H", "l1W", "padList", "fmatrixMode?"),)),
    "SetLoadDataPaddingValue": ApiSpec(False, (("value",),), needs_dtype=True),
    "SetLoadDataBoundary": ApiSpec(False, (("boundaryValue",),)),
    "SetLoadDataRepeat": ApiSpec(False, (("LoadDataRepeatParam",),)),
    "SetLoadDataRepeatWithStride": ApiSpec(False, (("LoadDataRepeatParamWithStride",),)),
    # out of the cube (docs/cube-out.md)
    "Mmad": ApiSpec(True, (("MmadParams",),), operands=("b", "bias?"), src_key="a",
                    aliases={"fm": "a", "filter": "b"}),
    "Fixpipe": ApiSpec(True, (("FixpipeParamsV220",), ("FixpipeParamsM300",), ("FixpipeParamsM310",),
                              ("FixpipeParamsArch3510",), ("FixpipeParamsC310",)),
                       {"config": "config"}, operands=("workspace?",), kw_operands={"dst1": "dst1"},
                       aliases={"cbufWorkspace": "workspace"}, writes=("dst1",)),
    "SetFixpipeNz2ndFlag": ApiSpec(False, (("ndNum", "srcNdStride", "dstNdStride"),)),
    "SetFixpipePreQuantFlag": ApiSpec(False, (("config",),), kinds={"config": ("word", None)}),
    "SetFixPipeConfig": ApiSpec(False, ((),), {"isUnitFlag": "isUnitFlag"}, operands=("reluPre?", "quantPre"),
                                aliases={"preData": "quantPre"}),
    "SetFixPipeClipRelu": ApiSpec(False, (("config",),), kinds={"config": ("int", (0, 2**64 - 1, "uint64_t"))}),
    "SetFixPipeAddr": ApiSpec(False, (("c0ChStride",),), operands=("eleWiseData",)),
    "SetHF32Mode": ApiSpec(False, (("mode",),), kinds={"mode": ("enum", "HF32Mode")}),
    "SetHF32TransMode": ApiSpec(False, (("mode",),), kinds={"mode": ("enum", "HF32TransMode")}),
    "SetOverflow": ApiSpec(False, (("v",),), target="AscendCUtils.SetOverflow"),
    "SetMMRowMajor": ApiSpec(False, ((),)),
    "SetMMColumnMajor": ApiSpec(False, ((),)),
}
#: DataCopy out of L0C: DataCopyCO12DstParams (L0C -> GM / L1) and the 310P L0C -> UB copy (provisional)
APIS["DataCopy"] = ApiSpec(True, APIS["DataCopy"].forms + (("DataCopyCO12DstParams",),
                                                           ("DataCopyParams", "DataCopyEnhancedParams")),
                           APIS["DataCopy"].keywords)
#: spellings of API names that map to a table entry
API_ALIASES = {"AscendCUtils::SetOverflow": "SetOverflow", "AscendCUtils.SetOverflow": "SetOverflow"}

#: Non-struct parameter keys: key -> (kind, detail). Struct keys are resolved through fastcopy's ParamStructs.
ARG_KINDS = {
    "count": ("int", (0, 2**32 - 1, "elements (uint32_t)")),
    "dimValue": ("int", (0, 2**32 - 1, "dimensions (uint32_t)")),
    "enableSmallC0": ("bool", None),
    "mode": ("enum", "PaddingMode"),
    "type": ("enum", "DataCopyMVType"),
    "value": ("value", None),
    "dstSliceInfo": ("structs", "SliceInfo"),
    "l1H": ("int", (1, 32767, "pixels (uint16_t)")),
    "l1W": ("int", (1, 32767, "pixels (uint16_t)")),
    "padList": ("array", (4, 0, 255, "elements (uint8_t[4]: left, right, top, bottom)")),
    "fmatrixMode": ("enum", "FmatrixMode"),
    "boundaryValue": ("int", (0, 2**32 - 1, "bytes (uint32_t)")),
    "srcSliceInfo": ("structs", "SliceInfo"),
    "config": ("fixpipe_config", None),
    "isUnitFlag": ("bool", None),
    "ndNum": ("int", (0, 2**16 - 1, "matrices (uint16_t)")),
    "srcNdStride": ("int", (0, 2**16 - 1, "uint16_t (1024 B on A2/A3, 16 elements on 310B / Atlas 350)")),
    "dstNdStride": ("int", (0, 2**32 - 1, "elements (uint16_t; uint32_t on Atlas 350)")),
    "c0ChStride": ("int", (0, 2**16 - 1, "uint16_t")),
    "v": ("int", (0, 2**64 - 1, "uint64_t (1 = INF_NAN mode, else saturation)")),
}

#: How case files spell struct fields typed ``T`` (checked by the op, so the struct cannot say): field name ->
#: (kind, detail). Fields typed ``T`` that are not listed take a number (as before) or, in the cube's structs, any
#: scalar the op itself validates.
T_FIELDS = {
    "quantPre": ("enum", "QuantMode_t"),
    "deqScalar": ("word", None),
    "params": ("substruct", ("Nz2NdParams", "Nz2DnParams")),
    "preReluMode": ("names", ("NO_RELU", "NORMAL_RELU", "SCALAR_RELU", "VECTOR_RELU")),
    "preClipReluMode": ("names", ("NOCLIP_RELU", "CLIP_RELU")),
    "reluScalar": ("int", (0, 2**64 - 1, "uint64_t")),
    "vectorRelu": ("int", (0, 2**64 - 1, "uint64_t")),
    "blockMode": ("enum", "BlockMode"),
    "deqScale": ("enum", "DeqScale"),
    "padMode": ("int", (0, 255, "uint8_t")),
}
#: The fields of a quantisation word written as a table (``deqScalar = {scale = 0.5, offset = -3, sign = true}``),
#: with the range of each (see fastcopy.cube.quant.make_word).
WORD_FIELDS = {"scale": "a float32 scale (the hardware keeps 10 mantissa bits)", "offset": "an integer in [-256, 255]",
               "sign": "true for a signed 8-bit result", "shift": "an integer in [1, 16]", "mcb": "true or false"}
#: Names of Fixpipe's template configuration (``config = "CFG_NZ"`` or ``{format = "NZ", isToUB = true}``)
FIXPIPE_CONFIGS = {"CFG_ROW_MAJOR": "ROW_MAJOR", "CFG_NZ": "NZ", "CFG_COLUMN_MAJOR": "COLUMN_MAJOR"}


def struct_class(name: str):
    """The fastcopy ParamStruct subclass called ``name``, or None."""
    cls = _STRUCTS.get(name)
    if cls is not None:
        return cls
    import fastcopy

    cls = getattr(fastcopy, name, None)
    if isinstance(cls, type) and issubclass(cls, fastcopy.ParamStruct) and cls is not fastcopy.ParamStruct:
        if len(_STRUCTS) < 4096:  # (names of structs only: a handful)
            _STRUCTS[name] = cls
        return cls
    return None


_STRUCTS: dict = {}  # struct name -> its class (looked up once; every op of every point names one)


def enum_class(name: str):
    import fastcopy

    return getattr(fastcopy, name)


def api_function(api: str):
    """The public fastcopy function a case op ``api`` calls (``SetOverflow``: ``AscendCUtils.SetOverflow``)."""
    import fastcopy

    target = APIS[api].target
    if not target:
        return getattr(fastcopy, api)
    obj = fastcopy
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def make_struct(name: str, fields: dict):
    """The ParamStruct ``name`` from a case's field dict; a nested struct field (``params = {Nz2NdParams =
    {...}}``) is built too."""
    hit = _FIELD_ORDER.get(name)
    if hit is None:
        cls = struct_class(name)
        hit = _FIELD_ORDER[name] = (cls, tuple(f.name for f in cls.FIELDS))
    cls, order = hit
    if tuple(fields) == order:
        values = tuple(fields.values())
        for v in values:
            if isinstance(v, dict):
                break
        else:
            return cls(*values)  # (every field, in constructor order: the same struct, made faster)
    values = {}
    for k, v in fields.items():
        if isinstance(v, dict) and len(v) == 1 and struct_class(next(iter(v))) is not None:
            sub, sub_fields = next(iter(v.items()))
            v = make_struct(sub, sub_fields)
        values[k] = v
    return cls(**values)


_FIELD_ORDER: dict = {}  # struct name -> (its class, its field names in constructor order)


def fixpipe_config(value: dict):
    """``{"format": "NZ", "isToUB": false}`` -> the FixpipeConfig Fixpipe takes as ``config``."""
    import fastcopy

    return fastcopy.FixpipeConfig(fastcopy.CO2Layout[value["format"]], value["isToUB"])


def _param_forms(spec: ApiSpec) -> tuple:
    """``(every key the API's params take, [(form, its required keys, its keys)])`` (made once per spec)."""
    got = _FORMS_OF.get(id(spec))
    if got is None or got[0] is not spec:
        known = frozenset({k.rstrip("?") for form in spec.forms for k in form} | set(spec.keywords))
        forms = [(f, frozenset(k.rstrip("?") for k in f if not k.endswith("?")), frozenset(k.rstrip("?") for k in f))
                 for f in spec.forms]
        got = _FORMS_OF[id(spec)] = (spec, known, forms)
    return got[1], got[2]


_FORMS_OF: dict = {}  # id(ApiSpec) -> (the spec, known keys, forms)


#: product names a case used -> the Product (Product.get walks the enum; a sweep asks once per point)
_PRODUCT_NAMES: dict = {}


# ------------------------------------------------------------------------------------------------ programs
@dataclass(frozen=True)
class Ref:
    """A tensor operand: buffer ``name``, ``offset`` elements in (``yGm[256]``)."""

    name: str
    offset: int = 0

    def __str__(self) -> str:
        return f"{self.name}[{self.offset}]" if self.offset else self.name


@dataclass(frozen=True)
class Arg:
    """One parameter of a call. ``kind``: struct (value = field dict), structs (list of field dicts), int, bool,
    enum (member name), value (a number typed by the op's dtype)."""

    key: str
    kind: str
    value: object
    struct: str | None = None  # struct / enum class name


@dataclass(frozen=True)
class OpSpec:
    """One op of a program: the API, its operands and its parameters, validated."""

    index: int  # position in the program's flat (unrolled) op list
    api: str
    dst: Ref | None
    src: Ref | None
    args: tuple  # positional Args, C++ order
    kwargs: tuple  # (python keyword, Arg)
    dtype: str | None = None
    note: str = ""
    path: str = ""  # where in the case file: ops[2], ops[1].body[0]
    env: tuple = ()  # ((name, value), ...): loop variables and block_idx at this op
    block: int = 0  # the core (block_idx) that runs it
    #: tensor operands beyond dst/src: ((case key, Ref, Python keyword or None), ...), positional ones in C++
    #: argument order (Mmad's b and bias, Fixpipe's workspace; dst1 by keyword; a setter's tables)
    operands: tuple = ()
    writes: tuple = ()  # names of the buffers the op writes (dst, and Fixpipe's dst1)

    def operand_refs(self) -> list:
        """(case key, Ref) of every tensor operand, dst and src first."""
        main = [("dst", self.dst), (APIS[self.api].src_key, self.src)] if self.dst is not None else []
        return main + [(k, r) for k, r, _ in self.operands]

    @property
    def where(self) -> str:
        """``ops[1].body[0] (i=3)``: the case-file path, with the loop variables when inside loops / cores."""
        path = self.path or f"ops[{self.index}]"
        return path + (" (" + ", ".join(f"{k}={v}" for k, v in self.env) + ")" if self.env else "")

    def params_dict(self) -> dict:
        """The parameters as written in a case file (structs with every field, defaults included)."""
        out = {}
        for a in self.args + tuple(a for _, a in self.kwargs):
            out[a.key] = a.value
        return out

    def title(self) -> str:
        refs = self.operand_refs()
        main = [str(r) for _, r in refs[:2]] if self.dst is not None else []
        rest = [(str(r) if kw is None and self.dst is not None else f"{k}={r}") for k, r, kw in self.operands]
        operands = f"({', '.join(main + rest)})" if refs else ""
        return f"{self.where} {self.api}{operands}"


@dataclass(frozen=True)
class ComputeSpec:
    """A compute step: the user's Python function ``function`` in ``file`` (next to the case), called with the
    tensors of ``buffers`` (run only with ``--allow-python``)."""

    index: int
    file: str  # absolute path
    given: str  # as written in the case
    function: str
    buffers: tuple
    note: str = ""
    path: str = ""
    env: tuple = ()
    block: int = 0
    api: str = "compute"
    dst = None
    src = None
    dtype = None
    args = ()
    kwargs = ()

    where = OpSpec.where

    def params_dict(self) -> dict:
        return {"compute": f"{self.given}:{self.function}", "buffers": list(self.buffers)}

    def title(self) -> str:
        return f"{self.where} compute {self.given}:{self.function}({', '.join(self.buffers)})"


@dataclass(frozen=True)
class BufferSpec:
    """One buffer of a program (GM or on-chip): dtype, shape, position, init, validated."""

    name: str
    dtype: str  # Ascend C name when there is one
    gm: bool
    shape: tuple  # GM: the array shape; local: (count,)
    position: str
    addr: int | None = None
    init: dict | None = None  # {"kind": ..., args}; None = undefined (poison) contents
    file: str = ""  # base name of the input/output file
    description: str = ""

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @cached_property
    def np_dtype(self) -> np.dtype:
        return as_dtype(self.dtype)


@dataclass(frozen=True)
class OutputSpec:
    """One output of a program: its buffer, files, and compare settings."""

    buffer: str
    file: str  # path relative to the output folder, e.g. "output/golden.bin"
    mask: str  # e.g. "output/golden.mask.bin"
    allow_undefined: bool = False  # the kernel leaves some elements unwritten on purpose (no warning)
    rtol: float | None = None  # tolerances for `fastcopy verify` (None: bit-exact)
    atol: float | None = None
    compare: str | None = None  # a named compare rule (fastcopy.golden.verify.RULES)
    compare_options: tuple = ()  # ((option, value), ...) of the rule (the mmad rule's operands)

    def record(self) -> dict:
        """The manifest keys of this output's options (only those given)."""
        out = {"allow_undefined": True} if self.allow_undefined else {}
        for k in ("rtol", "atol", "compare"):
            if getattr(self, k) is not None:
                out[k] = getattr(self, k)
        if self.compare_options:
            out["compare_options"] = dict(self.compare_options)
        return out


@dataclass(frozen=True)
class Program:
    """One fully resolved data-movement program (a case, or one point of a sweep)."""

    name: str
    file: str  # the case file as given (display)
    source_sha256: str
    index: int | None  # sweep point, None for a case without sweeps
    values: dict  # sweep label -> value at this point
    product: str  # Product enum name
    seed: int
    seed_source: str  # "case", "default" or "command line"
    poison: int
    capacities: dict
    buffers: tuple
    ops: tuple
    outputs: tuple
    description: str = ""
    blocks: int = 1  # cores (GetBlockNum()); ops run once per core, in block order
    allow_python: bool = False  # compute steps may run
    writes: tuple = ()  # buffers compute steps may write (their inputs are copied before running)

    def buffer(self, name: str) -> BufferSpec:
        return next(b for b in self.buffers if b.name == name)

    @property
    def label(self) -> str:
        if self.index is None:
            return self.name
        vals = ", ".join(f"{k}={v}" for k, v in self.values.items())
        return f"{self.name}#{self.index}" + (f" ({vals})" if vals else "")


# ------------------------------------------------------------------------------------------------ compiler
def whole(v) -> int | None:
    """``v`` as the integer :meth:`Compiler.integer` takes it for (an int, or a float with an integer value; never
    a bool), else None."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None if isinstance(v, bool) or not isinstance(v, int) else v


def _type_name(v) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "table"}.get(type(v), type(v).__name__)


def _show(v) -> str:
    return f"{_type_name(v)} {v!r}"


def _suggest(word: str, choices) -> str:
    import difflib  # (only when a message suggests a name)

    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Compiler:
    """Walks a case document once. ``choose(path, values)`` picks the value of a swept list (a list given where
    one value is expected); ``names`` are the sweep variables for ``"=expr"`` strings."""

    def __init__(self, doc: dict, file: str, source: str, base_dir: str, names: dict, choose,
                 max_bytes: int | None = None):
        self.doc, self.file, self.source, self.base_dir = doc, file, source, base_dir
        self.names, self.choose = dict(names), choose
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        self.loop_env: dict = {}  # loop variables (and block_idx) in force while compiling an op
        self.api = ""  # the API of the op being compiled (named in parameter errors)

    # -- errors ------------------------------------------------------------------------------------------
    def error(self, path: str, message: str, present: bool = True) -> CaseError:
        """``present=False``: the key is missing, so no line is looked up."""
        if self.loop_env:
            message += " (at " + ", ".join(f"{k}={v}" for k, v in self.loop_env.items()) + ")"
        return CaseError(self.file, path, message, self._line(path) if present else None)

    def _line(self, path: str) -> int | None:
        """Best effort: the line of the last key of ``path`` if that key is written exactly once."""
        if not self.source or not path:
            return None
        key = re.split(r"[.\[]", path)[-1].rstrip("]")
        if not key or key.isdigit():
            return None
        pat = re.compile(rf'(^|[\s{{,])"?{re.escape(key)}"?\s*[=:]')
        hits = [i for i, line in enumerate(self.source.splitlines(), 1) if pat.search(line)]
        if len(hits) == 1:
            return hits[0]
        head = re.compile(rf"^\s*\[+\s*[\w.]*\b{re.escape(key)}\s*\]+")
        hits = [i for i, line in enumerate(self.source.splitlines(), 1) if head.search(line)]
        return hits[0] if len(hits) == 1 else None

    def check_keys(self, table: dict, allowed, path: str) -> None:
        for k in table:
            if k not in allowed:
                hint = ""
                if path and k in CASE_KEYS:
                    hint = (f" ({k!r} is a top-level key: in TOML write it before the first [table] header, "
                            "or it belongs to the table above it)")
                raise self.error(f"{path}.{k}" if path else k,
                                 f"unknown key{_suggest(k, allowed)}; expected one of: {', '.join(allowed)}{hint}")

    def table(self, v, path: str) -> dict:
        if not isinstance(v, dict):
            raise self.error(path, f"expected a table, got {_show(v)}")
        return v

    def require(self, table: dict, key: str, path: str, what: str):
        if key not in table:
            raise self.error(f"{path}.{key}" if path else key, f"missing key; expected {what}", present=False)
        return table[key]

    # -- scalars (sweeps and expressions) ----------------------------------------------------------------
    def scalar(self, raw, path: str):
        """One value: a list here is a sweep axis, a string ``"=expr"`` an expression."""
        if isinstance(raw, list):
            if not raw:
                raise self.error(path, "empty list; a list here is a sweep and needs at least one value")
            raw = self.choose(path, raw)
            if isinstance(raw, list):
                raise self.error(path, "a swept value cannot itself be a list here")
        if isinstance(raw, str) and raw.startswith("="):
            try:
                raw = evaluate(raw[1:], self.names)
            except ExprError as exc:
                raise self.error(path, str(exc)) from None
        return raw

    def array(self, raw, path: str, n: int, lo: int, hi: int, what: str) -> tuple:
        """A C array of ``n`` integers: a list of n numbers (a list of such lists is a sweep)."""
        if isinstance(raw, list) and raw and all(isinstance(x, list) for x in raw):
            raw = self.choose(path, raw)
        if not isinstance(raw, list) or len(raw) != n:
            raise self.error(path, f"expected a list of {n} integers ({what}), got {_show(raw)}")
        return tuple(self.integer(x, f"{path}[{j}]", lo, hi, f"an integer in [{lo}, {hi}]") for j, x in enumerate(raw))

    def integer(self, raw, path: str, lo: int | None = None, hi: int | None = None, what: str = "an integer"):
        v = self.scalar(raw, path)
        n = whole(v)
        if n is None:
            raise self.error(path, f"expected {what}, got {_show(v)}")
        if (lo is not None and n < lo) or (hi is not None and n > hi):
            rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
            raise self.error(path, f"{n} is outside {rng}; expected {what}")
        return n

    def string(self, raw, path: str, what: str = "a string") -> str:
        v = self.scalar(raw, path)
        if not isinstance(v, str):
            raise self.error(path, f"expected {what}, got {_show(v)}")
        return v

    def number(self, raw, path: str, what: str = "a number", finite: bool = True):
        v = self.scalar(raw, path)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(path, f"expected {what}, got {_show(v)}")
        if finite and isinstance(v, float) and not math.isfinite(v):
            raise self.error(path, f"{v} is not a finite number; expected {what}")
        return v

    def dtype(self, raw, path: str) -> str:
        v = self.string(raw, path, "a dtype name (half, float, int8_t, bfloat16_t, ...)")
        try:
            return ascend_name(as_dtype(v))
        except FastCopyError:
            raise self.error(path, f"unknown dtype {v!r}{_suggest(v, ASCEND_DTYPES)}; expected an Ascend C type "
                                   f"({', '.join(ASCEND_DTYPES)}) or a numpy name") from None

    # -- the document ------------------------------------------------------------------------------------
    def compile(self, index, values, seed_override) -> Program:
        doc = self.doc
        self.check_keys(doc, CASE_KEYS, "")
        name = self.string(doc.get("name", os.path.splitext(os.path.basename(self.file))[0]), "name")
        description = self.string(doc.get("description", ""), "description")
        product = self.product(self.require(doc, "product", "", "a product: " + _products()), "product")
        self.target = product
        if seed_override is not None:
            seed, source = seed_override, "command line"
        elif "seed" in doc:
            seed, source = self.integer(doc["seed"], "seed", 0, 2**63 - 1, "a seed (a non-negative integer)"), "case"
        else:
            seed, source = DEFAULT_SEED, "default"
        poison = self.integer(doc.get("poison", 0xFF), "poison", 0, 255, "a byte value")
        capacities = self.capacities(doc.get("capacities", {}))
        blocks = self.integer(doc.get("blocks", 1), "blocks", 1, MAX_BLOCKS, "a number of cores (GetBlockNum())")
        self.names.setdefault("block_num", blocks)
        buffers = self.buffers(self.require(doc, "buffers", "", "a table of buffers"), product)
        by_name = {b.name: b for b in buffers}
        raw_ops = self.require(doc, "ops", "", "a list of ops ([[ops]] tables)")
        ops = []
        for k in range(blocks):
            self.names["block_idx"] = k
            if blocks > 1:
                self.loop_env = {"block_idx": k}
            self.ops(raw_ops, by_name, ops, k)
        self.loop_env = {}
        self.names["block_idx"] = 0
        outputs = self.outputs(self.require(doc, "outputs", "", "a list of buffer names"), by_name)
        self.check_files(buffers, outputs)
        if blocks > 1:
            local = [o.buffer for o in outputs if not by_name[o.buffer].gm]
            if local:
                raise self.error("outputs", f"{local[0]!r} is a local buffer: with blocks = {blocks} every core has "
                                            "its own; outputs of a multi-core case are GM buffers")
        writes = tuple(dict.fromkeys(b for op in ops if isinstance(op, ComputeSpec) for b in op.buffers))
        return Program(name, self.file, "", index, values, product.name, seed, source, poison, capacities,
                       tuple(buffers), tuple(ops), tuple(outputs), description, blocks, False, writes)

    def product(self, raw, path) -> Product:
        v = self.string(raw, path, "a product name")
        known = _PRODUCT_NAMES.get(v)
        if known is not None:
            return known
        try:
            known = _PRODUCT_NAMES[v] = Product.get(v)
            return known
        except FastCopyError:
            raise self.error(path, f"unknown product {v!r}{_suggest(v, [p.name for p in Product])}; expected "
                                   f"one of: {_products()}") from None

    def capacities(self, raw) -> dict:
        out = {}
        for k, v in self.table(raw, "capacities").items():
            phys = next((p for p in Phys if k in (p.name, p.value)), None)
            if phys is None or phys is Phys.GM:
                names = ", ".join(p.name for p in Phys if p is not Phys.GM)
                raise self.error(f"capacities.{k}", f"unknown buffer; expected one of: {names}")
            out[phys.name] = self.integer(v, f"capacities.{k}", 0, None, "a size in bytes")
        return out

    def buffers(self, raw, product: Product) -> list:
        table = self.table(raw, "buffers")
        if not table:
            raise self.error("buffers", "no buffers; expected at least one [buffers.NAME] table")
        out, files = [], {}
        for name, spec in table.items():
            buf = self.buffer(name, spec, product)
            if buf.gm and buf.init is not None:
                if buf.file in files:
                    raise self.error(f"buffers.{name}.file", f"input file {buf.file!r} is also used by buffer "
                                                             f"{files[buf.file]}")
                files[buf.file] = name
            out.append(buf)
        return out

    def buffer(self, name: str, spec, product: Product) -> BufferSpec:
        """One ``[buffers.NAME]`` table."""
        path = f"buffers.{name}"
        if not _NAME.match(name):
            raise self.error(path, "a buffer name must be an identifier (letters, digits, _)")
        spec = self.table(spec, path)
        self.check_keys(spec, tuple(dict.fromkeys(GM_KEYS + LOCAL_KEYS)), path)  # a misspelt key is named
        position = self.string(spec.get("position", "GM"), f"{path}.position", "a TPosition name")
        pos = self.position(position, product, f"{path}.position")
        dtype = self.dtype(self.require(spec, "dtype", path, "a dtype name (half, float, int8_t, ...)"),
                           f"{path}.dtype")
        if pos is TPosition.GM and "count" in spec and "shape" not in spec:
            raise self.error(f"{path}.count", "a GM buffer takes a shape (count is for local buffers, which "
                                              "also give a position such as VECIN)")
        if pos is not TPosition.GM and "shape" in spec:
            raise self.error(f"{path}.shape", f"a local buffer ({pos.name}) takes a count of elements, not a "
                                              "shape")
        if pos is TPosition.GM:
            self.check_keys(spec, GM_KEYS, path)
            shape = self.shape(self.require(spec, "shape", path, "a shape (an integer or a list of them)"),
                               f"{path}.shape")
            addr = None
            file = self.string(spec.get("file", name), f"{path}.file", "a file base name")
            if not re.match(r"^[\w-][\w.-]*$", file):
                raise self.error(f"{path}.file", f"{file!r} is not a plain file name (letters, digits, _ . -, "
                                                 "not starting with a dot)")
        else:
            self.check_keys(spec, LOCAL_KEYS, path)
            count = self.integer(self.require(spec, "count", path, "a number of elements"), f"{path}.count",
                                 0, None, "a number of elements")
            shape = (count,)
            addr = (None if spec.get("addr") is None
                    else self.integer(spec["addr"], f"{path}.addr", 0, None, "a byte address"))
            file = name
        nbytes = math.prod(shape) * as_dtype(dtype).itemsize
        if nbytes > self.max_bytes:
            raise self.error(f"{path}.shape" if pos is TPosition.GM else f"{path}.count",
                             f"{nbytes} bytes ({_human(nbytes)}) is more than the limit of {self.max_bytes} bytes "
                             f"({_human(self.max_bytes)}) per buffer; raise it with --max-bytes if you mean it")
        init = self.init(spec.get("init"), f"{path}.init", as_dtype(dtype), math.prod(shape))
        return BufferSpec(name, dtype, pos is TPosition.GM, shape, pos.name, addr, init, file,
                          self.string(spec.get("description", ""), f"{path}.description"))

    def position(self, v: str, product: Product, path: str) -> TPosition:
        key = v.removeprefix("TPosition::").removeprefix("TPosition.")
        try:
            pos = TPosition[key]
        except KeyError:
            names = [p.name for p in TPosition]
            raise self.error(path, f"unknown position {v!r}{_suggest(key, names)}; expected one of: "
                                   f"{', '.join(names)}") from None
        if pos not in POSITIONS[product]:
            have = ", ".join(p.name for p in POSITIONS[product])
            raise self.error(path, f"position {pos.name} does not exist on {product}; positions there: {have}")
        return pos

    def shape(self, raw, path: str) -> tuple:
        if isinstance(raw, list) and raw and all(isinstance(x, list) for x in raw):
            raw = self.choose(path, raw)  # a list of shapes: a sweep
        raw = self.scalar(raw, path) if not isinstance(raw, list) else raw
        dims = raw if isinstance(raw, list) else [raw]
        if not dims:
            raise self.error(path, "empty shape; expected an integer or a list of integers")
        return tuple(self.integer(d, f"{path}[{i}]", 1, None, "a dimension (a positive integer)")
                     for i, d in enumerate(dims))

    def b4_init(self, table: dict, kind: str, path: str, dt: np.dtype, size: int) -> tuple:
        """A packed 4-bit buffer of ``size`` bytes: ``(values expected by a literal, integer range or None)``.
        Numbers are its ``2 * size`` 4-bit values (codes for fp4x2_e1m2_t); ``packed = true`` (values only)
        gives the ``size`` bytes themselves."""
        name = ascend_name(dt)
        packed = table.get("packed", False)
        if not isinstance(packed, bool):
            raise self.error(f"{path}.packed", f"expected true or false, got {_show(packed)}")
        if packed:
            return size, ("bytes", 0, 255)
        if kind in ("uniform", "normal") and B4_VALUES[name] is not None:
            raise self.error(f"{path}.kind", f"{kind!r} needs a floating-point dtype, the buffer is {name} "
                                             f"({B4_VALUES[name][0]}); use \"integers\", \"values\" or \"bits\"")
        return 2 * size, B4_VALUES[name]

    def literal(self, raw, path: str, dt: np.dtype, size: int, name: str | None = None) -> list:
        """``values = [...]``: exactly ``size`` numbers (nested lists are read in C order), each fitting ``dt``
        (``name``: the buffer's type as messages name it)."""
        name = name or ascend_name(dt)
        if not isinstance(raw, list):
            raise self.error(path, f"expected a list of {size} numbers, got {_show(raw)}")
        flat, stack = [], [raw]
        while stack:  # flatten nested lists in order
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, str) and item.startswith("="):
                stack.append(self.scalar(item, path))
            elif isinstance(item, bool) or not isinstance(item, (int, float)):
                raise self.error(path, f"expected numbers, got {_show(item)}")
            else:
                flat.append(item)
            if len(flat) > size:
                break
        if len(flat) != size:
            raise self.error(path, f"{'more than ' if len(flat) > size else ''}{len(flat)} values for a buffer of "
                                   f"{size} elements; give exactly {size}")
        if dt.kind in "iub":
            bad = next((v for v in flat if not float(v).is_integer()), None)
            if bad is not None:
                raise self.error(path, f"{bad!r} is not an integer ({name} buffer)")
            flat = [int(v) for v in flat]
            info = np.iinfo(dt) if dt.kind in "iu" else None
            if info is not None and (min(flat) < info.min or max(flat) > info.max):
                raise self.error(path, f"values [{min(flat)}, {max(flat)}] do not fit {name} "
                                       f"[{info.min}, {info.max}]")
        return flat

    def init(self, raw, path: str, dt: np.dtype, size: int = 0) -> dict | None:
        if raw is None:
            return None
        if isinstance(raw, list) and raw and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                 for x in raw):
            raise self.error(path, f"a list of numbers here is ambiguous: for literal contents write init = {{kind = "
                                   f"\"values\", values = {raw!r}}}; to sweep over constant inputs use a named "
                                   "[sweep] variable (init = \"=v\")")
        if isinstance(raw, list) or (isinstance(raw, str) and raw.startswith("=")):
            raw = self.scalar(raw, path)  # a sweep over inputs, or an expression
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            raw = {"kind": "constant", "value": raw}
        elif isinstance(raw, str):
            if raw == "undefined":
                return None
            raw = {"kind": raw}
        table = self.table(raw, path)
        self.check_keys(table, ("kind", *dict.fromkeys(a for args in INIT_ARGS.values() for a in args)), path)
        kind = self.string(self.require(table, "kind", path, f"an input kind: {', '.join(INIT_ARGS)}"),
                           f"{path}.kind")
        if kind not in INIT_ARGS:
            raise self.error(f"{path}.kind", f"unknown input kind {kind!r}{_suggest(kind, INIT_ARGS)}; expected "
                                             f"one of: {', '.join(INIT_ARGS)}, or \"undefined\"")
        self.check_keys(table, ("kind", *INIT_ARGS[kind]), path)
        out = {"kind": kind}
        b4, ints, name = np.dtype(dt) in B4_TYPES, None, ascend_name(dt)
        if not b4 and "packed" in table:
            raise self.error(f"{path}.packed", f"packed is for the 4-bit types (int4b_t, fp4x2_e2m1_t, "
                                               f"fp4x2_e1m2_t); the buffer is {ascend_name(dt)}")
        if b4:  # the numbers are 4-bit values (or, packed, the bytes)
            size, ints = self.b4_init(table, kind, path, dt, size)
            if ints is not None:
                dt = np.dtype(np.int16)  # (checked as integers; the range below)
        is_float = _is_float(dt)
        if kind in ("uniform", "normal") and not (is_float or dt.kind == "c"):
            raise self.error(f"{path}.kind", f"{kind!r} needs a floating-point dtype, the buffer is "
                                             f"{ascend_name(dt)}; use \"integers\" or \"bits\"")
        for arg, default in INIT_ARGS[kind].items():
            apath = f"{path}.{arg}"
            if arg == "packed":
                if b4 and table.get("packed"):
                    out["packed"] = True
            elif arg == "values":
                out["values"] = self.literal(self.require(table, "values", path, "a list of numbers"), apath, dt,
                                             size, name)
            elif arg == "path":
                p = self.string(self.require(table, "path", path, "a .npy or .bin file"), apath)
                full = p if os.path.isabs(p) else os.path.join(self.base_dir, p)
                if not os.path.isfile(full):
                    raise self.error(apath, f"no such file {full!r}; expected a .npy or raw .bin file (relative "
                                            "paths start at the case file's folder)")
                out["path"] = os.path.normpath(full)
                out["given"] = p
            elif arg in table:
                raw_v = self.scalar(table[arg], apath)
                if dt.kind == "b" and isinstance(raw_v, bool):
                    raw_v = int(raw_v)
                if kind == "integers" or (dt.kind in "iub" and kind in ("arange", "constant")):
                    out[arg] = self.integer(raw_v, apath, what=f"an integer ({kind} on {name})")
                else:
                    # a constant float value may be inf/nan (it is data); distribution parameters must be finite
                    out[arg] = self.number(raw_v, apath, finite=kind != "constant")
            elif default is not None:
                out[arg] = default
            elif kind == "integers" and ints is not None:  # (4-bit: the type's whole range)
                out[arg] = ints[1] if arg == "low" else ints[2] + 1
            elif kind == "integers" and dt.kind in "iu":
                info = np.iinfo(dt)
                out[arg] = int(info.min) if arg == "low" else int(info.max) + 1
            elif kind == "integers" and dt.kind == "b":
                out[arg] = 0 if arg == "low" else 2
            else:
                raise self.error(apath, f"missing key; expected a number ({kind} on {name})")
        if kind == "integers" and not out["low"] < out["high"]:
            raise self.error(path, f"integers: low={out['low']} must be below high={out['high']} (high is "
                                   "exclusive, as in numpy)")
        if kind in ("integers", "constant") and dt.kind in "iu" and not b4:
            info = np.iinfo(dt)
            lo, hi = (out["low"], out["high"] - 1) if kind == "integers" else (out["value"], out["value"])
            if lo < info.min or hi > info.max:
                raise self.error(path, f"{kind}: values [{lo}, {hi}] do not fit {ascend_name(dt)} "
                                       f"[{info.min}, {info.max}]")
        if b4 and ints is not None:
            self.b4_range(out, kind, path, ints)
        return out

    def b4_range(self, out: dict, kind: str, path: str, ints: tuple) -> None:
        """The inputs of a packed 4-bit buffer fit its integer values (int4b_t, fp4x2_e1m2_t codes, bytes)."""
        what, lo_ok, hi_ok = ints
        if kind == "integers":
            lo, hi = out["low"], out["high"] - 1
        elif kind == "constant":
            lo = hi = out["value"]
        elif kind == "values":
            lo, hi = min(out["values"]), max(out["values"])
        else:
            return
        if lo < lo_ok or hi > hi_ok:
            raise self.error(path, f"{kind}: values [{lo}, {hi}] do not fit the {what} [{lo_ok}, {hi_ok}]")

    def ops(self, raw, buffers: dict, out: list, block: int = 0, path: str = "ops") -> list:
        """Append the ops of ``raw`` (a list of op, loop and compute tables) to ``out``, loops unrolled."""
        if not isinstance(raw, list):
            raise self.error(path, f"expected a list of ops ([[{path}]] tables), got {_show(raw)}")
        if not raw:
            raise self.error(path, f"no ops; expected at least one [[{path}]] table")
        for i, item in enumerate(raw):
            p = f"{path}[{i}]"
            table = self.table(item, p)
            if "for" in table or "body" in table or "range" in table:
                self.loop(table, p, buffers, out, block)
            elif "compute" in table:
                out.append(self.compute(len(out), table, p, buffers, block))
            else:
                out.append(self.op(len(out), table, buffers, p, block))
            if len(out) > MAX_OPS:
                raise self.error(p, f"the loops expand into more than {MAX_OPS} ops; split the case or use fewer, "
                                    "larger tiles")
        return out

    def loop(self, table: dict, path: str, buffers: dict, out: list, block: int) -> None:
        """``for = "i"``, ``range = N`` / ``[start, stop]`` / ``[start, stop, step]`` (Python's range),
        ``body = [ops...]`` ([[ops.body]] tables in TOML): the body once per value, ``i`` in its expressions."""
        self.check_keys(table, LOOP_KEYS, path)
        var = self.require(table, "for", path, "the loop variable name (for = \"i\")")
        if not isinstance(var, str) or not var.isidentifier() or var in FUNCTIONS or var in BLOCK_NAMES:
            raise self.error(f"{path}.for", f"expected a loop variable name (an identifier, not one of "
                                            f"{', '.join((*FUNCTIONS, *BLOCK_NAMES))}), got {_show(var)}")
        if var in self.names and var not in self.loop_env:
            raise self.error(f"{path}.for", f"loop variable {var!r} hides the sweep variable of the same name")
        if var in self.loop_env:
            raise self.error(f"{path}.for", f"loop variable {var!r} is already the variable of an enclosing loop")
        raw = self.require(table, "range", path, "a count N, or [start, stop] / [start, stop, step] as in Python")
        rpath = f"{path}.range"
        if isinstance(raw, list):
            if not 1 <= len(raw) <= 3:
                raise self.error(rpath, f"expected N, [start, stop] or [start, stop, step], got {len(raw)} values "
                                        "(a loop range is not a sweep; sweep it with a named [sweep] variable)")
            bounds = [self.integer(self._expr(v, rpath), rpath) for v in raw]
        else:
            bounds = [self.integer(raw, rpath, 0, None, "a loop count (a non-negative integer)")]
        if len(bounds) == 3 and bounds[2] == 0:
            raise self.error(rpath, "step 0; expected a non-zero step")
        values = range(*bounds)
        if len(values) > MAX_OPS:
            raise self.error(rpath, f"{len(values)} iterations; at most {MAX_OPS}")
        body = self.require(table, "body", path, "the loop body: a list of ops ([[ops.body]] tables)")
        saved_env = dict(self.loop_env)
        try:
            for v in values:
                self.names[var] = v
                self.loop_env[var] = v
                self.ops(body, buffers, out, block, f"{path}.body")
        finally:
            self.names.pop(var, None)
            self.loop_env = saved_env

    def _expr(self, raw, path):
        """A loop bound: a number or an ``=expr`` string (never a sweep list)."""
        if isinstance(raw, list):
            raise self.error(path, "a loop bound cannot be a list")
        return self.scalar(raw, path)

    def compute(self, index: int, table: dict, path: str, buffers: dict, block: int) -> ComputeSpec:
        """``compute = "kernel_math.py:add"``, ``buffers = ["xLocal", "yLocal", "zLocal"]``: the user's function,
        called with those tensors (read them with ``.numpy()``, write results with ``t[...] = values``)."""
        self.check_keys(table, COMPUTE_KEYS, path)
        ref = self.string(table["compute"], f"{path}.compute", "\"file.py:function\"")
        file, sep, func = ref.rpartition(":")
        if not sep or not file.endswith(".py") or not func.isidentifier():
            raise self.error(f"{path}.compute", f"{ref!r}: expected \"file.py:function\" (a Python file next to the "
                                                "case file and a function in it)")
        parts = file.replace("\\", "/").split("/")
        if os.path.isabs(file) or any(p in ("", ".", "..") for p in parts):
            raise self.error(f"{path}.compute", f"{file!r}: the compute file must be inside the case file's folder "
                                                "(a relative path without ..)")
        full = os.path.join(self.base_dir, *parts)
        if not os.path.isfile(full):
            raise self.error(f"{path}.compute", f"no such file {full!r} (relative paths start at the case file's "
                                                "folder)")
        _check_function(full, func, lambda m: self.error(f"{path}.compute", m))
        names = table.get("buffers", [])
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise self.error(f"{path}.buffers", f"expected a list of buffer names, got {_show(names)}")
        for n in names:
            if n not in buffers:
                raise self.error(f"{path}.buffers", f"unknown buffer {n!r}{_suggest(n, buffers)}; buffers: "
                                                    f"{', '.join(buffers)}")
        note = self.string(table.get("note", ""), f"{path}.note")
        return ComputeSpec(index, os.path.normpath(full), file, func, tuple(names), note, path,
                           tuple(self.loop_env.items()), block)

    def op(self, i: int, table: dict, buffers: dict, path: str | None = None, block: int = 0) -> OpSpec:
        path = path or f"ops[{i}]"
        api = self.string(self.require(table, "api", path, f"an API name: {', '.join(APIS)}"), f"{path}.api")
        api = API_ALIASES.get(api, api).removeprefix("AscendC::")
        api = API_ALIASES.get(api, api)
        if api not in APIS:
            raise self.error(f"{path}.api", f"unknown op {api!r}{_suggest(api, APIS)}; expected one of: "
                                            f"{', '.join(APIS)}")
        spec = APIS[api]
        keys = [k.rstrip("?") for k in spec.operand_keys()]
        for alias, key in spec.aliases.items():
            if alias in table and key in table:
                raise self.error(f"{path}.{alias}", f"{api}: {alias} and {key} name the same operand; give one")
        table = {spec.aliases.get(k, k): v for k, v in table.items()}
        extra = ("params", "dtype", "note") + (() if spec.tensors else ("dst", "src"))
        self.check_keys(table, tuple(dict.fromkeys(("api",) + tuple(keys) + extra)), path)
        if not spec.tensors:
            for k in ("dst", "src"):
                if k in table and k not in keys:
                    raise self.error(f"{path}.{k}", f"{api} takes no tensors" if not keys else
                                     f"{api} takes no {k}; its tensors: {', '.join(keys)}")
        refs = {}
        for k in spec.operand_keys():
            key = k.rstrip("?")
            if key in table:
                refs[key] = self.ref(table[key], f"{path}.{key}", buffers)
            elif not k.endswith("?"):
                what = {"dst": "the destination buffer name", "src": "the source buffer name"}.get(
                    key, f"the buffer name of {api}'s {key} operand")
                raise self.error(f"{path}.{key}", f"missing key; expected {what}", present=False)
        dst, src = (refs.get("dst"), refs.get(spec.src_key)) if spec.tensors else (None, None)
        operands = tuple((k.rstrip("?"), refs[k.rstrip("?")], None) for k in spec.operands if k.rstrip("?") in refs)
        operands += tuple((k, refs[k], kw) for k, kw in spec.kw_operands.items() if k in refs)
        dtype = None
        if spec.needs_dtype:
            dtype = self.dtype(self.require(table, "dtype", path, f"the element type T of {api}<T>"),
                               f"{path}.dtype")
        elif "dtype" in table:
            raise self.error(f"{path}.dtype", f"{api} takes no dtype (the tensors' dtypes are used)")
        params = self.table(table.get("params", {}), f"{path}.params")
        self.api = api
        args, kwargs = self.params(api, spec, params, f"{path}.params", dtype or
                                   (buffers[src.name].dtype if src is not None else None))
        note = self.string(table.get("note", ""), f"{path}.note")
        writes = tuple(r.name for k, r in refs.items() if k == "dst" or k in spec.writes)
        return OpSpec(i, api, dst, src, tuple(args), tuple(kwargs), dtype, note, path, tuple(self.loop_env.items()),
                      block, operands, writes)

    def ref(self, raw, path: str, buffers: dict) -> Ref:
        if isinstance(raw, str) and raw.startswith("="):
            raise self.error(path, f"{raw!r}: a buffer reference is not an expression; drop the '=' "
                                   f"({raw[1:].strip()!r}): the offset inside [...] takes expressions as it is")
        v = self.string(raw, path, "a buffer name, optionally with an element offset: name or name[k]")
        m = _REF.match(v)
        if not m:
            raise self.error(path, f"{v!r} is not a buffer reference; expected name or name[k]")
        name, offset = m.group(1), 0
        if name not in buffers:
            raise self.error(path, f"unknown buffer {name!r}{_suggest(name, buffers)}; buffers: "
                                   f"{', '.join(buffers)}")
        if m.group(2) is not None:
            try:
                offset = evaluate(m.group(2), self.names)
            except ExprError as exc:
                raise self.error(path, str(exc)) from None
            offset = self.integer(offset, path, 0, buffers[name].size, f"an element offset in [0, "
                                                                        f"{buffers[name].size}]")
        return Ref(name, offset)

    def params(self, api: str, spec: ApiSpec, params: dict, path: str, dtype):
        known, forms = _param_forms(spec)
        for k in params:
            if k not in known:
                what = "struct" if struct_class(k) else "parameter"
                raise self.error(f"{path}.{k}", f"{api} takes no {what} {k!r}{_suggest(k, known)}; expected "
                                                f"{_forms(api, spec)}")
        positional = [k for k in params if k not in spec.keywords]
        given = set(positional)
        form = next((f for f, required, allowed in forms if required <= given <= allowed), None)
        if form is None:
            given = ", ".join(positional) or "nothing"
            raise self.error(path, f"{api} got {given}; expected {_forms(api, spec)}")
        args = [self.arg(k, params[k], f"{path}.{k}", dtype) for k in (x.rstrip("?") for x in form) if k in params]
        kwargs = [(spec.keywords[k], self.arg(k, params[k], f"{path}.{k}", dtype)) for k in params
                  if k in spec.keywords]
        return args, kwargs

    def arg(self, key: str, raw, path: str, dtype) -> Arg:
        cls = struct_class(key)
        if cls is not None:
            return Arg(key, "struct", self.struct(cls, raw, path, dtype), cls.__name__)
        kind, detail = APIS[self.api].kinds.get(key) or ARG_KINDS[key]
        if kind in ("word", "fixpipe_config", "names"):
            return Arg(key, {"word": "int", "names": "name"}.get(kind, kind), self.cube_value(kind, detail, raw, path))
        if kind == "int":
            lo, hi, what = detail
            return Arg(key, kind, self.integer(raw, path, lo, hi, f"an integer, {what}"))
        if kind == "bool":
            v = self.scalar(raw, path)
            if not isinstance(v, bool):
                raise self.error(path, f"expected true or false, got {_show(v)}")
            return Arg(key, kind, v)
        if kind == "enum":
            v = self.scalar(raw, path)
            members = enum_class(detail).__members__
            text = str(v).split("::")[-1].split(".")[-1]
            hit = next((m for m, e in members.items() if text == m or (isinstance(v, int) and e.value == v)), None)
            if hit is None:
                raise self.error(path, f"expected a {detail}: {', '.join(members)}, got {_show(v)}"
                                       f"{_suggest(text, members) if isinstance(v, str) else ''}")
            return Arg(key, kind, hit, detail)
        if kind == "array":
            return Arg(key, kind, self.array(raw, path, *detail))
        if kind == "value":
            finite = dtype is None or not _is_float(as_dtype(dtype))
            return Arg(key, kind, self.number(raw, path, f"a number (the {dtype} value)", finite=finite))
        # a list of structs, e.g. dstSliceInfo = [{...}, {...}]
        scls = struct_class(detail)
        if isinstance(raw, list) and raw and all(isinstance(x, list) for x in raw):
            raw = self.choose(path, raw)
        if not isinstance(raw, list) or not raw:
            raise self.error(path, f"expected a non-empty list of {detail} tables, got {_show(raw)}")
        return Arg(key, kind, tuple(self.struct(scls, x, f"{path}[{j}]", dtype) for j, x in enumerate(raw)),
                   detail)

    def cube_value(self, kind: str, detail, raw, path: str, owner: str = "", dtype=None):
        """A value of the cube's parameter kinds (a struct field typed ``T``, or an API parameter): ``enum`` (a
        member name, did-you-mean on a typo), ``names`` (one of a list of names), ``word`` (a quantisation word:
        an integer or a table of :data:`WORD_FIELDS`), ``int`` (a range), ``substruct`` (a nested struct, or an
        integer), ``fixpipe_config`` and ``any`` (a scalar the op validates)."""
        what = f"{self.api}: {owner + '.' if owner else ''}{path.rsplit('.', 1)[-1]}"
        if kind == "word":
            v = raw if isinstance(raw, dict) else self.scalar(raw, path)
            if isinstance(v, dict):
                return self.word(v, path, what)
            return self.integer(v, path, -(2**63), 2**64 - 1, f"a quantisation word (uint64_t; int64_t accepted) or a "
                                                              f"table of {', '.join(WORD_FIELDS)}")
        if kind == "fixpipe_config":
            return self.fixpipe_config(raw, path, what)
        if kind == "substruct":
            if isinstance(raw, dict):
                if len(raw) != 1 or next(iter(raw)) not in detail:
                    names = ", ".join(raw) or "nothing"
                    raise self.error(path, f"{what}: got {names}; expected a table with one of {', '.join(detail)} "
                                           f"({{{detail[0]} = {{...}}}}), or an integer (NZ output)"
                                           f"{_suggest(next(iter(raw)), detail) if len(raw) == 1 else ''}")
                name, fields = next(iter(raw.items()))
                return {name: self.struct(struct_class(name), fields, f"{path}.{name}", dtype)}
            return self.integer(raw, path, 0, 255, f"{' or '.join(detail)} as a table, or an integer (uint8_t)")
        v = self.scalar(raw, path)
        if kind == "int":
            lo, hi, ctype = detail
            return self.integer(v, path, lo, hi, f"an integer ({ctype})")
        if kind in ("enum", "names"):
            names = list(enum_class(detail).__members__) if kind == "enum" else list(detail)
            text = v.split("::")[-1].split(".")[-1] if isinstance(v, str) else None
            if text not in names:
                typename = detail if kind == "enum" else f"{path.rsplit('.', 1)[-1]} name"
                raise self.error(path, f"{what}={v!r} is not a {typename}{_suggest(text, names) if text else ''}; "
                                       f"expected one of: {', '.join(names)}")
            return text
        if isinstance(v, (dict, list)) or v is None:
            raise self.error(path, f"{what}: expected a number, true/false or a name, got {_show(v)}")
        return v

    def word(self, table: dict, path: str, what: str) -> int:
        """``{scale = 0.5, offset = -3, sign = true, shift = 1, mcb = false}`` -> the QUANT_PRE word."""
        from ..cube.quant import make_word

        self.check_keys(table, tuple(WORD_FIELDS), path)
        if "scale" not in table:
            raise self.error(f"{path}.scale", f"{what}: missing key; expected {WORD_FIELDS['scale']}", present=False)
        kw = {}
        for k, raw in table.items():
            p = f"{path}.{k}"
            v = self.scalar(raw, p)
            if k == "scale":
                kw[k] = float(self.number(v, p, f"{what}.scale: {WORD_FIELDS['scale']}"))
                if kw[k] != 0 and not 2.0**-126 <= abs(float(np.float32(kw[k]))) < float("inf"):
                    raise self.error(p, f"{what}.scale={v!r} is not a normal float32; expected {WORD_FIELDS[k]}")
            elif k in ("sign", "mcb"):
                if not isinstance(v, bool):
                    raise self.error(p, f"{what}.{k}={v!r}: expected true or false")
                kw[k] = v
            else:
                lo, hi = (-256, 255) if k == "offset" else (1, 16)
                kw[k] = self.integer(v, p, lo, hi, f"{what}.{k}: {WORD_FIELDS[k]}")
        return make_word(**kw)

    def fixpipe_config(self, raw, path: str, what: str) -> dict:
        """``"CFG_NZ"`` / ``"CFG_ROW_MAJOR"`` / ``"CFG_COLUMN_MAJOR"`` (or the layout name), or ``{format = "NZ",
        isToUB = true}`` -> ``{"format": ..., "isToUB": ...}``."""
        layouts = list(dict.fromkeys(FIXPIPE_CONFIGS.values()))
        if isinstance(raw, dict):
            self.check_keys(raw, ("format", "isToUB"), path)
            fmt, to_ub = raw.get("format", "ROW_MAJOR"), raw.get("isToUB", False)
            fpath = f"{path}.format"
        else:
            fmt, to_ub, fpath = raw, False, path
        fmt = self.scalar(fmt, fpath)
        text = fmt.split("::")[-1] if isinstance(fmt, str) else None
        text = FIXPIPE_CONFIGS.get(text, text)
        if text not in layouts:
            allowed = list(FIXPIPE_CONFIGS) + layouts
            raise self.error(fpath, f"{what}={fmt!r} is not a Fixpipe configuration"
                                    f"{_suggest(fmt, allowed) if isinstance(fmt, str) else ''}; expected one of: "
                                    f"{', '.join(allowed)}, or {{format = \"NZ\", isToUB = true}}")
        to_ub = self.scalar(to_ub, f"{path}.isToUB")
        if not isinstance(to_ub, bool):
            raise self.error(f"{path}.isToUB", f"{what}.isToUB={to_ub!r}: expected true or false")
        return {"format": text, "isToUB": to_ub}

    def struct(self, cls, raw, path: str, dtype) -> dict:
        """Field table -> the struct's full field dict (C++ defaults for fields not given)."""
        from ..errors import ParamTypeError

        table = self.table(raw, path)
        inst = cls()
        seen = {}
        for k, raw_v in table.items():
            f = cls._index.get(k)
            if f is None:
                names = [x.name for x in cls.FIELDS]
                raise self.error(f"{path}.{k}", f"{cls.__name__} has no field {k!r}{_suggest(k, names)}; fields: "
                                                f"{', '.join(names)}")
            if f.name in seen:
                raise self.error(f"{path}.{k}", f"field {f.name} given twice (as {seen[f.name]} and {k})")
            seen[f.name] = k
            if isinstance(f.default, tuple):  # a C array field, e.g. padList = [1, 1, 1, 1]
                setattr(inst, f.name, self.array(raw_v, f"{path}.{k}", len(f.default), 0, 255, "values"))
                continue
            if f.ctype == "T" and raw_v is None and f.default is None:  # JSON null: not set (a manifest record)
                continue
            if f.ctype == "T" and (f.name in T_FIELDS or cls.__module__.startswith("fastcopy.cube")):
                kind, detail = T_FIELDS.get(f.name, ("any", None))
                setattr(inst, f.name, self.cube_value(kind, detail, raw_v, f"{path}.{k}", cls.__name__, dtype))
                continue
            v = self.scalar(raw_v, f"{path}.{k}")
            if isinstance(v, (str, dict)) or v is None:
                ctype = "T" if f.ctype == "T" else _ctype_text(f.ctype)
                want = "true or false" if f.ctype == "bool" else f"a number ({ctype})"
                raise self.error(f"{path}.{k}", f"expected {want}, got {_show(v)}")
            try:
                setattr(inst, f.name, v)
            except ParamTypeError as exc:
                raise self.error(f"{path}.{k}", str(exc)) from None
            if f.ctype not in ("T", "bool"):  # the C++ type on this product (some fields are wider on 350)
                c, lo, hi = CTYPES[cls._product_types(f).get(self.target, f.ctype)]
                value = getattr(inst, f.name)
                if not lo <= value <= hi:
                    raise self.error(f"{path}.{k}", f"{cls.__name__}: {f.name}={value} does not fit {c} "
                                                    f"[{lo}, {hi}] on {self.target}; expected a {c} value")
        return inst.as_dict()

    def compare(self, raw, path: str, buffers: dict) -> dict:
        """``compare = "name"`` or ``compare = {rule = "name", option = value, ...}`` -> the output's options."""
        from .verify import RULES

        table = raw if isinstance(raw, dict) else {"rule": raw}
        rule_path = f"{path}.rule" if isinstance(raw, dict) else path
        rule = self.string(self.require(table, "rule", path, "a compare rule name"), rule_path,
                           "a compare rule name")
        if rule not in RULES:
            raise self.error(rule_path, f"unknown compare rule {rule!r}{_suggest(rule, RULES)}; rules: "
                                        f"{', '.join(RULES)}")
        spec = _rule_options(rule)
        self.check_keys(table, ("rule",) + tuple(spec), path)
        opts = {}
        for key, (kind, what) in spec.items():
            p = f"{path}.{key}"
            if key not in table:
                if key in ("a", "b"):
                    raise self.error(p, f"missing key; compare rule {rule!r} needs {what}", present=False)
                continue
            raw_v = table[key]
            if kind == "buffer":
                name = self.string(raw_v, p, what)
                buf = buffers.get(name)
                if buf is None or not buf.gm or buf.init is None:
                    why = ("unknown buffer" + _suggest(name, buffers) if buf is None else
                           "a local buffer" if not buf.gm else "a GM buffer without init (not an input file)")
                    inputs = [b.name for b in buffers.values() if b.gm and b.init is not None]
                    raise self.error(p, f"compare rule {rule!r}: {key}={name!r} is {why}; expected {what}, one of "
                                        f"the input buffers: {', '.join(inputs) or 'none'}")
                opts[key] = name
            elif kind == "bool":
                v = self.scalar(raw_v, p)
                if not isinstance(v, bool):
                    raise self.error(p, f"compare rule {rule!r}: {key}={v!r}; expected true or false ({what})")
                opts[key] = v
            elif kind == "number":
                opts[key] = float(self.number(raw_v, p, f"a number ({what})"))
            elif kind == "int":
                opts[key] = self.integer(raw_v, p, 1, 64, f"an integer in [1, 64] ({what})")
            else:  # ints: k_chunks
                if not isinstance(raw_v, list) or not raw_v:
                    raise self.error(p, f"compare rule {rule!r}: expected a list of integers ({what}), got "
                                        f"{_show(raw_v)}")
                opts[key] = [self.integer(x, f"{p}[{j}]", 1, None, "a positive k") for j, x in enumerate(raw_v)]
        out = {"compare": rule}
        if opts:
            out["compare_options"] = tuple(opts.items())
        return out

    def outputs(self, raw, buffers: dict) -> list:
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw:
            raise self.error("outputs", f"expected a non-empty list of buffer names, got {_show(raw)}")
        names, opts = [], []
        for i, entry in enumerate(raw):
            path = f"outputs[{i}]"
            opt = {}
            if isinstance(entry, dict):
                self.check_keys(entry, OUTPUT_KEYS, path)
                name = self.string(self.require(entry, "buffer", path, "a buffer name"), f"{path}.buffer")
                if "file" in entry:
                    file = self.string(entry["file"], f"{path}.file")
                    if not re.match(r"^[\w-][\w.-]*$", file):
                        raise self.error(f"{path}.file", f"{file!r} is not a plain file name (letters, digits, "
                                                         "_ . -, not starting with a dot)")
                    opt["file"] = file
                if "allow_undefined" in entry:
                    v = self.scalar(entry["allow_undefined"], f"{path}.allow_undefined")
                    if not isinstance(v, bool):
                        raise self.error(f"{path}.allow_undefined", f"expected true or false, got {_show(v)}")
                    opt["allow_undefined"] = v
                for k in ("rtol", "atol"):
                    if k in entry:
                        opt[k] = float(self.number(entry[k], f"{path}.{k}", "a finite non-negative number"))
                        if opt[k] < 0:
                            raise self.error(f"{path}.{k}", f"{opt[k]} is negative; expected a tolerance >= 0")
                if "compare" in entry:
                    opt.update(self.compare(entry["compare"], f"{path}.compare", buffers))
            else:
                name = self.string(entry, path, "a buffer name")
            if name not in buffers:
                raise self.error(path, f"unknown buffer {name!r}{_suggest(name, buffers)}; buffers: "
                                       f"{', '.join(buffers)}")
            if name in names:
                raise self.error(path, f"buffer {name!r} is listed twice")
            names.append(name)
            opts.append(opt)
        out = []
        for name, opt in zip(names, opts):
            base = opt.pop("file", None) or ("golden" if len(names) == 1 else name)
            out.append(OutputSpec(name, f"output/{base}.bin", f"output/{base}.mask.bin", **opt))
        return out

    def check_files(self, buffers, outputs) -> None:
        """Every file the program writes (inputs, outputs, masks, the manifest) is distinct. Apart from
        :meth:`outputs`, which then reads only the buffers it names (a sweep template reuses it while those stay
        the same)."""
        files = [f"input/{b.file}.bin" for b in buffers if b.gm and b.init is not None]
        for o in outputs:
            files += [o.file, o.mask]
        try:
            check_collisions(files + ["manifest.json"])
        except GoldenWriteError as exc:
            raise self.error("outputs", str(exc)) from None


def _rule_options(rule: str) -> dict:
    """The options a compare rule takes in a case file (``compare = {rule = "mmad", a = "aGm", ...}``)."""
    from . import mmadrule

    return mmadrule.OPTIONS if rule == mmadrule.NAME else {}


def default_max_bytes() -> int:
    """The default per-buffer limit: a quarter of the machine's physical memory (1 GiB when unknown)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 4 << 30
    return max(1 << 20, total // MAX_BYTES_FRACTION)


#: The default per-buffer byte limit is physical memory // MAX_BYTES_FRACTION.
MAX_BYTES_FRACTION = 4


def _human(n: int) -> str:
    for unit, k in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << k:
            return f"{n / (1 << k):.1f} {unit}"
    return f"{n} B"


def _check_function(path: str, func: str, error) -> None:
    """``func`` is a top-level function of the Python file ``path`` (parsed, never run)."""
    import ast

    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError) as exc:
        raise error(f"cannot read the compute file {path}: {exc}") from None
    defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if func not in defs:
        raise error(f"{os.path.basename(path)} defines no function {func!r}{_suggest(func, defs)}; functions: "
                    f"{', '.join(defs) or 'none'}")


def _ctype_text(ctype: str) -> str:
    return CTYPES[ctype][0]


@lru_cache(maxsize=None)
def _products() -> str:
    return ", ".join(f"{p.name} ({p.display_name})" for p in Product)


def _forms(api: str, spec: ApiSpec) -> str:
    def one(form):
        return "{" + ", ".join(k.rstrip("?") + (" (optional)" if k.endswith("?") else "") for k in form) + "}"

    text = " or ".join(one(f) for f in spec.forms)
    if spec.keywords:
        text += f"; optional: {', '.join(spec.keywords)}"
    return f"params {text}"


def _is_float(dt: np.dtype) -> bool:
    if dt.kind == "f":
        return True
    if dt.kind != "V" or dt.names:
        return False
    try:
        import ml_dtypes

        ml_dtypes.finfo(dt)
        return True
    except (ValueError, TypeError):
        return False

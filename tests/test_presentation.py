"""Structs and ops explain themselves: signatures, generated docstrings, reprs, help() text."""

import inspect
import pydoc

import numpy as np
import pytest

import fastcopy
from fastcopy import apidoc
from fastcopy.params import CTYPES, Field, ParamStruct
from fastcopy.products import Product
from fastcopy.structdoc import c_type_text


def _structs():
    out, todo = [], list(ParamStruct.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("fastcopy"):
            out.append(cls)
        todo += cls.__subclasses__()
    return sorted(out, key=lambda c: c.__name__)


STRUCTS = _structs()


def test_every_public_struct_is_covered():
    names = {c.__name__ for c in STRUCTS}
    assert {"DataCopyParams", "DataCopyExtParams", "DataCopyPadExtParams", "DataCopyPadParams", "Nd2NzParams",
            "Nz2NdParamsFull", "SliceInfo", "LoopModeParams"} <= names


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__name__)
def test_signature_is_the_fields_in_order(cls):
    sig = inspect.signature(cls)
    assert [p.name for p in sig.parameters.values()] == [f.name for f in cls.FIELDS]
    assert [p.default for p in sig.parameters.values()] == [f.default for f in cls.FIELDS]
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in sig.parameters.values())
    # the signature is the truth: binding it and constructing agree
    args = sig.bind().arguments
    assert cls(**args) == cls()


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__name__)
def test_docstring_lists_every_field_with_type_default_unit_range(cls):
    doc = cls.__doc__
    for f in cls.FIELDS:
        line = next(ln for ln in doc.splitlines() if ln.startswith(f.name + " ") or ln.startswith(f.name + ":"))
        assert c_type_text(cls.__name__, f, CTYPES) in line
        assert f"default {f.default!r}" in line
        entry = doc[doc.index(line):]
        flat = " ".join(entry.split())
        if f.unit:
            assert f"Unit: {' '.join(f.unit.split())}" in flat
        if f.range:
            assert f"Range: {' '.join(f.range.split())}" in flat
        if f.ctype not in ("T", "bool"):
            lo, hi = CTYPES[f.ctype][1:]
            assert f"[{lo}, {hi}]" in flat
    assert "docs/semantics.md" in doc
    # the hand-written summary is kept, first
    assert doc.strip()[0].isalpha()


def test_product_specific_types_are_shown():
    doc = fastcopy.Nd2NzParams.__doc__
    assert "srcDValue (alias" not in doc
    assert "srcDValue : uint16_t (uint64_t on Atlas 350), default 0" in doc
    assert "srcStride : uint32_t (int64_t on Atlas 350), default 0" in fastcopy.DataCopyExtParams.__doc__
    assert "srcGap (alias srcStride) : uint16_t, default 0" in fastcopy.DataCopyParams.__doc__


def test_help_shows_fields_not_args_kwargs():
    text = pydoc.render_doc(fastcopy.DataCopyParams, renderer=pydoc.plaintext)
    assert "DataCopyParams(blockCount: int = 1, blockLen: int = 0, srcGap: int = 0, dstGap: int = 0)" in text
    assert "blockLen : uint16_t, default 0" in text
    assert "<fastcopy.params.Field object" not in text
    assert "Field('blockCount', 'uint16', 1)" in text


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__name__)
def test_repr_round_trips(cls):
    p = cls()
    for f in cls.FIELDS:
        if f.ctype not in ("T", "bool") and f.range != "0":
            setattr(p, f.name, 1)
    text = repr(p)
    assert text.startswith(cls.__name__ + "(") and all(f"{f.name}=" in text for f in cls.FIELDS)
    assert eval(text, {cls.__name__: cls, "np": np}) == p  # noqa: S307 (our own repr)


def test_repr_of_numpy_padding_value_round_trips():
    p = fastcopy.DataCopyPadExtParams(True, 1, 2, np.float16(1.5))
    q = eval(repr(p), {"DataCopyPadExtParams": fastcopy.DataCopyPadExtParams, "np": np})  # noqa: S307
    assert q == p and type(q.paddingValue) is np.float16


def test_a_new_struct_documents_itself():
    class CubeThing(ParamStruct):
        """A struct a later engineer adds."""

        FIELDS = (Field("mSize", "uint16", 16, doc="Rows of the result", unit="elements", range="[1, 4095]"),
                  Field("enable", "bool", False))

    assert str(inspect.signature(CubeThing)) == "(mSize: int = 16, enable: bool = False)"
    assert CubeThing.__doc__.startswith("A struct a later engineer adds.")
    assert "mSize : uint16_t, default 16" in CubeThing.__doc__
    assert "Rows of the result. Unit: elements. Range: [1, 4095] (C++ type: [0, 65535])." in CubeThing.__doc__
    assert "enable : bool, default False" in CubeThing.__doc__
    assert repr(CubeThing(3)) == "CubeThing(mSize=3, enable=False)"


# --------------------------------------------------------------------------------------------- op docstrings
FORMS = ["DataCopy(dst, src, count)", "DataCopyParams(blockCount, blockLen, srcGap, dstGap)", "Nd2NzParams",
         "Nz2NdParamsFull", "dstSliceInfo, srcSliceInfo, dimValue=1"]


def test_datacopy_help_documents_every_form():
    doc = fastcopy.DataCopy.__doc__
    for form in FORMS:
        assert form in doc
    assert len(doc.splitlines()) > 40
    from fastcopy import api

    for kind in api.DATACOPY_FORMS:  # every form of the dispatch, cube ones included
        assert f"{kind.__name__}(" in doc, kind


def test_forms_registered_later_are_listed_from_their_summary():
    class LaterParams(ParamStruct):
        """LATER: a form added by another op. More text."""

        FIELDS = (Field("n", "uint16", 0),)

    text = apidoc.more_forms("DataCopy(dst, src, count)", ["count", int, LaterParams])
    assert "``DataCopy(dst, src, LaterParams(...))``: LATER: a form added by another op." in text
    assert "help(fastcopy.LaterParams)" in text
    assert apidoc.more_forms("uses LaterParams( already", [LaterParams]) == ""


@pytest.mark.parametrize("func, ops", [
    (fastcopy.DataCopy, ["DataCopy", "DataCopy(Nd2NzParams)", "DataCopy(Nz2NdParamsFull)", "DataCopy(SliceInfo)"]),
    (fastcopy.DataCopyPad, ["DataCopyPad"]),
])
def test_op_help_has_current_path_tables(func, ops):
    doc = func.__doc__
    for op in ops:
        table, _ = apidoc.OP_TABLES[op]
        assert apidoc.path_text(table) in doc
        flat = " ".join(doc.split())
        for product in Product:
            for src, dst in table.get(product, {}):
                assert f"{src}->{dst}" in flat
        for product in apidoc.missing_products(table):
            assert product.display_name in flat


def test_datacopy_pad_help_documents_every_form():
    doc = fastcopy.DataCopyPad.__doc__
    for form in ("DataCopyPad(local, gm, copyParams, padParams", "DataCopyPad(gm, local, copyParams",
                 "DataCopyPad(l1, ub, copyParams, nd2nzParams", "PaddingMode.Compact", "SetPadValue"):
        assert form in doc


def test_generated_rules_follow_the_data(monkeypatch):
    from fastcopy import products

    monkeypatch.setattr(apidoc, "ZERO_IS_NOOP", frozenset({products.Product.ATLAS_350}))
    assert "is a no-op on Atlas 350 and an error elsewhere" in " ".join(apidoc.datacopy_rules().split())


@pytest.mark.parametrize("name", ["to_nz", "from_nz", "nd2nz_params", "nz2nd_params", "slice_infos",
                                  "SetPadValue", "SetLoopModePara", "ResetLoopModePara", "GlobalTensor", "TPipe"])
def test_helpers_are_documented(name):
    doc = getattr(fastcopy, name).__doc__
    assert doc and len(doc.split()) >= 8


# ----------------------------------------------------------------------------- docstrings made when first read
def test_struct_docs_are_made_when_first_read_and_equal_the_eager_ones():
    """``import fastcopy`` builds no struct docstring (~2.4 ms); the first read makes and keeps it, the same text
    and signature as building them when the class is made."""
    import subprocess
    import sys

    from fastcopy import structdoc

    code = ("import fastcopy, fastcopy.params as p\n"
            "from fastcopy.structdoc import Generated\n"
            "cs = [c for c in vars(p).values() if isinstance(c, type) and issubclass(c, p.ParamStruct) "
            "and c is not p.ParamStruct]\n"
            "assert cs\n"
            "print(all(type(c.__dict__['__doc__']) is Generated and type(c.__dict__['__signature__']) is Generated "
            "for c in cs))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"

    class LaterThing(ParamStruct):
        """A struct made after import."""

        FIELDS = (Field("mSize", "uint16", 16, unit="elements"),)

    assert type(LaterThing.__dict__["__doc__"]) is structdoc.Generated
    inst = LaterThing(3)
    assert inst.__doc__ == structdoc.docstring(LaterThing, "A struct made after import.", CTYPES)  # via an instance
    assert LaterThing.__dict__["__doc__"] == inst.__doc__  # kept: made once
    assert inspect.signature(LaterThing) == structdoc.signature(LaterThing)
    assert isinstance(LaterThing.__dict__["__signature__"], inspect.Signature)
    for cls in STRUCTS:
        assert cls.__doc__ == structdoc.docstring(cls, cls._summary, CTYPES)
        assert inspect.getdoc(cls) == inspect.cleandoc(cls.__doc__)

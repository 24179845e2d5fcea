"""How parameter structs present themselves: a real ``__signature__`` and a docstring generated from the field
table (C++ type per product, default, unit, range), so ``help()``, ``inspect.signature`` and IDEs show the fields.

Presentation only: :class:`fastcopy.params.ParamStruct` calls :func:`present` for every subclass it creates, so a
new struct (the cube structs included) documents itself from its ``FIELDS`` (``Field(..., doc=, unit=, range=)``
fill the table; a class attribute ``REFERENCE = "docs/cube-in.md"`` names its page). Nothing here validates.
This module imports no fastcopy module but :mod:`fastcopy.products` (the per-product field types).
"""

from __future__ import annotations

import inspect

#: where the structs are described in prose
REFERENCE_DOC = "docs/semantics.md"

_ANNOTATION = {"T": object, "bool": bool}


def c_type_text(struct_name: str, field, ctypes: dict) -> str:
    """``uint32_t``, or ``uint32_t (int64_t on Atlas 350)`` where a product widens the field, or ``T``."""
    if field.ctype == "T":
        return "T (the copy's element type)"
    from .products import FIELD_TYPES

    base = ctypes[field.ctype][0]
    wider = FIELD_TYPES.get((struct_name, field.name), {})
    if not wider:
        return base
    by_type: dict[str, list] = {}
    for product, t in wider.items():
        by_type.setdefault(ctypes[t][0], []).append(product.display_name)
    extra = "; ".join(f"{t} on {', '.join(names)}" for t, names in by_type.items())
    return f"{base} ({extra})"


def type_range_text(field, ctypes: dict) -> str:
    if field.ctype in ("T", "bool"):
        return ""
    _, lo, hi = ctypes[field.ctype]
    return f"[{lo}, {hi}]"


def signature(cls) -> inspect.Signature:
    """``(blockCount: int = 1, blockLen: int = 0, ...)``: the constructor, positional or keyword, in field order."""
    params = [inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=f.default,
                                annotation=_ANNOTATION.get(f.ctype, int)) for f in cls.FIELDS]
    return inspect.Signature(params)


def call_text(cls) -> str:
    """``DataCopyParams(blockCount=1, blockLen=0, srcGap=0, dstGap=0)``."""
    return f"{cls.__name__}({', '.join(f'{f.name}={f.default!r}' for f in cls.FIELDS)})"


def field_lines(cls, ctypes: dict) -> list[str]:
    """One numpydoc-style entry per field: name (aliases), C++ type, default; then meaning, unit and range."""
    lines = []
    for f in cls.FIELDS:
        names = f.name + (f" (alias {', '.join(f.aliases)})" if f.aliases else "")
        lines.append(f"{names} : {c_type_text(cls.__name__, f, ctypes)}, default {f.default!r}")
        parts = []
        if f.doc:
            parts.append(f.doc.rstrip(".") + ".")
        if getattr(f, "unit", ""):
            parts.append(f"Unit: {f.unit}.")
        rng = getattr(f, "range", "")
        tr = type_range_text(f, ctypes)
        if rng:
            parts.append(f"Range: {rng}" + (f" (C++ type: {tr})." if tr else "."))
        elif tr:
            parts.append(f"Range: the C++ type's, {tr}.")
        if parts:
            lines.extend(_wrap(" ".join(parts), "    "))
    return lines


def docstring(cls, summary: str, ctypes: dict) -> str:
    """The struct's own ``summary``, then the generated field table and how to use the struct."""
    head = [summary, ""] if summary else []
    body = ["Fields, in constructor order (positional, or by keyword)", "-" * 56, *field_lines(cls, ctypes), "",
            "Set fields by attribute as in kernel code (``p.blockLen = 8``). A value is checked against its C++ type",
            "when it is set and against the op's documented ranges (which may depend on the product) when the",
            f"struct is used. Reference: {getattr(cls, 'REFERENCE', REFERENCE_DOC)}."]
    return "\n".join(head + body)


def present(cls, ctypes: dict) -> None:
    """Give a ParamStruct subclass its signature and generated docstring (called once, when the class is made;
    both are made when first read: ``help()``, ``inspect.signature``, an IDE)."""
    cls._summary = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
    cls.__doc__ = Generated("__doc__", lambda c: docstring(c, c._summary, ctypes))
    cls.__signature__ = Generated("__signature__", signature)


class Generated:
    """A class attribute made from the class the first time it is read, then stored in its place.

    ``import fastcopy`` makes every struct class; their docstrings take ~2.4 ms to build, which every process (a
    batch, a short script) would pay without reading one. The class's ``__doc__`` may be such a descriptor:
    ``type`` calls its ``__get__`` when the class's ``__doc__`` is read, as ``help()`` and ``inspect.getdoc`` do;
    ``inspect.signature`` reads ``__signature__`` as an attribute of the class."""

    __slots__ = ("name", "make")

    def __init__(self, name: str, make):
        self.name, self.make = name, make

    def __get__(self, obj, owner=None):
        cls = owner if owner is not None else type(obj)
        value = self.make(cls)
        if cls.__dict__.get(self.name) is self:
            setattr(cls, self.name, value)
        return value


def _wrap(text: str, indent: str, width: int = 112) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent) or [indent.rstrip()]

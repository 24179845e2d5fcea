"""Generated documentation: the path / element-type / product tables of every op, from the data in
:mod:`fastcopy.products`, as text for docstrings and as Markdown for docs/semantics.md.

The tables are never written by hand, so ``help(fastcopy.DataCopy)`` and docs/semantics.md cannot drift from
what the planners accept. ``python docs/make_tables.py`` rewrites the generated blocks of docs/semantics.md
(between ``<!-- generated:NAME -->`` and ``<!-- end:NAME -->``); a test checks they are current.
"""

from __future__ import annotations

import inspect
import sys
import textwrap

from .dtypes import ascend_name
from .products import (ALIGN, ALIGN_GM, DATACOPY_CONVERT, DATACOPY_PATHS, DATACOPYPAD_PATHS, ND2NZ_PATHS,
                       NZ2ND_PATHS, PAD_350_ENGINE, SET_PAD_VALUE, SLICE_PATHS, ZERO_IS_NOOP, Phys, Product,
                       dtype_list)

#: op name -> (products table, what the (UB, L1) path means there)
OP_TABLES = {
    "DataCopy": (DATACOPY_PATHS, "UB->L1 is the VECIN/VECCALC/VECOUT -> A1/B1/TSCM copy"),
    "DataCopyPad": (DATACOPYPAD_PATHS, "UB->L1 is the two-stage UB -> TSCM form with Nd2NzParams"),
    "DataCopy(Nd2NzParams)": (ND2NZ_PATHS, "UB->L1 is VECIN/VECCALC/VECOUT -> TSCM"),
    "DataCopy(Nz2NdParamsFull)": (NZ2ND_PATHS, "UB->GM is VECOUT -> GM (also CO2 -> GM where CO2 is UB)"),
    "DataCopy(SliceInfo)": (SLICE_PATHS, ""),
}


def _path(p: tuple) -> str:
    return f"{p[0]}->{p[1]}"


def _groups(table: dict) -> list[tuple[list[Product], list[tuple[list[tuple], object]]]]:
    """Products with identical tables grouped; in each, paths with identical dtype sets grouped (table order)."""
    by_table: dict = {}
    for product in Product:
        paths = table.get(product)
        if not paths:
            continue
        key = tuple(paths.items())
        by_table.setdefault(key, []).append(product)
    out = []
    for key, products in by_table.items():
        rows: list = []
        for path, dtypes in key:
            for row in rows:
                if row[1] == dtypes:
                    row[0].append(path)
                    break
            else:
                rows.append(([path], dtypes))
        out.append((products, rows))
    return out


def missing_products(table: dict) -> list[Product]:
    return [p for p in Product if not table.get(p)]


def path_text(table: dict, indent: str = "    ", width: int = 112) -> str:
    """Plain-text table for docstrings: per product group, ``paths: element types``."""
    lines = []
    for products, rows in _groups(table):
        lines.append(indent + ", ".join(p.display_name for p in products) + ":")
        for paths, dtypes in rows:
            text = f"{', '.join(_path(p) for p in paths)}: {dtype_list(dtypes)}"
            lines += textwrap.wrap(text, width, initial_indent=indent * 2, subsequent_indent=indent * 3)
    none = missing_products(table)
    if none:
        lines += textwrap.wrap("Not available on: " + ", ".join(p.display_name for p in none), width,
                               initial_indent=indent, subsequent_indent=indent * 2)
    return "\n".join(lines)


def path_markdown(table: dict) -> str:
    """Markdown table: product(s) | path (physical) | element types."""
    lines = ["| products | path (physical buffers) | element types |", "| --- | --- | --- |"]
    for products, rows in _groups(table):
        names = ", ".join(p.display_name for p in products)
        for paths, dtypes in rows:
            lines.append(f"| {names} | {', '.join(_path(p) for p in paths)} | {dtype_list(dtypes)} |")
    none = missing_products(table)
    if none:
        lines.append(f"| {', '.join(p.display_name for p in none)} | none | - |")
    return "\n".join(lines)


def _names(products) -> str:
    return ", ".join(p.display_name for p in Product if p in products)


def _alignment_text() -> str:
    local = ", ".join(f"{phys} {n} bytes" for phys, n in ALIGN.items())
    gm = ", ".join(f"{api} {'a multiple of sizeof(T)' if rule == 'es' else 'any byte'}"
                   for api, rule in ALIGN_GM.items())
    return f"Start-address alignment: {local}; GM: {gm}."


def _wrapped(*paragraphs: str) -> str:
    return "\n\n".join(textwrap.fill(p, 112) for p in paragraphs)


def datacopy_rules() -> str:
    """Generated rules of DataCopy: no-op products, the widening copy, alignment."""
    conv = "; ".join(f"{product.display_name}: " + ", ".join(f"{ascend_name(a)}->{ascend_name(b)}"
                                                              for a, b in sorted(pairs, key=str))
                     for product, pairs in DATACOPY_CONVERT.items())
    return _wrapped(f"blockCount = 0 or blockLen = 0 (also a count below one unit) is a no-op on "
                    f"{_names(ZERO_IS_NOOP)} and an error elsewhere.",
                    f"The only dtype-changing copy is L1 -> BiasTable with DataCopyParams ({conv}).",
                    _alignment_text())


def pad_rules() -> str:
    """Generated rules of DataCopyPad: which products have which engine and register."""
    return _wrapped(f"PaddingMode.Compact, int64 strides (a GM source stride down to -blockLen) and loop mode "
                    f"exist on {_names(PAD_350_ENGINE)}; SetPadValue on {_names(SET_PAD_VALUE)}. blockCount = 0 "
                    f"or blockLen = 0 is a no-op on {_names(ZERO_IS_NOOP)}.", _alignment_text())


def alignment_markdown() -> str:
    lines = ["| operand | start address alignment |", "| --- | --- |"]
    lines += [f"| {phys} | {n} bytes |" for phys, n in ALIGN.items()]
    lines += [f"| GM, {api} | {'a multiple of sizeof(T)' if rule == 'es' else 'any byte'} |"
              for api, rule in ALIGN_GM.items()]
    return "\n".join(lines)


def capacities_markdown() -> str:
    from .products import CAPACITIES

    physs = [p for p in Phys if p is not Phys.GM]
    lines = ["| product | " + " | ".join(str(p) for p in physs) + " |", "| --- |" + " --- |" * len(physs)]
    for product in Product:
        caps = CAPACITIES.get(product, {})
        cells = [f"{caps[p] // 1024} KiB" if p in caps else "-" for p in physs]
        lines.append(f"| {product.display_name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def positions_markdown() -> str:
    from .products import POSITIONS, TPosition

    products = list(Product)
    lines = ["| TPosition | " + " | ".join(p.display_name for p in products) + " |",
             "| --- |" + " --- |" * len(products)]
    for pos in TPosition:
        if pos.name != pos.value and pos.name == "LCM":
            continue
        cells = [str(POSITIONS[p][pos]) if pos in POSITIONS[p] else "-" for p in products]
        lines.append(f"| {pos.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def blocks() -> dict[str, str]:
    """Every generated block of docs/semantics.md, by name."""
    out = {f"paths:{name}": path_markdown(table) for name, (table, _) in OP_TABLES.items()}
    out["alignment"] = alignment_markdown()
    out["capacities"] = capacities_markdown()
    out["positions"] = positions_markdown()
    return out


def _block():
    """The pattern of a generated block (compiled on first use: not at ``import fastcopy``)."""
    import re

    return re.compile(r"(<!-- generated:(?P<name>[^ ]+) -->\n)(?P<body>(?:.*?\n)??)(<!-- end:(?P=name) -->)", re.S)


def render(text: str) -> str:
    """``text`` with every generated block replaced by its current content (KeyError for an unknown block)."""
    table = blocks()
    return _block().sub(lambda m: m.group(1) + table[m.group("name")] + "\n" + m.group(4), text)


def block_names(text: str) -> list[str]:
    return [m.group("name") for m in _block().finditer(text)]


def docstring_tables(op: str) -> str:
    table, note = OP_TABLES[op]
    head = f"{op}: paths (physical source->destination) and element types per product"
    head = textwrap.fill(head + (f" ({note})" if note else "") + ":", 112)
    return head + "\n\n" + path_text(table)


def more_forms(doc: str, planners) -> str:
    """One line per registered ``DataCopy`` params class that ``doc`` does not describe yet (forms added later,
    e.g. by the cube ops), from the class's own summary."""
    lines = []
    for kind in planners:
        if isinstance(kind, str) or kind is int or kind.__name__ in doc:
            continue
        summary = inspect.cleandoc(getattr(kind, "_summary", "") or "").split("\n\n")[0].replace("\n", " ")
        first = summary.split(". ")[0].rstrip(".")
        lines += textwrap.wrap(f"``DataCopy(dst, src, {kind.__name__}(...))``: {first}. Fields: "
                               f"help(fastcopy.{kind.__name__}).", 112, subsequent_indent="    ")
    return "\n".join(["Further forms:", ""] + lines) if lines else ""


def complete(func, *ops: str, extra: str = "", planners=()) -> None:
    """Append the generated tables of ``ops`` (and ``extra`` text, and the registered ``planners`` forms the
    docstring does not describe) to ``func.__doc__`` (once)."""
    doc = inspect.cleandoc(func.__doc__ or "")
    forms = more_forms(doc, planners)
    parts = [doc] + ([forms] if forms else []) + ([extra] if extra else []) + ["(Generated from fastcopy.products.)"]
    parts += [docstring_tables(op) for op in ops]
    func.__doc__ = "\n\n".join(parts) + "\n"


#: the functions whose docstrings end with generated tables: name -> (the ops whose tables, the rules' function)
DOCUMENTED = {
    "DataCopy": (("DataCopy", "DataCopy(Nd2NzParams)", "DataCopy(Nz2NdParamsFull)", "DataCopy(SliceInfo)"),
                 datacopy_rules),
    "DataCopyPad": (("DataCopyPad",), pad_rules),
}


def document(*funcs) -> None:
    """:func:`complete` each of ``funcs`` (named in :data:`DOCUMENTED`), with the text stored in
    fastcopy/_docstrings.py when it was made from the function's docstring as it is (building the tables is
    ~1 ms of ``import fastcopy``: textwrap over every product's paths). ``python docs/make_tables.py`` rewrites
    that file, and tests/test_docs.py fails while it differs from what :func:`complete` makes."""
    from ._docstrings import DOCS

    for func in funcs:
        own, done = DOCS.get(func.__name__, (None, None))
        if own is not None and own == func.__doc__:
            func.__doc__ = done
        else:
            ops, rules = DOCUMENTED[func.__name__]
            complete(func, *ops, extra=rules())


def docstrings_source(funcs) -> str:
    """The text of fastcopy/_docstrings.py for ``funcs`` (as they are before :func:`document`)."""
    lines = ['"""Generated by ``python docs/make_tables.py`` (fastcopy.apidoc.docstrings_source): the docstrings of',
             "the functions in fastcopy.apidoc.DOCUMENTED, completed with their generated tables, so that",
             "``import fastcopy`` does not build them. Do not edit: tests/test_docs.py fails while it is stale.",
             '"""', "", "#: function name -> (its own docstring, the completed docstring)", "DOCS = {"]
    for func in funcs:
        own = func.__doc__

        class Copy:
            __doc__ = own

        ops, rules = DOCUMENTED[func.__name__]
        complete(Copy, *ops, extra=rules())
        lines += [f"    {func.__name__!r}: (", *_literal(own), "        ,", *_literal(Copy.__doc__), "    ),"]
    return "\n".join(lines + ["}", ""])


def _literal(text: str, width: int = 96) -> list:
    """``text`` as adjacent string literals, one source line per piece of at most ``width`` characters."""
    pieces = [line[k:k + width] for line in text.splitlines(keepends=True) for k in range(0, len(line), width)]
    return [f"        {piece!r}" for piece in pieces] or ["        ''"]


def _docstrings_path():
    from pathlib import Path

    return Path(__file__).resolve().parent / "_docstrings.py"


def own_docstrings() -> list:
    """The functions of :data:`DOCUMENTED` with their own docstrings (before :func:`document`), each a stand-in
    of the function's name and docstring; read from the source, so in any process."""
    import ast
    import types

    from . import api

    tree = ast.parse(open(api.__file__, encoding="utf-8").read())
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in DOCUMENTED:
            f = types.SimpleNamespace(__name__=node.name, __doc__=ast.get_docstring(node, clean=False))
            out.append(f)
    return sorted(out, key=lambda f: list(DOCUMENTED).index(f.__name__))


def _rewrite(path, new: str) -> None:
    old = path.read_text() if path.exists() else ""
    if new != old:
        path.write_text(new)
        print(f"updated {path}")
    else:
        print(f"{path} is current")


def main(argv=None) -> int:
    """``python docs/make_tables.py [FILE]``: rewrite the generated blocks of FILE (default docs/semantics.md) and
    fastcopy/_docstrings.py."""
    from pathlib import Path

    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0] if argv else Path(__file__).resolve().parent.parent / "docs" / "semantics.md")
    _rewrite(path, render(path.read_text()))
    _rewrite(_docstrings_path(), docstrings_source(own_docstrings()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The project's own reference (docs/semantics.md) is what users read: it is current, every citation of it
resolves, and nothing cites the private sources it was written from."""

from __future__ import annotations

import pathlib
import re

import pytest

from fastcopy import apidoc

ROOT = pathlib.Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "semantics.md"

# Spelled in pieces so this file does not match itself.
PRIVATE = [
    re.compile("shared" + "/"),
    re.compile("SEMAN" + r"TICS\.md"),
    re.compile("CUBE_" + r"(IN|OUT)\b"),
    re.compile(r"\b[Ss]" + r"pec(?:'s)? §?\d"),  # a "spec N.M" citation: a section of a document users never see
    re.compile(r"\bdecision" + r" 9 #"),
]


def _files():
    for pattern in ("README.md", "docs/**/*.md", "docs/**/*.py", "fastcopy/**/*.py", "examples/**/*",
                    "tests/**/*.py", "tests/data/*.json", "bench/**/*.py", "setup.cfg", "pyproject.toml"):
        for p in sorted(ROOT.glob(pattern)):
            if p.is_file() and p.suffix not in (".png", ".bin", ".npy") and "__pycache__" not in p.parts:
                yield p


def test_nothing_cites_the_private_sources():
    bad = []
    for p in _files():
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if any(rx.search(line) for rx in PRIVATE):
                bad.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:120]}")
    assert not bad, ("cite the project's docs (docs/semantics.md §N, docs/cube-in.md, docs/cube-out.md, "
                     "docs/semantics-decisions.md), not the private sources:\n" + "\n".join(bad))


def test_generated_tables_are_current():
    text = REFERENCE.read_text()
    assert set(apidoc.block_names(text)) == set(apidoc.blocks()), "every generated table appears once"
    assert apidoc.render(text) == text, "docs/semantics.md is stale: run python docs/make_tables.py"


def test_stored_docstrings_are_current():
    """fastcopy/_docstrings.py holds what apidoc.complete makes of DataCopy's and DataCopyPad's docstrings."""
    path = ROOT / "fastcopy" / "_docstrings.py"
    assert path.read_text() == apidoc.docstrings_source(apidoc.own_docstrings()), \
        "fastcopy/_docstrings.py is stale: run python docs/make_tables.py"


def test_a_docstring_not_stored_is_completed_at_import(monkeypatch):
    from fastcopy import _docstrings

    def f():
        """A later docstring."""

    f.__name__ = "DataCopyPad"
    g = type("G", (), {"__doc__": f.__doc__})
    apidoc.complete(g, "DataCopyPad", extra=apidoc.pad_rules())
    apidoc.document(f)
    assert f.__doc__ == g.__doc__ and "DataCopyPad: paths" in f.__doc__
    monkeypatch.setitem(_docstrings.DOCS, "DataCopyPad", (f.__doc__, "stored"))
    apidoc.document(f)
    assert f.__doc__ == "stored"


def test_generated_tables_follow_products(monkeypatch):
    from fastcopy import products

    table = dict(products.SLICE_PATHS)
    table.pop(products.Product.ATLAS_350)
    monkeypatch.setitem(apidoc.OP_TABLES, "DataCopy(SliceInfo)", (table, ""))
    md = apidoc.blocks()["paths:DataCopy(SliceInfo)"]
    assert "| Atlas 350 |" not in md and "Atlas 350" in md.splitlines()[-1]  # listed as "none"


def _sections(text: str) -> set:
    out = set()
    top = None
    for line in text.splitlines():
        m = re.match(r"## (\d+)\. ", line)
        if m:
            top = m.group(1)
            out.add(top)
            continue
        m = re.match(r"### (\d+\.\d+) ", line)
        if m:
            out.add(m.group(1))
            continue
        m = re.match(r"(\d+)\. \*\*", line)
        if m and top == "9":
            out.add(f"9 #{m.group(1)}")
        elif m and top == "11":
            out.add(f"11.{m.group(1)}")
    return out


def test_every_citation_of_semantics_md_resolves():
    sections = _sections(REFERENCE.read_text())
    assert {"0", "3.2", "4.3", "5.2", "6.1", "7.1", "9 #24", "11.12"} <= sections
    cite = re.compile(r"semantics\.md §(\d+(?:\.\d+)?(?: #\d+)?)((?:(?:, |/| / | and | or |-)§\d+(?:\.\d+)?"
                      r"(?: #\d+)?)*)")
    bad = []
    for p in _files():
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            for m in cite.finditer(line):
                refs = [m.group(1)] + re.findall(r"§(\d+(?:\.\d+)?(?: #\d+)?)", m.group(2))
                bad += [f"{p.relative_to(ROOT)}:{i}: §{r}" for r in refs if r not in sections]
    assert not bad, "citations of sections docs/semantics.md does not have:\n" + "\n".join(bad)


def test_citations_of_the_other_docs_resolve():
    """``docs/cube-in.md §N`` needs a numbered heading N there (the cube pages name their sections instead)."""
    cite = re.compile(r"docs/(cube-in|cube-out|semantics-decisions|architecture|guarantees)\.md §(\d+(?:\.\d+)?)")
    bad = []
    for p in _files():
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            for m in cite.finditer(line):
                doc = ROOT / "docs" / f"{m.group(1)}.md"
                heads = re.findall(r"^#+ (\d+(?:\.\d+)?)[. ]", doc.read_text(), re.M) if doc.exists() else []
                if m.group(2) not in heads:
                    bad.append(f"{p.relative_to(ROOT)}:{i}: {m.group(0)}")
    assert not bad, "citations of sections the cited page does not number:\n" + "\n".join(bad)


def test_semantics_md_links_the_other_references():
    text = REFERENCE.read_text()
    for target in ("semantics-decisions.md", "cube-in.md", "cube-out.md"):
        assert f"]({target})" in text
    readme = (ROOT / "README.md").read_text()
    assert "](docs/semantics.md)" in readme


@pytest.mark.parametrize("op", ["DataCopy", "DataCopyPad", "DataCopy(Nd2NzParams)", "DataCopy(Nz2NdParamsFull)",
                                "DataCopy(SliceInfo)"])
def test_every_op_has_its_path_table_in_the_docs(op):
    assert f"<!-- generated:paths:{op} -->" in REFERENCE.read_text()


def test_struct_docstrings_point_to_the_project_docs():
    import fastcopy

    for name in ("DataCopyParams", "Nd2NzParams", "SliceInfo"):
        assert "docs/semantics.md" in getattr(fastcopy, name).__doc__

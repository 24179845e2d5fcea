"""The compare rules' registry: a rule's name -> :class:`CompareRule`. :mod:`.verify` registers ``exact`` and
``allclose`` and uses the table; :mod:`.mmadrule` registers ``mmad``; :func:`fastcopy.cube.bound.register_mmad_rule`
registers per-matmul rules. The registry imports none of them, so the rules' modules depend on it alone (and a
batch, which never compares, imports none of them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class CompareRule:
    """``func(actual, expected, *, rtol, atol, context) -> excess`` (float64 array, 0 = match) on the defined
    elements (arrays of the output dtype). ``tolerant``: whether rtol/atol mean something to it."""

    name: str
    func: Callable
    doc: str
    tolerant: bool = True


RULES: dict[str, CompareRule] = {}


def register_rule(name: str, func: Callable, doc: str = "", tolerant: bool = True) -> CompareRule:
    """Add (or replace) the compare rule ``name``; a case's output selects it with ``compare = "name"``."""
    if not name.isidentifier():
        raise ValueError(f"register_rule: {name!r} is not an identifier")
    rule = CompareRule(name, func, doc or (func.__doc__ or "").strip().split("\n")[0], tolerant)
    RULES[name] = rule
    return rule

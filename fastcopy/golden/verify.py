"""Comparison of a kernel's output with golden data, over the defined positions only.

A **compare rule** decides, element by element, how far each defined output element is from its golden value:
``0`` = a match, ``> 0`` = a mismatch (larger is worse; the report lists the worst). Built in:

- ``exact`` (the default without tolerances): the bit patterns are equal (NaN payloads, -0.0 and every other bit
  count). For data movement.
- ``allclose`` (the default with ``rtol``/``atol``): ``|actual - expected| <= atol + rtol * |expected|`` in float64,
  NaN matches NaN, an infinity matches the same infinity. For computed outputs.

A case names a rule per output (``outputs = [{buffer = "cGm", compare = "allclose", rtol = 1e-3}]``); more rules
are plugged in with :func:`register_rule` (a rule sees the options and a context: the output's manifest entry,
the golden folder and the manifest). Positions whose mask byte is 0 are skipped; comparing nothing is a failure.
Each reported mismatch has its flat index, ND coordinate (with a shape), byte offset, 32-byte block and both values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dtypes import UINT_OF_WIDTH, ascend_name
from ..errors import CompareError  # (raised here; importable from here, its home before errors.py)
from .rules import RULES, CompareRule, register_rule  # (the registry, importable from here too: __all__)

__all__ = ["BLOCK", "RULES", "CompareError", "CompareRule", "Comparison", "Mismatch", "as_float64", "choose_rule",
           "compare", "format_value", "register_rule", "report"]

BLOCK = 32


def _exact(actual, expected, *, rtol=0.0, atol=0.0, context=None):
    """bit for bit"""
    es = expected.dtype.itemsize
    u = UINT_OF_WIDTH[es]
    return (actual.view(u) != expected.view(u)).astype(np.float64)


def as_float64(values: np.ndarray) -> np.ndarray:
    """Values of any numeric dtype (ml_dtypes floats included) as float64 (complex: the magnitude is not taken)."""
    if values.dtype.kind == "c":
        return values.astype(np.complex128)
    return values.astype(np.float64)


def _allclose(actual, expected, *, rtol=0.0, atol=0.0, context=None):
    """|actual - expected| <= atol + rtol * |expected| (NaN matches NaN)"""
    a, e = as_float64(actual), as_float64(expected)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
        excess = diff - (atol + rtol * np.abs(e))
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    excess = np.where(same, 0.0, np.where(np.isnan(excess), np.inf, excess))
    return np.maximum(excess, 0.0) if excess.dtype.kind == "f" else excess


register_rule("exact", _exact, "bit for bit (NaN payloads and -0.0 count)", tolerant=False)
register_rule("allclose", _allclose, "|actual - expected| <= atol + rtol * |expected| (NaN matches NaN)")
from . import mmadrule  # noqa: E402 - registers the "mmad" rule (after the two above: the rules' order)

del mmadrule  # (imported for the registration only)


@dataclass
class Mismatch:
    index: int
    coord: tuple | None
    byte: int
    block: int
    expected: object
    actual: object
    expected_bits: int
    actual_bits: int
    error: float = 0.0  # |actual - expected| (tolerance rules)


@dataclass
class Comparison:
    """The verdict; truthy exactly when it passed (``assert cmp``)."""

    dtype: np.dtype
    elements: int
    defined: int
    mismatches: int
    first: list  # Mismatch, at most ``limit`` (the first by index, or the worst under a tolerance)
    problem: str = ""  # the files could not be compared at all (size, mask, nothing defined)
    rule: str = "exact"
    rtol: float = 0.0
    atol: float = 0.0
    shape: tuple | None = None
    trouble: bool = False  # the problem is not a difference (unreadable input, nothing to compare): exit 2
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problem and self.mismatches == 0

    def __bool__(self) -> bool:
        return self.ok

    def report(self, limit: int = 10) -> str:
        return report(self, limit)

    def __str__(self) -> str:
        return report(self)


def choose_rule(rule: str | None, rtol, atol) -> tuple:
    """(CompareRule, rtol, atol): ``exact`` without tolerances, ``allclose`` with, or the named rule."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is not None and (not np.isfinite(v) or v < 0):
            raise CompareError(f"{name}={v}: expected a finite number >= 0")
    rtol, atol = float(rtol or 0.0), float(atol or 0.0)
    if rule is None:
        rule = "allclose" if (rtol or atol) else "exact"
    if rule not in RULES:
        import difflib

        close = difflib.get_close_matches(rule, list(RULES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise CompareError(f"unknown compare rule {rule!r}{hint}; rules: {', '.join(RULES)}")
    r = RULES[rule]
    if not r.tolerant and (rtol or atol):
        raise CompareError(f"compare rule {rule!r} takes no rtol/atol")
    return r, rtol, atol


def compare(actual: np.ndarray, expected: np.ndarray, dtype, mask=None, shape=None, limit: int = 10, *,
            rtol=None, atol=None, rule: str | None = None, context=None) -> Comparison:
    """Compare two flat arrays of ``dtype`` where ``mask`` (one value per element, nonzero = defined) says so:
    bit for bit, or under ``rtol``/``atol`` or a named ``rule``. ``actual``/``expected`` may be raw uint8 bytes."""
    r, rtol, atol = choose_rule(rule, rtol, atol)
    dt = np.dtype(dtype)
    es = dt.itemsize
    a, e = np.ascontiguousarray(actual).reshape(-1), np.ascontiguousarray(expected).reshape(-1)
    a_bytes, e_bytes = a.view(np.uint8), e.view(np.uint8)
    n = e_bytes.size // es
    base = {"rule": r.name, "rtol": rtol, "atol": atol, "shape": tuple(shape) if shape is not None else None}

    def problem(text, trouble=False):
        return Comparison(dt, n, 0, 0, [], text, trouble=trouble, **base)

    if e_bytes.size % es or a_bytes.size % es:
        return problem(f"the files are not whole {ascend_name(dt)} elements ({a_bytes.size} and {e_bytes.size} "
                       f"bytes, {es} bytes each)")
    if a_bytes.size != e_bytes.size:
        return problem(f"the output has {a_bytes.size // es} elements, the golden {n} ({ascend_name(dt)})")
    if shape is not None and int(np.prod(shape)) != n:
        return problem(f"shape {tuple(shape)} has {int(np.prod(shape))} elements, the files {n}", True)
    if mask is None:
        defined = None
        n_def = n
    else:
        m = np.asarray(mask).reshape(-1)
        if m.size != n:
            return problem(f"the mask has {m.size} entries, the data {n} elements", True)
        defined = m != 0
        n_def = int(np.count_nonzero(defined))
    if n_def == 0:
        what = "the files are empty" if n == 0 else f"all {n} elements are undefined in the mask"
        return problem(f"nothing to compare: {what} (a golden with no defined element checks nothing)", True)
    va, ve = a_bytes.view(dt), e_bytes.view(dt)
    idx = np.flatnonzero(defined) if defined is not None else None
    sa, se = (va, ve) if idx is None else (va[idx], ve[idx])
    from ..cube.b4 import FP4_E1M2, is_b4

    func = r.func
    b4 = is_b4(dt)
    if b4 and r.name != "exact":  # a byte holds two 4-bit values: both are compared, the byte's excess the larger
        if dt == FP4_E1M2:
            return problem("fp4x2_e1m2_t outputs compare bit for bit only (fastcopy holds its 4-bit codes, not "
                           "numbers): give no rtol/atol or compare rule", True)
        func = _per_value(r.func, dt)
    excess = np.asarray(func(sa, se, rtol=rtol, atol=atol, context=context), np.float64)
    bad_local = np.flatnonzero(excess > 0)
    if r.name != "exact":  # the worst first
        order = np.argsort(-excess[bad_local], kind="stable")[:limit]
        pick = bad_local[order]
    else:
        pick = bad_local[:limit]
    ua, ue = a_bytes.view(UINT_OF_WIDTH[es]), e_bytes.view(UINT_OF_WIDTH[es])
    first = []
    for j in pick.tolist():
        i = int(idx[j]) if idx is not None else j
        coord = tuple(int(c) for c in np.unravel_index(i, shape)) if shape is not None else None
        err = 0.0
        if r.name != "exact":
            with np.errstate(invalid="ignore", over="ignore"):
                err = float(np.max(np.abs(as_float64(_values(va[i:i + 1], dt)) - as_float64(_values(ve[i:i + 1],
                                                                                                   dt)))))
        exp, act = (_pair(ve[i:i + 1], dt), _pair(va[i:i + 1], dt)) if b4 else (ve[i], va[i])
        first.append(Mismatch(i, coord, i * es, i * es // BLOCK, exp, act, int(ue[i]), int(ua[i]), err))
    return Comparison(dt, n, n_def, int(bad_local.size), first, **base)


def _values(v: np.ndarray, dt) -> np.ndarray:
    """The numbers of elements ``v`` (a packed 4-bit type: both values of each byte, low nibble first)."""
    from ..cube.b4 import from_codes, is_b4

    if not is_b4(dt):
        return v
    b = v.view(np.uint8)
    return from_codes(np.stack([b & 15, b >> 4], axis=-1).reshape(-1), dt)


def _pair(v: np.ndarray, dt) -> tuple:
    """The two 4-bit values of one packed byte, as Python numbers (fp4x2_e1m2_t: codes)."""
    from ..cube.b4 import FP4_E1M2, INT4

    return tuple(float(x) if dt != INT4 and dt != FP4_E1M2 else int(x) for x in _values(v, dt).astype(np.float64))


def _per_value(func, dt):
    """A rule on 4-bit values applied to packed bytes: each byte's excess is the larger of its two values'."""
    def rule(actual, expected, **kw):
        a, e = _values(actual, dt), _values(expected, dt)
        return np.asarray(func(a, e, **kw), np.float64).reshape(-1, 2).max(axis=1)
    return rule


def format_value(v, bits: int, es: int) -> str:
    """``1.5 (0x3e00)``: the value and its bit pattern."""
    try:
        text = str(v.item()) if hasattr(v, "item") and not isinstance(v, np.void) else str(v)
    except (TypeError, ValueError):
        text = str(v)
    return f"{text} (0x{bits:0{2 * es}x})"


def _criterion(cmp: Comparison) -> str:
    if cmp.rule == "exact":
        return "bit-exact"
    if cmp.rule == "allclose":
        return f"within rtol={cmp.rtol:g}, atol={cmp.atol:g}"
    return f"by rule {cmp.rule}" + (f" (rtol={cmp.rtol:g}, atol={cmp.atol:g})" if cmp.rtol or cmp.atol else "")


def report(cmp: Comparison, limit: int = 10) -> str:
    """Human-readable verdict and mismatch table (the worst mismatches under a tolerance)."""
    name = ascend_name(cmp.dtype)
    if cmp.problem:
        return f"FAIL: {cmp.problem}"
    skipped = cmp.elements - cmp.defined
    skip_text = f", {skipped} undefined position{'s' if skipped != 1 else ''} skipped" if skipped else ""
    crit = _criterion(cmp)
    if cmp.ok:
        return f"PASS: {cmp.defined} of {cmp.elements} {name} elements {crit}{skip_text}"
    verb = "differ" if cmp.rule == "exact" else f"are not {crit}"
    lines = [f"FAIL: {cmp.mismatches} of {cmp.defined} defined {name} elements {verb}{skip_text}"]
    tol = cmp.rule != "exact"
    rows = [("index", "coord", "byte", "block", "expected", "actual") + (("|error|",) if tol else ())]
    es = cmp.dtype.itemsize
    for m in cmp.first[:limit]:
        coord = "(" + ", ".join(map(str, m.coord)) + ")" if m.coord is not None else "-"
        row = (str(m.index), coord, str(m.byte), str(m.block), format_value(m.expected, m.expected_bits, es),
               format_value(m.actual, m.actual_bits, es))
        rows.append(row + ((f"{m.error:.6g}",) if tol else ()))
    if tol:
        lines.append("  worst mismatches:")
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    for r in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    if cmp.mismatches > len(cmp.first[:limit]):
        lines.append(f"  ... {cmp.mismatches - len(cmp.first[:limit])} more")
    return "\n".join(lines)

"""The one place where integers enter fastcopy.

Every integer that reaches planning (element counts, struct fields, ``gm[k]`` offsets, ``alloc`` counts and
addresses, buffer capacities, the poison byte, ``dimValue``) goes through :func:`as_int` first: it becomes a
Python ``int`` (``operator.index``), so no arithmetic on it can wrap the way numpy integer scalars do
(``np.uint8(200) * 4 == 32``). Bools are rejected (``True`` is not a count), non-integral floats are rejected,
integral floats (``32.0``) are accepted as the struct fields always did; anything else (strings, arrays) is an
error naming the API and the field. :func:`check_int` adds the range check.
"""

from __future__ import annotations

import operator

import numpy as np

from .errors import ParamTypeError, RangeError


def _show(value) -> str:
    if isinstance(value, np.generic):
        return f"{type(value).__name__}({value!r})" if not isinstance(value, np.bool_) else f"np.bool_({value})"
    return repr(value)


def as_int(value, api: str, field: str, ctype: str = "") -> int:
    """``value`` as a Python ``int``; ParamTypeError (also a TypeError) for bools, non-integral floats, strings,
    arrays and anything else ``operator.index`` refuses. ``ctype`` (``"uint16_t"``) goes into the message."""
    if type(value) is int:  # the common case, first
        return value
    of = f" ({ctype})" if ctype else ""
    if isinstance(value, (bool, np.bool_)):
        raise ParamTypeError(f"{api}: {field}={value!r} is a bool, not an integer{of}")
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if f.is_integer():
            return int(f)
        raise ParamTypeError(f"{api}: {field}={_show(value)} is not an integer{of}")
    try:
        return operator.index(value)
    except TypeError:
        raise ParamTypeError(f"{api}: {field}={_show(value)} is not an integer{of}, it is a "
                             f"{type(value).__name__}") from None


def check_int(value, api: str, field: str, lo: int, hi: int | None, unit: str, ctype: str = "",
              error=RangeError) -> int:
    """:func:`as_int`, then ``error`` unless ``lo <= value <= hi`` (``hi=None``: no upper bound)."""
    v = as_int(value, api, field, ctype)
    if hi is None and v < lo:
        raise error(f"{api}: {field}={v} must be >= {lo} {unit}".rstrip())
    if hi is not None and not lo <= v <= hi:
        raise error(f"{api}: {field}={v} is outside [{lo}, {hi}] {unit}".rstrip())
    return v

"""The public Ascend C entry points. ``DataCopy`` dispatches on its third argument to the op's planner,
then executes the plan; every other op module registers itself here."""

from __future__ import annotations

import numbers

from .errors import FastCopyError
from .execute import execute

#: params type -> planner(dst, src, arg, *rest, **kwargs) -> Plan
_DATACOPY_PLANNERS: dict = {}


def register_datacopy(kind, planner) -> None:
    """Register the planner of a ``DataCopy`` form: ``kind`` is a params class, ``"count"`` or ``"slice"``."""
    _DATACOPY_PLANNERS[kind] = planner
    if kind == "count":
        _DATACOPY_PLANNERS[int] = planner  # the common case, found without the ABC check


def _kind_of(arg):
    if isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        return "count"
    if isinstance(arg, (list, tuple)):
        return "slice"
    return type(arg)


def DataCopy(dst, src, arg, *rest, **kwargs) -> None:  # noqa: N802
    """``DataCopy(dst, src, count | DataCopyParams | Nd2NzParams | Nz2NdParamsFull)`` or
    ``DataCopy(dst, src, dstSliceInfo, srcSliceInfo, dimValue=1)``, as in Ascend C (destination first)."""
    planner = _DATACOPY_PLANNERS.get(type(arg)) or _DATACOPY_PLANNERS.get(_kind_of(arg))
    if planner is None:
        forms = ", ".join(k if isinstance(k, str) else k.__name__ for k in _DATACOPY_PLANNERS)
        raise FastCopyError(f"DataCopy: no form takes a {type(arg).__name__} as third argument; forms: {forms}")
    plan = planner(dst, src, arg, *rest, **kwargs)
    execute(plan, dst, src)

"""Checks shared by the cube-in planners: path / dtype / alignment of a call, the L1 positions these APIs take,
reserved fields. Messages follow the project pattern ``API: field=value ... on Product``."""

from __future__ import annotations

from ..errors import RangeError, UnsupportedError
from ..ops.common import Call, check_alignment, check_path, check_same_dtype
from ..products import Phys, TPosition

FRACTAL = 512
#: L1 positions the cube-in APIs accept (C1 / TSCM are not operands of these APIs)
L1_POSITIONS = frozenset({TPosition.A1, TPosition.B1})


def check_call(call: Call, table: dict) -> None:
    """Path and dtype supported on the product, one dtype on both sides, start alignment, A1/B1 for L1."""
    check_path(call, table, call.src.dtype)
    check_same_dtype(call)
    for role, t in (("src", call.src), ("dst", call.dst)):
        if t.phys is Phys.L1 and t.position not in L1_POSITIONS:
            raise UnsupportedError(f"{call.api}: {role} position {t.position} is not accepted on {call.product}; "
                                   "the L1 operand must be A1 or B1")
    check_alignment(call, "LoadData")


def start(api: str, cls, pkey: tuple, src, dst, product, table: dict):
    """The preamble of every cube-in planner: the struct back from its key, its C++ types on the product, the
    path / dtype / alignment checks. Returns ``(params, call, "PATH on PRODUCT")``."""
    p = cls(*pkey)
    p.check_types(api, product)
    call = Call(api, product, src, dst)
    check_call(call, table)
    return p, call, f"{call.path_text} on {product}"


def sid_warning(api: str, sid: int, product) -> list:
    """``sid`` is reserved (SMMU id): error above 15, warning when not 0."""
    if sid > 15:
        raise RangeError(f"{api}: sid={sid} is outside [0, 15] (reserved SMMU id) on {product}")
    return [f"{api}: sid={sid} is reserved and should be 0 on {product}; fastcopy ignores it"] if sid else []


def overlap_warning(api: str, call: Call) -> str:
    return (f"{api}: destination writes of this call overlap on {call.path_text} on {call.product}: the order of "
            "the writes is unspecified, bytes written twice with different values are undefined")


__all__ = ["FRACTAL", "L1_POSITIONS", "check_call", "sid_warning", "overlap_warning"]

"""Validation helpers shared by the planners: call context, path/dtype support, ranges, alignment.

Planners are pure functions of hashable values (param keys, :class:`TensorSig`, product, state) so that
``functools.lru_cache`` can cache their plans; they never see the tensors' data.
Messages follow one pattern: ``API(Struct): field=value is outside [lo, hi] unit on Product``.
"""

from __future__ import annotations

from typing import NamedTuple

from ..dtypes import ascend_name
from ..errors import AlignmentError, FastCopyError, RangeError, ReadOnlyError, UnsupportedError
from ..memory import TensorSig, _Tensor
from ..products import ALIGN, ALIGN_GM, Phys, Product, dtype_list, dtype_ok


class Call(NamedTuple):
    """A call as planners see it: API name, product, source and destination signatures (hashable)."""

    api: str
    product: Product
    src: TensorSig
    dst: TensorSig

    @property
    def path(self) -> tuple:
        return self.src.phys, self.dst.phys

    @property
    def path_text(self) -> str:
        return f"{self.src.position}->{self.dst.position} ({self.src.phys}->{self.dst.phys})"


def core_of(api: str, dst, src):
    """Check the operands are tensors; return the TPipe (core) of the local one(s)."""
    if not isinstance(dst, _Tensor) or not isinstance(src, _Tensor):
        role, t = ("dst", dst) if not isinstance(dst, _Tensor) else ("src", src)
        raise FastCopyError(f"{api}: {role} must be a GlobalTensor or LocalTensor, got {type(t).__name__}")
    if dst.memory.readonly:
        raise ReadOnlyError(f"{api}: the destination GlobalTensor is over a read-only array; pass a writable "
                            "array (np.array(a) copies one)")
    if dst.is_global:
        if src.is_global:
            raise UnsupportedError(f"{api}: GM -> GM is not a path; one side must be a LocalTensor")
        return src.pipe
    if not src.is_global and src.pipe is not dst.pipe:
        raise UnsupportedError(f"{api}: the two LocalTensors belong to different TPipes (cores); a core cannot "
                               "address another core's buffers")
    return dst.pipe


def check_path(call: Call, table: dict, dtype=None):
    """Raise UnsupportedError unless (physical path, dtype) is in ``table[product]``; return the dtype set."""
    paths = table.get(call.product, {})
    if call.path not in paths:
        have = ", ".join(f"{a}->{b}" for a, b in paths) or "none"
        raise UnsupportedError(f"{call.api}: path {call.path_text} is not supported on {call.product}; "
                               f"supported there: {have}")
    dtypes = paths[call.path]
    if dtype is not None and not dtype_ok(dtypes, dtype):
        raise UnsupportedError(f"{call.api}: dtype {ascend_name(dtype)} is not supported on {call.path_text} on "
                               f"{call.product}; supported: {dtype_list(dtypes)}")
    return dtypes


def check_same_dtype(call: Call) -> None:
    if call.src.dtype != call.dst.dtype:
        raise UnsupportedError(f"{call.api}: source is {ascend_name(call.src.dtype)} but destination is "
                               f"{ascend_name(call.dst.dtype)}; this path moves data without conversion")


def check_range(api: str, field: str, value: int, lo: int, hi: int, unit: str, product: Product,
                why: str = "") -> None:
    """RangeError unless ``lo <= value <= hi``."""
    if not lo <= value <= hi:
        extra = f" ({why})" if why else ""
        raise RangeError(f"{api}: {field}={value} is outside [{lo}, {hi}] {unit} on {product}{extra}")


def check_alignment(call: Call, gm_rule: str) -> None:
    """Start-address alignment of both tensors (semantics.md §1.4). ``gm_rule``: the ALIGN_GM key of the op."""
    for role, t in (("dst", call.dst), ("src", call.src)):
        if t.phys is Phys.GM:
            rule = ALIGN_GM[gm_rule]
            align = t.itemsize if rule == "es" else rule
        else:
            align = ALIGN[t.phys]
        if align > 1 and t.addr_mod % align:
            what = (f"a multiple of sizeof({ascend_name(t.dtype)}) = {align} bytes" if t.phys is Phys.GM
                    else f"{align}-byte aligned")
            raise AlignmentError(f"{call.api}: {role} start address ({t.position}, {t.phys}) is not {what} on "
                                 f"{call.product}: address % {align} = {t.addr_mod % align}")


def rules_key(call: Call) -> tuple:
    """What the path, dtype and alignment rules (and their messages) read of a call: the Call without the
    tensors' extents and host residues, so that a new tensor size or address reuses a verdict (validation from
    key tuples)."""
    s, d = call.src, call.dst
    return (call.api, call.product, s.position, s.phys, s.dtype, s.addr_mod, d.position, d.phys, d.dtype,
            d.addr_mod)


#: (call, table, gm_rule) combinations that passed check_operands: a pure function of hashable values (the
#: tables are module constants), so a pass is remembered; errors are raised again every time
_OPERANDS_OK: dict = {}


def check_operands(call: Call, table: dict, gm_rule: str) -> None:
    """The checks every same-dtype op starts with: path and dtype supported, one dtype on both sides, start
    alignment (``gm_rule``: the op's ALIGN_GM key). Passes are cached per (call, table, rule)."""
    key = (rules_key(call), id(table), gm_rule)
    if key in _OPERANDS_OK:
        return
    check_path(call, table, call.src.dtype)
    check_same_dtype(call)
    check_alignment(call, gm_rule)
    if len(_OPERANDS_OK) >= 4096:
        _OPERANDS_OK.clear()
    _OPERANDS_OK[key] = table  # (holding the table keeps its id from being reused)

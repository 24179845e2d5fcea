"""Sweep expressions: a case-file string ``"=expr"`` is computed from the sweep variables.

Only integer/float arithmetic (``+ - * / // % **``, unary minus), names of sweep variables, string and number
constants and a few functions are allowed::

    au(x, a)        = ceil(x / a) * a          (round up to a multiple, Ascend C's AlignUp)
    ceil_div(a, b)  = ceil(a / b)
    sizeof(dtype)   = bytes per element of an Ascend C / numpy dtype name
    min, max, abs
"""

from __future__ import annotations

import ast
import operator
from functools import lru_cache

from ..dtypes import as_dtype
from ..errors import FastCopyError


class ExprError(FastCopyError):
    """An expression that cannot be computed (message only; the caller adds file and key path)."""


def _au(x, a):
    return -(-x // a) * a


def _ceil_div(a, b):
    return -(-a // b)


def _sizeof(dtype):
    return as_dtype(dtype).itemsize


FUNCTIONS = {"au": _au, "ceil_div": _ceil_div, "sizeof": _sizeof, "min": min, "max": max, "abs": abs}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


@lru_cache(maxsize=1024)
def _parse(text: str):
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"cannot parse expression {text!r}: {exc.msg}") from None


def evaluate(text: str, names: dict):
    """Value of the expression ``text`` with sweep variables ``names``."""
    tree = _parse(text)
    try:
        return _eval(tree, names, text)
    except ExprError:
        raise
    except (ArithmeticError, TypeError, ValueError, FastCopyError) as exc:
        raise ExprError(f"expression {text!r}: {exc}") from None


def _eval(node, names, text):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(
            node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            have = ", ".join(sorted(names)) or "none (the case has no [sweep] table)"
            raise ExprError(f"expression {text!r}: unknown name {node.id!r}; sweep variables: {have}")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, names, text), _eval(node.right, names, text))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, names, text))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
            and not node.keywords):
        return FUNCTIONS[node.func.id](*[_eval(a, names, text) for a in node.args])
    raise ExprError(f"expression {text!r}: only arithmetic (+ - * / // % **), sweep variables, numbers and "
                    f"the functions {', '.join(FUNCTIONS)} are allowed")

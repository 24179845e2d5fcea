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
#: Bounds that keep a hostile case file from exhausting the machine: integers stay below 2**MAX_INT_BITS in
#: magnitude (operands and results), strings at most MAX_STR characters, expressions at most MAX_TEXT characters.
MAX_INT_BITS = 128
MAX_STR = 256
MAX_TEXT = 2000


_BIG = 1 << MAX_INT_BITS  # (an int passes _check_size exactly when -_BIG < v < _BIG)


def _check_size(v):
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_INT_BITS:
        raise ExprError(f"an integer of {v.bit_length()} bits; expressions stay below 2**{MAX_INT_BITS}")
    if isinstance(v, str) and len(v) > MAX_STR:
        raise ExprError(f"a string of {len(v)} characters; expressions stay at most {MAX_STR}")
    return v


def _mul(a, b):
    if type(a) is int and type(b) is int:  # (the usual case first: the same checks, in fewer steps)
        if a.bit_length() + b.bit_length() > MAX_INT_BITS + 1:
            raise ExprError(f"a product of {a.bit_length() + b.bit_length()} bits; expressions stay below "
                            f"2**{MAX_INT_BITS}")
        return a * b
    if isinstance(a, str) or isinstance(b, str):
        s, n = (a, b) if isinstance(a, str) else (b, a)
        if isinstance(n, int) and len(s) * max(n, 0) > MAX_STR:
            raise ExprError(f"a string of {len(s)} x {n} characters; expressions stay at most {MAX_STR}")
    elif isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS + 1:
        raise ExprError(f"a product of {a.bit_length() + b.bit_length()} bits; expressions stay below "
                        f"2**{MAX_INT_BITS}")
    return a * b


def _pow(a, b):
    if isinstance(a, int) and isinstance(b, int) and abs(a) > 1:
        if b > MAX_INT_BITS or (b > 0 and (a.bit_length() - 1) * b > MAX_INT_BITS):
            raise ExprError(f"{a} ** {b} is too large; expressions stay below 2**{MAX_INT_BITS}")
    if isinstance(b, (int, float)) and abs(b) > 10 * MAX_INT_BITS:
        raise ExprError(f"exponent {b} is too large")
    return a ** b


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


@lru_cache(maxsize=1024)
def _parse(text: str):
    if len(text) > MAX_TEXT:
        raise ExprError(f"expression of {len(text)} characters; at most {MAX_TEXT}")
    try:
        return ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ExprError(f"cannot parse expression {text[:80]!r}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ExprError(f"expression {text[:80]!r}...: nested too deeply") from None


def evaluate(text: str, names: dict):
    """Value of the expression ``text`` with variables ``names`` (sweep and loop variables, ``block_idx``)."""
    _parse(text)
    try:
        return _check_size(_program(text)(names))
    except ExprError as exc:
        if str(exc).startswith("expression "):
            raise
        raise ExprError(f"expression {text[:80]!r}: {exc}") from None
    except RecursionError:
        raise ExprError(f"expression {text[:80]!r}: nested too deeply") from None
    except (ArithmeticError, TypeError, ValueError, FastCopyError) as exc:
        raise ExprError(f"expression {text[:80]!r}: {exc}") from None


def compiled(text: str):
    """``names -> value`` of the expression ``text``: :func:`evaluate`'s value where evaluate returns one, an
    exception (not always an :class:`ExprError`, and without evaluate's message) where evaluate raises. For a
    caller that calls it many times and, on any exception, asks :func:`evaluate` for the error.

    The expression is one Python function (:func:`_python`): each node's operation and check inline, where
    :func:`_program`'s closures make a call per node (a sweep point evaluates a few expressions: 1-2 us each
    that way, ~0.3 us this way). Should making it fail (a text nested too deeply for Python's compiler), the
    closures serve."""
    _parse(text)
    fn = _python(text)
    if fn is not None:
        return fn
    run = _program(text)
    return lambda names: _check_size(run(names))


@lru_cache(maxsize=1024)
def _python(text: str):
    """The expression as a Python function of ``names``, built from its tree (names, constants and functions
    are looked up in a namespace, never written into the source), or None when it cannot be built. Each node
    computes what :func:`_compile`'s node does, left operand first, with the same checks: a binary node's result
    goes through the integer bounds test (then ``_check_size``), products through ``_mul`` unless both sides
    are ints whose bits allow it, powers through ``_pow``, function calls through ``_check_size``."""
    try:
        space = {"_BIG": _BIG, "_check_size": _check_size, "_mul": _mul, "_pow": _pow, "_refused": _refuse}
        body = _emit(_parse(text), text, space, [0])
        top = "_t0"
        code = compile(f"lambda n: ({top} if type({top} := {body}) is int and -_BIG < {top} < _BIG "
                       f"else _check_size({top}))", "<sweep expression>", "eval")
        return eval(code, space)  # noqa: S307 - source made from the tree above, no text of the case in it
    except (RecursionError, MemoryError, SyntaxError, ValueError, OverflowError):
        return None


_PY_OPS = {ast.Add: "+", ast.Sub: "-", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}


def _emit(node, text: str, space: dict, count: list) -> str:
    """Python source of ``node`` (see :func:`_python`); values the source needs go into ``space``."""
    count[0] += 1
    k = count[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(
            node.value, bool):
        space[f"_c{k}"] = node.value
        try:
            _check_size(node.value)
        except ExprError:  # (raised where the constant is evaluated)
            return f"_check_size(_c{k})"
        return f"_c{k}"
    if isinstance(node, ast.Name):
        space[f"_s{k}"] = node.id
        return f"n[_s{k}]"  # (an unknown name: KeyError; evaluate gives the message)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _emit(node.left, text, space, count), _emit(node.right, text, space, count)
        a, b, v = f"_a{k}", f"_b{k}", f"_v{k}"
        op = type(node.op)
        if op is ast.Mult:  # (both sides evaluated, left first; ints whose product stays in bounds inline)
            value = (f"({a} * {b} if (({a} := {left}), ({b} := {right})) and type({a}) is int and type({b}) is int "
                     f"and {a}.bit_length() + {b}.bit_length() <= {MAX_INT_BITS + 1} else _mul({a}, {b}))")
        elif op is ast.Pow:
            value = f"_pow({left}, {right})"
        else:
            value = f"(({left}) {_PY_OPS[op]} ({right}))"
        return f"({v} if type({v} := {value}) is int and -_BIG < {v} < _BIG else _check_size({v}))"
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return f"({'-' if type(node.op) is ast.USub else '+'}({_emit(node.operand, text, space, count)}))"
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
            and not node.keywords):
        space[f"_f{k}"] = FUNCTIONS[node.func.id]
        args = ", ".join(_emit(a, text, space, count) for a in node.args)
        return f"_check_size(_f{k}({args}))"
    space[f"_m{k}"] = (f"expression {text!r}: only arithmetic (+ - * / // % **), sweep variables, numbers and the "
                       f"functions {', '.join(FUNCTIONS)} are allowed")
    return f"_refused(_m{k})"


def _refuse(message: str):
    raise ExprError(message)


@lru_cache(maxsize=1024)
def _program(text: str):
    """The expression compiled once: a function of ``names`` (each node a closure, evaluated left to right,
    every check and message of a node where it is evaluated)."""
    return _compile(_parse(text), text)


def _compile(node, text):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) and not isinstance(
            node.value, bool):
        value = node.value
        try:
            _check_size(value)
        except ExprError:  # (raised where the constant is evaluated, as every check)
            return lambda names: _check_size(value)
        return lambda names: value  # (the check passes at every evaluation: made once)
    if isinstance(node, ast.Name):
        ident = node.id

        def name(names):
            if ident not in names:
                have = ", ".join(sorted(names)) or "none (the case has no [sweep] table)"
                raise ExprError(f"expression {text!r}: unknown name {ident!r}; sweep variables: {have}")
            return names[ident]
        return name
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op, left, right = _BINOPS[type(node.op)], _compile(node.left, text), _compile(node.right, text)

        def binop(names):
            v = op(left(names), right(names))
            if type(v) is int and -_BIG < v < _BIG:  # (what _check_size lets through, tested in one step)
                return v
            return _check_size(v)
        return binop
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        op, operand = _UNARY[type(node.op)], _compile(node.operand, text)
        return lambda names: op(operand(names))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
            and not node.keywords):
        func, args = FUNCTIONS[node.func.id], [_compile(a, text) for a in node.args]
        return lambda names: _check_size(func(*[a(names) for a in args]))
    message = (f"expression {text!r}: only arithmetic (+ - * / // % **), sweep variables, numbers and the "
               f"functions {', '.join(FUNCTIONS)} are allowed")

    def refused(names):
        raise ExprError(message)
    return refused

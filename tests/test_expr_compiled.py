"""``expr.compiled`` (what the point template evaluates a sweep's expressions with) gives evaluate's value, of the
same type, wherever evaluate gives one, and raises wherever evaluate raises: at the integer size limit (both
sides of 2**128, products, powers, constants), for bools, floats and strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastcopy.golden.expr import MAX_INT_BITS, ExprError, compiled, evaluate

EDGE = [0, 1, -1, 2, (1 << MAX_INT_BITS) - 1, -(1 << MAX_INT_BITS) + 1, 1 << MAX_INT_BITS, -(1 << MAX_INT_BITS),
        1 << 64, (1 << 64) + 1, 3, True, False, 1.0, -0.0, 2.5, "ab"]
TEXTS = ["a * b", "a + b", "a - b", "a * b * 16", "(a + b) * 2", "a // 2 + b", "-a * b", "a ** 2", "a",
         "a * 340282366920938463463374607431768211455", "340282366920938463463374607431768211456 + a",
         "max(a, b) * 2", "au(a, 32)", "a % 7 * b"]


def _outcome(fn):
    try:
        v = fn()
    except Exception as exc:  # noqa: BLE001 - compared: raises, or not
        return ("raises", isinstance(exc, ExprError))
    return ("value", type(v), v)


def _same(text, a, b):
    names = {"a": a, "b": b}
    want = _outcome(lambda: evaluate(text, names))
    got = _outcome(lambda: compiled(text)(names))
    if want[0] == "raises":
        assert got[0] == "raises", (text, a, b, got)
    else:
        assert got == want, (text, a, b)


@pytest.mark.parametrize("text", TEXTS)
def test_compiled_is_evaluate_at_the_edges(text):
    for a in EDGE:
        for b in EDGE:
            _same(text, a, b)


@given(st.sampled_from(TEXTS), st.integers(-(1 << 130), 1 << 130), st.integers(-(1 << 70), 1 << 70))
def test_compiled_is_evaluate(text, a, b):
    _same(text, a, b)


MORE = ["a * (b * a)", "(a * b) * (b * a) * (a * 3)", "-(a * b) + -a", "+a - -b", "a / b", "a / 2 * b",
        "ceil_div(a * b, 7) * au(b, 3)", "min(a, b) * max(a * b, 2)", "abs(a) ** 2 * b", "a % 0", "a // 0",
        "sizeof('half') * a", "'x' * a", "a + 'x'", "a < b", "c * a", "[a]", "a if b else 1",
        "2 ** 200 * 0 + a", "a * 1.5 * b", "(a + b) * (a - b) * (a * b)"]


@pytest.mark.parametrize("text", MORE)
def test_compiled_is_evaluate_for_every_node_kind(text):
    for a in EDGE:
        for b in EDGE:
            _same(text, a, b)


def _trees(depth):
    leaf = st.sampled_from(["a", "b", "3", "16", "0", "-1", "2.5", "340282366920938463463374607431768211455"])
    if depth == 0:
        return leaf
    sub = _trees(depth - 1)
    return st.one_of(
        leaf,
        st.tuples(sub, st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), sub)
        .map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        sub.map(lambda t: f"-{t}"),
        st.tuples(st.sampled_from(["min", "max", "au", "ceil_div"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"))


@given(_trees(3), st.sampled_from(EDGE), st.sampled_from(EDGE))
def test_compiled_is_evaluate_on_random_expressions(text, a, b):
    """The one-function form (temporaries per node, nested products on both sides) against the closures."""
    _same(text, a, b)

"""A sweep point without compiling the case again: a point compiled once, with its *holes* filled per point.

In most sweeps the sweep variables reach the program in a few places only, each an ``"=expr"`` string: a GM
buffer's shape, a local buffer's count, a field of a parameter struct, an integer or boolean parameter of an op.
Everything else in the case is the same at every point, so every point's program is the first point's program
with those values changed. :func:`build` looks at the case document; when every expression sits in such a place
(and the case has no loops, compute steps, cores, implicit sweeps, offsets in operands, or buffer inputs whose
validation depends on the size), it returns a :class:`PointTemplate`, whose :meth:`~PointTemplate.point` evaluates
the point's expressions (compiled once) and checks each value as the case compiler would (the same integer rule,
the struct field's own coercion and C++ range on the case's product, the per-buffer byte limit).

A point whose values pass gets the program the compiler would return (tests/test_case_template.py compares both
on every example and on sweeps built to fail). A point where anything fails or looks unusual gets None, and the
caller compiles that point in full: errors, their messages and their order are always the compiler's own.
"""

from __future__ import annotations

import math

from .. import config
from ..params import CTYPES
from .expr import compiled
from .fastpoint import Runs
from .schema import APIS, ARG_KINDS, B4_VALUES, BufferSpec, OpSpec, Program, struct_class, whole

#: init kinds whose validation does not depend on the buffer's size (``values`` counts them, ``file`` looks for
#: the file at every compile)
_SIZE_FREE_INITS = frozenset({"uniform", "normal", "integers", "arange", "constant", "zeros", "bits"})


class _Refused(Exception):
    """The document has a value the template does not handle: compile every point in full."""


def _has_expr(v) -> bool:
    if isinstance(v, str):
        return v.startswith("=")
    if isinstance(v, list):
        return any(_has_expr(x) for x in v)
    if isinstance(v, dict):
        return any(_has_expr(x) for x in v.values())
    return False


def _expr(v):
    """The compiled expression of an ``"=expr"`` string; refused for anything else that holds an expression;
    None for a constant."""
    if isinstance(v, str) and v.startswith("="):
        return compiled(v[1:])
    if _has_expr(v):
        raise _Refused
    return None


def _shared(obj, **changes):
    """A copy of the frozen dataclass ``obj`` with ``changes`` (what ``dataclasses.replace`` returns, without
    running ``__init__``: the fields were validated where they were made)."""
    new = _new(type(obj))
    d = new.__dict__
    d.update(obj.__dict__)
    d.update(changes)
    return new


_new = object.__new__


class PointTemplate:
    """The program of a point = ``base`` (a compiled point) with the holes filled. ``buffers``: ``(position in
    the program, BufferSpec, dims, lowest dim, byte limit, element size)`` per buffer with holes, ``dims`` a list of a constant
    or a compiled expression per dimension. ``ops``: ``(position, OpSpec, holes)`` per op with holes, ``holes`` a
    list of ``(position in args or kwargs, is kwarg, Arg, fields or (lo, hi, is bool))``."""

    def __init__(self, base: Program, buffers: list, ops: list):
        self.base, self.buffers, self.ops = base, buffers, ops
        # the specs made for the hole values seen so far, per buffer and per op (frozen: points with the same
        # values share them), at most MEMO each
        self._specs = [{} for _ in buffers], [{} for _ in ops]
        self.runs = Runs()  # (what runs the programs made here: engine.run_program finds it on each of them)
        self.made = 0  # points made so far (the straight-line function is written at the RUNNER_POINTS-th)
        self.straight = None  # _point written out for these holes (None: not yet; False: not written)

    def point(self, names: dict, index: int, values: dict) -> Program | None:
        """The program of the point with sweep variables ``names``, or None (compile the point in full)."""
        try:
            straight = self.straight
            if straight:
                prog = straight(names, index, values)
                if prog is not _GENERIC:
                    return prog
            elif straight is None:
                self.made += 1
                if self.made >= config.RUNNER_POINTS:
                    self.straight = False
                    self.straight = _straight(self)
            return self._point(names, index, values)
        except Exception:  # noqa: BLE001 - any doubt: the compiler decides, and raises its own error
            return None

    def _point(self, names: dict, index: int, values: dict) -> Program | None:
        base = self.base
        env = dict(names)
        env.setdefault("block_num", base.blocks)  # (as the compiler: before the buffers)
        buffers = list(base.buffers)
        bspecs, ospecs = self._specs
        for (i, spec, dims, lo, limit, itemsize), made in zip(self.buffers, bspecs):
            shape = []
            for d in dims:
                n = d if type(d) is int else d(env)
                if type(n) is not int:
                    n = whole(n)
                    if n is None:
                        return None
                if n < lo:
                    return None
                shape.append(n)
            shape = tuple(shape)
            if math.prod(shape) * itemsize > limit:
                return None
            new = made.get(shape)  # (a BufferSpec is its base's with this shape: the ints say all)
            if new is None:
                new = _remember(made, shape, _shared(spec, shape=shape))
            buffers[i] = new
        env["block_idx"] = 0  # (as the compiler: before the ops)
        ops = list(base.ops)
        for (i, op, holes), made in zip(self.ops, ospecs):
            filled, key = [], []  # (each hole's value; the values as a key while every one is an int)
            for k, is_kw, arg, rule in holes:
                if arg.kind == "struct":
                    value = arg.value.copy()
                    for f, fn, struct, lo, hi in rule:
                        v = fn(env)
                        if type(v) is int and lo is not None and lo <= v <= hi:  # (what _coerce keeps as it is)
                            value[f.name] = v
                            if key is not None:
                                key.append(v)
                            continue
                        if isinstance(v, (str, dict)) or v is None:
                            return None
                        v = struct._coerce(f, v)  # what setting the field does (raises where the compiler's would)
                        if lo is not None and not lo <= v <= hi:
                            return None
                        value[f.name] = v
                        key = None
                else:
                    fn, lo, hi, is_bool = rule
                    value = fn(env)
                    if is_bool:
                        if not isinstance(value, bool):
                            return None
                        key = None
                    else:
                        if type(value) is not int:
                            value = whole(value)
                            if value is None:
                                return None
                        if value < lo or value > hi:
                            return None
                        if key is not None:
                            key.append(value)
                filled.append(value)
            if key is not None:  # (an OpSpec is its base's with these hole values, all ints: they say all)
                key = tuple(key)
                new = made.get(key)
                if new is not None:
                    ops[i] = new
                    continue
            args, kwargs = list(op.args), list(op.kwargs)
            for (k, is_kw, arg, _), value in zip(holes, filled):
                new = _shared(arg, value=value)
                if is_kw:
                    kwargs[k] = (kwargs[k][0], new)
                else:
                    args[k] = new
            new = _shared(op, args=tuple(args), kwargs=tuple(kwargs))
            ops[i] = new if key is None else _remember(made, key, new)
        return _shared(base, index=index, values=values, buffers=tuple(buffers), ops=tuple(ops), _runs=self.runs)


_GENERIC = object()  # what the straight-line function returns where PointTemplate._point decides


def _straight(t: PointTemplate):
    """``t._point`` written out as one function for ``t``'s holes, for points whose hole values are all ints (the
    usual sweep): the same expressions in the same order, the same checks, memos and specs; it returns
    ``_GENERIC`` at the first value that is not an int (or a bool parameter), where ``_point`` decides. None when
    it cannot be written."""
    try:
        return _write_straight(t)
    except Exception:  # noqa: BLE001 - holes not foreseen: _point makes every point
        return None


def _write_straight(t: PointTemplate):
    base = t.base
    # the ops whose hole values were new at every point so far (at least 8): their plans are new at every point
    # too, and the runner plans them without keeping them in the plan caches (fastpoint)
    seen = t.made - 1
    t.runs.fresh = frozenset(i for (i, _, _), made in zip(t.ops, t._specs[1]) if seen >= 8 and len(made) >= seen)
    space = {"_GENERIC": _GENERIC, "_shared": _shared, "_remember": _remember, "base": base, "runs": t.runs}
    lines = ["env = dict(names)", f"env.setdefault('block_num', {base.blocks!r})"]

    def const(value, hint: str) -> str:
        name = f"{hint}{len(space)}"
        space[name] = value
        return name

    def value(v, name: str) -> None:  # (a hole's value: an int, else _point decides)
        lines.append(f"{name} = {const(v, 'e')}(env)")
        lines.append(f"if type({name}) is not int: return _GENERIC")

    slots = {}
    for (i, spec, dims, lo, limit, itemsize), made in zip(t.buffers, t._specs[0]):
        if type(base.blocks) is not int or type(lo) is not int or type(limit) is not int or type(itemsize) is not int:
            return None
        parts = []
        for k, d in enumerate(dims):
            n = f"n{i}_{k}"
            if type(d) is int:
                lines.append(f"{n} = {d}")
            else:
                value(d, n)
            lines.append(f"if {n} < {lo}: return None")
            parts.append(n)
        shape = "(" + "".join(f"{n}, " for n in parts) + ")"
        made = const(made, "made")
        lines += [f"shape = {shape}", f"if {' * '.join(parts) or '1'} * {itemsize} > {limit}: return None",
                  f"b{i} = {made}.get(shape)",
                  f"if b{i} is None: b{i} = _remember({made}, shape, _shared({const(spec, 'spec')}, shape=shape))"]
        slots[i] = f"b{i}"
    buffers = "(" + "".join(f"{slots.get(i) or f'base.buffers[{i}]'}, " for i in range(len(base.buffers))) + ")"
    lines.append("env['block_idx'] = 0")
    op_slots = {}
    for (i, op, holes), made in zip(t.ops, t._specs[1]):
        filled, key = [], []
        for h, (k, is_kw, arg, rule) in enumerate(holes):
            if arg.kind == "struct":
                fields = []
                for f, fn, struct, lo, hi in rule:
                    if lo is None:  # (a bool field: _point coerces it)
                        return None
                    v = f"v{i}_{h}_{len(fields)}"
                    value(fn, v)
                    lines.append(f"if not {lo} <= {v} <= {hi}: return _GENERIC")
                    fields.append((f.name, v))
                    key.append(v)
                filled.append((k, is_kw, arg, fields))
            else:
                fn, lo, hi, is_bool = rule
                v = f"v{i}_{h}"
                if is_bool:  # (then the op's spec is made at every point, as _point does)
                    lines += [f"{v} = {const(fn, 'e')}(env)", f"if not isinstance({v}, bool): return None"]
                    key = None
                else:
                    value(fn, v)
                    lines.append(f"if {v} < {lo} or {v} > {hi}: return None")
                    if key is not None:
                        key.append(v)
                filled.append((k, is_kw, arg, v))
        made_name = const(made, "made")
        if key is None:
            lines.append("if True:")
        else:
            lines += [f"key = ({''.join(f'{v}, ' for v in key)})", f"o{i} = {made_name}.get(key)", f"if o{i} is None:"]
        args, kwargs = [f"a[{k}]" for k in range(len(op.args))], [f"w[{k}]" for k in range(len(op.kwargs))]
        lines += [f"    a, w = {const(op.args, 'args')}, {const(op.kwargs, 'kwargs')}"]
        for k, is_kw, arg, v in filled:
            a = const(arg, "arg")
            if arg.kind == "struct":
                lines.append(f"    value = {a}.value.copy()")
                lines += [f"    value[{const(name, 'field')}] = {x}" for name, x in v]
                v = "value"
            new = f"_shared({a}, value={v})"
            if is_kw:
                kwargs[k] = f"(w[{k}][0], {new})"
            else:
                args[k] = new
        new = (f"_shared({const(op, 'op')}, args=({''.join(x + ', ' for x in args)}), "
               f"kwargs=({''.join(x + ', ' for x in kwargs)}))")
        lines.append(f"    o{i} = {new}" if key is None else f"    o{i} = _remember({made_name}, key, {new})")
        op_slots[i] = f"o{i}"
    ops = "(" + "".join(f"{op_slots.get(i) or f'base.ops[{i}]'}, " for i in range(len(base.ops))) + ")"
    lines.append(f"return _shared(base, index=index, values=values, buffers={buffers}, ops={ops}, _runs=runs)")
    source = "def point(names, index, values):\n" + "".join(f"    {line}\n" for line in lines)
    exec(compile(source, "<fastcopy point template>", "exec"), space)  # noqa: S102 - our own text; constants by name
    fn = space["point"]
    fn.source = source
    return fn


#: specs a template keeps per buffer or op (a sweep's values repeat in few combinations per place: the
#: 1000-point sweep has 42 distinct local sizes)
MEMO = 256


def _remember(made: dict, key, spec):
    if len(made) >= MEMO:
        made.clear()
    made[key] = spec
    return spec


def build(case, base: Program) -> PointTemplate | None:
    """The template of ``case`` from ``base``, its program at some point, or None when a point of this case
    must be compiled in full."""
    try:
        return _build(case, base)
    except Exception:  # noqa: BLE001 - _Refused, or a document shape not foreseen: every point compiled in full
        return None


def _build(case, base: Program) -> PointTemplate | None:
    doc = case.doc
    if case.implicit or not case.is_sweep or base.blocks != 1 or base.writes:
        return None
    for key, v in doc.items():
        if key not in ("buffers", "ops", "sweep") and _has_expr(v):
            return None
    raw_buffers, raw_ops = doc["buffers"], doc["ops"]
    if list(raw_buffers) != [b.name for b in base.buffers] or len(raw_ops) != len(base.ops):
        return None
    buffers = [_buffer_holes(i, spec, raw_buffers[spec.name], case.max_bytes) for i, spec in enumerate(base.buffers)]
    from ..products import Product

    product = Product[base.product]
    ops = [_op_holes(i, op, raw, product) for i, (op, raw) in enumerate(zip(base.ops, raw_ops))]
    buffers, ops = [b for b in buffers if b is not None], [o for o in ops if o is not None]
    if not buffers and not ops:
        return None  # (nothing changes between points: the template memo already returns the one program)
    return PointTemplate(base, buffers, ops)


def _buffer_holes(i: int, spec: BufferSpec, raw: dict, limit: int):
    key = "shape" if spec.gm else "count"
    for k, v in raw.items():
        if k != key and _has_expr(v):
            raise _Refused
    shape = raw.get(key)
    if not _has_expr(shape):
        return None
    if spec.init is not None and (spec.init.get("kind") not in _SIZE_FREE_INITS or spec.dtype in B4_VALUES):
        raise _Refused
    items = shape if isinstance(shape, list) else [shape]
    if not spec.gm and isinstance(shape, list):
        raise _Refused
    dims = []
    for d in items:
        fn = _expr(d)
        if fn is None and type(d) is not int:
            raise _Refused
        dims.append(d if fn is None else fn)
    itemsize = spec.np_dtype.itemsize  # (computed on the spec now: every point's copy of it inherits it)
    return i, spec, dims, 1 if spec.gm else 0, limit, itemsize


def _op_holes(i: int, op, raw, product):
    if not isinstance(op, OpSpec) or not isinstance(raw, dict) or op.env or {"for", "body", "range", "compute"} & set(raw):
        raise _Refused
    for k, v in raw.items():
        if k != "params" and (_has_expr(v) or (isinstance(v, str) and "[" in v)):
            raise _Refused
    params = raw.get("params", {})
    if not isinstance(params, dict) or not _has_expr(params):
        return None
    spec = APIS[op.api]
    where = {a.key: (k, False, a) for k, a in enumerate(op.args)}
    where.update({a.key: (k, True, a) for k, (_, a) in enumerate(op.kwargs)})
    holes = []
    for key, v in params.items():
        if not _has_expr(v):
            continue
        if key not in where:
            raise _Refused
        k, is_kw, arg = where[key]
        cls = struct_class(key)
        if cls is not None:
            if arg.kind != "struct" or not isinstance(v, dict):
                raise _Refused
            fields = []
            for name, fv in v.items():
                fn = _expr(fv)
                if fn is None:
                    continue
                f = cls._index.get(name)
                if f is None or f.ctype == "T" or isinstance(f.default, tuple):
                    raise _Refused
                lo = hi = None
                if f.ctype != "bool":
                    lo, hi = CTYPES[cls._product_types(f).get(product, f.ctype)][1:]
                fields.append((f, fn, cls(), lo, hi))
            holes.append((k, is_kw, arg, fields))
            continue
        kind, detail = spec.kinds.get(key) or ARG_KINDS[key]
        fn = _expr(v)
        if kind == "int" and arg.kind == "int":
            holes.append((k, is_kw, arg, (fn, detail[0], detail[1], False)))
        elif kind == "bool" and arg.kind == "bool":
            holes.append((k, is_kw, arg, (fn, None, None, True)))
        else:
            raise _Refused
    return (i, op, holes) if holes else None

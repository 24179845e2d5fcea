"""Explain one op of a case file: run the case's ops before it (as ``fastcopy run`` does), then explain it.

The case engine calls the public API (``fastcopy.DataCopy`` and friends) op by op; while it runs here, those
names are wrapped so the call of the chosen op is recorded with its real tensors and core state (the engine's
``on_op`` hook says which op is running) and the run stops there. Compute steps are skipped (their outputs count
as written, as in ``fastcopy check``). Nothing is written to disk.
"""

from __future__ import annotations

import contextlib

from ..errors import FastCopyError

#: The public ops a case can call that move data from one tensor to another (explainable).
MOVING = ("DataCopy", "DataCopyPad", "LoadData", "LoadDataWithTranspose", "LoadDataWithStride", "Fixpipe")
#: Compute steps explained in text (what they read, write and compute): run, then described.
DESCRIBED = ("Mmad",)


class _Stop(Exception):
    pass


@contextlib.contextmanager
def _recording(target: int):
    """Wrap the moving ops so the call made for flat op ``target`` is recorded (then the run stops)."""
    import fastcopy

    state = {"op": None}
    got = {}
    saved = {name: getattr(fastcopy, name) for name in MOVING + DESCRIBED}

    def wrap(name, func):
        def recorder(*args, **kwargs):
            op = state["op"]
            if op is not None and op.index == target:
                got.update(func=func, args=args, kwargs=kwargs, op=op)
                if name in DESCRIBED:  # validated by running it (explain writes no file)
                    from ..errors import collecting

                    with collecting() as caught:  # (its own warnings, not the running program's)
                        func(*args, **kwargs)
                    got["warnings"] = tuple(m for _, m in caught)
                raise _Stop
            return func(*args, **kwargs)

        recorder.__name__ = name
        return recorder

    def on_op(op, tensors):
        state["op"] = op

    try:
        for name, func in saved.items():
            setattr(fastcopy, name, wrap(name, func))
        yield got, on_op
    finally:
        for name, func in saved.items():
            setattr(fastcopy, name, func)


def _where(spec) -> str:
    """``ops[0].body[1] (block_idx=1, i=0)``: the op's place in the case file and its loop variables."""
    env = ", ".join(f"{k}={v}" for k, v in getattr(spec, "env", ()))
    return (getattr(spec, "path", "") or f"ops[{spec.index}]") + (f" ({env})" if env else "")


def _ref_text(ref) -> str:
    return ref.name + (f"[{ref.offset}]" if ref.offset else "")


def explain_case(path, op: int | None = None, point: int = 0, max_rows: int | None = None):
    """The :class:`~fastcopy.explain.Explanation` of op ``op`` of sweep point ``point`` of the case file at
    ``path``. ``op`` counts the case's ops in execution order, loops unrolled and cores one after the other (as
    ``fastcopy check`` lists them); default: the first op that moves data."""
    from ..golden import load_case
    from ..golden.engine import CaseRunError, run_program
    from . import MAX_ROWS, explain

    case = load_case(path)
    if not 0 <= point < len(case):
        raise FastCopyError(f"explain: {path}: point {point} outside [0, {len(case)})")
    prog = case.point(point)
    ops = list(prog.ops)
    moving = [o for o in ops if getattr(o, "api", None) in MOVING + DESCRIBED and getattr(o, "dst", None) is not None]
    if not moving:
        raise FastCopyError(f"explain: {path} has no op that moves data ({', '.join(MOVING + DESCRIBED)})")
    if op is None:
        op = moving[0].index
    if op not in {o.index for o in moving}:
        have = "; ".join(f"{o.index}: {_where(o)} {o.api}" for o in moving[:12])
        more = f"; ... ({len(moving)} in all)" if len(moving) > 12 else ""
        raise FastCopyError(f"explain: {path}: op {op} is not an op that moves data or an Mmad (ops are counted in "
                            f"execution order, loops unrolled); those are: {have}{more}")
    with _recording(op) as (got, on_op):
        try:
            run_program(prog, skip_compute=True, on_op=on_op)  # compute steps never run: layout only
        except CaseRunError as exc:
            if not isinstance(exc.cause, _Stop):
                raise
    if not got:
        raise FastCopyError(f"explain: {path}: op {op} was not reached")
    spec, args = got["op"], got["args"]
    if spec.api in DESCRIBED:
        from .cube import describe_mmad

        labels = tuple(_ref_text(r) for _, r in spec.operand_refs())
        return describe_mmad(*args, labels=labels, title=f"op {op} = {_where(spec)}", warnings=got["warnings"])
    labels = (_ref_text(spec.dst), _ref_text(spec.src))
    return explain(got["func"], args[0], args[1], *args[2:], max_rows=max_rows or MAX_ROWS, labels=labels,
                   title=f"op {op} = {_where(spec)}", **got["kwargs"])

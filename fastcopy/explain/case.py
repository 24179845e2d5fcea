"""Explain one op of a case file: run the case's ops before it (as ``fastcopy run`` does), then explain it.

The case engine calls the public API (``fastcopy.DataCopy`` and friends) op by op; while it runs here, those
names are wrapped so the N-th data-moving call is recorded with its real tensors and core state and the run
stops there. Nothing is written to disk.
"""

from __future__ import annotations

import contextlib

from ..errors import FastCopyError

#: The public ops a case can call that move data (explainable).
MOVING = ("DataCopy", "DataCopyPad", "LoadData", "LoadDataWithTranspose", "LoadDataWithStride")


class _Stop(Exception):
    pass


def _count_moving(prog) -> list:
    return [op for op in prog.ops if op.api in MOVING]


@contextlib.contextmanager
def _recording(target: int):
    import fastcopy

    seen, got = [0], {}
    saved = {name: getattr(fastcopy, name) for name in MOVING}

    def wrap(name, func):
        def recorder(*args, **kwargs):
            if seen[0] == target:
                got.update(func=func, args=args, kwargs=kwargs)
                raise _Stop
            seen[0] += 1
            return func(*args, **kwargs)

        recorder.__name__ = name
        return recorder

    try:
        for name, func in saved.items():
            setattr(fastcopy, name, wrap(name, func))
        yield got, seen
    finally:
        for name, func in saved.items():
            setattr(fastcopy, name, func)


def explain_case(path, op: int | None = None, point: int = 0, max_rows: int | None = None):
    """The :class:`~fastcopy.explain.Explanation` of data-moving op ``op`` (index in the case's ``ops``;
    default: the first that moves data) of sweep point ``point`` of the case file at ``path``."""
    from ..golden import load_case
    from ..golden.engine import CaseRunError, run_program
    from . import MAX_ROWS, explain

    case = load_case(path)
    if not 0 <= point < len(case):
        raise FastCopyError(f"explain: {path}: point {point} outside [0, {len(case)})")
    prog = case.point(point)
    moving = [o.index for o in _count_moving(prog)]
    if not moving:
        raise FastCopyError(f"explain: {path} has no op that moves data ({', '.join(MOVING)})")
    if op is None:
        op = moving[0]
    if op not in moving:
        have = ", ".join(f"{o.index} ({o.api})" for o in _count_moving(prog))
        raise FastCopyError(f"explain: {path}: ops[{op}] is not an op that moves data; those are: {have}")
    with _recording(moving.index(op)) as (got, _):
        try:
            run_program(prog, skip_compute=not case.allow_python)  # compute steps: only when trusted
        except CaseRunError as exc:
            if not isinstance(exc.cause, _Stop):
                raise
    if not got:
        raise FastCopyError(f"explain: {path}: ops[{op}] was not reached")
    args = got["args"]
    return explain(got["func"], args[0], args[1], *args[2:], max_rows=max_rows or MAX_ROWS, **got["kwargs"])

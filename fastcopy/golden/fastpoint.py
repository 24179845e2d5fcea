"""A sweep point run straight through: a function written for its case's program structure.

Every program a :class:`~fastcopy.golden.holes.PointTemplate` makes is its base program with the hole values
filled: the same buffers, ops and outputs in the same order, with the same names, dtypes, positions, inputs,
APIs and operands; only shapes, counts and parameter values differ. :func:`engine.run_program` (``reuse=True``,
the batch's way) then spends much of a small point finding out again what that structure already says: which
buffers are GM and which have inputs, which buffer an op writes, which public function it calls and how its
arguments are built, where each output is. :class:`Runs` writes, once per case, a function that runs such a
program in one straight line of calls (the source made here and compiled, as the manifest layouts of
``golden/files.py`` are): the same functions for everything that draws, checks or moves data (the input draw,
the tensors, the restarted ``TPipe`` and its ``alloc``, each op's planner and executor), in the engine's order,
with the engine's warnings collection.

The function is made at a case's ``config.RUNNER_POINTS``-th point run (a small sweep, and the one-point batch,
make none; when that point raises, at the next one, up to ``config.RUNNER_TRIES`` points) and kept only when it
gives that point's :class:`Result` exactly (every array byte for byte, the placement, warnings, notes and
counts); a point on which it raises anything is run again by the engine, whose
errors, messages and warnings are then the point's. Programs it does not handle (cores, compute steps, ops other
than ``DataCopy``'s count and ``DataCopyParams`` forms on whole tensors, local buffers with inputs or addresses)
are never given one. Only the values that are immutable parts of the structure (names, dtypes, positions,
struct names) are written into the function; everything else (inputs' init tables, seeds, poison, capacities,
parameter values, shapes) is read from the program at every point.
"""

from __future__ import annotations


from .. import config
from .schema import APIS, BufferSpec, OpSpec

#: the ``DataCopy`` forms a runner calls through their planner (an ``Arg`` kind -> its struct name, or None)
_FORMS = {"int": None, "struct": "DataCopyParams"}


class Runs:
    """The straight-line runner of one point template's programs (``run_program`` finds it on a program the
    template made, under ``_runs``). Never pickled with a program: an unpickled program has none."""

    __slots__ = ("seen", "runner", "fresh")

    def __init__(self):
        self.seen = 0  # points run so far without a runner
        self.runner = None  # the function; False: none for this case
        # positions of the ops whose parameters are new at every point (the template says so): the runner plans
        # them without the plan caches, which would only keep plans that are never asked for again
        self.fresh = frozenset()

    def __reduce__(self):
        return (_none, ())

    def run(self, prog):
        """The Result of ``prog`` (a program of this template), or None: run it with the engine."""
        runner = self.runner
        if runner is None:
            self.seen += 1
            if self.seen < config.RUNNER_POINTS:
                return None
            from . import engine

            self.runner = False  # (while it is made: other threads run their points on the engine)
            try:
                result = engine.run_general(prog)
            except BaseException:  # the point's own error; the next point tries again, up to RUNNER_TRIES in all
                if self.seen < config.RUNNER_POINTS + config.RUNNER_TRIES - 1:
                    self.runner = None
                raise
            runner = make(prog, self.fresh)
            if runner is not None and _same(result, _try(runner, prog)):
                self.runner = runner
            return result
        if runner is False:
            return None
        return _try(runner, prog)


def _none():
    return None


#: how far back a fresh op looks for a repeated plan (a repeat further back costs a new plan; the plan caches
#: would have kept it for up to 4096 calls)
_FRESH_KEYS = 256


class _Fresh:
    """An op planned without the plan caches while its plans are new: :meth:`cached` is False until a plan's
    parameters and tensors come again within ``_FRESH_KEYS`` calls (a sweep whose later points repeat what its
    first ones did not), then True for good. Keeps the keys of the last calls (between 0 and ``_FRESH_KEYS``: the
    set is emptied when full), not the plans."""

    __slots__ = ("keys",)

    def __init__(self):
        self.keys = set()  # None: cached from now on

    def cached(self, key, dst, src) -> bool:
        keys = self.keys
        if keys is None:
            return True
        k = (key, dst._sig, src._sig)
        if k in keys:
            self.keys = None
            return True
        if len(keys) >= _FRESH_KEYS:
            keys.clear()
        keys.add(k)
        return False


def _try(runner, prog):
    """``runner(prog)``, or None when it raises (the engine then runs the point and raises its own error)."""
    try:
        return runner(prog)
    except Exception:  # noqa: BLE001 - any failure: the engine decides, with its own messages
        return None


def make(prog, fresh=frozenset()):
    """The runner of programs with the structure of ``prog``, or None when the structure has a part it does not
    handle. ``fresh``: the positions of the ops to plan without the plan caches (their parameters are new at
    every point)."""
    try:
        return _make(prog, fresh)
    except Exception:  # noqa: BLE001 - a structure not foreseen: the engine runs every point
        return None


def _make(prog, fresh):
    """The runner's source, compiled. It runs in the engine's namespace: the engine's helpers it calls
    (``gm_input``, ``_pipe``, ``collect_output``, ``start_collecting``, ``Result``, ...) are looked up at every
    point as the engine's own code looks them up (one replaced, by a test's monkeypatch or a mock, is the one
    both call). Its constants (dtypes, positions, names, the fastcopy functions below) are its default
    arguments. What ``fastcopy.DataCopy`` would call, ``DataCopy`` itself and, behind it, ``api.execute`` and
    ``ops.datacopy.plan_data_copy``, it calls its own way (the planner with a struct's key): it checks first, at
    every point, that each is still the one it was made with; one replaced (``fastcopy explain`` wraps
    DataCopy), it raises before doing anything and the engine runs the point, calling the replacement."""
    import types

    import fastcopy

    from .. import api
    from ..ops import datacopy

    from . import engine

    if prog.blocks != 1 or prog.writes or type(prog.buffers) is not tuple or type(prog.ops) is not tuple:
        return None
    consts = {"fc": fastcopy, "DataCopy": fastcopy.DataCopy, "api": api, "execute": api.execute, "dc": datacopy,
              "plan_data_copy": datacopy.plan_data_copy}
    names = {}

    def const(value, hint: str) -> str:
        name = f"{hint}{len(consts)}"
        consts[name] = value
        return name

    lines = ["if (fc.DataCopy is not DataCopy or api.execute is not execute"
             " or dc.plan_data_copy is not plan_data_copy): raise LookupError",  # (replaced: the engine's point)
             "bs = p.buffers", f"if len(bs) != {len(prog.buffers)}: raise LookupError",
             "ops = p.ops", f"if len(ops) != {len(prog.ops)}: raise LookupError",
             "inputs, placement, caught = {}, {}, {}"]
    written = engine.written_buffers(prog)
    for i, buf in enumerate(prog.buffers):
        if type(buf) is not BufferSpec or type(buf.name) is not str or buf.name in names:
            return None
        names[buf.name] = f"t{i}"
        if buf.gm:
            if buf.init is None:
                lines.append(f"t{i} = gm_output(bs[{i}], p.poison)")
            else:
                lines.append(f"t{i} = gm_input(bs[{i}], p, inputs, {buf.name in written})")
    lines.append("pipe = _pipe(p, True)")
    for i, buf in enumerate(prog.buffers):
        if buf.gm:
            continue
        if buf.init is not None or buf.addr is not None or type(buf.position) is not str:
            return None
        lines.append(f"t{i} = pipe.alloc({const(buf.position, 'pos')}, {const(buf.np_dtype, 'dt')}, bs[{i}].size)")
        lines.append(f"phys = t{i}.memory.phys")
        lines.append(f"placement[{const(buf.name, 'name')}] = (_PHYS_NAMES.get(phys) or phys.name, t{i}.offset)")
    # the ops: what DataCopy does with a count or a DataCopyParams on two tensors without a prepared call (a
    # point's tensors are new): its planner, then the executor (run only while fastcopy.DataCopy is this one)
    lines += ["got = []", "before = start_collecting(got)", "try:"]
    for k, op in enumerate(prog.ops):
        if (type(op) is not OpSpec or op.api != "DataCopy" or APIS[op.api].target or op.operands or op.kwargs
                or op.dtype or op.block or op.dst is None or op.dst.offset or op.src.offset
                or op.dst.name not in names or op.src.name not in names or len(op.args) != 1
                or op.args[0].kind not in _FORMS or op.args[0].struct != _FORMS[op.args[0].kind]):
            return None
        d, s = names[op.dst.name], names[op.src.name]
        lines.append(f"    op = ops[{k}]")
        cached = f", cached={const(_Fresh(), 'fresh')}.cached(key, {d}, {s})" if k in fresh else ""
        if op.args[0].kind == "int":  # (DataCopy(dst, src, count): a count that is a Python int)
            lines += ["    v = op.args[0].value", "    if type(v) is not int: raise LookupError",
                      f"    execute(plan_data_copy({d}, {s}, v{cached.replace('(key,', '(v,')}), {d}, {s})"]
        else:  # (DataCopy(dst, src, DataCopyParams(...)) plans from the struct's key)
            lines += ["    v = op.args[0].value", f"    key = {_struct_key(op.args[0].struct, 'v', const)}",
                      f"    execute(plan_data_copy({d}, {s}, None, key{cached}), {d}, {s})"]
        lines += ["    if got:", "        _note_warnings(op, got, 0, caught)"]
    lines += ["finally:", "    stop_collecting(before)", "outputs, notes, empty, counts = {}, [], [], {}",
              "outs = p.outputs", f"if len(outs) != {len(prog.outputs)}: raise LookupError"]
    for k, out in enumerate(prog.outputs):
        i = next(i for i, b in enumerate(prog.buffers) if b.name == out.buffer)
        lines += [f"out = outs[{k}]", f"if out.buffer != bs[{i}].name: raise LookupError",
                  f"collect_output(out, bs[{i}].shape, t{i}, outputs, notes, empty, counts)"]
        if not prog.buffers[i].gm:  # (on-chip: a view of the pipe, which the next program clears)
            lines.append("data, mask = outputs[out.buffer]; outputs[out.buffer] = (data.copy(), mask.copy())")
    lines.append("return Result(p, inputs, outputs, placement, caught, notes, empty, counts)")
    source = f"def run(p, {', '.join(consts)}):\n" + "".join(f"    {line}\n" for line in lines)
    space = {}
    exec(compile(source, "<fastcopy point runner>", "exec"), space)  # noqa: S102 - our own text; constants by name
    run = types.FunctionType(space["run"].__code__, vars(engine), "run", tuple(consts.values()))
    run.source = source
    return run


def _struct_key(name: str, v: str, const) -> str:
    """An expression for the ``key()`` of the struct ``name`` that a case's field dict ``v`` makes
    (``make_struct(name, v).key()``): when ``v`` gives every field in constructor order, each an int inside the
    field's widest bounds (what the struct keeps as it is), the values themselves, without making the struct."""
    from .schema import struct_class

    made = f"make_struct({const(name, 'st')}, {v}).key()"
    plain = struct_class(name)._plain_fields()
    if any(lo is None for _, lo, _ in plain):  # (a bool or T field: the struct decides)
        return made
    order = const(tuple(f.name for f, _, _ in plain), "order")
    checks = " and ".join(f"type(k[{i}]) is int and {lo} <= k[{i}] <= {hi}" for i, (_, lo, hi) in enumerate(plain))
    return f"k if tuple({v}) == {order} and {checks} else {made}".replace("k if", f"k if (k := tuple({v}.values())) and", 1)


def _same(a, b) -> bool:
    """Whether two Results are the same: the program, every array (dtype, shape, bytes), everything else equal."""
    if b is None or a.program is not b.program:
        return False
    for x, y in ((a.inputs, b.inputs), (a.outputs, b.outputs)):
        if list(x) != list(y):
            return False
    for name in a.inputs:
        if not _same_array(a.inputs[name], b.inputs[name]):
            return False
    for name, (data, mask) in a.outputs.items():
        data2, mask2 = b.outputs[name]
        if not (_same_array(data, data2) and _same_array(mask, mask2)):
            return False
    return (a.placement == b.placement and list(a.placement) == list(b.placement) and a.warnings == b.warnings
            and a.notes == b.notes and a.empty == b.empty and a.defined == b.defined)


def _same_array(x, y) -> bool:
    return (type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape and x.flags.c_contiguous
            and y.flags.c_contiguous and x.tobytes() == y.tobytes())

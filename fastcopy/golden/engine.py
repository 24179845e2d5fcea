"""Run a :class:`Program`: build the tensors, call the public fastcopy API op by op, collect the outputs.

The engine never moves data itself: every op is the same ``DataCopy`` / ``DataCopyPad`` / ... call a Python user
writes, on a ``TPipe`` of the case's product and ``GlobalTensor`` objects over the generated arrays.
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import FastCopyError, start_collecting, stop_collecting
from ..memory import GlobalTensor, TPipe, aligned_bytes
from ..products import Phys
from .inputs import generate, generate_at
from .schema import (APIS, Arg, CaseError, ComputeSpec, OpSpec, Program, api_function, enum_class, fixpipe_config,
                     make_struct, struct_class)


class CaseRunError(FastCopyError):
    """An op of a case failed: ``file: ops[i] API(dst, src): ErrorClass: message``. ``cause`` is the original."""

    def __init__(self, program: Program, op: OpSpec | None, cause: BaseException, where: str = ""):
        self.program, self.op, self.cause = program, op, cause
        where = where or (op.title() if op is not None else "")
        point = f" point {program.index}" if program.index is not None else ""
        self.key = param_path(op, str(cause)) if op is not None else None
        at = f" [at {self.key}]" if self.key else ""
        super().__init__(f"{program.file}{point}: {where}: {type(cause).__name__}: {cause}{at}")


def param_path(op: OpSpec, message: str) -> str | None:
    """The case key of the first ``field=value`` an error message names (``ops[2].params.Nd2NzParams.dValue``)."""
    fields = {}
    for a in op.args + tuple(a for _, a in op.kwargs):
        if a.kind == "struct":
            for f in a.value:
                fields.setdefault(f, f"{a.key}.{f}")
        elif a.kind == "structs":
            for f in a.value[0]:
                fields.setdefault(f, f"{a.key}[].{f}")
        else:
            fields.setdefault(a.key, a.key)
    for m in re.finditer(r"\b([A-Za-z_]\w*)=", message):
        if m.group(1) in fields:
            return f"{op.path or f'ops[{op.index}]'}.params.{fields[m.group(1)]}"
    return None


@dataclass
class Result:
    """What a program produced (in memory)."""

    program: Program
    inputs: dict  # GM buffer name -> initial contents (array of its shape), for buffers with an init
    outputs: dict  # buffer name -> (data array, defined mask as uint8 array), shaped like the buffer
    placement: dict  # local buffer name -> (physical buffer name, byte address)
    warnings: dict = field(default_factory=dict)  # op index -> [messages]
    notes: list = field(default_factory=list)  # warnings about the whole program (undefined output elements)
    empty: list = field(default_factory=list)  # outputs with no defined element (an error when writing)
    defined: dict = field(default_factory=dict)  # output name -> its number of defined elements (when counted)

    def check(self, strict: bool = False) -> None:
        """Raise :class:`CaseRunError` when an output has no defined element, or (``strict``) on any warning."""
        if self.empty:
            raise CaseRunError(self.program, None, FastCopyError(
                f"output {self.empty[0]!r} has no defined element: nothing was written to it (is its CopyOut "
                "missing, or does an op write another buffer?)"), f"outputs.{self.empty[0]}")
        warns = self.all_warnings() if strict else None
        if warns:
            raise CaseRunError(self.program, None, FastCopyError(f"{len(warns)} warning(s) with --strict: "
                                                                 f"{warns[0]}"), "warnings")

    def all_warnings(self) -> list:
        if not self.warnings:  # (the usual point: none; a new list all the same)
            return list(self.notes)
        return [f"ops[{i}]: {m}" for i, ms in sorted(self.warnings.items()) for m in ms] + list(self.notes)


def build_arg(arg: Arg, dtype=None):
    """A case-file argument -> the Python value the public API takes."""
    kind = arg.kind
    if kind == "int" or kind == "bool":
        return arg.value
    if kind == "struct":
        return make_struct(arg.struct, arg.value)
    if kind == "fixpipe_config":
        return fixpipe_config(arg.value)
    if kind == "structs":
        cls = struct_class(arg.struct)
        return [cls(**v) for v in arg.value]
    if kind == "enum":
        return enum_class(arg.struct)[arg.value]
    if kind == "value":
        return np.array(arg.value).astype(dtype)[()]
    return arg.value


_PIPES = threading.local()  # reuse=True: one TPipe per (product, capacities, poison) and thread


def _pipe(prog: Program, reuse: bool):
    if not reuse:
        return TPipe(product=prog.product, capacities=prog.capacities or None, poison=prog.poison)
    pool = _PIPES.__dict__.setdefault("pipes", {})
    caps = prog.capacities
    key = (prog.product, tuple(sorted(caps.items())) if caps else (), prog.poison)
    pipe = pool.get(key)
    if pipe is None:
        pipe = pool[key] = TPipe(product=prog.product, capacities=prog.capacities or None, poison=prog.poison)
    else:
        pipe.restart()  # exactly a new pipe's state, without new memory
    return pipe


def run_program(prog: Program, skip_compute: bool = False, on_op=None, reuse: bool = False) -> Result:
    """Execute every op of ``prog`` in order, core by core (``blocks``: one TPipe each, GM shared); raise
    :class:`CaseRunError` (nothing partial is returned). ``skip_compute``: do not run compute steps (a dry run);
    ``on_op(op, tensors)``: called before each op (``fastcopy check`` attributes what it sees to the op).
    ``reuse``: a one-core program runs on this thread's TPipe for its product, capacities and poison, restarted
    (the batch runner's way: no new on-chip memory per point); outputs in on-chip buffers are then copied out."""
    reuse = reuse and prog.blocks == 1
    if reuse and on_op is None:  # (a sweep point made by its case's point template: run straight through)
        runs = prog.__dict__.get("_runs")
        if runs is not None:
            result = runs.run(prog)
            if result is not None:
                return result
    return _run_program(prog, skip_compute, on_op, reuse)


def run_general(prog: Program) -> Result:
    """:func:`run_program` with ``reuse=True``, always the general way (never a point's straight-line runner)."""
    return _run_program(prog, False, None, prog.blocks == 1)


def _run_program(prog: Program, skip_compute: bool, on_op, reuse: bool) -> Result:
    def new_pipe():
        try:
            return _pipe(prog, reuse)
        except FastCopyError as exc:
            raise CaseRunError(prog, None, _capacity_hint(exc), "capacities") from exc

    gm, inputs, placement = {}, {}, {}
    written = None
    for buf in prog.buffers:
        if not buf.gm:
            continue
        if buf.init is None:
            gm[buf.name] = gm_output(buf, prog.poison)
            continue
        if written is None:
            written = written_buffers(prog)
        gm[buf.name] = gm_input(buf, prog, inputs, buf.name in written)
    caught, notes = {}, []
    cores = CoreTracker(prog, gm) if prog.blocks > 1 else None
    tensors = {}
    # fastcopy's warnings are collected for the whole program, in this thread only (each op, a compute step too,
    # takes those issued while it ran); those of on_op are issued again after the program, in order
    got = []
    before = start_collecting(got)
    try:
        _run_blocks(prog, gm, new_pipe, cores, on_op, skip_compute, got, caught, notes, tensors, placement)
    finally:
        stop_collecting(before)
        if got:
            _reissue(got)
    outputs, more, empty, counts = collect_outputs(prog, tensors)
    if reuse:  # on-chip outputs are views of the pipe, which the next program clears: the result keeps copies
        for name, (data, mask) in outputs.items():
            if name not in gm:  # (gm: every GM buffer's tensor)
                outputs[name] = (data.copy(), mask.copy())
    return Result(prog, inputs, outputs, placement, caught, notes + more, empty, counts)


def gm_output(buf, poison: int) -> GlobalTensor:
    """The GlobalTensor of GM buffer ``buf`` without an input: undefined, poison, in an array made here."""
    dt = buf.np_dtype
    data, host = aligned_bytes(buf.size * dt.itemsize)
    data.fill(poison)
    return GlobalTensor._fresh(data, host, dt, buf.shape, False)


def gm_input(buf, prog: Program, inputs: dict, written: bool) -> GlobalTensor:
    """The GlobalTensor of GM buffer ``buf`` with its input drawn; ``inputs[buf.name]`` gets the initial contents
    (a copy when an op may change them: ``written``)."""
    arr, data, host = generate_at(buf, prog.seed, prog.file)
    inputs[buf.name] = arr.copy() if written else arr
    return GlobalTensor(arr) if data is None else GlobalTensor._fresh(data, host, buf.np_dtype, buf.shape, True)


def _run_blocks(prog, gm, new_pipe, cores, on_op, skip_compute, got, caught, notes, tensors, placement) -> None:
    """The ops of every core (block) in order, warnings recorded in ``got``; fills ``caught`` (op index ->
    messages), ``notes``, ``placement``, and ``tensors`` (the GM buffers and the last core's local ones)."""
    for block in range(prog.blocks):
        pipe = new_pipe()
        tensors.clear()
        tensors.update(gm)
        for buf in prog.buffers:  # one set of local tensors per core (its own TPipe)
            if buf.gm:
                continue
            try:
                t = pipe.alloc(buf.position, buf.np_dtype, buf.size, buf.addr)
                if buf.init is not None:
                    t[...] = generate(buf, prog.seed, prog.file).reshape(-1)
            except CaseError:
                raise
            except FastCopyError as exc:
                raise CaseRunError(prog, None, _capacity_hint(exc), f"buffers.{buf.name}") from exc
            tensors[buf.name] = t
            if block == 0:
                phys = t.memory.phys
                placement[buf.name] = (_PHYS_NAMES.get(phys) or phys.name, t.offset)
        if cores is not None:
            cores.begin(block)
        # an API op gets its core from its tensors, or as pipe= (an op without tensors): the core is made current
        # (with pipe:) only around what may look for it, a compute step (user code) and on_op
        for op in prog.ops:
            if op.block == block:
                if on_op is not None:
                    _on_op(on_op, op, tensors, pipe, got)
                start = len(got)
                try:
                    _run_op(prog, op, tensors, pipe, skip_compute)
                except BaseException:
                    del got[start:]  # (a failed op's warnings go with it)
                    raise
                if len(got) > start:
                    _note_warnings(op, got, start, caught)
        if cores is not None:
            notes += cores.end(block)


def _capacity_hint(exc: FastCopyError) -> FastCopyError:
    """A CapacityError names the case key to change, not the Python API."""
    from ..errors import CapacityError

    if isinstance(exc, CapacityError):
        text = str(exc).replace("TPipe(capacities=...)", "the case's capacities = {...} table")
        if "capacities" not in text:
            text += " (in a case file: raise the buffer's size with capacities = {UB = bytes, ...})"
        return CapacityError(text)
    return exc


def _on_op(on_op, op, tensors, pipe, got: list) -> None:
    """``on_op(op, tensors)`` (user code, between two ops) with the program's core current. The FastCopyWarnings
    fastcopy issues meanwhile belong to no op: collected located (at the user's line), they are issued again after
    the program at those lines. Other warnings are Python's, issued as they happen."""
    before = start_collecting(got, True)
    try:
        with pipe:
            on_op(op, tensors)
    finally:
        stop_collecting(before)


def _run_op(prog, op, tensors, pipe, skip_compute=False) -> None:
    """One op (while :func:`run_program` collects fastcopy's warnings, a compute step's too; the warnings a
    compute step issues itself with ``warnings.warn`` are Python's, issued as they happen)."""
    if isinstance(op, ComputeSpec):
        if skip_compute:  # a dry run: the step's buffers count as written (their values are not computed)
            for name in op.buffers:
                tensors[name].set_defined()
            return
        with pipe:  # (fastcopy's warnings go on to the program's collection: the op's)
            run_compute(prog, op, tensors)
        return
    # (looked up at every call: fastcopy explain wraps the public functions)
    func = getattr(sys.modules["fastcopy"], op.api) if not APIS[op.api].target else api_function(op.api)
    kwargs = {}
    ref = op.dst
    if ref is not None:
        t = tensors[ref.name]
        d = t[ref.offset] if ref.offset else t
        ref = op.src
        t = tensors[ref.name]
        args = [d, t[ref.offset] if ref.offset else t]
        data_dtype = t.dtype
    else:
        args = []
        kwargs["pipe"] = pipe
        data_dtype = None
    for _, ref, kw in op.operands:  # Mmad's b / bias, Fixpipe's workspace and dst1, a setter's tensors
        if kw is None:
            args.append(_operand(tensors, ref))
        else:
            kwargs[kw] = _operand(tensors, ref)
    dtype = _np_dtype(op.dtype) if op.dtype else data_dtype
    try:
        for a in op.args:
            args.append(build_arg(a, dtype))
        if op.kwargs:
            kwargs.update({k: build_arg(a, dtype) for k, a in op.kwargs})
        func(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - every failure is reported with its op
        raise CaseRunError(prog, op, exc) from exc


def _note_warnings(op, got: list, start: int, caught: dict) -> None:
    """The warnings collected since ``start`` (``(category, message)`` pairs, taken out of ``got``) become the
    op's messages."""
    caught.setdefault(op.index, []).extend([w[1] for w in got[start:]])
    del got[start:]


def _reissue(got: list) -> None:
    """Issue again, after the program, the warnings collected during it and not attributed to an op (on_op's,
    located at the user's lines; collected outside any op), so the caller's filters see them."""
    for w in got:
        if type(w) is tuple:  # (a collected one outside any op)
            warnings.warn(w[1], w[0], stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


_MODULES: dict = {}


def load_compute(path: str, function: str):
    """The function ``function`` of the Python file ``path`` (each file imported once per process)."""
    import importlib.util

    mod = _MODULES.get(path)
    if mod is None:
        name = f"fastcopy_compute_{abs(hash(path))}"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _MODULES[path] = mod
    return getattr(mod, function)


def run_compute(prog: Program, op: ComputeSpec, tensors: dict) -> None:
    """Call the compute step's function with its tensors (and, by name, the loop variables, ``block_idx`` and
    sweep values its signature asks for)."""
    import inspect

    if not prog.allow_python:
        raise CaseRunError(prog, op, FastCopyError(
            f"this case runs Python code ({op.given}); pass --allow-python (run_batch(allow_python=True), "
            "load_case(..., allow_python=True)) to run it, only for case files you trust"))
    try:
        func = load_compute(op.file, op.function)
        env = {**prog.values, "block_idx": op.block, "block_num": prog.blocks, **dict(op.env)}
        params = inspect.signature(func).parameters
        takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
        kw = {k: v for k, v in env.items() if takes_all or k in params}
        func(*[tensors[b] for b in op.buffers], **kw)
    except CaseRunError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's code: report it with the op
        raise CaseRunError(prog, op, exc) from exc


class CoreTracker:
    """Multi-core runs (``blocks = N``): which GM bytes each core writes, and bytes that two cores write with
    different values, which become undefined (poison) with a warning, as overlapping writes within one call.

    A byte counts as written by a core when its value changed, or (for buffers that start undefined) when it
    became defined, during that core's run. A later core changing a byte an earlier core wrote is a conflict.
    (A core writing back exactly the byte an input already held is not seen as a write.)"""

    def __init__(self, prog: Program, gm: dict):
        self.prog = prog
        written = written_buffers(prog)
        self.gm = {name: t for name, t in gm.items() if name in written}
        self.written = {name: np.zeros(t.nbytes, bool) for name, t in self.gm.items()}
        self.before = {}

    def begin(self, block: int) -> None:
        self.before = {}
        for name, t in self.gm.items():
            mem = t.memory
            self.before[name] = (mem.data.copy(), mem.plane_bytes(0, mem.size).copy() if mem.tracked else None)

    def end(self, block: int) -> list:
        notes = []
        for name, t in self.gm.items():
            data0, plane0 = self.before[name]
            mem = t.memory
            changed = mem.data != data0
            now = changed if plane0 is None else changed | (mem.plane_bytes(0, mem.size) != plane0)
            conflict = changed & self.written[name]
            self.written[name] |= now
            n = int(np.count_nonzero(conflict))
            if n:
                plane = mem.materialize_plane()
                plane[conflict] = 0
                mem.data[conflict] = self.prog.poison
                mem.forget()
                first = int(np.flatnonzero(conflict)[0])
                notes.append(f"cores: block {block} wrote {n} byte(s) of {name} that an earlier core had written with "
                             f"different values (first at byte {first}); the hardware's order between cores is not "
                             "defined, so those bytes are undefined")
        self.before = {}
        return notes


def written_buffers(prog: Program) -> set:
    """Names of the buffers some op (or the compute step) may write."""
    out = set(getattr(prog, "writes", ()) or ())
    for op in prog.ops:
        if op.dst is not None:
            out.add(op.dst.name)
        more = getattr(op, "writes", ())
        if more:
            out.update(more)
    return out


def collect_outputs(prog: Program, tensors: dict):
    """(outputs, notes, empty, counts): each output's data (a view, no copy) and uint8 mask; undefined elements
    the case did not allow (``allow_undefined``) give a note (a warning); outputs with no defined element; each
    output's number of defined elements."""
    outputs, notes, empty, counts = {}, [], [], {}
    for out in prog.outputs:
        name = out.buffer
        for buf in prog.buffers:
            if buf.name == name:
                break
        collect_output(out, buf.shape, tensors[name], outputs, notes, empty, counts)
    return outputs, notes, empty, counts


def collect_output(out, shape: tuple, t, outputs: dict, notes: list, empty: list, counts: dict) -> None:
    """:func:`collect_outputs` of one output ``out`` (its buffer's ``shape``, its tensor ``t``)."""
    name = out.buffer
    data = t.numpy()
    if data.shape != shape or not data.flags.c_contiguous:
        data = np.ascontiguousarray(data).reshape(shape)
    mem = t.memory
    if not mem.tracked or mem.known_defined(t.offset, t.offset + t.nbytes):  # all defined, known
        mask = np.empty(shape, np.uint8)
        mask.fill(1)
        n_def = mask.size
    else:
        mask = np.ascontiguousarray(t.defined()).view(np.uint8).reshape(shape)
        n_def = int(np.count_nonzero(mask))
    if mask.size and not n_def:
        empty.append(name)
    elif n_def < mask.size and not out.allow_undefined:
        notes.append(f"output {name}: {mask.size - n_def} of {mask.size} elements are undefined (never "
                     "written); set allow_undefined = true on the output if the kernel leaves them on purpose")
    outputs[name] = (data, mask)
    counts[name] = n_def


#: Phys -> its name (an enum's ``name`` is a descriptor call)
_PHYS_NAMES = {p: p.name for p in Phys}


def _operand(tensors: dict, ref):
    t = tensors[ref.name]
    return t[ref.offset] if ref.offset else t


def _np_dtype(name: str):
    from ..dtypes import as_dtype

    return as_dtype(name)

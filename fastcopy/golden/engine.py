"""Run a :class:`Program`: build the tensors, call the public fastcopy API op by op, collect the outputs.

The engine never moves data itself: every op is the same ``DataCopy`` / ``DataCopyPad`` / ... call a Python user
writes, on a ``TPipe`` of the case's product and ``GlobalTensor`` objects over the generated arrays.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import FastCopyError, FastCopyWarning
from .inputs import generate
from .schema import Arg, CaseError, OpSpec, Program, enum_class, struct_class


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
            return f"ops[{op.index}].params.{fields[m.group(1)]}"
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

    def check(self, strict: bool = False) -> None:
        """Raise :class:`CaseRunError` when an output has no defined element, or (``strict``) on any warning."""
        if self.empty:
            raise CaseRunError(self.program, None, FastCopyError(
                f"output {self.empty[0]!r} has no defined element: nothing was written to it (is its CopyOut "
                "missing, or does an op write another buffer?)"), f"outputs.{self.empty[0]}")
        warns = self.all_warnings()
        if strict and warns:
            raise CaseRunError(self.program, None, FastCopyError(f"{len(warns)} warning(s) with --strict: "
                                                                 f"{warns[0]}"), "warnings")

    def all_warnings(self) -> list:
        return [f"ops[{i}]: {m}" for i, ms in sorted(self.warnings.items()) for m in ms] + list(self.notes)


def build_arg(arg: Arg, dtype=None):
    """A case-file argument -> the Python value the public API takes."""
    if arg.kind == "struct":
        return struct_class(arg.struct)(**arg.value)
    if arg.kind == "structs":
        cls = struct_class(arg.struct)
        return [cls(**v) for v in arg.value]
    if arg.kind == "enum":
        return enum_class(arg.struct)[arg.value]
    if arg.kind == "value":
        return np.array(arg.value).astype(dtype)[()]
    return arg.value


def run_program(prog: Program) -> Result:
    """Execute every op of ``prog`` in order; raise :class:`CaseRunError` (nothing partial is returned)."""
    import fastcopy
    from ..memory import GlobalTensor, TPipe

    try:
        pipe = TPipe(product=prog.product, capacities=prog.capacities or None, poison=prog.poison)
    except FastCopyError as exc:
        raise CaseRunError(prog, None, exc, "capacities") from exc
    tensors, inputs, placement = {}, {}, {}
    written = written_buffers(prog)
    for buf in prog.buffers:
        try:
            if buf.gm:
                if buf.init is None:
                    arr = np.full(buf.size * buf.np_dtype.itemsize, prog.poison, np.uint8).view(buf.np_dtype)
                    arr = arr.reshape(buf.shape)
                else:
                    arr = generate(buf, prog.seed, prog.file)
                    # the input file holds the initial contents: a copy only when an op may change them
                    inputs[buf.name] = arr.copy() if buf.name in written else arr
                tensors[buf.name] = GlobalTensor(arr, defined=buf.init is not None)
            else:
                t = pipe.alloc(buf.position, buf.np_dtype, buf.size, buf.addr)
                if buf.init is not None:
                    t.numpy()[:] = generate(buf, prog.seed, prog.file).reshape(-1)
                    t.set_defined()
                tensors[buf.name] = t
                placement[buf.name] = (t.memory.phys.name, t.offset)
        except CaseError:
            raise
        except FastCopyError as exc:
            raise CaseRunError(prog, None, exc, f"buffers.{buf.name}") from exc
    caught = {}
    with pipe:
        for op in prog.ops:
            func = getattr(fastcopy, op.api)
            args, kwargs = [], {}
            if op.dst is not None:
                args += [_operand(tensors, op.dst), _operand(tensors, op.src)]
                data_dtype = tensors[op.src.name].dtype
            else:
                kwargs["pipe"] = pipe
                data_dtype = None
            dtype = _np_dtype(op.dtype) if op.dtype else data_dtype
            with warnings.catch_warnings(record=True) as got:
                warnings.simplefilter("always", FastCopyWarning)
                try:
                    args += [build_arg(a, dtype) for a in op.args]
                    kwargs.update({k: build_arg(a, dtype) for k, a in op.kwargs})
                    func(*args, **kwargs)
                except Exception as exc:  # noqa: BLE001 - every failure is reported with its op
                    raise CaseRunError(prog, op, exc) from exc
            msgs = []
            for w in got:
                if issubclass(w.category, FastCopyWarning):
                    msgs.append(str(w.message))
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            if msgs:
                caught[op.index] = msgs
    outputs, notes, empty = collect_outputs(prog, tensors)
    return Result(prog, inputs, outputs, placement, caught, notes, empty)


def written_buffers(prog: Program) -> set:
    """Names of the buffers some op (or the compute step) may write."""
    out = {op.dst.name for op in prog.ops if op.dst is not None}
    return out | set(getattr(prog, "writes", ()) or ())


def collect_outputs(prog: Program, tensors: dict):
    """(outputs, notes, empty): each output's data (a view, no copy) and uint8 mask; undefined elements the case
    did not allow (``allow_undefined``) give a note (a warning); outputs with no defined element."""
    outputs, notes, empty = {}, [], []
    for out in prog.outputs:
        buf, t = prog.buffer(out.buffer), tensors[out.buffer]
        data = np.ascontiguousarray(t.numpy()).reshape(buf.shape)
        defined = np.ascontiguousarray(t.defined())
        mask = defined.view(np.uint8).reshape(buf.shape)
        n_def = int(np.count_nonzero(mask))
        if mask.size and not n_def:
            empty.append(out.buffer)
        elif n_def < mask.size and not out.allow_undefined:
            notes.append(f"output {out.buffer}: {mask.size - n_def} of {mask.size} elements are undefined (never "
                         "written); set allow_undefined = true on the output if the kernel leaves them on purpose")
        outputs[out.buffer] = (data, mask)
    return outputs, notes, empty


def _operand(tensors: dict, ref):
    t = tensors[ref.name]
    return t[ref.offset] if ref.offset else t


def _np_dtype(name: str):
    from ..dtypes import as_dtype

    return as_dtype(name)

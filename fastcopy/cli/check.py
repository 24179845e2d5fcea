"""``fastcopy check CASE``: a dry run. Every point is loaded and every op validated by running it in memory; the
warnings and, per op, the bytes it reads and writes in each buffer are printed. Nothing is written to disk.
Compute steps run only with ``--allow-python`` (otherwise they are listed as skipped)."""

from __future__ import annotations

import sys


class OpRecorder:
    """Collects, per op, the plans fastcopy executes for it: (buffer, read span) and (buffer, write span, bytes)."""

    def __init__(self):
        self.rows: dict = {}  # op index -> list of (kind, buffer, lo, hi, nbytes)
        self.op = None
        self.names: dict = {}

    def on_op(self, op, tensors) -> None:
        self.finish()
        self.op = op
        self.rows.setdefault(op.index, [])
        self.names = {id(t.memory): name for name, t in tensors.items()}
        self.base = {name: t.offset for name, t in tensors.items()}
        self.tensors = tensors
        if _computes(op):  # no copy plan to observe: what it wrote is what changed
            self.before = {name: _snapshot(tensors[name]) for name in op.writes}

    def finish(self) -> None:
        """Rows of the last compute op (Mmad, a converting Fixpipe / DataCopy): the tensors it used, the bytes it
        changed (value or definedness) in each buffer it writes."""
        before, self.before = getattr(self, "before", None), None
        if not before or self.rows.get(self.op.index):
            return
        rows = self.rows[self.op.index]
        for key, ref in self.op.operand_refs():
            if ref.name not in before:
                rows.append(("uses", ref.name, None, None, key))
        for name, old in before.items():
            t = self.tensors[name]
            data, dfd = _snapshot(t)
            es = t.dtype.itemsize
            changed = (data != old[0]).reshape(-1, es).any(axis=1) | (dfd != old[1])  # numpy arrays
            hit = changed.nonzero()[0]
            if hit.size:
                rows.append(("writes", name, int(hit[0]) * es, (int(hit[-1]) + 1) * es, int(hit.size) * es))

    def observe(self, plan, dst, src) -> None:
        if self.op is None:
            return
        rows = self.rows[self.op.index]
        for kind, t, span, ref in (("reads", src, plan.read, self.op.src), ("writes", dst, plan.write, self.op.dst)):
            if span is None or t is None:
                continue
            name = ref.name if ref is not None else self._name(t)
            base = self.base.get(name, 0)
            lo, hi = t.offset - base + span[0], t.offset - base + span[1]
            nbytes = plan.nbytes if kind == "writes" else hi - lo
            rows.append((kind, name, lo, hi, nbytes))

    def _name(self, t):
        for name, other in self.tensors.items():
            if other.memory is t.memory and other.offset <= t.offset < other.offset + other.nbytes:
                return name
        return t.memory.phys.name


def _computes(op) -> bool:
    if op.api in ("Mmad", "Fixpipe"):
        return True
    return op.api == "DataCopy" and any(getattr(a, "struct", None) in ("DataCopyCO12DstParams",
                                                                       "DataCopyEnhancedParams") for a in op.args)


def _snapshot(t):
    import numpy as np

    return t.memory.data[t.offset:t.offset + t.nbytes].copy(), np.array(t.defined(), bool).reshape(-1)


def main_check(args) -> int:
    from ..dma.run import OBSERVERS
    from ..golden import CaseError
    from ..golden.engine import CaseRunError, run_program
    from .run import load_points

    case, points = load_points(args, "check")
    if case is None:
        return 1
    show = points[0]
    failed = warned = 0
    for i in points:
        rec = OpRecorder()
        OBSERVERS.append(rec.observe)
        try:
            prog = case.point(i)
            res = run_program(prog, skip_compute=not args.allow_python, on_op=rec.on_op)
            rec.finish()
            res.check()
        except (CaseError, CaseRunError) as exc:
            failed += 1
            print(f"fastcopy check: {exc}", file=sys.stderr)
            continue
        finally:
            OBSERVERS.remove(rec.observe)
        warns = res.all_warnings()
        warned += bool(warns)
        if i == show and not args.quiet:
            _print_ops(prog, rec, res, args)
        for w in warns:
            print(f"  warning{f' point {i}' if case.is_sweep else ''} {w}", file=sys.stderr)
    n = len(points)
    verdict = "OK" if not failed else "FAILED"
    print(f"fastcopy check: {args.case}: {verdict}: {n - failed} of {n} point(s) valid, {warned} with warnings; "
          "nothing written", file=sys.stderr if failed else sys.stdout)
    return 1 if failed or (args.strict and warned) else 0


def _print_ops(prog, rec, res, args) -> None:
    print(f"{prog.label}: {len(prog.ops)} ops" + (f" on {prog.blocks} cores" if prog.blocks > 1 else ""))
    for op in prog.ops:
        print(f"  {op.title()}")
        if op.api == "compute":
            print("      " + ("ran (--allow-python)" if args.allow_python else
                           "not run (Python code runs only with --allow-python); its buffers count as written"))
            continue
        for kind, name, lo, hi, nbytes in rec.rows.get(op.index, []):
            if kind == "uses":  # an operand of a compute op (nbytes holds its role)
                print(f"      {'reads':6} {name:12} ({nbytes})")
                continue
            span = f"bytes [{lo}, {hi})"
            print(f"      {kind:6} {name:12} {span:24} {nbytes} B")
        for w in res.warnings.get(op.index, []):
            print(f"      warning: {w}")
    for o in prog.outputs:
        data, mask = res.outputs[o.buffer]
        print(f"  output {o.buffer}: {int(mask.sum())} of {mask.size} elements defined")
